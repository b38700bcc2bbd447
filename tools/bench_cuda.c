/* `sgla bench --backend cuda`: every CUDA kernel version is first checked
 * against the fp64 reference on one (batch, head) slice of the shape, then
 * timed with CUDA events (warm-up, median of --iters runs, several input
 * sets rotated so that the L2 cache does not flatter the figure).
 *
 * Prints ms, effective GB/s (q, k, v read and o written once) and the ratio
 * to the HBM floor: those bytes at 4.25 TB/s (the copy rate measured on the
 * lent H200).  SGLA_CUDA_VERSION=n times version n only (default: all). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/core.h"
#include "ref/ref.h"

#ifndef SGLA_HAVE_CUDA
int bench_cuda_run(const bench_args *a)
{
    (void)a;
    fprintf(stderr, "sgla bench: this build has no CUDA backend\n");
    return 2;
}
#else

#include <cuda_runtime.h>
#include "cuda/sgla_cuda.h"

#define HBM_BYTES_PER_S 4.25e12

#define BC(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "sgla bench: %s failed: %s\n", #call, cudaGetErrorString(e_));      \
            rc = 2;                                                                               \
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

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Reference on slice (b, h): extract it into a B=1, H=1 problem. */
static double check_slice(const sgla_forward_desc *d, const void *hq, const void *hk, const void *hv,
                          const float *hg, const float *hgg, const void *ho, int64_t b, int64_t h)
{
    const int64_t T = d->T, H = d->H, K = d->K, V = d->V;
    size_t es = sgla_dtype_size(d->dtype);
    char *q = malloc((size_t)(T * K) * es), *k = malloc((size_t)(T * K) * es), *v = malloc((size_t)(T * V) * es);
    float *g = hg ? malloc((size_t)T * 4) : NULL, gg = hgg ? hgg[h] : 0.f;
    double *o64 = malloc((size_t)(T * V) * 8);
    for (int64_t t = 0; t < T; t++) {
        int64_t row = (b * T + t) * H + h;
        memcpy(q + t * K * es, (const char *)hq + row * K * es, (size_t)K * es);
        memcpy(k + t * K * es, (const char *)hk + row * K * es, (size_t)K * es);
        memcpy(v + t * V * es, (const char *)hv + row * V * es, (size_t)V * es);
        if (g) g[t] = hg[row];
    }
    sgla_forward_desc s;
    sgla_forward_desc_init(&s);
    s.q = q; s.k = k; s.v = v; s.o = (void *)ho; s.dtype = d->dtype;
    s.B = 1; s.T = T; s.H = 1; s.K = K; s.V = V; s.scale = d->scale;
    s.g = g; s.g_gamma = hgg ? &gg : NULL;
    double rel = NAN;
    if (sgla_reference(&s, SGLA_BACKEND_REF_B, o64, NULL) == SGLA_OK) {
        double num = 0, den = 0;
        for (int64_t t = 0; t < T; t++)
            for (int64_t j = 0; j < V; j++) {
                int64_t i = ((b * T + t) * H + h) * V + j;
                double x = sgla_load(ho, d->dtype, i), r = o64[t * V + j];
                if (x != x) { num = NAN; break; }
                num += (x - r) * (x - r);
                den += r * r;
            }
        rel = den > 0 ? sqrt(num / den) : (num == 0 ? 0 : INFINITY);
    }
    free(q); free(k); free(v); free(g); free(o64);
    return rel;
}

static int bench_shape(const bench_args *a, const int64_t sh[5], int vlo, int vhi)
{
    int rc = 0;
    const int64_t B = sh[0], T = sh[1], H = sh[2], K = sh[3], V = sh[4];
    const sgla_dtype dt = a->dtype;
    const size_t es = sgla_dtype_size(dt);
    const int64_t nqk = B * T * H * K, nv = B * T * H * V, ng = B * T * H;
    const double bytes = (double)(2 * nqk + 2 * nv) * (double)es;
    const double floor_ms = bytes / HBM_BYTES_PER_S * 1e3;
    int nsets = (int)ceil(1.5e9 / bytes);
    if (nsets < 2) nsets = 2;
    if (nsets > 8) nsets = 8;
    void *hq = malloc((size_t)nqk * es), *hk = malloc((size_t)nqk * es), *hv = malloc((size_t)nv * es);
    void *ho = malloc((size_t)nv * es);
    float *hg = NULL, *hgg = NULL;
    void *dq[8] = {0}, *dk[8] = {0}, *dv[8] = {0}, *dout[8] = {0};
    float *dg[8] = {0}, *dgg = NULL;
    cudaEvent_t *ev = NULL;
    float *times = NULL;
    cudaStream_t st = NULL;
    ref_rng s;
    ref_rng_init(&s, a->seed);
    const int iters = a->iters > 0 ? a->iters : 50, warm = a->warmup > 0 ? a->warmup : 5;
    if (!hq || !hk || !hv || !ho) { fprintf(stderr, "sgla bench: out of host memory\n"); rc = 2; goto out; }
    if (dt == SGLA_F32) {
        for (int64_t i = 0; i < nqk; i++) ((float *)hq)[i] = (float)rng_normalish(&s);
        for (int64_t i = 0; i < nqk; i++) ((float *)hk)[i] = (float)rng_normalish(&s);
        for (int64_t i = 0; i < nv; i++) ((float *)hv)[i] = (float)rng_normalish(&s);
    } else {
        fill_half(&s, hq, nqk, dt, 1.0);
        fill_half(&s, hk, nqk, dt, 1.0);
        fill_half(&s, hv, nv, dt, 1.0);
    }
    if (a->gate == BENCH_GATE_G) {
        hg = malloc((size_t)ng * 4);
        for (int64_t i = 0; i < ng; i++) hg[i] = -0.2f * (float)ref_rng_uniform(&s);
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
        BC(cudaMemcpy(dq[i], hq, (size_t)nqk * es, cudaMemcpyHostToDevice));
        BC(cudaMemcpy(dk[i], hk, (size_t)nqk * es, cudaMemcpyHostToDevice));
        BC(cudaMemcpy(dv[i], hv, (size_t)nv * es, cudaMemcpyHostToDevice));
        if (hg) {
            BC(cudaMalloc((void **)&dg[i], (size_t)ng * 4));
            BC(cudaMemcpy(dg[i], hg, (size_t)ng * 4, cudaMemcpyHostToDevice));
        }
    }
    if (hgg) {
        BC(cudaMalloc((void **)&dgg, (size_t)H * 4));
        BC(cudaMemcpy(dgg, hgg, (size_t)H * 4, cudaMemcpyHostToDevice));
    }
    ev = malloc(sizeof(cudaEvent_t) * 2 * (size_t)iters);
    times = malloc(sizeof(float) * (size_t)iters);
    for (int i = 0; i < 2 * iters; i++) BC(cudaEventCreate(&ev[i]));

    for (int ver = vlo; ver <= vhi; ver++) {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.dtype = dt; d.B = B; d.T = T; d.H = H; d.K = K; d.V = V;
        d.scale = (float)(1.0 / sqrt((double)K));
        d.stream = st;
        d.flags = SGLA_FLAG_SKIP_VALUE_CHECK;
        /* check on set 0 against the fp64 reference (last batch row, last head) */
        BC(cudaMemset(dout[0], 0xff, (size_t)nv * es));
        d.q = dq[0]; d.k = dk[0]; d.v = dv[0]; d.o = dout[0]; d.g = dg[0]; d.g_gamma = dgg;
        sgla_status r = sgla_cuda_forward_version(&d, ver);
        if (r != SGLA_OK) {
            printf("%lld,%lld,%lld,%lld,%lld v%d: %s (%s)\n", (long long)B, (long long)T, (long long)H, (long long)K,
                   (long long)V, ver, sgla_status_string(r), sgla_last_error());
            rc = 1;
            continue;
        }
        BC(cudaStreamSynchronize(st));
        BC(cudaMemcpy(ho, dout[0], (size_t)nv * es, cudaMemcpyDeviceToHost));
        double rel = check_slice(&d, hq, hk, hv, hg, hgg, ho, B - 1, H - 1);
        double thr = dt == SGLA_F16 ? 1e-3 : dt == SGLA_BF16 ? 8e-3 : 1e-5;
        int ok = rel <= thr;
        if (!ok) rc = 1;
        for (int i = 0; i < warm; i++) {
            int k = i % nsets;
            d.q = dq[k]; d.k = dk[k]; d.v = dv[k]; d.o = dout[k]; d.g = dg[k];
            if (sgla_cuda_forward_version(&d, ver) != SGLA_OK) { rc = 2; goto out; }
        }
        for (int i = 0; i < iters; i++) {
            int k = (i + warm) % nsets;
            d.q = dq[k]; d.k = dk[k]; d.v = dv[k]; d.o = dout[k]; d.g = dg[k];
            BC(cudaEventRecord(ev[2 * i], st));
            if (sgla_cuda_forward_version(&d, ver) != SGLA_OK) { rc = 2; goto out; }
            BC(cudaEventRecord(ev[2 * i + 1], st));
        }
        BC(cudaStreamSynchronize(st));
        for (int i = 0; i < iters; i++) BC(cudaEventElapsedTime(&times[i], ev[2 * i], ev[2 * i + 1]));
        qsort(times, (size_t)iters, sizeof(float), cmp_float);
        double med = times[iters / 2], mn = times[0];
        char shs[64];
        snprintf(shs, sizeof shs, "%lldx%lldx%lldx%lldx%lld", (long long)B, (long long)T, (long long)H, (long long)K,
                 (long long)V);
        printf("%-22s %-5s %-6s v%-2d %9.4f %9.4f %8.1f %8.4f %7.2f  %.2e %s\n", shs, sgla_dtype_name(dt),
               a->gate == BENCH_GATE_G ? "g" : a->gate == BENCH_GATE_GAMMA ? "gamma" : "none", ver, med, mn,
               bytes / (med * 1e-3) * 1e-9, floor_ms, med / floor_ms, rel, ok ? "ok" : "FAIL");
        fflush(stdout);
    }
out:
    if (ev)
        for (int i = 0; i < 2 * iters; i++) cudaEventDestroy(ev[i]);
    for (int i = 0; i < 8; i++) {
        cudaFree(dq[i]); cudaFree(dk[i]); cudaFree(dv[i]); cudaFree(dout[i]); cudaFree(dg[i]);
    }
    cudaFree(dgg);
    if (st) cudaStreamDestroy(st);
    free(ev); free(times); free(hq); free(hk); free(hv); free(ho); free(hg); free(hgg);
    return rc;
}

int bench_cuda_run(const bench_args *a)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        fprintf(stderr, "sgla bench: CUDA backend unavailable: %s\n", sgla_last_error());
        return 2;
    }
    int vlo = 1, vhi = sgla_cuda_num_versions();
    const char *ev = getenv("SGLA_CUDA_VERSION");
    if (ev && *ev && strcmp(ev, "all") != 0) vlo = vhi = atoi(ev);
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        printf("sgla bench: backend cuda on %s (%d SMs, L2 %d MB); floor = q,k,v,o once at %.2f TB/s\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20, HBM_BYTES_PER_S * 1e-12);
    for (int v = vlo; v <= vhi; v++) printf("  v%d: %s\n", v, sgla_cuda_version_desc(v));
    printf("%-22s %-5s %-6s %-3s %9s %9s %8s %8s %7s  %-8s\n", "BxTxHxKxV", "dtype", "gate", "ver", "ms(med)",
           "ms(min)", "GB/s", "floor", "x floor", "rel L2 (slice)");
    static const int64_t def[][5] = {{8, 4096, 16, 128, 128},
                                     {4, 8192, 32, 64, 64},
                                     {2, 16384, 8, 256, 256},
                                     {64, 1024, 16, 128, 128},
                                     {1, 32768, 16, 128, 128}};
    int rc = 0;
    int n = a->nshapes ? a->nshapes : (int)(sizeof def / sizeof def[0]);
    for (int i = 0; i < n; i++) {
        int r = bench_shape(a, a->nshapes ? a->shapes[i] : def[i], vlo, vhi);
        if (r > rc) rc = r;
    }
    return rc;
}
#endif
