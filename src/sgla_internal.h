/* Internal declarations shared by the backends; not installed. */
#ifndef SGLA_INTERNAL_H
#define SGLA_INTERNAL_H

#include "sgla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record the detail for sgla_last_error() and return st. */
sgla_status sgla_fail(sgla_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Element i of a q/k/v/o buffer of dtype dt, as double / stored from double. */
double sgla_load(const void *p, sgla_dtype dt, int64_t i);
void sgla_store(void *p, sgla_dtype dt, int64_t i, double x);

/* Start/end token of sequence n (varlen or batch). Token index is into T
 * of batch row b: for varlen b = 0, for batch b = n. */
void sgla_seq_bounds(const sgla_forward_desc *d, int64_t n, int64_t *b,
                     int64_t *t0, int64_t *t1);

/* Backends.  Each is called only after sgla_validate() succeeded. */
sgla_status sgla_ref_forward64(const sgla_forward_desc *d, sgla_backend kind,
                               double *o64, double *ht64);   /* src/ref */
sgla_status sgla_cpu_forward(const sgla_forward_desc *d);    /* src/cpu */
sgla_status sgla_cuda_forward(const sgla_forward_desc *d);   /* src/cuda */
int sgla_cuda_available(void);                               /* src/cuda */

#ifdef __cplusplus
}
#endif

#endif
