/* `sgla verify` levels 4 and 5 (SPEC §4), the GPU half:
 *   4. the CUDA kernel (default version) against the fp64 reference (kind A,
 *      the token recurrence) on fresh random inputs drawn from the seed:
 *      every gate form, fp16/bf16/fp32, h0/ht, K != V, partial chunks, varlen,
 *      gates near 0 and at -30; o poisoned with NaN first and checked written.
 *      Bars: rel L2 <= 1e-3 (fp16), 8e-3 (bf16), 1e-5 (fp32); NaN never passes.
 *   5. median latency by CUDA events (bf16, 20 runs after 3 warm-ups, two
 *      input sets alternated) against the HBM floor (q,k,v,o once at 4.25 TB/s).
 * Without a CUDA build or device the levels are skipped (-1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"
#include "sgla.h"
#include "ref/ref.h"

#ifndef SGLA_HAVE_CUDA
int verify_cuda_levels(uint64_t seed, int quick)
{
    (void)seed;
    (void)quick;
    printf("levels 4-5: skipped (this build has no CUDA backend)\n");
    return -1;
}
#else

#include <cuda_runtime.h>

static double vload(const void *p, sgla_dtype dt, int64_t i)
{
    if (dt == SGLA_F32) return ((const float *)p)[i];
    if (dt == SGLA_F16) return sgla_f16_to_f32(((const uint16_t *)p)[i]);
    return sgla_bf16_to_f32(((const uint16_t *)p)[i]);
}

enum { VG_NONE, VG_GAMMA, VG_G, VG_G_NEAR0, VG_G_NEG30 };
typedef struct vcfg {
    sgla_dtype dt;
    int gate;
    int64_t B, T, H, K, V;
    int h0, nseq;
} vcfg;

#define VC(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("  CUDA error: %s: %s\n", #call, cudaGetErrorString(e_));                  \
            ok = 0;                                                                           \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

static int level4_case(const vcfg *c, ref_rng *r)
{
    const int64_t B = c->B, T = c->T, H = c->H, K = c->K, V = c->V;
    const size_t es = sgla_dtype_size(c->dt);
    const int64_t N = c->nseq ? c->nseq : B;
    const int64_t nqk = B * T * H * K, nv = B * T * H * V, ns = N * H * K * V, ng = B * T * H;
    int ok = 1;
    char *q = malloc((size_t)nqk * es), *k = malloc((size_t)nqk * es), *v = malloc((size_t)nv * es);
    char *o = malloc((size_t)nv * es);
    float *g = NULL, *gg = NULL, *h0 = NULL, *ht = malloc((size_t)ns * 4);
    int64_t cu[8];
    double *o64 = malloc((size_t)nv * 8), *h64 = malloc((size_t)ns * 8);
    void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL;
    float *dg = NULL, *dgg = NULL, *dh0 = NULL, *dht = NULL;
    int64_t *dcu = NULL;
    double rel = NAN, hrel = NAN;
    ref_rng_fill(r, q, c->dt, nqk, 1.0);
    ref_rng_fill(r, k, c->dt, nqk, 1.0);
    ref_rng_fill(r, v, c->dt, nv, 1.0);
    if (c->gate >= VG_G) {
        g = malloc((size_t)ng * 4);
        for (int64_t i = 0; i < ng; i++)
            g[i] = c->gate == VG_G_NEG30 ? (ref_rng_uniform(r) < 0.5 ? -30.f : 0.f)
                   : c->gate == VG_G_NEAR0 ? (float)(-1e-3 * ref_rng_uniform(r))
                                           : (float)(-0.3 * ref_rng_uniform(r));
    } else if (c->gate == VG_GAMMA) {
        gg = malloc((size_t)H * 4);
        for (int64_t h = 0; h < H; h++) gg[h] = (float)log(1.0 - ldexp(1.0, -(2 + (int)(h % 6))));
    }
    if (c->h0) {
        h0 = malloc((size_t)ns * 4);
        for (int64_t i = 0; i < ns; i++) h0[i] = (float)(0.5 * ref_rng_normal(r));
    }
    if (c->nseq) { /* fixed cut points with an empty sequence and partial chunks */
        cu[0] = 0;
        for (int64_t i = 1; i < N; i++) cu[i] = T * i / N + (i == 1 ? 0 : 3);
        cu[2] = cu[1];
        cu[N] = T;
    }
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q; d.k = k; d.v = v; d.o = o; d.dtype = c->dt;
    d.B = B; d.T = T; d.H = H; d.K = K; d.V = V;
    d.g = g; d.g_gamma = gg; d.h0 = h0; d.scale = (float)(1.0 / sqrt((double)K));
    d.cu_seqlens = c->nseq ? cu : NULL; d.num_seqs = c->nseq;
    if (sgla_reference(&d, SGLA_BACKEND_REF_A, o64, h64) != SGLA_OK) {
        printf("  reference failed: %s\n", sgla_last_error());
        ok = 0;
        goto done;
    }
    VC(cudaMalloc(&dq, (size_t)nqk * es));
    VC(cudaMalloc(&dk, (size_t)nqk * es));
    VC(cudaMalloc(&dv, (size_t)nv * es));
    VC(cudaMalloc(&dout, (size_t)nv * es));
    VC(cudaMalloc((void **)&dht, (size_t)ns * 4));
    VC(cudaMemcpy(dq, q, (size_t)nqk * es, cudaMemcpyHostToDevice));
    VC(cudaMemcpy(dk, k, (size_t)nqk * es, cudaMemcpyHostToDevice));
    VC(cudaMemcpy(dv, v, (size_t)nv * es, cudaMemcpyHostToDevice));
    VC(cudaMemset(dout, 0xff, (size_t)nv * es)); /* NaN in every dtype */
    VC(cudaMemset(dht, 0xff, (size_t)ns * 4));
    if (g) { VC(cudaMalloc((void **)&dg, (size_t)ng * 4)); VC(cudaMemcpy(dg, g, (size_t)ng * 4, cudaMemcpyHostToDevice)); }
    if (gg) { VC(cudaMalloc((void **)&dgg, (size_t)H * 4)); VC(cudaMemcpy(dgg, gg, (size_t)H * 4, cudaMemcpyHostToDevice)); }
    if (h0) { VC(cudaMalloc((void **)&dh0, (size_t)ns * 4)); VC(cudaMemcpy(dh0, h0, (size_t)ns * 4, cudaMemcpyHostToDevice)); }
    if (c->nseq) { VC(cudaMalloc((void **)&dcu, (size_t)(N + 1) * 8)); VC(cudaMemcpy(dcu, cu, (size_t)(N + 1) * 8, cudaMemcpyHostToDevice)); }
    d.q = dq; d.k = dk; d.v = dv; d.o = dout; d.g = dg; d.g_gamma = dgg; d.h0 = dh0; d.ht = dht; d.cu_seqlens = dcu;
    d.flags = SGLA_FLAG_CHECK_DEVICE_VALUES;
    sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    if (st != SGLA_OK) {
        printf("  sgla_forward(cuda): %s (%s)\n", sgla_status_string(st), sgla_last_error());
        ok = 0;
        goto done;
    }
    VC(cudaDeviceSynchronize());
    VC(cudaMemcpy(o, dout, (size_t)nv * es, cudaMemcpyDeviceToHost));
    VC(cudaMemcpy(ht, dht, (size_t)ns * 4, cudaMemcpyDeviceToHost));
    {
        double num = 0, den = 0, hn = 0, hd = 0;
        for (int64_t i = 0; i < nv; i++) {
            double x = vload(o, c->dt, i), e = x - o64[i];
            num += e * e; /* NaN (unwritten or computed) propagates */
            den += o64[i] * o64[i];
        }
        for (int64_t i = 0; i < ns; i++) {
            double e = (double)ht[i] - h64[i];
            hn += e * e;
            hd += h64[i] * h64[i];
        }
        rel = den > 0 ? sqrt(num / den) : sqrt(num);
        hrel = hd > 0 ? sqrt(hn / hd) : sqrt(hn);
    }
    {
        double thr = c->dt == SGLA_F16 ? 1e-3 : c->dt == SGLA_BF16 ? 8e-3 : 1e-5;
        ok = rel <= thr && hrel <= thr;
        static const char *gn[] = {"none", "g_gamma", "g", "g~0", "g 0/-30"};
        char lab[96];
        snprintf(lab, sizeof lab, "%s %s %lldx%lldx%lldx%lldx%lld%s%s", sgla_dtype_name(c->dt), gn[c->gate],
                 (long long)B, (long long)T, (long long)H, (long long)K, (long long)V, c->h0 ? " h0" : "",
                 c->nseq ? " varlen" : "");
        printf("  %-40s %-10.3e %-10.3e %-8.0e %s\n", lab, rel, hrel, thr, ok ? "ok" : "FAIL");
    }
done:
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(dg); cudaFree(dgg); cudaFree(dh0);
    cudaFree(dht); cudaFree(dcu);
    free(q); free(k); free(v); free(o); free(g); free(gg); free(h0); free(ht); free(o64); free(h64);
    return ok ? 0 : 1;
}

static int cmpf(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static int level5_shape(const int64_t sh[4], int gate, ref_rng *r)
{
    const int64_t B = sh[0], T = sh[1], H = sh[2], D = sh[3];
    const int64_t n = B * T * H * D, ng = B * T * H;
    int ok = 1;
    uint16_t *hbuf = malloc((size_t)n * 2);
    void *dq[2] = {0}, *dk[2] = {0}, *dv[2] = {0}, *dout[2] = {0};
    float *dg = NULL, *hg = NULL, times[20];
    cudaEvent_t e0 = NULL, e1 = NULL;
    for (int64_t i = 0; i < n; i++) hbuf[i] = sgla_f32_to_bf16((float)(ref_rng_uniform(r) * 3.4641 - 1.7320));
    for (int s = 0; s < 2; s++) {
        VC(cudaMalloc(&dq[s], (size_t)n * 2));
        VC(cudaMalloc(&dk[s], (size_t)n * 2));
        VC(cudaMalloc(&dv[s], (size_t)n * 2));
        VC(cudaMalloc(&dout[s], (size_t)n * 2));
        VC(cudaMemcpy(dq[s], hbuf, (size_t)n * 2, cudaMemcpyHostToDevice));
        VC(cudaMemcpy(dk[s], hbuf, (size_t)n * 2, cudaMemcpyHostToDevice));
        VC(cudaMemcpy(dv[s], hbuf, (size_t)n * 2, cudaMemcpyHostToDevice));
    }
    if (gate == VG_G) {
        hg = malloc((size_t)ng * 4);
        for (int64_t i = 0; i < ng; i++) hg[i] = (float)(-0.2 * ref_rng_uniform(r));
    } else {
        hg = malloc((size_t)H * 4);
        for (int64_t h = 0; h < H; h++) hg[h] = (float)log(1.0 - ldexp(1.0, -(5 + (int)(h % 8))));
    }
    VC(cudaMalloc((void **)&dg, (size_t)(gate == VG_G ? ng : H) * 4));
    VC(cudaMemcpy(dg, hg, (size_t)(gate == VG_G ? ng : H) * 4, cudaMemcpyHostToDevice));
    VC(cudaEventCreate(&e0));
    VC(cudaEventCreate(&e1));
    {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.dtype = SGLA_BF16; d.B = B; d.T = T; d.H = H; d.K = D; d.V = D;
        d.scale = (float)(1.0 / sqrt((double)D));
        if (gate == VG_G) d.g = dg; else d.g_gamma = dg;
        for (int i = 0; i < 23; i++) {
            int s = i & 1;
            d.q = dq[s]; d.k = dk[s]; d.v = dv[s]; d.o = dout[s];
            if (i >= 3) VC(cudaEventRecord(e0, 0));
            sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
            if (st != SGLA_OK) {
                printf("  sgla_forward(cuda): %s (%s)\n", sgla_status_string(st), sgla_last_error());
                ok = 0;
                goto done;
            }
            if (i >= 3) {
                VC(cudaEventRecord(e1, 0));
                VC(cudaEventSynchronize(e1));
                VC(cudaEventElapsedTime(&times[i - 3], e0, e1));
            }
        }
        qsort(times, 20, sizeof(float), cmpf);
        double fl = 4.0 * (double)n * 2 / 4.25e12 * 1e3;
        printf("  %lldx%lldx%lldx%-6lld %-8s %9.4f %9.4f %7.2f\n", (long long)B, (long long)T, (long long)H,
               (long long)D, gate == VG_G ? "g" : "g_gamma", (times[9] + times[10]) / 2, fl,
               (times[9] + times[10]) / 2 / fl);
    }
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    for (int s = 0; s < 2; s++) { cudaFree(dq[s]); cudaFree(dk[s]); cudaFree(dv[s]); cudaFree(dout[s]); }
    cudaFree(dg);
    free(hbuf);
    free(hg);
    return ok ? 0 : 1;
}

int verify_cuda_levels(uint64_t seed, int quick)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        printf("levels 4-5: skipped (%s)\n", sgla_last_error());
        return -1;
    }
    ref_rng r;
    ref_rng_init(&r, seed);
    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    static const vcfg cases[] = {
        {BF, VG_G, 2, 65, 2, 128, 128, 1, 0},    {HF, VG_G, 2, 65, 2, 128, 128, 1, 0},
        {BF, VG_GAMMA, 1, 1000, 2, 64, 256, 1, 0}, {HF, VG_GAMMA, 1, 1000, 2, 256, 64, 0, 0},
        {BF, VG_NONE, 1, 63, 2, 256, 256, 0, 0}, {HF, VG_NONE, 2, 64, 2, 64, 128, 1, 0},
        {BF, VG_G_NEAR0, 1, 4096, 2, 128, 128, 1, 0}, {HF, VG_G_NEG30, 1, 1000, 2, 128, 64, 1, 0},
        {BF, VG_G, 1, 700, 2, 128, 128, 1, 5},   {HF, VG_GAMMA, 1, 1, 2, 64, 64, 1, 0},
        {F32, VG_G, 1, 200, 2, 64, 64, 1, 0},    {F32, VG_GAMMA, 1, 130, 2, 128, 256, 1, 3},
    };
    int ncase = quick ? 6 : (int)(sizeof cases / sizeof cases[0]);
    int fails = 0;
    printf("level 4: the CUDA kernel against the fp64 reference (kind A), fresh inputs from the seed\n\n");
    printf("  %-40s %-10s %-10s %-8s\n", "case (dtype gate BxTxHxKxV)", "o rel L2", "ht rel L2", "bar");
    for (int i = 0; i < ncase; i++) fails += level4_case(&cases[i], &r);
    printf("\nlevel 4: %s (%d of %d case(s) failed)\n\n", fails ? "FAIL" : "PASS", fails, ncase);

    printf("level 5: median latency by CUDA events (bf16, 20 runs, 2 input sets alternated)\n\n");
    printf("  %-22s %-8s %9s %9s %7s\n", "BxTxHxD", "gate", "ms", "floor ms", "x floor");
    static const int64_t shapes[][4] = {{8, 4096, 16, 128}, {4, 8192, 32, 64}, {2, 16384, 8, 256}};
    int f5 = 0, nsh = quick ? 1 : 3;
    for (int i = 0; i < nsh; i++) {
        f5 += level5_shape(shapes[i], VG_GAMMA, &r);
        f5 += level5_shape(shapes[i], VG_G, &r);
    }
    printf("\nlevel 5: %s (latency is reported, not judged; %d run(s) failed)\n", f5 ? "FAIL" : "PASS", f5);
    return fails + f5;
}
#endif
