/* The state pool on CUDA against the CPU backend's (itself checked against
 * plain calls in test_pool): the same packed batches on the same inputs, o and
 * the whole pool compared after the call (fp32 and bf16 inputs, both layouts,
 * 32/64-bit indices, padded rows, fresh requests, speculative steps with every
 * acceptance count, a prefill through the pool), every o element written; a
 * bad slot never touches memory outside the pool; a decode step captured in a
 * CUDA graph and replayed gives the same bits; a chain of steps on one stream
 * without host synchronisation gives the CPU's results. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu_check.h"
#include "testutil.h"

enum { H = 2, SLOTS = 12, NMAX = 6, TM = 4 };

typedef struct gcase {
    sgla_dtype dt;
    int K, V, nseq, t_max, v_first, bits64;
    int64_t len[NMAX], idx[NMAX][TM], accepted[NMAX];
    int fresh[NMAX];
    int host_cu; /* pass the host copy of cu_seqlens (the chunked grid covers the prefills only) */
    int dense;   /* no cu_seqlens: B = nseq rows of len[0] tokens each (every len the same) */
    int heads;   /* H (0: 2); a multiple of 4 takes gate g by TMA in K = 64's prefills */
} gcase;

/* a device copy of h; without h, n bytes of 0xFF (NaN in every float dtype) */
static void *dup_dev(const void *h, size_t n)
{
    void *d = NULL;
    CK(cudaMalloc(&d, n ? n : 16));
    if (n && h) CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    else if (n) CK(cudaMemset(d, 0xFF, n));
    return d;
}

static double rel(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) num += (a[i] - b[i]) * (a[i] - b[i]), den += (double)b[i] * b[i];
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void run(const gcase *c, tu_rng *r)
{
    const int K = c->K, V = c->V, H = c->heads ? c->heads : 2; /* (the file's H elsewhere) */
    int64_t T = 0, cu[NMAX + 1] = {0};
    for (int n = 0; n < c->nseq; n++) cu[n + 1] = cu[n] + c->len[n], T += c->len[n];
    const size_t es = sgla_dtype_size(c->dt), nqk = (size_t)(T * H * K), nv = (size_t)(T * H * V);
    const size_t np = (size_t)SLOTS * H * K * V;
    void *q = malloc(nqk * es), *k = malloc(nqk * es), *v = malloc(nv * es), *o = malloc(nv * es), *og = malloc(nv * es);
    float *g = malloc((size_t)(T * H) * 4), *pool = malloc(np * 4), *poolc = malloc(np * 4), *poolg = malloc(np * 4);
    tu_fill(r, q, c->dt, (int64_t)nqk, 1.0), tu_fill(r, k, c->dt, (int64_t)nqk, 0.3), tu_fill(r, v, c->dt, (int64_t)nv, 1.0);
    for (int64_t i = 0; i < T * H; i++) g[i] = (float)-tu_uniform_range(r, 0, 0.4);
    tu_fill(r, pool, SGLA_F32, (int64_t)np, 1.0);
    memcpy(poolc, pool, np * 4);
    const int tm = c->t_max ? c->t_max : 1;
    int32_t i32[NMAX * TM], a32[NMAX];
    int64_t i64[NMAX * TM], a64[NMAX];
    unsigned char his[NMAX];
    for (int n = 0; n < c->nseq; n++) {
        for (int t = 0; t < tm; t++) i32[n * tm + t] = (int32_t)c->idx[n][t], i64[n * tm + t] = c->idx[n][t];
        a32[n] = (int32_t)(c->accepted[n] ? c->accepted[n] : 1), a64[n] = a32[n];
        his[n] = !c->fresh[n];
    }
    const size_t ib = c->bits64 ? 8 : 4;
    sgla_state_pool p = {SLOTS, c->bits64 ? (const void *)i64 : (const void *)i32, c->bits64 ? 64 : 32, c->t_max, his,
                         NULL, SGLA_POOL_INPLACE | (c->v_first ? SGLA_POOL_V_FIRST : 0u)};
    if (c->t_max) p.num_accepted = c->bits64 ? (const void *)a64 : (const void *)a32;
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.h0 = poolc, d.pool = &p, d.dtype = c->dt;
    d.B = 1, d.T = T, d.H = H, d.K = K, d.V = V, d.scale = 0.2f, d.cu_seqlens = cu, d.num_seqs = c->nseq;
    if (c->dense) d.B = c->nseq, d.T = c->len[0], d.cu_seqlens = NULL, d.num_seqs = 0;
    sgla_status st = sgla_forward(&d, SGLA_BACKEND_CPU);
    TU_CHECK(st == SGLA_OK, "cpu pool: %s", sgla_last_error());
    /* the device copy of everything */
    sgla_state_pool pd = p;
    pd.host_cu_seqlens = c->host_cu ? cu : NULL;
    pd.indices = dup_dev(p.indices, (size_t)(c->nseq * tm) * ib);
    pd.num_accepted = p.num_accepted ? dup_dev(p.num_accepted, (size_t)c->nseq * ib) : NULL;
    pd.has_initial_state = dup_dev(his, (size_t)c->nseq);
    sgla_forward_desc e = d;
    e.q = dup_dev(q, nqk * es), e.k = dup_dev(k, nqk * es), e.v = dup_dev(v, nv * es), e.g = dup_dev(g, (size_t)(T * H) * 4);
    void *od = dup_dev(NULL, nv * es);
    tu_poison(og, c->dt, (int64_t)nv);
    CK(cudaMemcpy(od, og, nv * es, cudaMemcpyHostToDevice));
    e.o = od, e.h0 = dup_dev(pool, np * 4), e.cu_seqlens = c->dense ? NULL : dup_dev(cu, (size_t)(c->nseq + 1) * 8);
    e.pool = &pd;
    st = sgla_forward(&e, SGLA_BACKEND_CUDA);
    CK(cudaDeviceSynchronize());
    TU_CHECK(st == SGLA_OK, "cuda pool: %s (%s)", sgla_status_string(st), sgla_last_error());
    CK(cudaMemcpy(og, od, nv * es, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(poolg, (void *)e.h0, np * 4, cudaMemcpyDeviceToHost));
    float *oc = malloc(nv * 4), *ogf = malloc(nv * 4);
    int64_t unwritten = 0;
    for (size_t i = 0; i < nv; i++) {
        oc[i] = (float)sgla_load(o, c->dt, (int64_t)i), ogf[i] = (float)sgla_load(og, c->dt, (int64_t)i);
        unwritten += isnan(ogf[i]);
    }
    const double eo = rel(ogf, oc, (int64_t)nv), ep = rel(poolg, poolc, (int64_t)np);
    /* the chunked kernel (16-bit inputs, sequences of 4 tokens or more, [K][V]) rounds its operands to 16
     * bits; the recurrence computes in fp32 from the same inputs as the CPU */
    int chunked = 0;
    for (int n = 0; n < c->nseq; n++)
        chunked |= c->dt != SGLA_F32 && !c->t_max && !c->v_first && c->len[n] >= 4 &&
                   (K == 64 || K == 128 || K == 256) && (V == 64 || V == 128 || V == 256);
    const double bar = c->dt == SGLA_F32 ? 1e-5 : 8e-3, pbar = chunked ? 8e-3 : 1e-5;
    printf("%s K=%d V=%d nseq=%d t_max=%d%s%s%s: o %.2e, pool %.2e against cpu\n", sgla_dtype_name(c->dt), K, V,
           c->nseq, c->t_max, c->v_first ? " v-first" : "", c->host_cu ? " host cu" : "", c->dense ? " dense" : "", eo,
           ep);
    TU_CHECK(unwritten == 0 && eo <= bar && ep <= pbar, "cuda pool %s K=%d V=%d: o %.3e (%lld unwritten), pool %.3e",
             sgla_dtype_name(c->dt), K, V, eo, (long long)unwritten, ep);
    cudaFree((void *)pd.indices), cudaFree((void *)pd.num_accepted), cudaFree((void *)pd.has_initial_state);
    cudaFree((void *)e.q), cudaFree((void *)e.k), cudaFree((void *)e.v), cudaFree((void *)e.g), cudaFree(od);
    cudaFree((void *)e.h0), cudaFree((void *)e.cu_seqlens);
    free(q), free(k), free(v), free(o), free(og), free(g), free(pool), free(poolc), free(poolg), free(oc), free(ogf);
}

/* a decode step captured in a graph: replays give the eager bits, and bad slots stay inside the pool */
static void graph_and_guard(tu_rng *r)
{
    const int K = 128, V = 128, N = 8;
    const size_t nqk = (size_t)N * H * K, nv = (size_t)N * H * V, np = (size_t)SLOTS * H * K * V;
    uint16_t *q = malloc(nqk * 2), *v = malloc(nv * 2);
    float *pool = malloc(np * 4), *a1 = malloc(np * 4), *a2 = malloc(np * 4);
    tu_fill(r, q, SGLA_BF16, (int64_t)nqk, 0.3), tu_fill(r, v, SGLA_BF16, (int64_t)nv, 1.0);
    tu_fill(r, pool, SGLA_F32, (int64_t)np, 1.0);
    int64_t idx[8] = {3, 0, 7, -1, 5, 11, 2, 9};
    sgla_state_pool p = {SLOTS, dup_dev(idx, sizeof idx), 64, 0, NULL, NULL, SGLA_POOL_INPLACE};
    void *dq = dup_dev(q, nqk * 2), *dv = dup_dev(v, nv * 2), *dout = dup_dev(NULL, nv * 2);
    void *dp = dup_dev(pool, np * 4);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize()); /* the copies above done before the non-blocking stream reads them */
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = dq, d.k = dq, d.v = dv, d.o = dout, d.h0 = dp, d.pool = &p, d.dtype = SGLA_BF16, d.stream = st;
    d.B = N, d.T = 1, d.H = H, d.K = K, d.V = V, d.scale = 0.1f;
    TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CUDA) == SGLA_OK, "eager decode: %s", sgla_last_error());
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(a1, dp, np * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(dp, pool, np * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    cudaGraphExec_t exec = gpu_capture(st, gpu_cuda_forward, &d); /* the decode captured */
    if (exec) {
        CK(cudaGraphLaunch(exec, st));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(a2, dp, np * 4, cudaMemcpyDeviceToHost));
        TU_CHECK(!memcmp(a1, a2, np * 4), "a graph replay gave other bits than the eager call");
        cudaGraphExecDestroy(exec);
    }
    /* slots outside the pool on the device: treated as padded (memcheck sees no stray access) */
    int64_t bad[8] = {3, 0, SLOTS, -7, 5, 11, 2, 1 << 30};
    CK(cudaMemcpy((void *)p.indices, bad, sizeof bad, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CUDA) == SGLA_OK, "bad slots on the device: %s", sgla_last_error());
    CK(cudaStreamSynchronize(st));
    /* SGLA_FLAG_CHECK_DEVICE_VALUES: the device's indices copied to the host and checked there (they were
     * read through the device pointer on the host) */
    d.flags = SGLA_FLAG_CHECK_DEVICE_VALUES;
    sgla_status cs = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(cs == SGLA_ERR_POOL_INDEX, "bad slots with CHECK_DEVICE_VALUES: %s (%s)", sgla_status_string(cs),
             sgla_last_error());
    CK(cudaMemcpy((void *)p.indices, idx, sizeof idx, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    cs = sgla_forward(&d, SGLA_BACKEND_CUDA);
    CK(cudaStreamSynchronize(st));
    TU_CHECK(cs == SGLA_OK, "good slots with CHECK_DEVICE_VALUES: %s (%s)", sgla_status_string(cs), sgla_last_error());
    d.flags = 0;
    cudaFree((void *)p.indices), cudaFree(dq), cudaFree(dv), cudaFree(dout), cudaFree(dp);
    CK(cudaStreamDestroy(st));
    free(q), free(v), free(pool), free(a1), free(a2);
}

/* steps issued back to back on one stream, no host synchronisation between them: a mixed step (the
 * chunked kernel and the recurrence), then decodes that each read the slots the step before wrote in
 * place (the launches may overlap the previous kernel's end: each must still see its writes) */
static void chain(tu_rng *r)
{
    enum { N = 4, STEPS = 6, K = 128, V = 128 };
    const int64_t len0[N] = {70, 1, 1, 5}; /* step 0: two prefills (the chunked kernel), two decodes */
    const int64_t idx[N] = {3, 8, 0, 10};
    const size_t np = (size_t)SLOTS * H * K * V;
    float *pool = malloc(np * 4), *poolc = malloc(np * 4), *poolg = malloc(np * 4);
    tu_fill(r, pool, SGLA_F32, (int64_t)np, 1.0);
    memcpy(poolc, pool, np * 4);
    void *dp = dup_dev(pool, np * 4), *didx = dup_dev(idx, sizeof idx);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *hbuf[STEPS][5], *dbuf[STEPS][5]; /* q, k, v, g, o of each step */
    int64_t Ts[STEPS];
    int64_t cu0[N + 1] = {0};
    for (int n = 0; n < N; n++) cu0[n + 1] = cu0[n] + len0[n];
    void *dcu = dup_dev(cu0, sizeof cu0);
    for (int s = 0; s < STEPS; s++) { /* every step's inputs on the device, and the CPU's chain */
        const int64_t T = s == 0 ? cu0[N] : N; /* a decode step: N rows of one token */
        Ts[s] = T;
        const size_t nqk = (size_t)(T * H * K), nv = (size_t)(T * H * V), ng = (size_t)(T * H);
        hbuf[s][0] = malloc(nqk * 2), hbuf[s][1] = malloc(nqk * 2), hbuf[s][2] = malloc(nv * 2);
        hbuf[s][3] = malloc(ng * 4), hbuf[s][4] = malloc(nv * 2);
        tu_fill(r, hbuf[s][0], SGLA_BF16, (int64_t)nqk, 1.0), tu_fill(r, hbuf[s][1], SGLA_BF16, (int64_t)nqk, 0.3);
        tu_fill(r, hbuf[s][2], SGLA_BF16, (int64_t)nv, 1.0);
        for (size_t i = 0; i < ng; i++) ((float *)hbuf[s][3])[i] = (float)-tu_uniform_range(r, 0, 0.4);
        dbuf[s][0] = dup_dev(hbuf[s][0], nqk * 2), dbuf[s][1] = dup_dev(hbuf[s][1], nqk * 2);
        dbuf[s][2] = dup_dev(hbuf[s][2], nv * 2), dbuf[s][3] = dup_dev(hbuf[s][3], ng * 4);
        dbuf[s][4] = dup_dev(NULL, nv * 2);
        sgla_state_pool p = {SLOTS, idx, 64, 0, NULL, NULL, SGLA_POOL_INPLACE};
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = hbuf[s][0], d.k = hbuf[s][1], d.v = hbuf[s][2], d.g = hbuf[s][3], d.o = hbuf[s][4];
        d.h0 = poolc, d.pool = &p, d.dtype = SGLA_BF16, d.H = H, d.K = K, d.V = V, d.scale = 0.2f;
        if (s == 0) d.B = 1, d.T = T, d.cu_seqlens = cu0, d.num_seqs = N;
        else d.B = N, d.T = 1;
        const sgla_status rc = sgla_forward(&d, SGLA_BACKEND_CPU);
        TU_CHECK(rc == SGLA_OK, "chain step %d, cpu: %s", s, sgla_last_error());
    }
    CK(cudaDeviceSynchronize()); /* the uploads done before the non-blocking stream reads them */
    int ok = 1;
    sgla_state_pool pd = {SLOTS, didx, 64, 0, NULL, NULL, SGLA_POOL_INPLACE};
    for (int s = 0; s < STEPS && ok; s++) { /* the steps back to back */
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = dbuf[s][0], d.k = dbuf[s][1], d.v = dbuf[s][2], d.g = dbuf[s][3], d.o = dbuf[s][4];
        d.h0 = dp, d.pool = &pd, d.stream = st, d.dtype = SGLA_BF16, d.H = H, d.K = K, d.V = V, d.scale = 0.2f;
        if (s == 0) d.B = 1, d.T = Ts[0], d.cu_seqlens = dcu, d.num_seqs = N;
        else d.B = N, d.T = 1;
        const sgla_status rc = sgla_forward(&d, SGLA_BACKEND_CUDA);
        TU_CHECK(rc == SGLA_OK, "chain step %d, cuda: %s", s, sgla_last_error());
        ok = rc == SGLA_OK;
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(poolg, dp, np * 4, cudaMemcpyDeviceToHost));
    double worst = rel(poolg, poolc, (int64_t)np);
    for (int s = 0; s < STEPS && ok; s++) {
        const size_t nv = (size_t)(Ts[s] * H * V);
        uint16_t *og = malloc(nv * 2);
        float *a = malloc(nv * 4), *b = malloc(nv * 4);
        CK(cudaMemcpy(og, dbuf[s][4], nv * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < nv; i++)
            a[i] = (float)sgla_load(og, SGLA_BF16, (int64_t)i), b[i] = (float)sgla_load(hbuf[s][4], SGLA_BF16, (int64_t)i);
        const double e = rel(a, b, (int64_t)nv);
        worst = e > worst || isnan(e) ? e : worst;
        free(og), free(a), free(b);
    }
    printf("chain of %d steps on one stream: worst of o and the pool %.2e against cpu\n", STEPS, worst);
    TU_CHECK(ok && worst <= 8e-3, "chain of steps on one stream: %.3e against cpu", worst);
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < 5; i++) free(hbuf[s][i]), cudaFree(dbuf[s][i]);
    cudaFree(dp), cudaFree(didx), cudaFree(dcu);
    CK(cudaStreamDestroy(st));
    free(pool), free(poolc), free(poolg);
}

int main(void)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        printf("test_gpu_pool: no CUDA device; skipped\n");
        return 77;
    }
    tu_rng r;
    tu_rng_init(&r, tu_seed("test_gpu_pool"));
    const sgla_dtype BF = SGLA_BF16, F16 = SGLA_F16, F32 = SGLA_F32;
    static const gcase cases[] = {
        /* dt, K, V, nseq, t_max, v_first, bits64, len, idx, accepted, fresh */
        {F32, 64, 64, 5, 0, 0, 0, {1, 1, 1, 1, 1}, {{0}, {4}, {-1}, {7}, {11}}, {0}, {0, 1, 0, 0, 0}},
        {BF, 128, 128, 4, 0, 1, 1, {1, 9, 1, 1}, {{2}, {5}, {8}, {-1}}, {0}, {0, 0, 1, 0}},
        {BF, 128, 64, 3, 4, 0, 0, {4, 2, 3}, {{0, 1, 2, 3}, {4, 5, -1, -1}, {6, 7, 8, 9}}, {1, 2, 4}, {0, 0, 0}},
        {F32, 64, 128, 3, 3, 1, 1, {3, 1, 2}, {{0, -1, 2}, {3, 4, 5}, {6, 7, 8}}, {3, 1, 2}, {0, 1, 0}},
        /* mixed batches: prefills (the chunked kernel on their slots; a partial chunk, a fresh one, a padded
         * one the recurrence zeroes) next to decodes */
        {BF, 128, 128, 6, 0, 0, 0, {300, 1, 1, 70, 1, 65}, {{0}, {4}, {-1}, {7}, {9}, {-1}}, {0}, {0, 0, 0, 1, 0, 0}},
        {BF, 128, 128, 6, 0, 0, 0, {1, 300, 1, 70, 1, 2}, {{0}, {4}, {-1}, {7}, {9}, {3}}, {0}, {0, 0, 0, 1, 0, 0}, 1},
        {BF, 64, 128, 3, 0, 0, 0, {1, 2, 1}, {{0}, {4}, {5}}, {0}, {0, 0, 0}, 1}, /* no prefill: no chunked launch */
        {F16, 128, 64, 4, 0, 0, 1, {65, 3, 1, 128}, {{11}, {2}, {5}, {1}}, {0}, {0, 0, 1, 0}},
        {BF, 256, 256, 2, 0, 0, 0, {129, 1}, {{3}, {8}}, {0}, {0, 0}},
        /* K = 64 prefills (the instance that scans g itself: a pool call has no workspace for gate_b's b) */
        {BF, 64, 64, 4, 0, 0, 0, {200, 1, 70, 3}, {{0}, {4}, {7}, {9}}, {0}, {0, 0, 1, 0}},
        {F16, 64, 128, 3, 0, 0, 1, {1, 129, 64}, {{2}, {6}, {10}}, {0}, {0, 1, 0}, 1},
        {BF, 64, 64, 3, 0, 0, 0, {100, 100, 100}, {{0}, {4}, {7}}, {0}, {0, 1, 0}, 0, 1}, /* the dense instance */
        /* ... with H = 4: g by TMA (kparams.gtma), packed and dense */
        {BF, 64, 64, 4, 0, 0, 0, {200, 1, 70, 3}, {{0}, {4}, {7}, {9}}, {0}, {0, 0, 1, 0}, 0, 0, 4},
        {BF, 64, 64, 3, 0, 0, 0, {100, 100, 100}, {{0}, {4}, {7}}, {0}, {0, 1, 0}, 0, 1, 4},
        {BF, 64, 64, 3, 0, 1, 0, {130, 1, 2}, {{1}, {2}, {3}}, {0}, {0, 1, 0}}, /* [V][K]: the recurrence */
        /* head sizes only the recurrence takes */
        {F32, 96, 32, 3, 0, 0, 0, {1, 1, 5}, {{0}, {1}, {2}}, {0}, {0, 0, 0}},
        {BF, 32, 48, 2, 0, 1, 1, {2, 1}, {{5}, {6}}, {0}, {1, 0}},
        {F16, 512, 16, 2, 2, 1, 0, {1, 2}, {{0, 1}, {2, 3}}, {1, 2}, {0, 0}},
        {BF, 16, 512, 2, 0, 0, 0, {1, 6}, {{4}, {10}}, {0}, {0, 0}},
        /* sequences of no token: the slot keeps its state (it is written back as read), or a fresh one
         * becomes zeros; the staged instances must wait for the state they never used */
        {BF, 128, 128, 4, 0, 0, 0, {1, 0, 2, 0}, {{0}, {4}, {5}, {9}}, {0}, {0, 0, 0, 1}},
        {F32, 64, 64, 3, 0, 1, 0, {0, 1, 0}, {{1}, {2}, {3}}, {0}, {1, 0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(&cases[i], &r);
    graph_and_guard(&r);
    chain(&r);
    return tu_finish("test_gpu_pool");
}
