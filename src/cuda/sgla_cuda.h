/* Private to the CUDA backend and its tools (bench, verify, tests): the kernel
 * versions kept side by side, selectable by number.  Plain C; no CUDA types. */
#ifndef SGLA_CUDA_H
#define SGLA_CUDA_H

#include "sgla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor-core versions are 1..sgla_cuda_num_versions(); 0 means the default
 * (the fastest correct one).  fp32 inputs always take the CUDA-core path. */
int sgla_cuda_num_versions(void);
/* One line: what the version tries. */
const char *sgla_cuda_version_desc(int version);
/* Validate (device pointers: values not read unless SGLA_FLAG_CHECK_DEVICE_VALUES)
 * and run one version.  Same contract as sgla_forward(d, SGLA_BACKEND_CUDA). */
sgla_status sgla_cuda_forward_version(const sgla_forward_desc *d, int version);

#ifdef __cplusplus
}
#endif

#endif
