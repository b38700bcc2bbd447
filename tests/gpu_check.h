/* The GPU tests' check of a CUDA runtime call: a failure is fatal (exit 2),
 * printed with the call and its place. */
#ifndef SGLA_TESTS_GPU_CHECK_H
#define SGLA_TESTS_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CK(call)                                                                                                     \
    do {                                                                                                             \
        cudaError_t e_ = (call);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                     \
            fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));             \
            exit(2);                                                                                                 \
        }                                                                                                            \
    } while (0)

#endif
