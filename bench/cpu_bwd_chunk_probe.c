/* The CPU backward's products for one chunk of 64 tokens at K = V = 128, one thread, every operand in
 * cache: the same kernel calls as backward_item in src/cpu/cpu_backward.c (the time-order pass's state
 * product, then the reverse pass's), timed one by one.  Their sum is what a chunk would cost with no
 * gathers, stores, gates or cache misses (docs/perf-cpu.md, session 42).  AVX-512 level.
 * Build from the repository root after a CPU build in build-cpu/:
 *   cc -O2 -mavx512f -std=gnu11 -DSGLA_EXPERIMENTAL_API=1 -DSGLA_BUILDING=1 -Isrc -Iinclude \
 *      bench/cpu_bwd_chunk_probe.c build-cpu/libsgla.a -lm -lgomp -lpthread -ldl -o /tmp/cpu_bwd_chunk_probe */
#include "cpu/cpu_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { C = 64, K = 128, V = 128, LK = 144, LV = 144, LC = 80, TRI = 12, STEPS = 11 };

static float *tile(size_t n)
{
    float *p = aligned_alloc(64, n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = 1e-3f * (float)(i % 97);
    return p;
}

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

int main(void)
{
    if (!__builtin_cpu_supports("avx512f")) {
        printf("no AVX-512 here\n");
        return 0;
    }
    const sgla_cpu_kernels *kr = &sgla_cpu_kernels_avx512;
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
        double t0 = now(), t;
        int s = 0;
#define STEP() (t = now(), tt[s++] += t - t0, t0 = t)
        kr->state(C, V, K, Vt, LC, Kp, LK, a, St, S2, LK);
        STEP();
        kr->qk(C, K, Q, LK, Kt, LC, G, LC, A, LC);
        kr->qk(C, V, dO, LV, Vt, LC, G1, LC, dP, LC);
        STEP();
        kr->state(V, C, K, rdO, LV, St, LK, SGLA_CARRY_ONE, NULL, dQs, LK);
        STEP();
        tri(kr, 0, C, K, dA, LC, Kp, LK, dQs, LK);
        STEP();
        kr->state(V, C, K, Vp, LV, dSt, LK, SGLA_CARRY_ONE, NULL, dKs, LK);
        STEP();
        tri(kr, 1, C, K, dAT, LC, Q, LK, dKs, LK);
        STEP();
        kr->state(K, C, V, Kp, LK, dS, LV, SGLA_CARRY_ONE, NULL, dVs, LV);
        STEP();
        tri(kr, 1, C, V, AT, LC, dO, LV, dVs, LV);
        STEP();
        kr->state(C, K, V, Kt, LC, dO, LV, a, dS, dS, LV);
        STEP();
        kr->trans(C, K, Kp, LK, Kt, LC);
        kr->trans(C, V, Vp, LV, Vt, LC);
        kr->trans(K, V, dS, LV, dSt, LK);
        kr->trans(C, C, dA, LC, dAT, LC);
        kr->trans(C, C, A, LC, AT, LC);
        STEP();
        kr->wrows(C, V, w, Vp, LV, Vp, LV);
        kr->wrows(C, V, rs, dO, LV, rdO, LV);
        kr->wrows(C, K, w, Kp, LK, Kp, LK);
        kr->wrows(C, K, rs, Q, LK, Q, LK);
        STEP();
#undef STEP
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
    return 0;
}
