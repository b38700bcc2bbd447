/* Micro-benchmarks the bench tool uses: the four per-chunk products alone on
 * packed operands (in cache), an FMA peak loop and a memory copy, each on
 * all threads.  Not part of the public API. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cpu_kernels.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *fbuf(size_t n, float val)
{
    float *p = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    if (p)
        for (size_t i = 0; i < n; i++) p[i] = val * (float)(1 + (i % 7)) * 0.01f;
    return p;
}

/* a probe's threads: at least one, at most the library's cap (4 x cores) */
static int bench_threads(int threads) { return sgla_cpu_threads(threads > 0 ? threads : 1, INT64_MAX); }

double sgla_cpu_bench_kernels(int C, int K, int V, int threads, int reps)
{
    const sgla_cpu_kernels *kr = &sgla_cpu_kernels_scalar;
#ifdef SGLA_CPU_X86
    int isa = sgla_cpu_isa_current();
    if (isa == SGLA_CPU_ISA_AVX512 && sgla_cpu_kernels_avx512.qk) kr = &sgla_cpu_kernels_avx512;
    if (isa == SGLA_CPU_ISA_AVX2 && sgla_cpu_kernels_avx2.qk) kr = &sgla_cpu_kernels_avx2;
#endif
    /* leading dimensions padded as the forward pads them (cpu_forward.c) */
    int ldc = (C + 15) / 16 * 16 + 16, ldv = (V + 15) / 16 * 16 + 16, ldk = (K + 15) / 16 * 16 + 16;
    double t = 0, t0 = 0;
    int nth = bench_threads(threads);
    (void)nth;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
#endif
    {
        float *Q = fbuf((size_t)C * ldk, 1), *Kt = fbuf((size_t)K * ldc, 1), *Vp = fbuf((size_t)C * ldv, 1);
        float *G = fbuf((size_t)C * ldc, 0.5f), *A = fbuf((size_t)C * ldc, 0), *O = fbuf((size_t)C * ldv, 0);
        float *S = fbuf((size_t)K * ldv, 0.1f), *rs = fbuf((size_t)C, 1);
        if (Q && Kt && Vp && G && A && O && S && rs) {
            for (int i = 0; i < C; i++)
                for (int j = i + 1; j < ldc; j++) G[(size_t)i * ldc + j] = 0;
            kr->qk(C, K, Q, ldk, Kt, ldc, G, ldc, A, ldc); /* warm */
            /* best of 5 trials: the machine is shared */
            for (int trial = 0; trial < 5; trial++) {
#ifdef _OPENMP
#pragma omp barrier
#pragma omp master
#endif
                t0 = now_s();
#ifdef _OPENMP
#pragma omp barrier
#endif
                for (int r = 0; r < reps; r++) {
                    kr->qk(C, K, Q, ldk, Kt, ldc, G, ldc, A, ldc);
                    kr->out(C, K, V, Q, ldk, rs, S, ldv, A, ldc, Vp, ldv, O, ldv, 0);
                    kr->state(C, K, V, Kt, ldc, Vp, ldv, sgla_carry_of(-0.001), S, S, ldv);
                }
#ifdef _OPENMP
#pragma omp barrier
#pragma omp master
#endif
                {
                    double dt = now_s() - t0;
                    if (trial == 0 || dt < t) t = dt;
                }
            }
        }
        free(Q); free(Kt); free(Vp); free(G); free(A); free(O); free(S); free(rs);
    }
    return t;
}

/* FMA peak: per thread 16 independent chains of vector FMAs. */
#ifdef SGLA_CPU_X86
/* The chains live in fixed registers (inline asm) so that no compiler
 * spills them: 16 x zmm (AVX-512) or 12 x ymm (AVX2), each FMA depends only
 * on its own chain's previous result. */
__attribute__((target("avx512f"))) static double fma_loop512(long iters)
{
    float out[16];
    __asm__ volatile(
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
        "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
        "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
        "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
        "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
        "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
        "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
        "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"
        "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"
        "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"
        "vxorps %%xmm12, %%xmm12, %%xmm12\n\t"
        "vxorps %%xmm13, %%xmm13, %%xmm13\n\t"
        "vxorps %%xmm14, %%xmm14, %%xmm14\n\t"
        "vxorps %%xmm15, %%xmm15, %%xmm15\n\t"
        "vxorps %%xmm16, %%xmm16, %%xmm16\n\t"
        "vxorps %%xmm17, %%xmm17, %%xmm17\n\t"
        "1:\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm0\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm1\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm2\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm3\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm4\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm5\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm6\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm7\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm8\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm9\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm10\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm11\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm12\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm13\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm14\n\t"
        "vfmadd231ps %%zmm16, %%zmm17, %%zmm15\n\t"
        "dec %0\n\t"
        "jnz 1b\n\t"
        "vaddps %%zmm1, %%zmm0, %%zmm0\n\t"
        "vmovups %%zmm0, (%1)\n\t"
        "vzeroupper\n\t"
        : "+r"(iters)
        : "r"(out)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
          "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "memory", "cc");
    return out[0];
}
__attribute__((target("avx2,fma"))) static double fma_loop256(long iters)
{
    float out[8];
    __asm__ volatile(
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
        "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
        "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
        "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
        "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
        "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
        "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
        "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"
        "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"
        "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"
        "vxorps %%xmm12, %%xmm12, %%xmm12\n\t"
        "vxorps %%xmm13, %%xmm13, %%xmm13\n\t"
        "1:\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm0\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm1\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm2\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm3\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm4\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm5\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm6\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm7\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm8\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm9\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm10\n\t"
        "vfmadd231ps %%ymm12, %%ymm13, %%ymm11\n\t"
        "dec %0\n\t"
        "jnz 1b\n\t"
        "vaddps %%ymm1, %%ymm0, %%ymm0\n\t"
        "vmovups %%ymm0, (%1)\n\t"
        "vzeroupper\n\t"
        : "+r"(iters)
        : "r"(out)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
          "xmm12", "xmm13", "memory", "cc");
    return out[0];
}
#endif

/* GFLOP/s (2 per FMA lane) of all threads for the given SIMD level. */
double sgla_cpu_bench_fma_peak(int threads, int isa)
{
    int nth = bench_threads(threads);
    (void)nth;
    const long iters = 20000000;
    double flops = 0, t = 0, sink = 0;
#ifdef SGLA_CPU_X86
    int lanes = isa == SGLA_CPU_ISA_AVX512 ? 16 : 8, chains = isa == SGLA_CPU_ISA_AVX512 ? 16 : 12;
    if (isa < SGLA_CPU_ISA_AVX2) return 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_s();
#ifdef _OPENMP
#pragma omp parallel num_threads(nth) reduction(+ : sink)
#endif
        sink += isa == SGLA_CPU_ISA_AVX512 ? fma_loop512(iters) : fma_loop256(iters);
        double dt = now_s() - t0;
        if (rep == 0 || dt < t) t = dt;
    }
    flops = 2.0 * lanes * chains * (double)iters * nth;
#else
    (void)isa;
    return 0;
#endif
    if (sink == 12345.678) flops += 1; /* keep the loops */
    return flops / t * 1e-9;
}

/* Copy bandwidth, GB/s counting bytes read + written, all threads each
 * copying their share of a buffer much larger than the caches. */
double sgla_cpu_bench_copy_bw(int threads, size_t bytes)
{
    int nth = bench_threads(threads);
    (void)nth;
    char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
        {
            int id = omp_get_thread_num();
            size_t per = bytes / (size_t)nth / 64 * 64;
            size_t off = per * (size_t)id, len = id == nth - 1 ? bytes - off : per;
            memcpy(b + off, a + off, len);
        }
#else
        memcpy(b, a, bytes);
#endif
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    free(a);
    free(b);
    return 2.0 * (double)bytes / best * 1e-9;
}
