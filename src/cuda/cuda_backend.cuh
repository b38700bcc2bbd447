/* Shared by the CUDA backend's translation units (host side): the kernel
 * parameter block and the launchers that are plain functions. */
#ifndef SGLA_CUDA_BACKEND_CUH
#define SGLA_CUDA_BACKEND_CUH

#include <cuda_runtime.h>

#include "core/core.h"
#include "fwd_params.cuh"

/* fp32 inputs: the token recurrence on CUDA cores (recurrent_fwd_f32.cu). */
sgla_status sgla_recurrent_fwd_f32(const sgla_kparams *p, cudaStream_t st);

#endif
