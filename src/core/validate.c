/* The descriptor as the caller's header laid it out, and the checks every
 * backend runs first. */
#include "core/core.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The smallest descriptor this library accepts: the layout of 0.2, the first
 * with a size field.  Fields added later go after it (and this stays). */
#define DESC_MIN_SIZE (offsetof(sgla_forward_desc, workspace_bytes) + sizeof(size_t))
/* A larger size than any header could have: an uninitialised descriptor. */
#define DESC_MAX_SIZE 4096

sgla_status sgla_desc_read(const sgla_forward_desc *user, sgla_forward_desc *out)
{
    if (!user) return sgla_fail(SGLA_ERR_NULL_POINTER, "the descriptor is NULL");
    const size_t n = user->size;
    if (n < DESC_MIN_SIZE || n > DESC_MAX_SIZE)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                         "descriptor size = %zu, this library reads %zu: initialise it with sgla_forward_desc_init()",
                         n, sizeof *out);
    sgla_forward_desc_init(out);
    if (n <= sizeof *out) {
        memcpy(out, user, n);
        return SGLA_OK;
    }
    /* a newer header: its extra fields must be at their defaults (zero) */
    const unsigned char *extra = (const unsigned char *)user + sizeof *out;
    for (size_t i = 0; i < n - sizeof *out; i++)
        if (extra[i])
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                             "descriptor size = %zu sets byte %zu, past the %zu bytes this library (sgla %s) knows",
                             n, sizeof *out + i, sizeof *out, SGLA_VERSION_STRING);
    memcpy(out, user, sizeof *out);
    out->size = sizeof *out;
    return SGLA_OK;
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
sgla_status sgla_check_outputs(const sgla_forward_desc *d, const void *o, size_t bo, const char *oname,
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

sgla_status sgla_check_desc(const sgla_forward_desc *d, int values_on_host)
{
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
    if (!sgla_mul_ok(d->B, d->T, &bt) || !sgla_mul_ok(bt, d->H, &bth) || !sgla_mul_ok(bth, d->K, &nqk) ||
        !sgla_mul_ok(bth, d->V, &nv) || !sgla_mul_ok(d->H, d->K, &hk) || !sgla_mul_ok(hk, d->V, &hkv) ||
        !sgla_mul_ok(nqk > nv ? nqk : nv, (int64_t)es, &bytes) || bytes > lim || (uint64_t)bytes > SIZE_MAX)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "B*T*H*max(K,V) elements overflow (B=%lld T=%lld H=%lld K=%lld V=%lld)",
                         (long long)d->B, (long long)d->T, (long long)d->H, (long long)d->K, (long long)d->V);

    if (d->cu_seqlens) {
        if (d->B != 1) return sgla_fail(SGLA_ERR_CU_SEQLENS_BATCH, "cu_seqlens given with B = %lld", (long long)d->B);
        if (d->num_seqs < 1) return sgla_fail(SGLA_ERR_INVALID_NUM_SEQS, "num_seqs = %lld with cu_seqlens", (long long)d->num_seqs);
    }
    int64_t N = sgla_num_sequences(d);
    if (!sgla_mul_ok(N, hkv, &n_state) || !sgla_mul_ok(n_state, 4, &bytes) || bytes > lim || (uint64_t)bytes > SIZE_MAX)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "state N*H*K*V overflows (N=%lld)", (long long)N);

    if (d->T > 0) {
        if (!d->q) return sgla_fail(SGLA_ERR_NULL_POINTER, "q is NULL");
        if (!d->k) return sgla_fail(SGLA_ERR_NULL_POINTER, "k is NULL");
        if (!d->v) return sgla_fail(SGLA_ERR_NULL_POINTER, "v is NULL");
        if (!d->o) return sgla_fail(SGLA_ERR_NULL_POINTER, "o is NULL");
    }
    if (d->g && d->g_gamma) return sgla_fail(SGLA_ERR_BOTH_GATES, "g and g_gamma are both set");
    if (!d->workspace && d->workspace_bytes)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "workspace_bytes = %zu with a NULL workspace", d->workspace_bytes);
    if (!isfinite(d->scale)) return sgla_fail(SGLA_ERR_INVALID_SCALE, "scale = %g", (double)d->scale);

    /* Every pointer naturally aligned for its element type: the backends load
     * whole elements (and the CUDA kernels ask for more, see sgla.h). */
    if ((d->q && !is_aligned(d->q, es)) || (d->k && !is_aligned(d->k, es)) || (d->v && !is_aligned(d->v, es)) ||
        (d->o && !is_aligned(d->o, es)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "q, k, v and o must be aligned to their element size (%zu bytes)", es);
    if (!is_aligned(d->g, 4) || !is_aligned(d->g_gamma, 4) || !is_aligned(d->h0, 4) || !is_aligned(d->ht, 4) ||
        !is_aligned(d->cu_seqlens, 8))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "g, g_gamma, h0, ht must be 4-byte and cu_seqlens 8-byte aligned");

    sgla_status st = sgla_check_outputs(d, d->o, (size_t)nv * es, "o", d->ht, (size_t)n_state * 4, "ht");
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

sgla_status sgla_validate(const sgla_forward_desc *user, int values_on_host)
{
    sgla_clear_error();
    sgla_forward_desc d;
    sgla_status st = sgla_desc_read(user, &d);
    return st != SGLA_OK ? st : sgla_check_desc(&d, values_on_host);
}
