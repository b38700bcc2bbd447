/* Stand-alone timings of the CPU backend's AVX-512 pieces the backward leans on (docs/perf-cpu.md,
 * session 22): the gather of a chunk's rows, one head at a time against groups of heads; a gather
 * loop with a mask on every vector against one with a mask on the tail only; the backward's products
 * for one chunk (session 42).
 * Build from the repository root after a build in build/:
 *   cc -O2 -mavx512f -std=gnu11 -DSGLA_EXPERIMENTAL_API=1 -DSGLA_BUILDING=1 -Isrc -Iinclude \
 *      bench/cpu_kernel_probe.c build/libsgla.a -lm -lgomp -lpthread -ldl -o /tmp/cpu_kernel_probe
 * (add -L/usr/local/cuda/lib64 -lcudart where the library was built with CUDA). */
#include "cpu/cpu_kernels.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { T = 4096, H = 16, D = 128, C = 64, LD = 144 };

/* a chunk of one head's rows, GATHER_IL = 8 tokens interleaved, by masked (mask = 1, mask m) or plain loads
 * and stores */
__attribute__((noinline)) static void gather8(const float *s, float *dst, int mask, __mmask16 m)
{
    for (int i0 = 0; i0 < C; i0 += 8)
        for (int c = 0; c < D; c += 16)
            for (int i = i0; i < i0 + 8; i++) {
                const float *a = s + (size_t)i * H * D + c;
                float *b = dst + (size_t)i * LD + c;
                if (mask) _mm512_mask_storeu_ps(b, m, _mm512_maskz_loadu_ps(m, a));
                else _mm512_storeu_ps(b, _mm512_loadu_ps(a));
            }
}

/* adds the time since t0 to *acc; returns now */
static double lap(double *acc, double t0)
{
    const double t = now();
    *acc += t - t0;
    return t;
}

static float *tile(size_t n)
{
    float *p = aligned_alloc(64, n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = 1e-3f * (float)(i % 97);
    return p;
}

enum { TRI = 12 };

/* cpu_backward.c's tri_product */
static void tri(const sgla_cpu_kernels *kr, int upper, int n, int cols, const float *M, int ldm, const float *X,
                int ldx, float *Out, int ldo)
{
    for (int p0 = 0; p0 < n; p0 += TRI) {
        const int rows = n - p0 < TRI ? n - p0 : TRI, r0 = upper ? p0 : 0, r1 = upper ? n : p0 + rows;
        kr->state(r1 - r0, rows, cols, M + (size_t)p0 * ldm + r0, ldm, X + (size_t)r0 * ldx, ldx, SGLA_CARRY_ONE,
                  Out + (size_t)p0 * ldo, Out + (size_t)p0 * ldo, ldo);
    }
}

/* The backward's kernel calls for one chunk of 64 tokens at K = V = 128, every operand in cache: the
 * same calls as backward_item in src/cpu/cpu_backward.c (the time-order pass's state product, then the
 * reverse pass's), timed one by one; their sum is what a chunk would cost with no gathers, stores,
 * gates or cache misses (docs/perf-cpu.md, session 42). */
static void backward_chunk(const sgla_cpu_kernels *kr)
{
    enum { K = 128, V = 128, LK = LD, LV = LD, LC = 80, STEPS = 11 };
    float *Q = tile(C * LK), *Kp = tile(C * LK), *dQs = tile(C * LK), *dKs = tile(C * LK);
    float *Vp = tile(C * LV), *dO = tile(C * LV), *rdO = tile(C * LV), *dVs = tile(C * LV);
    float *Kt = tile(K * LC), *Vt = tile(V * LC), *G = tile(C * LC), *G1 = tile(C * LC), *A = tile(C * LC);
    float *dP = tile(C * LC), *dA = tile(C * LC), *AT = tile(C * LC), *dAT = tile(C * LC);
    float *dSt = tile(V * LK), *dS = tile(K * LV), *St = tile(V * LK), *S2 = tile(V * LK), *w = tile(C), *rs = tile(C);
    const sgla_carry a = {0.9f, -0.1f, 0};
    const char *name[STEPS] = {"time-order state", "qk x 2", "dQ state", "dA K (tri)", "dK state", "dA^T Q (tri)",
                               "dV state", "A^T dO (tri)", "dS update", "transposes x 5", "wrows x 4"};
    /* multiply-adds each step computes (the triangular and qk ones: the causal half, n (n + 1) / 2 rows x cols) */
    const double half = C * (C + 1) / 2.0;
    const double mac[STEPS] = {C * K * V, half * (K + V), C * K * V, half * K, C * K * V, half * K, C * K * V, half * V,
                               C * K * V, 0, 0};
    double tt[STEPS] = {0};
    const int it = 3000;
    for (int i = 0; i < it; i++) {
        double t0 = now();
        int s = 0;
        kr->state(C, V, K, Vt, LC, Kp, LK, a, St, S2, LK);
        t0 = lap(&tt[s++], t0);
        kr->qk(C, K, Q, LK, Kt, LC, G, LC, A, LC);
        kr->qk(C, V, dO, LV, Vt, LC, G1, LC, dP, LC);
        t0 = lap(&tt[s++], t0);
        kr->state(V, C, K, rdO, LV, St, LK, SGLA_CARRY_ONE, NULL, dQs, LK);
        t0 = lap(&tt[s++], t0);
        tri(kr, 0, C, K, dA, LC, Kp, LK, dQs, LK);
        t0 = lap(&tt[s++], t0);
        kr->state(V, C, K, Vp, LV, dSt, LK, SGLA_CARRY_ONE, NULL, dKs, LK);
        t0 = lap(&tt[s++], t0);
        tri(kr, 1, C, K, dAT, LC, Q, LK, dKs, LK);
        t0 = lap(&tt[s++], t0);
        kr->state(K, C, V, Kp, LK, dS, LV, SGLA_CARRY_ONE, NULL, dVs, LV);
        t0 = lap(&tt[s++], t0);
        tri(kr, 1, C, V, AT, LC, dO, LV, dVs, LV);
        t0 = lap(&tt[s++], t0);
        kr->state(C, K, V, Kt, LC, dO, LV, a, dS, dS, LV);
        t0 = lap(&tt[s++], t0);
        kr->trans(C, K, Kp, LK, Kt, LC);
        kr->trans(C, V, Vp, LV, Vt, LC);
        kr->trans(K, V, dS, LV, dSt, LK);
        kr->trans(C, C, dA, LC, dAT, LC);
        kr->trans(C, C, A, LC, AT, LC);
        t0 = lap(&tt[s++], t0);
        kr->wrows(C, V, w, Vp, LV, Vp, LV);
        kr->wrows(C, V, rs, dO, LV, rdO, LV);
        kr->wrows(C, K, w, Kp, LK, Kp, LK);
        kr->wrows(C, K, rs, Q, LK, Q, LK);
        t0 = lap(&tt[s++], t0);
        if (i % 50 == 0) /* keep the repeated products finite */
            for (int j = 0; j < C * LK; j++) Q[j] = Kp[j] = Vp[j] = dO[j] = 1e-3f;
        for (int j = 0; j < K * LV; j += 97) dS[j] = St[j] = 1e-3f;
    }
    double tot = 0.0;
    for (int j = 0; j < STEPS; j++) {
        tot += tt[j];
        printf("%-18s %7.2f us", name[j], tt[j] / it * 1e6);
        if (mac[j] > 0) printf("  %6.1f GFLOP/s", 2.0 * mac[j] * it / tt[j] * 1e-9);
        printf("\n");
    }
    printf("sum: %.2f us a chunk and head (one thread)\n", tot / it * 1e6);
}

int main(void)
{
    if (!__builtin_cpu_supports("avx512f")) {
        printf("no AVX-512 here\n");
        return 0;
    }
    /* the kernels are called directly, not through the backend, which flushes subnormals in its threads:
     * the repeated products here decay into that range and each would cost an Intel core an assist
     * (1.5 ms a chunk instead of 72 us in session 52; session 42's AMD core did not show it) */
    _mm_setcsr(_mm_getcsr() | 0x8040u);
    const sgla_cpu_kernels *kr = &sgla_cpu_kernels_avx512;
    const size_t n4 = (size_t)T * H * D * 4; /* four [1, T, H, D] fp32 tensors: q, k, v, do */
    float *x = aligned_alloc(64, n4 * sizeof(float)), *dst = aligned_alloc(64, (size_t)H * C * LD * sizeof(float));
    for (size_t i = 0; i < n4; i++) x[i] = 1.0f;
    const double mb = (double)n4 * 4.0;
    for (int g = 1; g <= 16; g *= 2) { /* the library's gather, g heads at a time, chunks in reverse */
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            const double t0 = now();
            for (int te = 0; te < 4; te++)
                for (int hb = 0; hb < H; hb += g)
                    for (int c = T / C - 1; c >= 0; c--)
                        kr->gather(x + (size_t)te * T * H * D + ((size_t)c * C * H + hb) * D, SGLA_F32, H * D, C, g, D,
                                   dst, LD, (int64_t)C * LD);
            const double t = now() - t0;
            if (t < best) best = t;
        }
        printf("gather_avx512, %2d head(s) a call: %.1f GB/s\n", g, mb / best * 1e-9);
    }
    volatile unsigned all = 0xFFFF; /* a mask the compiler cannot see is all ones (as the library's was) */
    for (int round = 0; round < 3; round++)
        for (int m = 1; m >= 0; m--) {
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                const double t0 = now();
                for (int te = 0; te < 4; te++)
                    for (int h = 0; h < H; h++)
                        for (int c = T / C - 1; c >= 0; c--) gather8(x + (size_t)te * T * H * D + ((size_t)c * C * H + h) * D, dst, m, (__mmask16)all);
                const double t = now() - t0;
                if (t < best) best = t;
            }
            printf("one head a call, %s: %.1f GB/s\n", m ? "every vector masked" : "plain loads and stores", mb / best * 1e-9);
        }
    backward_chunk(kr);
    free(x), free(dst);
    return 0;
}
