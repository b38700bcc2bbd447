/* `sgla bench --backend cuda`: for every shape, the plan is checked against the
 * fp64 reference through the conformance harness (bench_check: same K, V,
 * dtype, gate and configuration row on fresh inputs), then timed with CUDA
 * events (warm-up, median of --iters runs, several input sets rotated so that
 * the L2 cache does not flatter the figure).
 *
 * Prints ms, effective GB/s (q, k, v read and o written once) and the ratio
 * to the HBM floor: those bytes at 4.25 TB/s (the copy rate measured on the
 * lent H200).  --config ROW / --split N force a plan (cuda_dev.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dispatch.h"
#include "ref/ref.h"

#ifndef SGLA_HAVE_CUDA
int bench_cuda_run(const bench_args *a)
{
    (void)a;
    fprintf(stderr, "sgla bench: this build has no CUDA backend\n");
    return 1;
}
#else

#include <cuda_runtime.h>

#define HBM_BYTES_PER_S 4.25e12

#define BC(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "sgla bench: %s failed: %s\n", #call, cudaGetErrorString(e_));      \
            rc = 1;                                                                               \
            goto out;                                                                             \
        }                                                                                         \
    } while (0)

/* roughly N(0, 1): sum of 4 uniforms, rescaled (cheap; the values only need to be realistic) */
static double rng_normalish(ref_rng *s)
{
    uint64_t z = ref_rng_next(s);
    double acc = 0;
    for (int i = 0; i < 4; i++) acc += (double)((z >> (16 * i)) & 0xffff) / 65536.0;
    return (acc - 2.0) * 1.7320508;
}

static void fill_half(ref_rng *s, uint16_t *p, int64_t n, sgla_dtype dt, double sd)
{
    for (int64_t i = 0; i < n; i++) {
        float x = (float)(rng_normalish(s) * sd);
        p[i] = dt == SGLA_F16 ? sgla_f32_to_f16(x) : sgla_f32_to_bf16(x);
    }
}

/* Inputs are drawn on the host for at most FILL_MAX elements a tensor and tiled over the device
 * tensor: the values repeat (a timing does not care), and a tensor of 10^9 elements takes
 * seconds to set up rather than a minute. */
#define FILL_MAX ((int64_t)1 << 24)
static int64_t fill_count(int64_t n) { return n < FILL_MAX ? n : FILL_MAX; }
static cudaError_t upload_tiled(void *dst, const void *src, int64_t n, int64_t filled, size_t es)
{
    cudaError_t e = cudaSuccess;
    for (int64_t at = 0; at < n && e == cudaSuccess; at += filled) {
        const int64_t m = n - at < filled ? n - at : filled;
        e = cudaMemcpy((char *)dst + (size_t)at * es, src, (size_t)m * es, cudaMemcpyHostToDevice);
    }
    return e;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* the times between the event pairs of iters timed calls on st, sorted (times[iters / 2]: the median) */
static cudaError_t sorted_times(cudaStream_t st, const cudaEvent_t *ev, float *times, int iters)
{
    cudaError_t e = cudaStreamSynchronize(st);
    for (int i = 0; e == cudaSuccess && i < iters; i++) e = cudaEventElapsedTime(&times[i], ev[2 * i], ev[2 * i + 1]);
    if (e == cudaSuccess) qsort(times, (size_t)iters, sizeof(float), cmp_float);
    return e;
}

/* --pool: the call d as one serving step on a pool of 2N fp32 slots (random order, in place),
 * with the host copy of cu_seqlens (a mixed batch runs its long sequences on the chunked kernel);
 * timed like the forward; `bad`: its check failed (the row says so).  The pool and indices are allocated
 * into *pool, *idx (freed by the caller). */
static int bench_pool_step(const bench_args *a, const sgla_forward_desc *d0, const int64_t *hcu, int64_t N,
                           const char *shs, cudaStream_t st, cudaEvent_t *ev, float *times, int iters, int warm,
                           float **pool, int64_t **idx, int bad)
{
    int rc = 0;
    const int64_t kv = d0->H * d0->K * d0->V, S = 2 * N;
    int64_t *hidx = malloc((size_t)S * 8);
    float *hp = malloc((size_t)(S * kv) * 4);
    if (!hidx || !hp) { fprintf(stderr, "sgla bench: out of host memory for the pool\n"); free(hidx), free(hp); return 1; }
    ref_rng s;
    ref_rng_init(&s, a->seed ^ 0x9001ull);
    for (int64_t i = 0; i < S; i++) hidx[i] = i;
    for (int64_t i = S - 1; i > 0; i--) { /* a random permutation: the first N are the batch's slots */
        const int64_t j = (int64_t)(ref_rng_uniform(&s) * (double)(i + 1)) % (i + 1), t = hidx[i];
        hidx[i] = hidx[j], hidx[j] = t;
    }
    for (int64_t i = 0; i < S * kv; i++) hp[i] = (float)(0.1 * rng_normalish(&s));
    BC(cudaMalloc((void **)pool, (size_t)(S * kv) * 4));
    BC(cudaMalloc((void **)idx, (size_t)N * 8));
    BC(cudaMemcpy(*pool, hp, (size_t)(S * kv) * 4, cudaMemcpyHostToDevice));
    BC(cudaMemcpy(*idx, hidx, (size_t)N * 8, cudaMemcpyHostToDevice));
    {
        sgla_state_pool sp;
        memset(&sp, 0, sizeof sp);
        sp.slots = S, sp.indices = *idx, sp.index_bits = 64, sp.flags = SGLA_POOL_INPLACE, sp.host_cu_seqlens = hcu;
        sgla_forward_desc d = *d0;
        d.h0 = *pool, d.ht = NULL, d.pool = &sp;
        sgla_status r = SGLA_OK;
        for (int i = 0; r == SGLA_OK && i < warm + iters; i++) {
            if (i >= warm) BC(cudaEventRecord(ev[2 * (i - warm)], st));
            r = sgla_forward(&d, SGLA_BACKEND_CUDA);
            if (i >= warm) BC(cudaEventRecord(ev[2 * (i - warm) + 1], st));
        }
        if (r != SGLA_OK) {
            fprintf(bench_info(a), "%-22s pool: %s (%s)\n", shs, sgla_status_string(r), sgla_last_error());
            rc = 1;
            goto out;
        }
        BC(sorted_times(st, ev, times, iters));
        const double es = (double)sgla_dtype_size(d.dtype);
        const double bytes = (double)(N * kv) * 8.0 + (double)(d.B * d.T * d.H) * (double)(2 * d.K + 2 * d.V) * es;
        const double med = times[iters / 2], floor_ms = bytes / HBM_BYTES_PER_S * 1e3;
        const int64_t sh[5] = {d.B, d.T, d.H, d.K, d.V};
        const char *gname = d.g ? "g" : d.g_gamma ? "gamma" : "none";
        if (a->format == BENCH_TABLE)
            printf("%-22s %-5s %-6s pool     %9.4f %9.4f %8.1f %8.4f %7.2f  %s  %lld sequence%s, %lld slots\n", shs,
                   sgla_dtype_name(d.dtype), gname, med, (double)times[0], bytes / (med * 1e-3) * 1e-9, floor_ms,
                   med / floor_ms, bad ? "FAIL" : "ok", (long long)N, N == 1 ? "" : "s", (long long)S);
        bench_record rec = bench_record_init("cuda", sh, sgla_dtype_name(d.dtype), gname, "pool");
        rec.nseq = hcu ? (int)N : 0;
        rec.ms = med, rec.min_ms = times[0], rec.gbs = bytes / (med * 1e-3) * 1e-9;
        rec.floor_ms = floor_ms, rec.x_floor = med / floor_ms;
        rec.check = bad ? "FAIL" : "ok";
        bench_out_row(a, &rec);
        fflush(stdout);
    }
out:
    free(hidx), free(hp);
    return rc;
}

static int bench_shape(const bench_args *a, const int64_t sh[5])
{
    int rc = 0;
    const int64_t B = sh[0], T = sh[1], H = sh[2], K = sh[3], V = sh[4];
    if (bench_shape_refused(a, sh, 0, SGLA_BACKEND_CUDA)) return 1;
    const sgla_dtype dt = a->dtype;
    const size_t es = sgla_dtype_size(dt);
    const int64_t nqk = B * T * H * K, nv = B * T * H * V, ng = B * T * H;
    const double bytes = (double)(2 * nqk + 2 * nv) * (double)es;
    const double floor_ms = bytes / HBM_BYTES_PER_S * 1e3;
    int nsets = (int)ceil(1.5e9 / bytes);
    if (nsets < 2) nsets = 2;
    if (nsets > 8) nsets = 8;
    const int64_t fqk = fill_count(nqk), fv = fill_count(nv), fg = fill_count(ng);
    void *hq = malloc((size_t)fqk * es), *hk = malloc((size_t)fqk * es), *hv = malloc((size_t)fv * es);
    float *hg = NULL, *hgg = NULL;
    void *dq[8] = {0}, *dk[8] = {0}, *dv[8] = {0}, *dout[8] = {0};
    float *dg[8] = {0}, *dgg = NULL;
    cudaEvent_t *ev = NULL;
    float *times = NULL;
    cudaStream_t st = NULL;
    static int64_t hcu[BENCH_MAX_SEQS + 1];
    int64_t *dcu = NULL;
    float *dpool = NULL;
    int64_t *didx = NULL;
    int nseq = 0;
    ref_rng s;
    ref_rng_init(&s, a->seed);
    const int iters = a->iters > 0 ? a->iters : 50, warm = a->warmup > 0 ? a->warmup : 5;
    if (!hq || !hk || !hv) { fprintf(stderr, "sgla bench: out of host memory\n"); rc = 1; goto out; }
    if (dt == SGLA_F32) {
        for (int64_t i = 0; i < fqk; i++) ((float *)hq)[i] = (float)rng_normalish(&s);
        for (int64_t i = 0; i < fqk; i++) ((float *)hk)[i] = (float)rng_normalish(&s);
        for (int64_t i = 0; i < fv; i++) ((float *)hv)[i] = (float)rng_normalish(&s);
    } else {
        fill_half(&s, hq, fqk, dt, 1.0);
        fill_half(&s, hk, fqk, dt, 1.0);
        fill_half(&s, hv, fv, dt, 1.0);
    }
    if (a->gate == BENCH_GATE_G) {
        hg = malloc((size_t)fg * 4);
        if (!hg) { fprintf(stderr, "sgla bench: out of host memory\n"); rc = 1; goto out; }
        for (int64_t i = 0; i < fg; i++) hg[i] = -0.2f * (float)ref_rng_uniform(&s);
    } else if (a->gate == BENCH_GATE_GAMMA) {
        hgg = malloc((size_t)H * 4);
        for (int64_t h = 0; h < H; h++) hgg[h] = (float)log(1.0 - ldexp(1.0, -(5 + (int)(h % 8))));
    }
    BC(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int i = 0; i < nsets; i++) {
        BC(cudaMalloc(&dq[i], (size_t)nqk * es));
        BC(cudaMalloc(&dk[i], (size_t)nqk * es));
        BC(cudaMalloc(&dv[i], (size_t)nv * es));
        BC(cudaMalloc(&dout[i], (size_t)nv * es));
        BC(upload_tiled(dq[i], hq, nqk, fqk, es));
        BC(upload_tiled(dk[i], hk, nqk, fqk, es));
        BC(upload_tiled(dv[i], hv, nv, fv, es));
        if (hg) {
            BC(cudaMalloc((void **)&dg[i], (size_t)ng * 4));
            BC(upload_tiled(dg[i], hg, ng, fg, 4));
        }
    }
    if (hgg) {
        BC(cudaMalloc((void **)&dgg, (size_t)H * 4));
        BC(cudaMemcpy(dgg, hgg, (size_t)H * 4, cudaMemcpyHostToDevice));
    }
    ev = malloc(sizeof(cudaEvent_t) * 2 * (size_t)iters);
    times = malloc(sizeof(float) * (size_t)iters);
    for (int i = 0; i < 2 * iters; i++) BC(cudaEventCreate(&ev[i]));

    {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.dtype = dt; d.B = B; d.T = T; d.H = H; d.K = K; d.V = V;
        d.scale = (float)(1.0 / sqrt((double)K));
        d.stream = st;
        d.flags = SGLA_FLAG_SKIP_VALUE_CHECK | (a->tf32 ? SGLA_FLAG_ALLOW_TF32 : 0u);
        d.q = dq[0]; d.k = dk[0]; d.v = dv[0]; d.o = dout[0]; d.g = dg[0]; d.g_gamma = dgg;
        if (bench_varlen(a, sh, hcu, &nseq) < 0) {
            rc = 2;
            goto out;
        }
        if (nseq) { /* a packed batch: cu_seqlens on the device */
            BC(cudaMalloc((void **)&dcu, (size_t)(nseq + 1) * 8));
            BC(cudaMemcpy(dcu, hcu, (size_t)(nseq + 1) * 8, cudaMemcpyHostToDevice));
            d.cu_seqlens = dcu, d.num_seqs = nseq;
        }
        const sgla_cuda_plan force = {a->config, a->split, a->blocks, a->sub, a->cols};
        sgla_cuda_plan plan;
        sgla_status r = sgla_cuda_plan_of(&d, &plan);
        if (r == SGLA_OK && (a->config != -1 || a->split > 0)) {
            if (a->config != -1) plan.config = a->config;
            if (a->split > 0) plan.nseg = a->split;
        }
        char shs[64];
        snprintf(shs, sizeof shs, "%lldx%lldx%lldx%lldx%lld%s", (long long)B, (long long)T, (long long)H, (long long)K,
                 (long long)V, nseq ? "v" : "");
        if (r != SGLA_OK) {
            fprintf(bench_info(a), "%-22s %s (%s)\n", shs, sgla_status_string(r), sgla_last_error());
            rc = 1;
            goto out;
        }
        /* the plan on fresh inputs against fp64 (at most 2048 tokens, the same row, a split of
         * at most one segment per 256 tokens) */
        const int64_t tchk = T < 2048 ? T : 2048;
        /* (--blocks: the same grid form, persistent or a block a pair, on the check's shape) */
        const int chk_nseg = a->blocks > 0 ? 1
                             : plan.nseg > tchk / 256 ? (int)(tchk / 256 > 1 ? tchk / 256 : 1)
                                                      : plan.nseg;
        /* (--sub: the same pieces where they divide the check's segments, else the usual ones) */
        const int64_t chk_chunks = chk_nseg > 1 ? ((tchk + chk_nseg - 1) / chk_nseg + 63) / 64 : 0;
        const int chk_sub = a->sub == 1 || (a->sub > 1 && chk_chunks % a->sub == 0 && chk_chunks) ? a->sub : 0;
        const sgla_cuda_plan chk = {plan.config, chk_nseg, a->blocks, chk_sub, a->cols};
        const int bad = bench_check(a, sh, 64, tchk, nseq, dt == SGLA_F32 ? NULL : &chk);
        if (bad) rc = 1;
        const sgla_cuda_plan *fp = a->config != -1 || a->split > 0 || a->blocks || a->sub || a->cols ? &force : NULL;
        for (int i = 0; i < warm; i++) {
            int k = i % nsets;
            d.q = dq[k]; d.k = dk[k]; d.v = dv[k]; d.o = dout[k]; d.g = dg[k];
            r = fp ? sgla_cuda_forward_forced(&d, fp) : sgla_forward(&d, SGLA_BACKEND_CUDA);
            if (r != SGLA_OK) {
                fprintf(bench_info(a), "%-22s %s (%s)\n", shs, sgla_status_string(r), sgla_last_error());
                rc = 1;
                goto out;
            }
        }
        for (int i = 0; i < iters; i++) {
            int k = (i + warm) % nsets;
            d.q = dq[k]; d.k = dk[k]; d.v = dv[k]; d.o = dout[k]; d.g = dg[k];
            BC(cudaEventRecord(ev[2 * i], st));
            if ((fp ? sgla_cuda_forward_forced(&d, fp) : sgla_forward(&d, SGLA_BACKEND_CUDA)) != SGLA_OK) { rc = 1; goto out; }
            BC(cudaEventRecord(ev[2 * i + 1], st));
        }
        BC(sorted_times(st, ev, times, iters));
        double med = times[iters / 2], mn = times[0];
        const char *gname = a->gate == BENCH_GATE_G ? "g" : a->gate == BENCH_GATE_GAMMA ? "gamma" : "none";
        if (a->format == BENCH_TABLE)
            printf("%-22s %-5s %-6s %3d %4d %9.4f %9.4f %8.1f %8.4f %7.2f  %s\n", shs, sgla_dtype_name(dt), gname,
                   plan.config, plan.nseg, med, mn, bytes / (med * 1e-3) * 1e-9, floor_ms, med / floor_ms,
                   bad ? "FAIL" : "ok");
        {
            bench_record rec = bench_record_init("cuda", sh, sgla_dtype_name(dt), gname, "fwd");
            rec.nseq = nseq;
            rec.ms = med, rec.min_ms = mn, rec.row = plan.config, rec.nseg = plan.nseg;
            rec.gbs = bytes / (med * 1e-3) * 1e-9, rec.floor_ms = floor_ms, rec.x_floor = med / floor_ms;
            rec.check = bad ? "FAIL" : "ok";
            bench_out_row(a, &rec);
        }
        fflush(stdout);
        if (a->pool) {
            /* the step on fresh inputs against fp64 first (bench_check_pool: a packed batch's first sequences
             * and its longest, each cut to 256 tokens; else up to 8 of at most 2048), then timed either way */
            const int pbad = bench_check_pool(a, sh, 64, 2048, nseq ? hcu : NULL, nseq);
            if (pbad) rc = 1;
            const int pr = bench_pool_step(a, &d, nseq ? hcu : NULL, nseq ? nseq : B, shs, st, ev, times, iters, warm,
                                           &dpool, &didx, pbad);
            if (pr) {
                rc = pr;
                goto out;
            }
        }
        if (a->backward) {
            /* the backward: checked against fp64 on a smaller case of the shape, then timed with its
             * own workspace (the bytes it needs are the backward's extra memory) */
            const int64_t tb = T < 256 ? T : 256;
            if (bench_check_backward(a, sh, tb, nseq)) rc = 1;
            void *bdo = NULL, *bq = NULL, *bk = NULL, *bv = NULL, *ws = NULL;
            float *bdg = NULL, *bdgg = NULL;
            BC(cudaMalloc(&bdo, (size_t)nv * es));
            BC(cudaMalloc(&bq, (size_t)nqk * es));
            BC(cudaMalloc(&bk, (size_t)nqk * es));
            BC(cudaMalloc(&bv, (size_t)nv * es));
            BC(upload_tiled(bdo, hv, nv, fv, es));
            if (dg[0] && !a->no_gate_grad) BC(cudaMalloc((void **)&bdg, (size_t)ng * 4));
            if (dgg && !a->no_gate_grad) BC(cudaMalloc((void **)&bdgg, (size_t)H * 4));
            sgla_backward_desc bd;
            sgla_backward_desc_init(&bd);
            d.q = dq[0]; d.k = dk[0]; d.v = dv[0]; d.o = dout[0]; d.g = dg[0];
            if (a->bwd_half) d.flags |= SGLA_FLAG_BWD_HALF_STATES; /* the backward's alone: the forward ignores it */
            bd.fwd = &d, bd.dout = bdo, bd.dq = bq, bd.dk = bk, bd.dv = bv, bd.dg = bdg, bd.dg_gamma = bdgg;
            size_t wsb = 0;
            const int forced = a->bwd_path || a->split, win = a->bwd_windows, grp = a->bwd_groups;
            r = grp      ? sgla_cuda_backward_groups(&bd, grp, &wsb)
                : win    ? sgla_cuda_backward_windows(&bd, win, &wsb)
                : forced ? sgla_cuda_backward_forced_workspace(&bd, a->bwd_path, a->split, &wsb)
                         : sgla_backward_workspace_size(&bd, SGLA_BACKEND_CUDA, &wsb);
            if (r == SGLA_OK && wsb) BC(cudaMalloc(&ws, wsb));
            bd.workspace = ws, bd.workspace_bytes = wsb;
            for (int i = 0; r == SGLA_OK && i < warm + iters; i++) {
                if (i >= warm) BC(cudaEventRecord(ev[2 * (i - warm)], st));
                r = grp      ? sgla_cuda_backward_groups(&bd, grp, NULL)
                    : win    ? sgla_cuda_backward_windows(&bd, win, NULL)
                    : forced ? sgla_cuda_backward_forced(&bd, a->bwd_path, a->split)
                             : sgla_backward(&bd, SGLA_BACKEND_CUDA);
                if (i >= warm) BC(cudaEventRecord(ev[2 * (i - warm) + 1], st));
            }
            if (r != SGLA_OK) {
                fprintf(bench_info(a), "%-22s backward: %s (%s)\n", shs, sgla_status_string(r), sgla_last_error());
                rc = 1;
            } else {
                BC(sorted_times(st, ev, times, iters));
                const double bmed = times[iters / 2], bfloor = floor_ms * 7.0 / 4.0; /* q, k, v, do in; dq, dk, dv out */
                if (a->format == BENCH_TABLE)
                    printf("%-22s %-5s %-6s %-8s %9.4f %9.4f %8.1f %8.4f %7.2f  workspace %.1f MB\n", shs,
                           sgla_dtype_name(dt), gname, a->no_gate_grad ? "bwd0" : "bwd", bmed, (double)times[0],
                           bytes * 7.0 / 4.0 / (bmed * 1e-3) * 1e-9, bfloor, bmed / bfloor, (double)wsb / 1e6);
                bench_record rec = bench_record_init("cuda", sh, sgla_dtype_name(dt), gname, a->no_gate_grad ? "bwd0" : "bwd");
                rec.nseq = nseq;
                rec.ms = bmed, rec.min_ms = times[0], rec.gbs = bytes * 7.0 / 4.0 / (bmed * 1e-3) * 1e-9;
                rec.floor_ms = bfloor, rec.x_floor = bmed / bfloor, rec.workspace_mb = (double)wsb / 1e6;
                bench_out_row(a, &rec);
                fflush(stdout);
            }
            cudaFree(bdo), cudaFree(bq), cudaFree(bk), cudaFree(bv), cudaFree(ws), cudaFree(bdg), cudaFree(bdgg);
        }
    }
out:
    if (ev)
        for (int i = 0; i < 2 * iters; i++) cudaEventDestroy(ev[i]);
    for (int i = 0; i < 8; i++) {
        cudaFree(dq[i]); cudaFree(dk[i]); cudaFree(dv[i]); cudaFree(dout[i]); cudaFree(dg[i]);
    }
    cudaFree(dgg);
    cudaFree(dcu);
    cudaFree(dpool);
    cudaFree(didx);
    if (st) cudaStreamDestroy(st);
    free(ev); free(times); free(hq); free(hk); free(hv); free(hg); free(hgg);
    return rc;
}

int bench_cuda_run(const bench_args *a)
{
    char why[256];
    if (!sgla_backend_probe(SGLA_BACKEND_CUDA, why, sizeof why)) {
        fprintf(stderr, "sgla bench: CUDA backend unavailable: %s\n", why);
        return 1;
    }
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        fprintf(bench_info(a), "sgla bench: backend cuda on %s (%d SMs, L2 %d MB); floor = q,k,v,o once at %.2f TB/s\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20, HBM_BYTES_PER_S * 1e-12);
    for (int i = 0; i < sgla_cuda_num_configs(); i++) {
        sgla_cuda_config_info c;
        sgla_cuda_config(i, &c);
        fprintf(bench_info(a), "  row %d: K=%d V=%d..%d BV=%d stages=%d output WGs=%d, %u B smem, %d threads: %s\n", i, c.K, c.v_min,
               c.v_max, c.bv, c.stages, c.out_wgs, c.smem, c.threads, c.why);
    }
    fprintf(bench_info(a), "%-22s %-5s %-6s %3s %4s %9s %9s %8s %8s %7s  %s\n", "BxTxHxKxV", "dtype", "gate", "row", "nseg", "ms(med)",
           "ms(min)", "GB/s", "floor", "x floor", "check");
    static const int64_t def[][5] = {{8, 4096, 16, 128, 128},
                                     {4, 8192, 32, 64, 64},
                                     {2, 16384, 8, 256, 256},
                                     {64, 1024, 16, 128, 128},
                                     {1, 32768, 16, 128, 128}};
    int rc = 0;
    int n = a->nshapes ? a->nshapes : (int)(sizeof def / sizeof def[0]);
    for (int i = 0; i < n; i++) {
        int r = bench_shape(a, a->nshapes ? a->shapes[i] : def[i]);
        if (r > rc) rc = r;
    }
    return rc;
}
#endif
