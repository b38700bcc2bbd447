/* Element access, sequence bounds and the small descriptor helpers. */
#include "core/core.h"

#include <math.h>
#include <string.h>

size_t sgla_dtype_size(sgla_dtype dt)
{
    switch (dt) {
    case SGLA_F32: return 4;
    case SGLA_F16: return 2;
    case SGLA_BF16: return 2;
    case SGLA_F64: return 8;
    }
    return 0;
}

const char *sgla_dtype_name(sgla_dtype dt)
{
    switch (dt) {
    case SGLA_F32: return "f32";
    case SGLA_F16: return "f16";
    case SGLA_BF16: return "bf16";
    case SGLA_F64: return "f64";
    }
    return "unknown";
}

void sgla_forward_desc_init(sgla_forward_desc *d)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->scale = 1.0f;
    d->chunk = 64;
    d->dtype = SGLA_F32;
}

void sgla_backward_desc_init(sgla_backward_desc *d)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
}

int64_t sgla_num_sequences(const sgla_forward_desc *d)
{
    if (!d) return 0;
    return d->cu_seqlens ? d->num_seqs : d->B;
}

void sgla_seq_bounds(const sgla_forward_desc *d, int64_t n, int64_t *b, int64_t *t0, int64_t *t1)
{
    if (d->cu_seqlens) {
        *b = 0;
        *t0 = d->cu_seqlens[n];
        *t1 = d->cu_seqlens[n + 1];
    } else {
        *b = n;
        *t0 = 0;
        *t1 = d->T;
    }
}

int64_t sgla_max_seq_len(const sgla_forward_desc *d)
{
    if (!d->cu_seqlens) return d->T;
    int64_t m = 0;
    for (int64_t n = 0; n < d->num_seqs; n++)
        if (d->cu_seqlens[n + 1] - d->cu_seqlens[n] > m) m = d->cu_seqlens[n + 1] - d->cu_seqlens[n];
    return m;
}

double sgla_load(const void *p, sgla_dtype dt, int64_t i)
{
    switch (dt) {
    case SGLA_F32: return ((const float *)p)[i];
    case SGLA_F16: return sgla_f16_to_f32(((const uint16_t *)p)[i]);
    case SGLA_BF16: return sgla_bf16_to_f32(((const uint16_t *)p)[i]);
    case SGLA_F64: return ((const double *)p)[i];
    }
    return NAN;
}

void sgla_store(void *p, sgla_dtype dt, int64_t i, double x)
{
    switch (dt) {
    case SGLA_F32: ((float *)p)[i] = (float)x; break;
    case SGLA_F16: ((uint16_t *)p)[i] = sgla_f64_to_f16(x); break;
    case SGLA_BF16: ((uint16_t *)p)[i] = sgla_f64_to_bf16(x); break;
    case SGLA_F64: ((double *)p)[i] = x; break;
    }
}

int sgla_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}
