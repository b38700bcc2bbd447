/* The descriptors as the caller's header laid them out, and the checks every
 * backend runs first: shapes and their overflow, pointers and alignment,
 * outputs overlapping inputs, and (host memory) the values of the gates and
 * offsets. */
#include "core/core.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A larger size than any header could have: an uninitialised descriptor. */
#define DESC_MAX_SIZE 4096

/* cu_seqlens values (host memory): starts at 0, never decreases, ends at T */
static sgla_status check_cu(const char *name, const int64_t *cu, int64_t n, int64_t T)
{
    if (cu[0] != 0) return sgla_fail(SGLA_ERR_CU_SEQLENS_START, "%s[0] = %lld", name, (long long)cu[0]);
    for (int64_t i = 0; i < n; i++)
        if (cu[i + 1] < cu[i])
            return sgla_fail(SGLA_ERR_CU_SEQLENS_DECREASING, "%s[%lld] = %lld < %s[%lld] = %lld", name, (long long)(i + 1),
                             (long long)cu[i + 1], name, (long long)i, (long long)cu[i]);
    if (cu[n] != T)
        return sgla_fail(SGLA_ERR_CU_SEQLENS_END, "%s[%lld] = %lld but T = %lld", name, (long long)n, (long long)cu[n],
                         (long long)T);
    return SGLA_OK;
}

/* The caller's struct of `n` bytes (its size field) into ours of `ours` bytes
 * (already holding the defaults): below ours only the sizes of the published
 * layouts (`older`, `nolder` of them; a size between them would end inside a
 * field); a larger one must leave the fields we do not know zero. */
static sgla_status read_sized(const void *user, size_t n, const size_t *older, int nolder, void *out, size_t ours,
                              const char *what)
{
    int known = n >= ours && n <= DESC_MAX_SIZE;
    for (int i = 0; i < nolder; i++) known |= n == older[i];
    if (!known)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                         "%s size = %zu, this library reads %zu: initialise it with %s_init()", what, n, ours, what);
    if (n <= ours) {
        memcpy(out, user, n);
        return SGLA_OK;
    }
    const unsigned char *extra = (const unsigned char *)user + ours;
    for (size_t i = 0; i < n - ours; i++)
        if (extra[i])
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                             "%s size = %zu sets byte %zu, past the %zu bytes this library (sgla %s) knows", what, n,
                             ours + i, ours, SGLA_VERSION_STRING);
    memcpy(out, user, ours);
    return SGLA_OK;
}

sgla_status sgla_desc_read(const sgla_forward_desc *user, sgla_forward_desc *out)
{
    if (!user) return sgla_fail(SGLA_ERR_NULL_POINTER, "the descriptor is NULL");
    sgla_forward_desc_init(out);
    /* the layout of 0.2, the first with a size field; later fields go after it (0.3: pool) */
    const size_t older[] = {offsetof(sgla_forward_desc, workspace_bytes) + sizeof(size_t)};
    sgla_status st = read_sized(user, user->size, older, 1, out, sizeof *out, "sgla_forward_desc");
    out->size = sizeof *out;
    return st;
}

sgla_status sgla_backward_desc_read(const sgla_backward_desc *user, sgla_backward_desc *out, sgla_forward_desc *fwd)
{
    if (!user) return sgla_fail(SGLA_ERR_NULL_POINTER, "the backward descriptor is NULL");
    sgla_backward_desc_init(out);
    /* the layout before workspace_limit */
    const size_t older[] = {offsetof(sgla_backward_desc, workspace_bytes) + sizeof(size_t)};
    sgla_status st = read_sized(user, user->size, older, 1, out, sizeof *out, "sgla_backward_desc");
    out->size = sizeof *out;
    if (st != SGLA_OK) return st;
    if (!out->fwd) return sgla_fail(SGLA_ERR_NULL_POINTER, "the backward descriptor's fwd is NULL");
    if ((st = sgla_desc_read(out->fwd, fwd)) != SGLA_OK) return st;
    out->fwd = fwd;
    return SGLA_OK;
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

static int ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return 0;
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    /* ends saturated: a caller's workspace_bytes may reach past the address space */
    const uintptr_t a1 = na > UINTPTR_MAX - a0 ? UINTPTR_MAX : a0 + na, b1 = nb > UINTPTR_MAX - b0 ? UINTPTR_MAX : b0 + nb;
    return a0 < b1 && b0 < a1;
}

/* Sizes of a call's tensors, in elements and bytes; filled by check_shape. */
typedef struct counts {
    int64_t bth, nqk, nv, n_state, n_pool; /* n_pool: slots*H*K*V with a pool, else 0 */
    int64_t n_idx;                         /* a pool's index entries: N (t_max or 1) */
    size_t es, aes; /* bytes of an element of q, k, v, o and of the gates and states */
} counts;

/* Everything of d that does not depend on which outputs it has. */
/* need_tensors: q, k, v given when T > 0 (0: a workspace query, which may size a call
 * before its tensors exist) */
static sgla_status check_shape_of(const sgla_forward_desc *d, counts *c, int need_tensors)
{
    if (d->B < 0) return sgla_fail(SGLA_ERR_INVALID_SIZE, "B = %lld, must be >= 0", (long long)d->B);
    if (d->T < 0) return sgla_fail(SGLA_ERR_INVALID_SIZE, "T = %lld, must be >= 0", (long long)d->T);
    if (d->H < 0) return sgla_fail(SGLA_ERR_INVALID_SIZE, "H = %lld, must be >= 0", (long long)d->H);
    if (d->K < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "K = %lld, must be >= 1", (long long)d->K);
    if (d->V < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "V = %lld, must be >= 1", (long long)d->V);
    const size_t es = sgla_dtype_size(d->dtype), aes = sgla_dtype_size(sgla_aux_dtype(d->dtype));
    if (es == 0) return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "dtype %d is not f32, f16, bf16 or f64", (int)d->dtype);
    if (d->chunk < 1 || d->chunk > 1024)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_CHUNK, "chunk = %lld, must be in [1, 1024]", (long long)d->chunk);
    if (d->threads < 0) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "threads = %d, must be >= 0", d->threads);
    if (d->flags & ~SGLA_FLAG_ALL_)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "unknown flag bits 0x%x", d->flags & ~SGLA_FLAG_ALL_);

    /* Element counts, then byte counts, must fit; 2^62 keeps index sums safe. */
    const int64_t lim = (int64_t)1 << 62;
    int64_t bt, hk, hkv, bytes;
    if (!sgla_mul_ok(d->H, d->K, &hk) || !sgla_mul_ok(hk, d->V, &hkv) || hkv > lim)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "H*K*V (a state's elements a sequence) overflow (H=%lld K=%lld V=%lld)",
                         (long long)d->H, (long long)d->K, (long long)d->V);
    if (!sgla_mul_ok(d->B, d->T, &bt) || !sgla_mul_ok(bt, d->H, &c->bth) || !sgla_mul_ok(c->bth, d->K, &c->nqk) ||
        !sgla_mul_ok(c->bth, d->V, &c->nv) ||
        !sgla_mul_ok(c->nqk > c->nv ? c->nqk : c->nv, (int64_t)es, &bytes) || bytes > lim ||
        (uint64_t)bytes > SIZE_MAX || !sgla_mul_ok(c->bth, (int64_t)aes, &bytes))
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "B*T*H*max(K,V) elements overflow (B=%lld T=%lld H=%lld K=%lld V=%lld)",
                         (long long)d->B, (long long)d->T, (long long)d->H, (long long)d->K, (long long)d->V);

    if (d->cu_seqlens) {
        if (d->B != 1) return sgla_fail(SGLA_ERR_CU_SEQLENS_BATCH, "cu_seqlens given with B = %lld", (long long)d->B);
        if (d->num_seqs < 1) return sgla_fail(SGLA_ERR_INVALID_NUM_SEQS, "num_seqs = %lld with cu_seqlens", (long long)d->num_seqs);
    }
    const int64_t N = sgla_num_sequences(d);
    if (!sgla_mul_ok(N, hkv, &c->n_state) || !sgla_mul_ok(c->n_state, (int64_t)aes, &bytes) || bytes > lim ||
        (uint64_t)bytes > SIZE_MAX)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "state N*H*K*V overflows (N=%lld)", (long long)N);
    c->es = es;
    c->aes = aes;
    c->n_pool = 0, c->n_idx = 0;
    if (d->pool) {
        const sgla_state_pool *p = d->pool;
        if (p->slots < 1) return sgla_fail(SGLA_ERR_INVALID_SIZE, "pool: slots = %lld, must be >= 1", (long long)p->slots);
        if (!sgla_mul_ok(p->slots, hkv, &c->n_pool) || !sgla_mul_ok(c->n_pool, (int64_t)aes, &bytes) || bytes > lim ||
            (uint64_t)bytes > SIZE_MAX)
            return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "pool: slots*H*K*V overflows (slots=%lld)", (long long)p->slots);
        if (p->index_bits != 32 && p->index_bits != 64)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: index_bits = %d, must be 32 or 64", p->index_bits);
        if (p->t_max < 0) return sgla_fail(SGLA_ERR_INVALID_SIZE, "pool: t_max = %lld, must be >= 0", (long long)p->t_max);
        if (p->flags & ~(SGLA_POOL_INPLACE | SGLA_POOL_V_FIRST))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: unknown flag bits 0x%x", p->flags);
        if (!p->indices && N > 0) return sgla_fail(SGLA_ERR_NULL_POINTER, "pool: indices is NULL");
        if (!d->h0) return sgla_fail(SGLA_ERR_NULL_POINTER, "pool given but h0 (the pool) is NULL");
        if (d->ht)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                             "with a state pool ht must be NULL: final states go to the pool (SGLA_POOL_INPLACE)");
        if (p->num_accepted && !p->t_max)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: num_accepted needs indices [N][t_max] (t_max > 0)");
        const size_t ib = (size_t)p->index_bits / 8;
        if (!sgla_mul_ok(N, p->t_max ? p->t_max : 1, &c->n_idx) || !sgla_mul_ok(c->n_idx, (int64_t)ib, &bytes) || bytes > lim ||
            (uint64_t)bytes > SIZE_MAX)
            return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "pool: indices N*t_max overflows (t_max=%lld)", (long long)p->t_max);
        if (!is_aligned(p->indices, ib) || !is_aligned(p->num_accepted, ib))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: indices and num_accepted must be %zu-byte aligned", ib);
        if (p->host_cu_seqlens && !d->cu_seqlens)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: host_cu_seqlens given without cu_seqlens");
        if (p->host_cu_seqlens && !is_aligned(p->host_cu_seqlens, 8))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "pool: host_cu_seqlens must be 8-byte aligned");
        sgla_status st;
        /* (values: not by the workspace queries, which read no data) */
        if (p->host_cu_seqlens && need_tensors && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK) &&
            (st = check_cu("pool: host_cu_seqlens", p->host_cu_seqlens, d->num_seqs, d->T)) != SGLA_OK)
            return st;
    }

    if (c->bth > 0 && need_tensors) { /* (B = 0 or H = 0: no element, no pointer needed) */
        if (!d->q) return sgla_fail(SGLA_ERR_NULL_POINTER, "q is NULL");
        if (!d->k) return sgla_fail(SGLA_ERR_NULL_POINTER, "k is NULL");
        if (!d->v) return sgla_fail(SGLA_ERR_NULL_POINTER, "v is NULL");
    }
    if (d->g && d->g_gamma) return sgla_fail(SGLA_ERR_BOTH_GATES, "g and g_gamma are both set");
    if (!d->workspace && d->workspace_bytes)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "workspace_bytes = %zu with a NULL workspace", d->workspace_bytes);
    if (!isfinite(d->scale)) return sgla_fail(SGLA_ERR_INVALID_SCALE, "scale = %g", (double)d->scale);

    /* Every pointer naturally aligned for its element type: the backends load
     * whole elements (and the CUDA kernels ask for more, see sgla.h). */
    if ((d->q && !is_aligned(d->q, es)) || (d->k && !is_aligned(d->k, es)) || (d->v && !is_aligned(d->v, es)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "q, k and v must be aligned to their element size (%zu bytes)", es);
    if (!is_aligned(d->g, aes) || !is_aligned(d->g_gamma, aes) || !is_aligned(d->h0, aes) || !is_aligned(d->cu_seqlens, 8))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "g, g_gamma and h0 must be %zu-byte and cu_seqlens 8-byte aligned", aes);
    return SGLA_OK;
}

static sgla_status check_shape(const sgla_forward_desc *d, counts *c) { return check_shape_of(d, c, 1); }

/* A tensor of a call: where, how many bytes, its name. */
typedef struct span {
    const void *p;
    size_t n;
    const char *name;
} span;

/* The forward's inputs as spans; returns how many (7; h0 last, SPAN_H0). */
enum { SPAN_H0 = 6 };
static int input_spans(const sgla_forward_desc *d, const counts *c, span *in)
{
    const size_t bq = (size_t)c->nqk * c->es, bv = (size_t)c->nv * c->es;
    const size_t bs = (size_t)(d->pool ? c->n_pool : c->n_state) * c->aes; /* h0: the pool when there is one */
    const size_t bcu = d->cu_seqlens ? (size_t)(d->num_seqs + 1) * 8 : 0;
    const span s[7] = {{d->q, bq, "q"},
                       {d->k, bq, "k"},
                       {d->v, bv, "v"},
                       {d->g, d->g ? (size_t)c->bth * c->aes : 0, "g"},
                       {d->g_gamma, (size_t)d->H * c->aes, "g_gamma"},
                       {d->cu_seqlens, bcu, "cu_seqlens"},
                       {d->h0, bs, "h0"}};
    memcpy(in, s, sizeof s);
    return 7;
}

/* No output overlaps an input or another output, except output out[same_o]
 * equal to input in[same_i] exactly (the in-place update of a state; -1 for
 * none).  By index, not by address: a state given in place must still not
 * overlap any other input (h0 = ht = q is an overlap of ht and q). */
static sgla_status check_spans(const span *in, int nin, const span *out, int nout, int same_i, int same_o)
{
    for (int o = 0; o < nout; o++) {
        for (int i = 0; i < nin; i++) {
            if (!ranges_overlap(out[o].p, out[o].n, in[i].p, in[i].n)) continue;
            const int pair = i == same_i && o == same_o;
            if (pair && out[o].p == in[i].p) continue;
            return sgla_fail(SGLA_ERR_OVERLAP, "%s overlaps %s%s", out[o].name, in[i].name,
                             pair ? " (only exactly equal is allowed)" : "");
        }
        for (int p = 0; p < o; p++)
            if (ranges_overlap(out[o].p, out[o].n, out[p].p, out[p].n))
                return sgla_fail(SGLA_ERR_OVERLAP, "%s overlaps %s", out[o].name, out[p].name);
    }
    return SGLA_OK;
}

sgla_status sgla_check_outputs(const sgla_forward_desc *d, const void *o, size_t bo, const char *oname,
                               const void *ht, size_t bht, const char *htname)
{
    counts c;
    sgla_status st = check_shape(d, &c);
    if (st != SGLA_OK) return st;
    span in[7];
    const int nin = input_spans(d, &c, in);
    const span out[2] = {{o, bo, oname}, {ht, bht, htname}};
    return check_spans(in, nin, out, 2, -1, -1);
}

static sgla_status check_gate_values(const char *name, const void *p, sgla_dtype adt, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const double x = sgla_load(p, adt, i);
        if (!isfinite(x)) return sgla_fail(SGLA_ERR_NONFINITE_GATE, "%s[%lld] = %g", name, (long long)i, x);
        if (x > 0.0) return sgla_fail(SGLA_ERR_POSITIVE_GATE, "%s[%lld] = %g > 0", name, (long long)i, x);
    }
    return SGLA_OK;
}

static sgla_status check_finite(const char *name, const void *p, sgla_dtype dt, int64_t n)
{
    for (int64_t i = 0; p && i < n; i++) {
        const double x = sgla_load(p, dt, i);
        if (!isfinite(x)) return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "%s[%lld] = %g", name, (long long)i, x);
    }
    return SGLA_OK;
}

/* The values of a host-memory call: offsets and gates (unless skipped), and
 * with SGLA_FLAG_CHECK_FINITE the data. */
/* The pool's indices (host): every slot in [-1, slots), accepted counts in
 * [1, t_max], sequences at most t_max long, and no slot written twice. */
static sgla_status check_pool_values(const sgla_forward_desc *d)
{
    const sgla_state_pool *p = d->pool;
    const int64_t N = sgla_num_sequences(d), tm = p->t_max ? p->t_max : 1;
    for (int64_t n = 0; n < N; n++) {
        if (p->num_accepted) {
            const int64_t a = sgla_pool_accepted(p, n);
            if (a < 1 || a > p->t_max)
                return sgla_fail(SGLA_ERR_POOL_INDEX, "pool: num_accepted[%lld] = %lld, not in [1, %lld]", (long long)n,
                                 (long long)a, (long long)p->t_max);
        }
        for (int64_t t = 0; t < tm; t++) {
            const int64_t s = sgla_pool_index(p, n, t);
            if (s < -1 || s >= p->slots)
                return sgla_fail(SGLA_ERR_POOL_INDEX, "pool: indices[%lld]%s = %lld, not in [-1, %lld)", (long long)n,
                                 p->t_max ? "[t]" : "", (long long)s, (long long)p->slots);
        }
        if (p->t_max && d->T > 0) {
            const int64_t len = d->cu_seqlens ? d->cu_seqlens[n + 1] - d->cu_seqlens[n] : d->T;
            if (len > p->t_max && sgla_pool_read_slot(p, n) >= 0)
                return sgla_fail(SGLA_ERR_POOL_INDEX, "pool: sequence %lld has %lld tokens, more than t_max = %lld",
                                 (long long)n, (long long)len, (long long)p->t_max);
        }
    }
    if (!(p->flags & SGLA_POOL_INPLACE)) return SGLA_OK;
    unsigned char *seen = calloc((size_t)p->slots, 1);
    if (!seen) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "pool: %lld bytes to check the writes", (long long)p->slots);
    sgla_status st = SGLA_OK;
    for (int64_t n = 0; n < N && st == SGLA_OK; n++) {
        if (sgla_pool_read_slot(p, n) < 0) continue; /* a padded row writes nothing */
        const int64_t len = !p->t_max ? 1 : d->cu_seqlens ? d->cu_seqlens[n + 1] - d->cu_seqlens[n] : d->T;
        for (int64_t t = 0; t < len && st == SGLA_OK; t++) {
            const int64_t s = sgla_pool_index(p, n, t);
            if (s < 0) continue;
            if (seen[s]) st = sgla_fail(SGLA_ERR_POOL_CONFLICT, "pool: slot %lld is written twice (sequence %lld)",
                                        (long long)s, (long long)n);
            seen[s] = 1;
        }
    }
    free(seen);
    return st;
}

/* SGLA_FLAG_CHECK_FINITE with a pool: the slots the call reads (a fresh request's slot, or one no row
 * names, may hold anything; accepted counts and slots out of range are left to check_pool_values, or
 * skipped under SGLA_FLAG_SKIP_VALUE_CHECK, so that no index array is read out of its bounds here) */
static sgla_status check_pool_finite(const sgla_forward_desc *d, sgla_dtype adt)
{
    const sgla_state_pool *p = d->pool;
    const int64_t N = sgla_num_sequences(d), hkv = d->H * d->K * d->V;
    const size_t aes = sgla_dtype_size(adt);
    for (int64_t n = 0; n < N; n++) {
        const int64_t a = sgla_pool_accepted(p, n);
        if (p->t_max && (a < 1 || a > p->t_max)) continue;
        const int64_t s = sgla_pool_read_slot(p, n);
        if (!sgla_pool_continues(p, n) || s >= p->slots) continue;
        const unsigned char *slot = (const unsigned char *)d->h0 + (size_t)(s * hkv) * aes;
        for (int64_t i = 0; i < hkv; i++) {
            const double x = sgla_load(slot, adt, i);
            if (!isfinite(x))
                return sgla_fail(SGLA_ERR_NONFINITE_INPUT, "pool: slot %lld (sequence %lld) [%lld] = %g", (long long)s,
                                 (long long)n, (long long)i, x);
        }
    }
    return SGLA_OK;
}

static sgla_status check_values(const sgla_forward_desc *d, const counts *c)
{
    const sgla_dtype adt = sgla_aux_dtype(d->dtype);
    sgla_status st;
    if (!(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
        if (d->cu_seqlens && (st = check_cu("cu_seqlens", d->cu_seqlens, d->num_seqs, d->T)) != SGLA_OK) return st;
        /* both on the host here: the copy must be the same offsets (sgla.h) */
        if (d->cu_seqlens && d->pool && d->pool->host_cu_seqlens)
            for (int64_t n = 0; n <= d->num_seqs; n++)
                if (d->pool->host_cu_seqlens[n] != d->cu_seqlens[n])
                    return sgla_fail(SGLA_ERR_INVALID_ARGUMENT,
                                     "pool: host_cu_seqlens[%lld] = %lld but cu_seqlens[%lld] = %lld (a copy of it)",
                                     (long long)n, (long long)d->pool->host_cu_seqlens[n], (long long)n,
                                     (long long)d->cu_seqlens[n]);
        if (d->g && (st = check_gate_values("g", d->g, adt, c->bth)) != SGLA_OK) return st;
        if (d->g_gamma && (st = check_gate_values("g_gamma", d->g_gamma, adt, d->H)) != SGLA_OK) return st;
    }
    /* the pool's indices before its slots are scanned: only the slots a call reads are */
    if (d->pool && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK) && (st = check_pool_values(d)) != SGLA_OK) return st;
    if (d->flags & SGLA_FLAG_CHECK_FINITE) {
        if ((st = check_finite("q", d->q, d->dtype, c->nqk)) != SGLA_OK ||
            (st = check_finite("k", d->k, d->dtype, c->nqk)) != SGLA_OK ||
            (st = check_finite("v", d->v, d->dtype, c->nv)) != SGLA_OK ||
            (st = d->pool ? check_pool_finite(d, adt) : check_finite("h0", d->h0, adt, c->n_state)) != SGLA_OK)
            return st;
    }
    return SGLA_OK;
}

static sgla_status check_desc_of(const sgla_forward_desc *d, int values_on_host, int need_tensors)
{
    counts c;
    sgla_status st = check_shape_of(d, &c, need_tensors);
    if (st != SGLA_OK) return st;
    if (c.bth > 0 && need_tensors && !d->o) return sgla_fail(SGLA_ERR_NULL_POINTER, "o is NULL");
    if (d->o && !is_aligned(d->o, c.es))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "o must be aligned to its element size (%zu bytes)", c.es);
    if (!is_aligned(d->ht, c.aes)) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "ht must be %zu-byte aligned", c.aes);
    span in[11];
    int nin = input_spans(d, &c, in);
    /* the workspace is written too: it may overlap no tensor of the call; a pool given SGLA_POOL_INPLACE is
     * written (its slots), so it may overlap nothing but itself as h0, and its index arrays are read */
    span out[4] = {{d->o, (size_t)c.nv * c.es, "o"},
                   {d->ht, (size_t)c.n_state * c.aes, "ht"},
                   {d->workspace, d->workspace ? d->workspace_bytes : 0, "workspace"},
                   {NULL, 0, "the pool (h0, written with SGLA_POOL_INPLACE)"}};
    int same_o = 1; /* ht may be h0 exactly */
    if (d->pool) {
        const sgla_state_pool *p = d->pool;
        const int64_t N = sgla_num_sequences(d);
        const size_t ib = (size_t)p->index_bits / 8;
        in[nin++] = (span){p->indices, (size_t)c.n_idx * ib, "pool: indices"};
        in[nin++] = (span){p->has_initial_state, p->has_initial_state ? (size_t)N : 0, "pool: has_initial_state"};
        in[nin++] = (span){p->num_accepted, p->num_accepted ? (size_t)N * ib : 0, "pool: num_accepted"};
        in[nin++] = (span){p->host_cu_seqlens, p->host_cu_seqlens ? (size_t)(N + 1) * 8 : 0, "pool: host_cu_seqlens"};
        if (p->flags & SGLA_POOL_INPLACE) out[3] = (span){d->h0, in[SPAN_H0].n, out[3].name}, same_o = 3;
    }
    if ((st = check_spans(in, nin, out, 4, SPAN_H0, same_o)) != SGLA_OK) return st;
    return values_on_host ? check_values(d, &c) : SGLA_OK;
}

sgla_status sgla_check_desc(const sgla_forward_desc *d, int values_on_host) { return check_desc_of(d, values_on_host, 1); }

sgla_status sgla_check_query(const sgla_forward_desc *d) { return check_desc_of(d, 0, 0); }

static sgla_status check_backward_of(const sgla_backward_desc *b, int values_on_host, int need_tensors)
{
    const sgla_forward_desc *d = b->fwd;
    if (d->pool) return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "the backward does not take a state pool");
    counts c;
    sgla_status st = check_shape_of(d, &c, need_tensors);
    if (st != SGLA_OK) return st;
    if (c.bth > 0 && need_tensors) {
        if (!b->dout) return sgla_fail(SGLA_ERR_NULL_POINTER, "dout is NULL");
        if (!b->dq) return sgla_fail(SGLA_ERR_NULL_POINTER, "dq is NULL");
        if (!b->dk) return sgla_fail(SGLA_ERR_NULL_POINTER, "dk is NULL");
        if (!b->dv) return sgla_fail(SGLA_ERR_NULL_POINTER, "dv is NULL");
    }
    if (b->dg && !d->g) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "dg given but the forward has no g");
    if (b->dg_gamma && !d->g_gamma)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "dg_gamma given but the forward has no g_gamma");
    if (b->dh0 && !d->h0) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "dh0 given but the forward has no h0");
    if (!b->workspace && b->workspace_bytes)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "workspace_bytes = %zu with a NULL workspace", b->workspace_bytes);
    if ((b->dout && !is_aligned(b->dout, c.es)) || (b->dq && !is_aligned(b->dq, c.es)) ||
        (b->dk && !is_aligned(b->dk, c.es)) || (b->dv && !is_aligned(b->dv, c.es)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "dout, dq, dk and dv must be aligned to their element size (%zu bytes)",
                         c.es);
    if (!is_aligned(b->dht, c.aes) || !is_aligned(b->dg, c.aes) || !is_aligned(b->dg_gamma, c.aes) ||
        !is_aligned(b->dh0, c.aes))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "dht, dg, dg_gamma and dh0 must be %zu-byte aligned", c.aes);
    span in[9];
    int nin = input_spans(d, &c, in);
    in[nin++] = (span){b->dout, (size_t)c.nv * c.es, "dout"};
    const int dht_i = nin;
    in[nin++] = (span){b->dht, (size_t)c.n_state * c.aes, "dht"};
    const span out[7] = {{b->dq, (size_t)c.nqk * c.es, "dq"},
                         {b->dk, (size_t)c.nqk * c.es, "dk"},
                         {b->dv, (size_t)c.nv * c.es, "dv"},
                         {b->dg, (size_t)c.bth * c.aes, "dg"},
                         {b->dg_gamma, (size_t)d->H * c.aes, "dg_gamma"},
                         {b->dh0, (size_t)c.n_state * c.aes, "dh0"},
                         {b->workspace, b->workspace ? b->workspace_bytes : 0, "workspace"}};
    if ((st = check_spans(in, nin, out, 7, dht_i, 5)) != SGLA_OK) return st;
    if (!values_on_host) return SGLA_OK;
    if ((st = check_values(d, &c)) != SGLA_OK) return st;
    if (d->flags & SGLA_FLAG_CHECK_FINITE) {
        if ((st = check_finite("dout", b->dout, d->dtype, c.nv)) != SGLA_OK ||
            (st = check_finite("dht", b->dht, sgla_aux_dtype(d->dtype), c.n_state)) != SGLA_OK)
            return st;
    }
    return SGLA_OK;
}

sgla_status sgla_check_backward(const sgla_backward_desc *b, int values_on_host)
{
    return check_backward_of(b, values_on_host, 1);
}

sgla_status sgla_check_backward_query(const sgla_backward_desc *b) { return check_backward_of(b, 0, 0); }

sgla_status sgla_check_host_values(const sgla_forward_desc *d)
{
    counts c;
    sgla_status st = check_shape(d, &c);
    return st != SGLA_OK ? st : check_values(d, &c);
}

sgla_status sgla_validate(const sgla_forward_desc *user, int values_on_host)
{
    sgla_clear_error();
    sgla_forward_desc d;
    sgla_status st = sgla_desc_read(user, &d);
    return st != SGLA_OK ? st : sgla_check_desc(&d, values_on_host);
}

sgla_status sgla_validate_backward(const sgla_backward_desc *user, int values_on_host)
{
    sgla_clear_error();
    sgla_backward_desc b;
    sgla_forward_desc f;
    sgla_status st = sgla_backward_desc_read(user, &b, &f);
    return st != SGLA_OK ? st : sgla_check_backward(&b, values_on_host);
}
