/* Placeholder: the CPU backend lands with its issue. */
#include "sgla_internal.h"
sgla_status sgla_cpu_forward(const sgla_forward_desc *d)
{
    (void)d;
    return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CPU backend not implemented yet");
}
