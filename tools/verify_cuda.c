/* `sgla verify` levels 4 and 5 (SPEC §4), the GPU half:
 *   4. the CUDA backend against the fp64 reference (kind A, the token
 *      recurrence) through the conformance harness (tools/conform.h) on fresh
 *      random inputs drawn from the seed: every gate form, fp16/bf16/fp32,
 *      h0/ht, K != V, partial chunks, varlen, gates near 0 and at -30; outputs
 *      poisoned first and checked written.  Bars: rel L2 <= 1e-3 (fp16),
 *      8e-3 (bf16), 1e-5 (fp32), max abs <= 4 x bar x max |ref|; NaN never passes.
 *   5. median latency by CUDA events (bf16, 20 runs after 3 warm-ups, two
 *      input sets alternated) against the HBM floor (q,k,v,o once at 4.25 TB/s).
 * Without a CUDA build or device the levels are skipped (-1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "dispatch.h"
#include "verify.h"

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

#define VC(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("  CUDA error: %s: %s\n", #call, cudaGetErrorString(e_));                  \
            ok = 0;                                                                           \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

enum { VG_GAMMA = 1, VG_G = 3 };

static int level4_case(const conform_case *c, ref_rng *r)
{
    conform_data x;
    sgla_status st = conform_draw(&x, c, r, SGLA_BACKEND_REF_A);
    if (st != SGLA_OK) {
        printf("  reference failed: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    conform_result res;
    conform_check(&x, SGLA_BACKEND_CUDA, NULL, &res);
    printf("  ");
    conform_print(stdout, &res);
    conform_free(&x);
    return !res.pass;
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
    char why[256];
    if (!sgla_backend_probe(SGLA_BACKEND_CUDA, why, sizeof why)) {
        printf("levels 4-5: skipped (%s)\n", why);
        return -1;
    }
    ref_rng r;
    ref_rng_init(&r, seed);
    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, G = CONFORM_GATE_G };
    static const conform_case cases[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq */
        {BF, G, CONFORM_MILD, 2, 65, 2, 128, 128, 1, 1, 0, 0},   {HF, G, CONFORM_MILD, 2, 65, 2, 128, 128, 1, 1, 0, 0},
        {BF, GAMMA, CONFORM_MILD, 1, 1000, 2, 64, 256, 1, 1, 0, 0}, {HF, GAMMA, CONFORM_MILD, 1, 1000, 2, 256, 64, 0, 1, 0, 0},
        {BF, NONE, CONFORM_MILD, 1, 63, 2, 256, 256, 0, 1, 0, 0}, {HF, NONE, CONFORM_MILD, 2, 64, 2, 64, 128, 1, 1, 0, 0},
        {BF, G, CONFORM_NEAR0, 1, 4096, 2, 128, 128, 1, 1, 0, 0}, {HF, G, CONFORM_MIX30, 1, 1000, 2, 128, 64, 1, 1, 0, 0},
        {BF, G, CONFORM_MILD, 1, 700, 2, 128, 128, 1, 1, 0, 5},   {HF, GAMMA, CONFORM_MILD, 1, 1, 2, 64, 64, 1, 1, 1, 0},
        {F32, G, CONFORM_MILD, 1, 200, 2, 64, 64, 1, 1, 0, 0},    {F32, GAMMA, CONFORM_MILD, 1, 130, 2, 128, 256, 1, 1, 0, 3},
    };
    int ncase = quick ? 6 : (int)(sizeof cases / sizeof cases[0]);
    int fails = 0;
    printf("level 4: the CUDA backend against the fp64 reference (kind A), fresh inputs from the seed\n\n");
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
