/* The front door: status strings, validation shared by every backend, and
 * dispatch.  Backends assume a validated descriptor. */
#include "sgla_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[256];

sgla_status sgla_fail(sgla_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

const char *sgla_last_error(void) { return last_error; }

const char *sgla_version(void) { return SGLA_VERSION_STRING; }

const char *sgla_status_string(sgla_status s)
{
    switch (s) {
    case SGLA_OK: return "success";
    case SGLA_ERR_NULL_POINTER: return "a required pointer is NULL";
    case SGLA_ERR_INVALID_SIZE: return "invalid size: B, H, K, V must be >= 1 and T >= 0";
    case SGLA_ERR_SIZE_OVERFLOW: return "sizes overflow a 64-bit element count or byte size";
    case SGLA_ERR_BOTH_GATES: return "both g and g_gamma given: pass at most one gate";
    case SGLA_ERR_POSITIVE_GATE: return "a log-gate is positive (alpha > 1): gates must be <= 0";
    case SGLA_ERR_NONFINITE_GATE: return "a log-gate is NaN or infinite";
    case SGLA_ERR_INVALID_SCALE: return "scale is NaN or infinite";
    case SGLA_ERR_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case SGLA_ERR_UNSUPPORTED_CHUNK: return "unsupported chunk size";
    case SGLA_ERR_CU_SEQLENS_BATCH: return "cu_seqlens requires B == 1";
    case SGLA_ERR_CU_SEQLENS_START: return "cu_seqlens must start at 0";
    case SGLA_ERR_CU_SEQLENS_DECREASING: return "cu_seqlens must be non-decreasing";
    case SGLA_ERR_CU_SEQLENS_END: return "cu_seqlens must end at T";
    case SGLA_ERR_INVALID_NUM_SEQS: return "num_seqs must be >= 1 when cu_seqlens is given";
    case SGLA_ERR_NONFINITE_INPUT: return "q, k, v or h0 holds a NaN or infinity";
    case SGLA_ERR_UNSUPPORTED_SHAPE: return "shape not supported by this backend";
    case SGLA_ERR_BACKEND_UNAVAILABLE: return "backend not available in this build or on this machine";
    case SGLA_ERR_INVALID_BACKEND: return "not a valid backend";
    case SGLA_ERR_INVALID_ARGUMENT: return "invalid argument";
    case SGLA_ERR_OVERLAP: return "an output buffer overlaps an input buffer";
    case SGLA_ERR_OUT_OF_MEMORY: return "out of memory";
    case SGLA_ERR_CUDA: return "CUDA runtime error";
    case SGLA_ERR_INTERNAL: return "internal error";
    }
    return "unknown status code";
}

size_t sgla_dtype_size(sgla_dtype dt)
{
    switch (dt) {
    case SGLA_F32: return 4;
    case SGLA_F16: return 2;
    case SGLA_BF16: return 2;
    }
    return 0;
}

const char *sgla_dtype_name(sgla_dtype dt)
{
    switch (dt) {
    case SGLA_F32: return "f32";
    case SGLA_F16: return "f16";
    case SGLA_BF16: return "bf16";
    }
    return "unknown";
}

const char *sgla_backend_name(sgla_backend b)
{
    switch (b) {
    case SGLA_BACKEND_AUTO: return "auto";
    case SGLA_BACKEND_REF_A: return "ref-a";
    case SGLA_BACKEND_REF_B: return "ref-b";
    case SGLA_BACKEND_REF_C: return "ref-c";
    case SGLA_BACKEND_REF_D: return "ref-d";
    case SGLA_BACKEND_CPU: return "cpu";
    case SGLA_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

int sgla_backend_available(sgla_backend b)
{
    switch (b) {
    case SGLA_BACKEND_AUTO:
    case SGLA_BACKEND_REF_A:
    case SGLA_BACKEND_REF_B:
    case SGLA_BACKEND_REF_C:
    case SGLA_BACKEND_REF_D:
    case SGLA_BACKEND_CPU: return 1;
    case SGLA_BACKEND_CUDA: return sgla_cuda_available();
    }
    return 0;
}

void sgla_forward_desc_init(sgla_forward_desc *d)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->scale = 1.0f;
    d->chunk = 64;
    d->dtype = SGLA_F32;
}

int64_t sgla_num_sequences(const sgla_forward_desc *d)
{
    if (!d) return 0;
    return d->cu_seqlens ? d->num_seqs : d->B;
}

void sgla_seq_bounds(const sgla_forward_desc *d, int64_t n, int64_t *b,
                     int64_t *t0, int64_t *t1)
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

double sgla_load(const void *p, sgla_dtype dt, int64_t i)
{
    switch (dt) {
    case SGLA_F32: return ((const float *)p)[i];
    case SGLA_F16: return sgla_f16_to_f32(((const uint16_t *)p)[i]);
    case SGLA_BF16: return sgla_bf16_to_f32(((const uint16_t *)p)[i]);
    }
    return NAN;
}

void sgla_store(void *p, sgla_dtype dt, int64_t i, double x)
{
    switch (dt) {
    case SGLA_F32: ((float *)p)[i] = (float)x; break;
    case SGLA_F16: ((uint16_t *)p)[i] = sgla_f64_to_f16(x); break;
    case SGLA_BF16: ((uint16_t *)p)[i] = sgla_f64_to_bf16(x); break;
    }
}

/* a * b with overflow detection (a, b >= 0). */
static int mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

static int ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return 0;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + nb && b0 < a0 + na;
}

/* Outputs must not alias any input (ht == h0 exactly is the in-place
 * update): a backend reads gates, offsets and h0 after it has begun writing.
 * o is bo bytes, ht bht bytes; the input sizes come from d, whose counts
 * validation has already bounded. */
static sgla_status check_outputs(const sgla_forward_desc *d, const void *o, size_t bo, const char *oname,
                                 const void *ht, size_t bht, const char *htname)
{
    size_t es = sgla_dtype_size(d->dtype), bth = (size_t)(d->B * d->T * d->H);
    size_t bq = bth * (size_t)d->K * es, bv = bth * (size_t)d->V * es;
    size_t bs = (size_t)(sgla_num_sequences(d) * d->H * d->K * d->V) * 4;
    size_t bcu = d->cu_seqlens ? (size_t)(d->num_seqs + 1) * 8 : 0;
    struct { const void *p; size_t n; const char *name; } in[] = {
        {d->q, bq, "q"}, {d->k, bq, "k"}, {d->v, bv, "v"}, {d->g, d->g ? bth * 4 : 0, "g"},
        {d->g_gamma, (size_t)d->H * 4, "g_gamma"}, {d->cu_seqlens, bcu, "cu_seqlens"}, {d->h0, bs, "h0"}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        if (ranges_overlap(o, bo, in[i].p, in[i].n))
            return sgla_fail(SGLA_ERR_OVERLAP, "%s overlaps %s", oname, in[i].name);
        if (in[i].p == d->h0 && d->h0 == ht) continue; /* in place */
        if (ranges_overlap(ht, bht, in[i].p, in[i].n))
            return sgla_fail(SGLA_ERR_OVERLAP, "%s overlaps %s%s", htname, in[i].name,
                             in[i].p == d->h0 ? " (only ht == h0 exactly is allowed)" : "");
    }
    if (ranges_overlap(ht, bht, o, bo)) return sgla_fail(SGLA_ERR_OVERLAP, "%s overlaps %s", htname, oname);
    return SGLA_OK;
}

sgla_status sgla_validate(const sgla_forward_desc *d, int values_on_host)
{
    last_error[0] = '\0';
    if (!d) return sgla_fail(SGLA_ERR_NULL_POINTER, "the descriptor is NULL");
    if (d->B < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "B = %lld, must be >= 1", (long long)d->B);
    if (d->T < 0) return sgla_fail(SGLA_ERR_INVALID_SIZE, "T = %lld, must be >= 0", (long long)d->T);
    if (d->H < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "H = %lld, must be >= 1", (long long)d->H);
    if (d->K < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "K = %lld, must be >= 1", (long long)d->K);
    if (d->V < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "V = %lld, must be >= 1", (long long)d->V);
    size_t es = sgla_dtype_size(d->dtype);
    if (es == 0) return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "dtype %d is not f32, f16 or bf16", (int)d->dtype);
    if (d->chunk < 1 || d->chunk > 1024)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_CHUNK, "chunk = %lld, must be in [1, 1024]", (long long)d->chunk);
    if (d->threads < 0) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "threads = %d, must be >= 0", d->threads);
    if (d->flags & ~SGLA_FLAG_ALL_)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "unknown flag bits 0x%x", d->flags & ~SGLA_FLAG_ALL_);

    /* Element counts, then byte counts, must fit; 2^62 keeps index sums safe. */
    const int64_t lim = (int64_t)1 << 62;
    int64_t bt, bth, nqk, nv, hk, hkv, n_state, bytes;
    if (!mul_ok(d->B, d->T, &bt) || !mul_ok(bt, d->H, &bth) || !mul_ok(bth, d->K, &nqk) ||
        !mul_ok(bth, d->V, &nv) || !mul_ok(d->H, d->K, &hk) || !mul_ok(hk, d->V, &hkv) ||
        !mul_ok(nqk > nv ? nqk : nv, (int64_t)es, &bytes) || bytes > lim || (uint64_t)bytes > SIZE_MAX)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "B*T*H*max(K,V) elements overflow (B=%lld T=%lld H=%lld K=%lld V=%lld)",
                         (long long)d->B, (long long)d->T, (long long)d->H, (long long)d->K, (long long)d->V);

    if (d->cu_seqlens) {
        if (d->B != 1) return sgla_fail(SGLA_ERR_CU_SEQLENS_BATCH, "cu_seqlens given with B = %lld", (long long)d->B);
        if (d->num_seqs < 1) return sgla_fail(SGLA_ERR_INVALID_NUM_SEQS, "num_seqs = %lld with cu_seqlens", (long long)d->num_seqs);
    }
    int64_t N = sgla_num_sequences(d);
    if (!mul_ok(N, hkv, &n_state) || !mul_ok(n_state, 4, &bytes) || bytes > lim || (uint64_t)bytes > SIZE_MAX)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "state N*H*K*V overflows (N=%lld)", (long long)N);

    if (d->T > 0) {
        if (!d->q) return sgla_fail(SGLA_ERR_NULL_POINTER, "q is NULL");
        if (!d->k) return sgla_fail(SGLA_ERR_NULL_POINTER, "k is NULL");
        if (!d->v) return sgla_fail(SGLA_ERR_NULL_POINTER, "v is NULL");
        if (!d->o) return sgla_fail(SGLA_ERR_NULL_POINTER, "o is NULL");
    }
    if (d->g && d->g_gamma) return sgla_fail(SGLA_ERR_BOTH_GATES, "g and g_gamma are both set");
    if (!isfinite(d->scale)) return sgla_fail(SGLA_ERR_INVALID_SCALE, "scale = %g", (double)d->scale);

    /* Every pointer naturally aligned for its element type: the backends load
     * whole elements (and the CUDA kernels ask for more, see sgla.h). */
    if ((d->q && !is_aligned(d->q, es)) || (d->k && !is_aligned(d->k, es)) || (d->v && !is_aligned(d->v, es)) ||
        (d->o && !is_aligned(d->o, es)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "q, k, v and o must be aligned to their element size (%zu bytes)", es);
    if (!is_aligned(d->g, 4) || !is_aligned(d->g_gamma, 4) || !is_aligned(d->h0, 4) || !is_aligned(d->ht, 4) ||
        !is_aligned(d->cu_seqlens, 8))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "g, g_gamma, h0, ht must be 4-byte and cu_seqlens 8-byte aligned");

    sgla_status st = check_outputs(d, d->o, (size_t)nv * es, "o", d->ht, (size_t)n_state * 4, "ht");
    if (st != SGLA_OK) return st;

    if (!values_on_host) return SGLA_OK;
    if (d->flags & SGLA_FLAG_SKIP_VALUE_CHECK) goto finite;

    if (d->cu_seqlens) {
        const int64_t *cu = d->cu_seqlens;
        if (cu[0] != 0) return sgla_fail(SGLA_ERR_CU_SEQLENS_START, "cu_seqlens[0] = %lld", (long long)cu[0]);
        for (int64_t i = 0; i < d->num_seqs; i++)
            if (cu[i + 1] < cu[i])
                return sgla_fail(SGLA_ERR_CU_SEQLENS_DECREASING, "cu_seqlens[%lld] = %lld < cu_seqlens[%lld] = %lld",
                                 (long long)(i + 1), (long long)cu[i + 1], (long long)i, (long long)cu[i]);
        if (cu[d->num_seqs] != d->T)
            return sgla_fail(SGLA_ERR_CU_SEQLENS_END, "cu_seqlens[%lld] = %lld but T = %lld",
                             (long long)d->num_seqs, (long long)cu[d->num_seqs], (long long)d->T);
    }
    if (d->g) {
        for (int64_t i = 0; i < bth; i++) {
            float x = d->g[i];
            if (!isfinite(x)) return sgla_fail(SGLA_ERR_NONFINITE_GATE, "g[%lld] = %g", (long long)i, (double)x);
            if (x > 0.0f) return sgla_fail(SGLA_ERR_POSITIVE_GATE, "g[%lld] = %g > 0", (long long)i, (double)x);
        }
    }
    if (d->g_gamma) {
        for (int64_t h = 0; h < d->H; h++) {
            float x = d->g_gamma[h];
            if (!isfinite(x)) return sgla_fail(SGLA_ERR_NONFINITE_GATE, "g_gamma[%lld] = %g", (long long)h, (double)x);
            if (x > 0.0f) return sgla_fail(SGLA_ERR_POSITIVE_GATE, "g_gamma[%lld] = %g > 0", (long long)h, (double)x);
        }
    }
finite:
    if (d->flags & SGLA_FLAG_CHECK_FINITE) {
        for (int64_t i = 0; i < nqk; i++) {
            if (!isfinite(sgla_load(d->q, d->dtype, i)))
                return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "q[%lld] is not finite", (long long)i);
            if (!isfinite(sgla_load(d->k, d->dtype, i)))
                return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "k[%lld] is not finite", (long long)i);
        }
        for (int64_t i = 0; i < nv; i++)
            if (!isfinite(sgla_load(d->v, d->dtype, i)))
                return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "v[%lld] is not finite", (long long)i);
        if (d->h0)
            for (int64_t i = 0; i < n_state; i++)
                if (!isfinite(d->h0[i]))
                    return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "h0[%lld] is not finite", (long long)i);
    }
    return SGLA_OK;
}

sgla_status sgla_reference(const sgla_forward_desc *d, sgla_backend kind,
                           double *o64, double *ht64)
{
    if (!d) return sgla_fail(SGLA_ERR_NULL_POINTER, "the descriptor is NULL");
    /* o and ht of the descriptor are ignored here: validate with o64 in o's place. */
    sgla_forward_desc c = *d;
    c.o = o64;
    c.ht = NULL;
    if (!o64 && d->T > 0) return sgla_fail(SGLA_ERR_NULL_POINTER, "o64 is NULL");
    sgla_status st = sgla_validate(&c, 1);
    if (st != SGLA_OK) return st;
    if (kind < SGLA_BACKEND_REF_A || kind > SGLA_BACKEND_REF_D)
        return sgla_fail(SGLA_ERR_INVALID_BACKEND, "kind %d is not a reference (ref-a..ref-d)", (int)kind);
    /* validation sized o64 as a d->dtype buffer: check the fp64 outputs' real extent */
    size_t nv = (size_t)(d->B * d->T * d->H * d->V), ns = (size_t)(sgla_num_sequences(d) * d->H * d->K * d->V);
    if (nv > SIZE_MAX / 8 || ns > SIZE_MAX / 8)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "fp64 outputs of %zu and %zu doubles overflow", nv, ns);
    st = check_outputs(d, o64, nv * 8, "o64", ht64, ns * 8, "ht64");
    if (st != SGLA_OK) return st;
    return sgla_ref_forward64(&c, kind, o64, ht64);
}

/* A reference backend through the typed API: compute in fp64 into scratch,
 * then round into o/ht, so nothing is written on failure. */
static sgla_status forward_ref(const sgla_forward_desc *d, sgla_backend kind)
{
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
            for (int64_t i = 0; i < ns; i++) d->ht[i] = (float)h64[i];
    }
    free(o64);
    free(h64);
    return st;
}

sgla_status sgla_forward(const sgla_forward_desc *d, sgla_backend backend)
{
    int on_host = backend != SGLA_BACKEND_CUDA;
    if (backend < SGLA_BACKEND_AUTO || backend > SGLA_BACKEND_CUDA)
        return sgla_fail(SGLA_ERR_INVALID_BACKEND, "backend %d is not a value of sgla_backend", (int)backend);
    sgla_status st = sgla_validate(d, on_host);
    if (st != SGLA_OK) return st;
    switch (backend) {
    case SGLA_BACKEND_REF_A:
    case SGLA_BACKEND_REF_B:
    case SGLA_BACKEND_REF_C:
    case SGLA_BACKEND_REF_D: return forward_ref(d, backend);
    case SGLA_BACKEND_AUTO:
    case SGLA_BACKEND_CPU: return sgla_cpu_forward(d);
    case SGLA_BACKEND_CUDA:
        if (!sgla_cuda_available()) {
            char why[sizeof last_error]; /* sgla_fail writes last_error: copy the detail out first */
            snprintf(why, sizeof why, "%s", last_error[0] ? last_error : "not compiled in or no device");
            return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
        }
        return sgla_cuda_forward(d);
    }
    return SGLA_ERR_INTERNAL;
}
