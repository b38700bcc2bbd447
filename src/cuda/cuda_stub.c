/* Built instead of the .cu files when nvcc is absent. */
#include "sgla_internal.h"

int sgla_cuda_available(void)
{
    sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "this build has no CUDA backend (nvcc was not found)");
    return 0;
}

sgla_status sgla_cuda_forward(const sgla_forward_desc *d)
{
    (void)d;
    return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "this build has no CUDA backend (nvcc was not found)");
}
