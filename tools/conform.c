/* The conformance harness (conform.h). */
#include "conform.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGLA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

double conform_bar(sgla_dtype dt) { return dt == SGLA_F16 ? 1e-3 : dt == SGLA_BF16 ? 8e-3 : 1e-5; }

static const char *gate_name(int g)
{
    static const char *n[] = {"none", "g_gamma", "alpha", "g"};
    return n[g];
}
static const char *range_name(int r)
{
    static const char *n[] = {"mild", "near0", "-30", "mix0/-30", "reset", "-1e-7"};
    return n[r];
}

static float draw_gate(ref_rng *r, int range)
{
    switch (range) {
    case CONFORM_NEAR0: return ref_rng_uniform(r) < 0.2 ? 0.0f : (float)(-1e-3 * ref_rng_uniform(r));
    case CONFORM_NEG30: return -30.0f;
    case CONFORM_NEAR1: return -1e-7f;
    case CONFORM_MIX30: return ref_rng_uniform(r) < 0.5 ? 0.0f : -30.0f;
    case CONFORM_RESET: {
        static const float huge[4] = {-1e12f, -1e17f, -1e30f, -FLT_MAX};
        if (ref_rng_uniform(r) < 0.03) return huge[(int)(4 * ref_rng_uniform(r)) & 3];
        return (float)(-0.3 * ref_rng_uniform(r));
    }
    default: return (float)(-0.3 * ref_rng_uniform(r));
    }
}

static void *xmalloc(size_t bytes) { return malloc(bytes ? bytes : 16); }

void conform_free(conform_data *x)
{
    free(x->q), free(x->k), free(x->v), free(x->g), free(x->g_gamma), free(x->h0), free(x->cu);
    free(x->o64), free(x->ht64);
    free(x->dgg_scale);
    free(x->dout), free(x->dht), free(x->dq64), free(x->dk64), free(x->dv64), free(x->dg64), free(x->dgg64),
        free(x->dh064);
    memset(x, 0, sizeof *x);
}

const int64_t conform_cuts256[9] = {0, 0, 1, 64, 64, 129, 192, 256, 256};

sgla_status conform_draw(conform_data *x, const conform_case *c, ref_rng *r, sgla_backend ref_kind)
{
    memset(x, 0, sizeof *x);
    x->c = *c;
    const int64_t B = c->B, T = c->T, H = c->H, K = c->K, V = c->V;
    const size_t es = sgla_dtype_size(c->dtype);
    x->N = c->nseq > 0 ? c->nseq : B;
    if (c->nseq > 0) {
        /* the case's cuts, or random cut points, sorted; with three or more sequences the second is empty */
        const int64_t N = x->N;
        x->cu = xmalloc((size_t)(N + 1) * sizeof *x->cu);
        if (!x->cu) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: cu_seqlens");
        if (c->cuts) {
            if (c->cuts[0] != 0 || c->cuts[N] != T) {
                conform_free(x);
                return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "conform: the case's cuts do not span 0 .. T");
            }
            memcpy(x->cu, c->cuts, (size_t)(N + 1) * sizeof *x->cu);
        } else {
            x->cu[0] = 0;
            x->cu[N] = T;
            for (int64_t i = 1; i < N; i++) x->cu[i] = (int64_t)(ref_rng_next(r) % (uint64_t)(T + 1));
            for (int64_t i = 1; i < N; i++)
                for (int64_t j = i + 1; j < N; j++)
                    if (x->cu[j] < x->cu[i]) {
                        int64_t t = x->cu[i];
                        x->cu[i] = x->cu[j];
                        x->cu[j] = t;
                    }
            if (N > 2) x->cu[2] = x->cu[1];
        }
    }
    x->nqk = B * T * H * K, x->nv = B * T * H * V, x->ns = x->N * H * K * V, x->ng = B * T * H;
    x->q = xmalloc((size_t)x->nqk * es), x->k = xmalloc((size_t)x->nqk * es), x->v = xmalloc((size_t)x->nv * es);
    x->o64 = xmalloc((size_t)x->nv * sizeof(double)), x->ht64 = xmalloc((size_t)x->ns * sizeof(double));
    if (!x->q || !x->k || !x->v || !x->o64 || !x->ht64) {
        conform_free(x);
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: inputs of %lld x %lld x %lld", (long long)B, (long long)T,
                         (long long)H);
    }
    ref_rng_fill(r, x->q, c->dtype, x->nqk, 1.0);
    ref_rng_fill(r, x->k, c->dtype, x->nqk, 1.0);
    ref_rng_fill(r, x->v, c->dtype, x->nv, 1.0);
    if (c->gate == CONFORM_GATE_G) {
        if (!(x->g = xmalloc((size_t)x->ng * 4))) goto oom;
        for (int64_t i = 0; i < x->ng; i++) x->g[i] = draw_gate(r, c->range);
    } else if (c->gate == CONFORM_GATE_GAMMA || c->gate == CONFORM_GATE_ALPHA) {
        if (!(x->g_gamma = xmalloc((size_t)H * 4))) goto oom;
        const float a = draw_gate(r, c->range);
        for (int64_t h = 0; h < H; h++)
            x->g_gamma[h] = c->gate == CONFORM_GATE_ALPHA ? a
                            : c->range == CONFORM_RESET ? (h % 2 ? -FLT_MAX : (float)(-0.3 * ref_rng_uniform(r)))
                                                        : draw_gate(r, c->range);
    }
    if (c->h0) {
        if (!(x->h0 = xmalloc((size_t)x->ns * 4))) goto oom;
        for (int64_t i = 0; i < x->ns; i++) x->h0[i] = (float)(ref_rng_normal(r) * 0.5);
    }
    sgla_forward_desc *d = &x->d;
    sgla_forward_desc_init(d);
    d->q = x->q, d->k = x->k, d->v = x->v, d->dtype = c->dtype;
    d->B = B, d->T = T, d->H = H, d->K = K, d->V = V;
    d->g = x->g, d->g_gamma = x->g_gamma, d->h0 = x->h0;
    d->scale = (float)((0.5 + ref_rng_uniform(r)) / sqrt((double)K));
    d->cu_seqlens = x->cu, d->num_seqs = c->nseq > 0 ? x->N : 0;
    d->chunk = c->chunk > 0 ? c->chunk : 64;
    d->threads = c->threads;
    sgla_status st = sgla_reference(d, ref_kind ? ref_kind : SGLA_BACKEND_REF_A, x->o64, x->ht64);
    if (st != SGLA_OK) conform_free(x);
    return st;
oom:
    conform_free(x);
    return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: gates or h0");
}

/* NaN of every dtype (0x7E00 fp16, 0x7FC0 bf16, a quiet NaN fp32) */
static void poison(void *p, sgla_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (dt == SGLA_F32) ((float *)p)[i] = NAN;
        else ((uint16_t *)p)[i] = dt == SGLA_F16 ? 0x7E00 : 0x7FC0;
    }
}

/* One output against its fp64 reference: rel L2 (NaN anywhere gives NaN), the farthest element
 * (INFINITY once a NaN is met, which stays the farthest), max |ref|, and the NaN left (poison). */
typedef struct diff_stats {
    double rel, max_abs, max_ref;
    int64_t unwritten, worst;
    double worst_out, worst_ref;
} diff_stats;

static diff_stats diff_of(const void *p, sgla_dtype dt, const double *ref, int64_t n)
{
    diff_stats s = {0};
    double num = 0, den = 0, far = -1;
    for (int64_t i = 0; i < n; i++) {
        const double a = sgla_load(p, dt, i), b = ref[i], d = fabs(a - b);
        if (isnan(a)) s.unwritten++;
        num += (a - b) * (a - b);
        den += b * b;
        if (fabs(b) > s.max_ref) s.max_ref = fabs(b);
        if (!(d <= far)) far = isnan(d) ? INFINITY : d, s.worst = i, s.worst_out = a, s.worst_ref = b;
    }
    s.rel = n == 0 ? 0 : den > 0 ? sqrt(num / den) : (num == 0 ? 0 : INFINITY);
    s.max_abs = n == 0 ? 0 : far;
    return s;
}

/* Judge o (dtype) and ht (fp32, or NULL) against the reference: rel L2 and, since one wrong
 * element hides in the rel L2 of a large tensor, the farthest element (<= 4 bar max|ref|). */
static void judge(const conform_data *x, const void *o, const float *ht, conform_result *res)
{
    const diff_stats so = diff_of(o, x->c.dtype, x->o64, x->nv);
    const diff_stats sh = ht ? diff_of(ht, SGLA_F32, x->ht64, x->ns) : (diff_stats){0};
    res->o_rel = so.rel, res->o_max_abs = so.max_abs, res->o_max_ref = so.max_ref, res->o_unwritten = so.unwritten;
    res->ht_rel = sh.rel, res->ht_max_abs = sh.max_abs, res->ht_max_ref = sh.max_ref, res->ht_unwritten = sh.unwritten;
    res->has_ht = ht != NULL;
    /* comparisons written so that NaN fails them */
    res->pass = res->status == SGLA_OK && res->o_unwritten == 0 && res->ht_unwritten == 0 && res->o_rel <= res->bar &&
                res->o_max_abs <= 4 * res->bar * res->o_max_ref && res->ht_rel <= res->bar &&
                res->ht_max_abs <= 4 * res->bar * res->ht_max_ref;
}

/* the case in words, after `prefix` ("" or e.g. "pool ") */
static void label(const conform_data *x, sgla_backend be, const sgla_cuda_plan *force, const char *prefix,
                  conform_result *res)
{
    const conform_case *c = &x->c;
    char plan[80] = "";
    if (force) snprintf(plan, sizeof plan, " [row %d, nseg %d, blocks %d, sub %d]", force->config, force->nseg, force->blocks,
                        force->sub);
    char chunk[24] = ""; /* the chunk when not the default 64 */
    if (x->d.chunk != 64) snprintf(chunk, sizeof chunk, " C=%lld", (long long)x->d.chunk);
    snprintf(res->label, sizeof res->label,
             "%s%s %s gate=%s/%s B=%lld T=%lld H=%lld K=%lld V=%lld%s h0=%d ht=%d%s nseq=%d%s%s", prefix, sgla_backend_name(be),
             sgla_dtype_name(c->dtype), gate_name(c->gate), range_name(c->range), (long long)c->B, (long long)c->T,
             (long long)c->H, (long long)c->K, (long long)c->V, chunk, c->h0, c->ht, c->inplace ? "(in place)" : "",
             c->nseq, c->cuts ? " (fixed cuts)" : "", plan);
    if (x->d.flags & SGLA_FLAG_ALLOW_TF32) {
        const size_t n = strlen(res->label);
        snprintf(res->label + n, sizeof res->label - n, " (TF32 alone)");
    }
}

static int check_host(const conform_data *x, sgla_backend be, conform_result *res)
{
    const sgla_dtype dt = x->c.dtype;
    void *o = xmalloc((size_t)x->nv * sgla_dtype_size(dt));
    float *ht = x->c.ht ? xmalloc((size_t)x->ns * 4) : NULL;
    if (!o || (x->c.ht && !ht)) {
        free(o), free(ht);
        res->status = SGLA_ERR_OUT_OF_MEMORY;
        return res->pass = 0;
    }
    poison(o, dt, x->nv);
    sgla_forward_desc d = x->d;
    d.o = o;
    if (ht) {
        if (x->c.inplace && x->h0) {
            memcpy(ht, x->h0, (size_t)x->ns * 4);
            d.h0 = ht;
        } else {
            poison(ht, SGLA_F32, x->ns);
        }
        d.ht = ht;
    }
    res->status = sgla_forward(&d, be);
    judge(x, o, ht, res);
    free(o), free(ht);
    return res->pass;
}

#ifdef SGLA_HAVE_CUDA
/* The forward's inputs of a case on the device, and the stream the checks run on. */
typedef struct dev_case {
    void *q, *k, *v, *g, *gg, *h0, *cu;
    cudaStream_t st;
} dev_case;

/* src (n bytes, when not NULL) to a new device buffer of n + pad bytes. */
static cudaError_t upload(void **dst, const void *src, size_t n, size_t pad)
{
    *dst = NULL;
    if (!src) return cudaSuccess;
    cudaError_t e = cudaMalloc(dst, n + pad);
    return e == cudaSuccess ? cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice) : e;
}

static cudaError_t dev_case_upload(const conform_data *x, dev_case *c)
{
    const size_t es = sgla_dtype_size(x->c.dtype);
    memset(c, 0, sizeof *c);
    cudaError_t e = cudaStreamCreateWithFlags(&c->st, cudaStreamNonBlocking);
    /* 16 bytes past q, k, v, g: the misaligned cases shift them */
    if (e == cudaSuccess) e = upload(&c->q, x->q, (size_t)x->nqk * es, 16);
    if (e == cudaSuccess) e = upload(&c->k, x->k, (size_t)x->nqk * es, 16);
    if (e == cudaSuccess) e = upload(&c->v, x->v, (size_t)x->nv * es, 16);
    if (e == cudaSuccess) e = upload(&c->g, x->g, (size_t)x->ng * 4, 16);
    if (e == cudaSuccess) e = upload(&c->gg, x->g_gamma, (size_t)x->c.H * 4, 0);
    if (e == cudaSuccess && x->cu) e = upload(&c->cu, x->cu, (size_t)(x->N + 1) * 8, 0);
    if (e == cudaSuccess) e = upload(&c->h0, x->h0, (size_t)x->ns * 4, 0);
    return e;
}

static void dev_case_free(dev_case *c)
{
    cudaFree(c->q), cudaFree(c->k), cudaFree(c->v), cudaFree(c->g), cudaFree(c->gg), cudaFree(c->h0), cudaFree(c->cu);
    if (c->st) cudaStreamDestroy(c->st);
}

/* x's descriptor on the device copies, on the case's stream, values checked there */
static sgla_forward_desc dev_case_desc(const conform_data *x, const dev_case *c)
{
    sgla_forward_desc d = x->d;
    d.q = c->q, d.k = c->k, d.v = c->v, d.g = c->g, d.g_gamma = c->gg, d.h0 = c->h0, d.cu_seqlens = c->cu;
    d.stream = c->st;
    d.flags = (x->d.flags & (SGLA_FLAG_ALLOW_TF32 | SGLA_FLAG_BWD_HALF_STATES)) | SGLA_FLAG_CHECK_DEVICE_VALUES; /* the mode a caller set */
    return d;
}

static int check_cuda(const conform_data *x, const sgla_cuda_plan *force, conform_result *res)
{
    const sgla_dtype dt = x->c.dtype;
    const size_t es = sgla_dtype_size(dt);
    dev_case dc;
    void *dout = NULL;
    float *dht = NULL;
    void *o = xmalloc((size_t)x->nv * es);
    float *ht = xmalloc((size_t)x->ns * 4);
#define CF(call)                                                                                                        \
    if (e == cudaSuccess) e = (call)
    cudaError_t e = dev_case_upload(x, &dc);
    CF(cudaMalloc(&dout, (size_t)x->nv * es + 16));
    if (o) poison(o, dt, x->nv);
    CF(cudaMemcpy(dout, o, (size_t)x->nv * es, cudaMemcpyHostToDevice));
    if (x->c.ht) {
        if (x->c.inplace && dc.h0) {
            dht = dc.h0;
        } else {
            CF(cudaMalloc((void **)&dht, (size_t)x->ns * 4));
            poison(ht, SGLA_F32, x->ns);
            CF(cudaMemcpy(dht, ht, (size_t)x->ns * 4, cudaMemcpyHostToDevice));
        }
    }
    /* pageable copies may still be in flight when cudaMemcpy returns, and the stream is
     * non-blocking: the setup is done before the kernels read it */
    CF(cudaDeviceSynchronize());
    if (e != cudaSuccess || !o || !ht) {
        res->status = e != cudaSuccess ? SGLA_ERR_CUDA : SGLA_ERR_OUT_OF_MEMORY;
        if (e != cudaSuccess) sgla_fail(SGLA_ERR_CUDA, "conform: %s", cudaGetErrorString(e));
        res->pass = 0;
        goto done;
    }
    sgla_forward_desc d = dev_case_desc(x, &dc);
    d.o = dout, d.ht = dht;
    res->status = force ? sgla_cuda_forward_forced(&d, force) : sgla_forward(&d, SGLA_BACKEND_CUDA);
    CF(cudaStreamSynchronize(dc.st));
    CF(cudaMemcpy(o, dout, (size_t)x->nv * es, cudaMemcpyDeviceToHost));
    if (dht) CF(cudaMemcpy(ht, dht, (size_t)x->ns * 4, cudaMemcpyDeviceToHost));
    if (e != cudaSuccess) {
        if (res->status == SGLA_OK) res->status = sgla_fail(SGLA_ERR_CUDA, "conform: %s", cudaGetErrorString(e));
        res->pass = 0;
        goto done;
    }
    judge(x, o, dht ? ht : NULL, res);
done:
#undef CF
    cudaFree(dout);
    if (dht != dc.h0) cudaFree(dht);
    dev_case_free(&dc);
    free(o), free(ht);
    return res->pass;
}
#endif

/* fp32 on CUDA with its products in TF32 alone (SGLA_FLAG_ALLOW_TF32): judged at fla's level, not fp32's,
 * forward and backward alike (other backends ignore the flag) */
static int tf32_alone(const conform_data *x, sgla_backend be)
{
    return x->c.dtype == SGLA_F32 && (x->d.flags & SGLA_FLAG_ALLOW_TF32) && be == SGLA_BACKEND_CUDA;
}
#define TF32_BAR 5e-3

/* A forward check's result before the call: its bar and its label */
static void check_begin(const conform_data *x, sgla_backend be, const sgla_cuda_plan *force, const char *prefix,
                        conform_result *res)
{
    memset(res, 0, sizeof *res);
    res->bar = conform_bar(x->c.dtype);
    /* a decay within 1e-7 of 1 over more than 1e5 tokens: what rounding is left after the expm1 carry
     * has no sign and grows like the square root of the steps (docs/numerics.md §7) */
    if (x->c.range == CONFORM_NEAR1 && x->c.T > 100000) res->bar *= sqrt((double)x->c.T / 1e5);
    if (tf32_alone(x, be)) res->bar = TF32_BAR;
    label(x, be, force, prefix, res);
}

/* conform_check_pool's slots: sequence n on slot 2N - 1 - 2n (the odd slots, not in the batch's order),
 * the even ones a pattern that must survive the call */
static int64_t pool_slot(int64_t N, int64_t n) { return 2 * N - 1 - 2 * n; }
static int pool_owned(int64_t r) { return r % 2 == 1; }
static float pool_pattern(int64_t i) { return (float)(0.5 + 0.001 * (double)(i % 997)); }

int conform_check_pool(const conform_data *x, sgla_backend be, conform_result *res)
{
    check_begin(x, be, NULL, "pool ", res);
    if (!x->c.h0 || !x->c.ht || x->c.inplace) {
        res->status = sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "conform: a pool check needs a case with h0 and ht, not in place");
        return res->pass = 0;
    }
    const sgla_dtype dt = x->c.dtype;
    const size_t es = sgla_dtype_size(dt);
    const int64_t N = x->N, S = 2 * N, kv = x->c.H * x->c.K * x->c.V;
    float *pool = xmalloc((size_t)(S * kv) * 4), *ht = xmalloc((size_t)(N * kv) * 4);
    int64_t *idx = xmalloc((size_t)N * 8);
    void *o = xmalloc((size_t)x->nv * es);
    if (!pool || !ht || !idx || !o) {
        res->status = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: the pool check's buffers");
        res->pass = 0;
        goto done;
    }
    for (int64_t i = 0; i < S * kv; i++) pool[i] = pool_pattern(i);
    for (int64_t n = 0; n < N; n++) {
        idx[n] = pool_slot(N, n);
        memcpy(pool + idx[n] * kv, x->h0 + n * kv, (size_t)kv * 4);
    }
    poison(o, dt, x->nv);
    sgla_state_pool sp;
    memset(&sp, 0, sizeof sp);
    sp.slots = S, sp.indices = idx, sp.index_bits = 64, sp.flags = SGLA_POOL_INPLACE, sp.host_cu_seqlens = x->cu;
    if (be != SGLA_BACKEND_CUDA) {
        sgla_forward_desc d = x->d;
        d.o = o, d.h0 = pool, d.ht = NULL, d.pool = &sp;
        res->status = sgla_forward(&d, be);
    } else {
#ifdef SGLA_HAVE_CUDA
        dev_case dc;
        void *dout = NULL, *dpool = NULL, *didx = NULL;
        cudaError_t e = dev_case_upload(x, &dc);
        if (e == cudaSuccess) e = upload(&dout, o, (size_t)x->nv * es, 16);
        if (e == cudaSuccess) e = upload(&dpool, pool, (size_t)(S * kv) * 4, 0);
        if (e == cudaSuccess) e = upload(&didx, idx, (size_t)N * 8, 0);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e == cudaSuccess) {
            sgla_forward_desc d = dev_case_desc(x, &dc);
            sgla_state_pool dsp = sp;
            dsp.indices = didx;
            d.o = dout, d.h0 = dpool, d.ht = NULL, d.pool = &dsp;
            res->status = sgla_forward(&d, SGLA_BACKEND_CUDA);
            e = cudaStreamSynchronize(dc.st);
        }
        if (e == cudaSuccess) e = cudaMemcpy(o, dout, (size_t)x->nv * es, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(pool, dpool, (size_t)(S * kv) * 4, cudaMemcpyDeviceToHost);
        cudaFree(dout), cudaFree(dpool), cudaFree(didx);
        dev_case_free(&dc);
        if (e != cudaSuccess) {
            if (res->status == SGLA_OK) res->status = sgla_fail(SGLA_ERR_CUDA, "conform: %s", cudaGetErrorString(e));
            res->pass = 0;
            goto done;
        }
#else
        res->status = sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "conform: this build has no CUDA backend");
        res->pass = 0;
        goto done;
#endif
    }
    for (int64_t n = 0; n < N; n++) memcpy(ht + n * kv, pool + idx[n] * kv, (size_t)kv * 4);
    for (int64_t r = 0; r < S; r++) {
        if (pool_owned(r)) continue;
        for (int64_t i = r * kv; i < (r + 1) * kv; i++) {
            const float p = pool_pattern(i);
            if (memcmp(&pool[i], &p, 4)) res->other_changed++;
        }
    }
    judge(x, o, ht, res);
    if (res->other_changed) res->pass = 0;
done:
    free(pool), free(ht), free(idx), free(o);
    return res->pass;
}

int conform_check(const conform_data *x, sgla_backend be, const sgla_cuda_plan *force, conform_result *res)
{
    check_begin(x, be, force, "", res);
    if (be != SGLA_BACKEND_CUDA) return check_host(x, be, res);
#ifdef SGLA_HAVE_CUDA
    return check_cuda(x, force, res);
#else
    res->status = sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "conform: this build has no CUDA backend");
    return res->pass = 0;
#endif
}

void conform_print(FILE *f, const conform_result *res)
{
    fprintf(f, "%-4s %s: o rel %.2e maxabs %.2e (max|ref| %.2e)", res->pass ? "ok" : "FAIL", res->label, res->o_rel,
            res->o_max_abs, res->o_max_ref);
    if (res->has_ht) fprintf(f, " ht rel %.2e maxabs %.2e (max|ref| %.2e)", res->ht_rel, res->ht_max_abs, res->ht_max_ref);
    if (res->status != SGLA_OK) fprintf(f, " -- status %s (%s)", sgla_status_string(res->status), sgla_last_error());
    else if (res->other_changed)
        fprintf(f, " -- %lld elements of slots no sequence owns changed", (long long)res->other_changed);
    else if (res->o_unwritten || res->ht_unwritten)
        fprintf(f, " -- %lld o and %lld ht elements not written", (long long)res->o_unwritten,
                (long long)res->ht_unwritten);
    else if (!res->pass)
        fprintf(f, " -- above the bar %.0e", res->bar);
    fprintf(f, "\n");
}

/* ---- the backward ------------------------------------------------------------------ */

int conform_bwd_path = 0;
int conform_bwd_nseg = 0;
int conform_bwd_tseg = 0;
int conform_bwd_groups = 0;

/* fp32: the gradients land at 2-4e-7 on every path; 2e-6 keeps a margin and fails a lost digit (the fp32
 * CUDA-core backward's chunk prefix in fp32 gave 1.6e-5 after a reset gate) */
double conform_bwd_bar(sgla_dtype dt) { return dt == SGLA_F16 ? 2e-3 : dt == SGLA_BF16 ? 1e-2 : 2e-6; }

/* an fp64 copy of n elements of dtype dt (NULL stays NULL) */
static double *to_f64(const void *p, sgla_dtype dt, int64_t n)
{
    if (!p) return NULL;
    double *out = xmalloc((size_t)n * sizeof(double));
    if (out)
        for (int64_t i = 0; i < n; i++) out[i] = sgla_load(p, dt, i);
    return out;
}

sgla_status conform_draw_backward(conform_data *x, ref_rng *r)
{
    const conform_case *c = &x->c;
    const size_t es = sgla_dtype_size(c->dtype);
    x->dout = xmalloc((size_t)x->nv * es);
    x->dht = c->ht ? xmalloc((size_t)x->ns * 4) : NULL;
    x->dq64 = xmalloc((size_t)x->nqk * 8), x->dk64 = xmalloc((size_t)x->nqk * 8), x->dv64 = xmalloc((size_t)x->nv * 8);
    x->dg64 = x->g ? xmalloc((size_t)x->ng * 8) : NULL;
    x->dgg64 = x->g_gamma ? xmalloc((size_t)c->H * 8) : NULL;
    x->dh064 = x->h0 ? xmalloc((size_t)x->ns * 8) : NULL;
    if (!x->dout || (c->ht && !x->dht) || !x->dq64 || !x->dk64 || !x->dv64 || (x->g && !x->dg64) ||
        (x->g_gamma && !x->dgg64) || (x->h0 && !x->dh064))
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: backward buffers");
    ref_rng_fill(r, x->dout, c->dtype, x->nv, 1.0);
    for (int64_t i = 0; x->dht && i < x->ns; i++) x->dht[i] = (float)(0.5 * ref_rng_normal(r));
    /* the fp64 copy of everything, and ref-a's gradients straight into the fp64 buffers */
    const sgla_dtype adt = SGLA_F32;
    double *q = to_f64(x->q, c->dtype, x->nqk), *k = to_f64(x->k, c->dtype, x->nqk), *v = to_f64(x->v, c->dtype, x->nv);
    double *g = to_f64(x->g, adt, x->ng), *gg = to_f64(x->g_gamma, adt, c->H), *h0 = to_f64(x->h0, adt, x->ns);
    double *dout = to_f64(x->dout, c->dtype, x->nv), *dht = to_f64(x->dht, adt, x->ns);
    sgla_status st = SGLA_ERR_OUT_OF_MEMORY;
    if (q && k && v && (!x->g || g) && (!x->g_gamma || gg) && (!x->h0 || h0) && dout && (!x->dht || dht)) {
        sgla_forward_desc f = x->d;
        f.dtype = SGLA_F64;
        f.q = q, f.k = k, f.v = v, f.g = g, f.g_gamma = gg, f.h0 = h0;
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &f;
        b.dout = dout, b.dht = dht;
        b.dq = x->dq64, b.dk = x->dk64, b.dv = x->dv64, b.dg = x->dg64, b.dg_gamma = x->dgg64, b.dh0 = x->dh064;
        st = sgla_backward(&b, SGLA_BACKEND_REF_A);
        /* dg_gamma sums dg over every token, and those terms cancel (decays near 1, long
         * sequences): its error is judged against sum_t |dg_t| of its head, from the same
         * backward with g_gamma given per token */
        if (st == SGLA_OK && x->g_gamma) {
            const int64_t ntok = x->ng / c->H;
            double *gt = xmalloc((size_t)x->ng * 8), *dgt = xmalloc((size_t)x->ng * 8);
            x->dgg_scale = xmalloc((size_t)c->H * 8);
            double *scr[3] = {xmalloc((size_t)x->nqk * 8), xmalloc((size_t)x->nqk * 8), xmalloc((size_t)x->nv * 8)};
            if (!gt || !dgt || !x->dgg_scale || !scr[0] || !scr[1] || !scr[2]) {
                st = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "conform: dg_gamma's scale");
            } else {
                for (int64_t i = 0; i < x->ng; i++) gt[i] = gg[i % c->H];
                f.g = gt, f.g_gamma = NULL;
                b.dq = scr[0], b.dk = scr[1], b.dv = scr[2], b.dg = dgt, b.dg_gamma = NULL, b.dh0 = NULL;
                st = sgla_backward(&b, SGLA_BACKEND_REF_A);
                for (int64_t h = 0; h < c->H; h++) x->dgg_scale[h] = 0;
                for (int64_t i = 0; st == SGLA_OK && i < ntok * c->H; i++) x->dgg_scale[i % c->H] += fabs(dgt[i]);
            }
            free(gt), free(dgt), free(scr[0]), free(scr[1]), free(scr[2]);
        }
    } else {
        sgla_fail(st, "conform: fp64 copies");
    }
    free(q), free(k), free(v), free(g), free(gg), free(h0), free(dout), free(dht);
    return st;
}

static void check_host_backward(const conform_data *x, sgla_backend be, conform_bresult *res, void *const out[CONFORM_NGRAD])
{
    sgla_forward_desc f = x->d;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f;
    b.dout = x->dout, b.dht = x->dht;
    b.dq = out[CONFORM_DQ], b.dk = out[CONFORM_DK], b.dv = out[CONFORM_DV];
    b.dg = out[CONFORM_DG], b.dg_gamma = out[CONFORM_DGG], b.dh0 = out[CONFORM_DH0];
    if (x->c.inplace && x->dht && b.dh0) { /* dh0 == dht: a copy of dht, updated in place into dh0's buffer */
        memcpy(out[CONFORM_DH0], x->dht, (size_t)x->ns * 4);
        b.dht = b.dh0;
    }
    res->status = sgla_backward(&b, be);
}

#ifdef SGLA_HAVE_CUDA
/* The device copies of the case, the backward on them, the gradients back into out. */
static void check_cuda_backward(const conform_data *x, conform_bresult *res, void *const out[CONFORM_NGRAD],
                                const size_t bytes[CONFORM_NGRAD])
{
    const size_t es = sgla_dtype_size(x->c.dtype);
    void *dev[CONFORM_NGRAD] = {0};
    void *ddo = NULL, *ddht = NULL;
    dev_case dc;
#define CF(call)                                                                                                        \
    if (e == cudaSuccess) e = (call)
    cudaError_t e = dev_case_upload(x, &dc);
    CF(upload(&ddo, x->dout, (size_t)x->nv * es, 16));
    CF(upload(&ddht, x->dht, (size_t)x->ns * 4, 0));
    for (int i = 0; i < CONFORM_NGRAD; i++)
        if (out[i]) {
            CF(cudaMalloc(&dev[i], bytes[i] + 16));
            CF(cudaMemcpy(dev[i], out[i], bytes[i], cudaMemcpyHostToDevice)); /* the poison */
        }
    CF(cudaDeviceSynchronize());
    if (e != cudaSuccess) {
        res->status = sgla_fail(SGLA_ERR_CUDA, "conform: %s", cudaGetErrorString(e));
        goto done;
    }
    {
        sgla_forward_desc f = dev_case_desc(x, &dc);
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &f;
        b.dout = ddo, b.dht = ddht;
        b.dq = dev[CONFORM_DQ], b.dk = dev[CONFORM_DK], b.dv = dev[CONFORM_DV];
        b.dg = dev[CONFORM_DG], b.dg_gamma = dev[CONFORM_DGG], b.dh0 = dev[CONFORM_DH0];
        if (x->c.inplace && ddht && b.dh0) b.dh0 = ddht; /* dh0 == dht: the gradient of the state in place */
        res->status = conform_bwd_groups > 1                 ? sgla_cuda_backward_groups(&b, conform_bwd_groups, NULL)
                      : conform_bwd_tseg >= 1                ? sgla_cuda_backward_windows(&b, conform_bwd_tseg, NULL)
                      : conform_bwd_path || conform_bwd_nseg ? sgla_cuda_backward_forced(&b, conform_bwd_path, conform_bwd_nseg)
                                                             : sgla_backward(&b, SGLA_BACKEND_CUDA);
    }
    CF(cudaStreamSynchronize(dc.st));
    for (int i = 0; i < CONFORM_NGRAD; i++)
        if (out[i]) CF(cudaMemcpy(out[i], i == CONFORM_DH0 && x->c.inplace && ddht ? ddht : dev[i], bytes[i],
                                  cudaMemcpyDeviceToHost));
    if (e != cudaSuccess && res->status == SGLA_OK) res->status = sgla_fail(SGLA_ERR_CUDA, "conform: %s", cudaGetErrorString(e));
done:
#undef CF
    cudaFree(ddo), cudaFree(ddht);
    for (int i = 0; i < CONFORM_NGRAD; i++) cudaFree(dev[i]);
    dev_case_free(&dc);
}
#endif


int conform_check_backward(const conform_data *x, sgla_backend be, conform_bresult *res)
{
    memset(res, 0, sizeof *res);
    const sgla_dtype dt = x->c.dtype, adt = SGLA_F32;
    res->bar = conform_bwd_bar(dt);
    if (tf32_alone(x, be)) res->bar = TF32_BAR;
    {
        conform_result tmp;
        label(x, be, NULL, "", &tmp);
        if ((x->d.flags & SGLA_FLAG_BWD_HALF_STATES) && be == SGLA_BACKEND_CUDA)
            snprintf(res->label, sizeof res->label, "backward (SGLA_FLAG_BWD_HALF_STATES) %.140s", tmp.label);
        else if (conform_bwd_groups > 1 && be == SGLA_BACKEND_CUDA)
            snprintf(res->label, sizeof res->label, "backward (three-pass, %d batch groups) %.140s", conform_bwd_groups,
                     tmp.label);
        else if (conform_bwd_tseg == 1 && be == SGLA_BACKEND_CUDA)
            snprintf(res->label, sizeof res->label, "backward (three-pass, every other chunk's state) %.140s", tmp.label);
        else if (conform_bwd_tseg > 1 && be == SGLA_BACKEND_CUDA)
            snprintf(res->label, sizeof res->label, "backward (three-pass, %d time windows) %.140s", conform_bwd_tseg,
                     tmp.label);
        else if ((conform_bwd_path || conform_bwd_nseg) && be == SGLA_BACKEND_CUDA)
            snprintf(res->label, sizeof res->label, "backward (%s path, split %d) %.140s",
                     conform_bwd_path == 1 ? "CUDA-core" : conform_bwd_path == 2 ? "mma.sync" : conform_bwd_path == 3 ? "three-pass"
                     : conform_bwd_path == 4 ? "mma.sync one-stage" : "usual",
                     conform_bwd_nseg, tmp.label);
        else
            snprintf(res->label, sizeof res->label, "backward %.170s", tmp.label);
    }
    const sgla_dtype types[CONFORM_NGRAD] = {dt, dt, dt, adt, adt, adt};
    const int64_t counts[CONFORM_NGRAD] = {x->nqk, x->nqk, x->nv, x->ng, x->c.H, x->ns};
    const double *refs[CONFORM_NGRAD] = {x->dq64, x->dk64, x->dv64, x->dg64, x->dgg64, x->dh064};
    void *out[CONFORM_NGRAD] = {0};
    size_t bytes[CONFORM_NGRAD];
    int ok = 1;
    for (int i = 0; i < CONFORM_NGRAD; i++) {
        res->present[i] = refs[i] != NULL;
        bytes[i] = (size_t)counts[i] * sgla_dtype_size(types[i]);
        if (res->present[i]) {
            out[i] = xmalloc(bytes[i]);
            if (!out[i]) ok = 0;
            else poison(out[i], types[i], counts[i]);
        }
    }
    if (!ok) {
        res->status = SGLA_ERR_OUT_OF_MEMORY;
    } else if (be != SGLA_BACKEND_CUDA) {
        check_host_backward(x, be, res, out);
    } else {
#ifdef SGLA_HAVE_CUDA
        check_cuda_backward(x, res, out, bytes);
#else
        res->status = sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "conform: this build has no CUDA backend");
#endif
    }
    res->pass = res->status == SGLA_OK;
    for (int i = 0; i < CONFORM_NGRAD; i++) {
        if (!res->present[i] || res->status != SGLA_OK) continue;
        const diff_stats st = diff_of(out[i], types[i], refs[i], counts[i]);
        res->rel[i] = st.rel, res->unwritten[i] = st.unwritten, res->max_abs[i] = st.max_abs, res->max_ref[i] = st.max_ref;
        res->worst[i] = st.worst, res->worst_out[i] = st.worst_out, res->worst_ref[i] = st.worst_ref;
        if (i == CONFORM_DGG && x->dgg_scale) { /* against sum_t |dg_t| (conform_draw_backward) */
            double num = 0, den = 0;
            for (int64_t h = 0; h < counts[i]; h++) {
                const double e = sgla_load(out[i], types[i], h) - refs[i][h];
                num += e * e, den += x->dgg_scale[h] * x->dgg_scale[h];
            }
            res->rel[i] = den > 0 ? sqrt(num / den) : (num == 0 ? 0 : INFINITY);
        }
        /* dg_gamma in 16 bits: one value per head, the sum of every token's dg, whose errors (the
         * kernels' 16-bit state copies, the same over a chunk and close from chunk to chunk) do not
         * average out: near-1 gates at T = 900, one head, bf16 measured 6e-4 to 1.2e-2 of
         * sum_t |dg_t| (two seeds, both tensor-core paths, two splits: docs/perf.md, session 11) */
        res->bars[i] = i == CONFORM_DGG && (dt == SGLA_BF16 || dt == SGLA_F16) ? 2 * res->bar : res->bar;
        /* dg and dg_gamma: a token's dg may be tiny beside its neighbours', judged by rel L2 alone */
        const int by_max = i != CONFORM_DG && i != CONFORM_DGG;
        res->failed[i] = !(res->unwritten[i] == 0 && res->rel[i] <= res->bars[i] &&
                           (!by_max || res->max_abs[i] <= 4 * res->bars[i] * res->max_ref[i]));
        res->pass &= !res->failed[i];
    }
    for (int i = 0; i < CONFORM_NGRAD; i++) free(out[i]);
    return res->pass;
}

void conform_print_backward(FILE *f, const conform_bresult *res)
{
    static const char *names[CONFORM_NGRAD] = {"dq", "dk", "dv", "dg", "dg_gamma", "dh0"};
    fprintf(f, "%-4s %s:", res->pass ? "ok" : "FAIL", res->label);
    for (int i = 0; i < CONFORM_NGRAD; i++)
        if (res->present[i]) fprintf(f, " %s %.2e", names[i], res->rel[i]);
    if (res->status != SGLA_OK) fprintf(f, " -- status %s (%s)", sgla_status_string(res->status), sgla_last_error());
    else if (!res->pass) {
        fprintf(f, " -- above the bar or not written; farthest:");
        for (int i = 0; i < CONFORM_NGRAD; i++)
            if (res->present[i] && res->failed[i])
                fprintf(f, " %s (bar %.0e, max|fp64| %.3g) [%lld] %.6g (fp64 %.6g)", names[i], res->bars[i],
                        res->max_ref[i], (long long)res->worst[i], res->worst_out[i], res->worst_ref[i]);
    }
    fprintf(f, "\n");
}
