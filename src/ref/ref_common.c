/* Shared pieces of the fp64 reference family: dispatch, input access and
 * the seeded generator used by the numeric experiments.  Each reference
 * (ref_a.c .. ref_d.c) is written independently on top of these, so that
 * cross-checking them tests the algebra rather than a shared kernel. */
#include "ref/ref.h"
#include "core/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sgla_status sgla_ref_forward64(const sgla_forward_desc *d, sgla_backend kind, double *o64, double *ht64)
{
    /* no token and no final state: nothing to compute (an empty input may claim 2^40 heads, and the
     * references would still set up a state for each) */
    if (d->B * d->T == 0 && !ht64 && !d->pool) return SGLA_OK;
    switch (kind) {
    case SGLA_BACKEND_REF_A: return ref_a_forward(d, o64, ht64);
    case SGLA_BACKEND_REF_B: return ref_b_forward(d, o64, ht64);
    case SGLA_BACKEND_REF_C: return ref_c_forward(d, o64, ht64);
    case SGLA_BACKEND_REF_D: return ref_d_forward(d, o64, ht64);
    default: break;
    }
    return sgla_fail(SGLA_ERR_INVALID_BACKEND, "kind %d is not a reference (ref-a..ref-d)", (int)kind);
}

void ref_out_clear(const sgla_forward_desc *d, double *o64)
{
    const int64_t nv = d->B * d->T * d->H * d->V;
    if (o64 && nv > 0) memset(o64, 0, (size_t)nv * sizeof *o64);
}

/* A reference backend through the typed API: compute in fp64 into scratch,
 * then round into o/ht, so nothing is written on failure. */
static sgla_status forward_ref(const sgla_forward_desc *d, sgla_backend kind)
{
    if (d->pool) return ref_a_pool(d); /* dispatch lets only ref-a take a pool */
    int64_t nv = d->B * d->T * d->H * d->V;
    int64_t ns = sgla_num_sequences(d) * d->H * d->K * d->V;
    if ((uint64_t)nv > SIZE_MAX / sizeof(double) || (uint64_t)ns > SIZE_MAX / sizeof(double))
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "reference scratch of %lld + %lld doubles overflows",
                         (long long)nv, (long long)ns);
    double *o64 = malloc((size_t)(nv > 0 ? nv : 1) * sizeof(double));
    double *h64 = d->ht ? malloc((size_t)(ns > 0 ? ns : 1) * sizeof(double)) : NULL;
    if (!o64 || (d->ht && !h64)) {
        free(o64);
        free(h64);
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "reference scratch of %lld doubles", (long long)(nv + ns));
    }
    sgla_status st = sgla_ref_forward64(d, kind, o64, h64);
    if (st == SGLA_OK) {
        for (int64_t i = 0; i < nv; i++) sgla_store(d->o, d->dtype, i, o64[i]);
        if (d->ht)
            for (int64_t i = 0; i < ns; i++) sgla_store(d->ht, sgla_aux_dtype(d->dtype), i, h64[i]);
    }
    free(o64);
    free(h64);
    return st;
}

const sgla_backend_impl sgla_backend_ref = {.values_on_host = 1, .forward = forward_ref, .backward = sgla_ref_backward};

double ref_gate(const sgla_forward_desc *d, int64_t b, int64_t t, int64_t h)
{
    if (d->g) return sgla_load(d->g, sgla_aux_dtype(d->dtype), (b * d->T + t) * d->H + h);
    if (d->g_gamma) return sgla_load(d->g_gamma, sgla_aux_dtype(d->dtype), h);
    return 0.0;
}

void ref_load_rows(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t t0, int64_t n,
                   double *q, double *k, double *v)
{
    for (int64_t r = 0; r < n; r++) {
        int64_t row = (b * d->T + t0 + r) * d->H + h;
        for (int64_t i = 0; i < d->K; i++) {
            if (q) q[r * d->K + i] = sgla_load(d->q, d->dtype, row * d->K + i);
            if (k) k[r * d->K + i] = sgla_load(d->k, d->dtype, row * d->K + i);
        }
        if (v)
            for (int64_t j = 0; j < d->V; j++) v[r * d->V + j] = sgla_load(d->v, d->dtype, row * d->V + j);
    }
}

void ref_chunk_logcum(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t t0, int64_t n, double *bc)
{
    double acc = 0.0;
    for (int64_t r = 0; r < n; r++) {
        acc += sgla_gate_floor(ref_gate(d, b, t0 + r, h));
        bc[r] = acc;
    }
}

void ref_state_init(const sgla_forward_desc *d, int64_t n, int64_t h, double *S)
{
    int64_t kv = d->K * d->V;
    if (!d->h0) {
        memset(S, 0, (size_t)kv * sizeof *S);
        return;
    }
    const sgla_dtype adt = sgla_aux_dtype(d->dtype);
    for (int64_t i = 0; i < kv; i++) S[i] = sgla_load(d->h0, adt, (n * d->H + h) * kv + i);
}

void ref_state_store(const sgla_forward_desc *d, int64_t n, int64_t h, const double *S, double *ht64)
{
    if (!ht64) return;
    int64_t kv = d->K * d->V;
    memcpy(ht64 + (n * d->H + h) * kv, S, (size_t)kv * sizeof *S);
}

int64_t ref_num_chunks(int64_t len, int64_t chunk) { return len <= 0 ? 0 : (len + chunk - 1) / chunk; }

sgla_status ref_doubles(const char *who, const char *what, double need, size_t *n)
{
    if (need * sizeof(double) > (double)SIZE_MAX / 2)
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "%s: %.3g doubles of %s", who, need, what);
    *n = (size_t)need;
    return SGLA_OK;
}

void ref_rng_init(ref_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }

uint64_t ref_rng_next(ref_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double ref_rng_uniform(ref_rng *r) { return (double)(ref_rng_next(r) >> 11) * 0x1.0p-53; }

double ref_rng_normal(ref_rng *r)
{
    double u1 = ref_rng_uniform(r), u2 = ref_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

void ref_rng_fill(ref_rng *r, void *p, sgla_dtype dt, int64_t n, double sd)
{
    for (int64_t i = 0; i < n; i++) sgla_store(p, dt, i, ref_rng_normal(r) * sd);
}
