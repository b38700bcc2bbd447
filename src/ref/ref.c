/* Placeholder: the fp64 reference family lands with the foundation. */
#include "sgla_internal.h"
sgla_status sgla_ref_forward64(const sgla_forward_desc *d, sgla_backend kind, double *o64, double *ht64)
{
    (void)d; (void)kind; (void)o64; (void)ht64;
    return sgla_fail(SGLA_ERR_INTERNAL, "references not implemented yet");
}
