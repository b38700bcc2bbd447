/* Stand-alone timings of the CPU backend's AVX-512 pieces the backward leans on (docs/perf-cpu.md,
 * session 22): the gather of a chunk's rows, one head at a time against groups of heads; a gather
 * loop with a mask on every vector against one with a mask on the tail only; the state product.
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

int main(void)
{
    if (!__builtin_cpu_supports("avx512f")) {
        printf("no AVX-512 here\n");
        return 0;
    }
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
    /* the state product at the backward's shapes, in cache */
    float *A = aligned_alloc(64, 128 * LD * sizeof(float)), *B = aligned_alloc(64, 128 * LD * sizeof(float)),
          *S = aligned_alloc(64, 128 * LD * sizeof(float));
    for (int i = 0; i < 128 * LD; i++) A[i] = 1e-3f * (float)(i % 97), B[i] = 2e-3f, S[i] = 0.0f;
    const sgla_carry a = {0.9f, -0.1f, 1};
    const int it = 2000;
    double t0 = now();
    for (int i = 0; i < it; i++) kr->state(C, 128, 128, A, LD, B, LD, a, S, S, LD);
    double t = now() - t0;
    printf("state n 64, K 128, V 128: %.2f us a call, %.1f GFLOP/s\n", t / it * 1e6, 2.0 * C * 128 * 128 * it / t * 1e-9);
    t0 = now();
    for (int i = 0; i < it; i++) kr->state(128, C, 128, A, LD, B, LD, SGLA_CARRY_ONE, NULL, S, LD);
    t = now() - t0;
    printf("state n 128, rows 64, V 128 (dq's shape): %.2f us a call, %.1f GFLOP/s\n", t / it * 1e6,
           2.0 * C * 128 * 128 * it / t * 1e-9);
    free(x), free(dst), free(A), free(B), free(S);
    return 0;
}
