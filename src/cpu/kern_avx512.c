/*
 * AVX-512 micro-kernels (16 lanes; F, BW, VL, DQ, FMA, F16C): the shared
 * source kern_simd.inc over 512-bit vectors, MR x NV = 8 x 2 vectors
 * (16 accumulators of 32 registers).  Masked loads and stores handle column
 * tails.  Contract: cpu_kernels.h.
 */
#include "cpu_kernels.h"

#ifdef SGLA_CPU_X86 /* other architectures: only the portable kernels */

#include <float.h>
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define VEC __m512
#define MASK __mmask16
#define W 16
#define MR 8
#define NV 2
#define SFX(x) x##_avx512
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_LOADM(p, m) _mm512_maskz_loadu_ps((m), (p))
#define V_STORE(p, x) _mm512_storeu_ps((p), (x))
#define V_STOREM(p, m, x) _mm512_mask_storeu_ps((p), (m), (x))
#define V_STREAM(p, x) _mm512_stream_ps((p), (x))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_MULZ(m, a, b) _mm512_maskz_mul_ps((m), (a), (b))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_MASK(cnt) ((__mmask16)((1u << (cnt)) - 1u))
#define V_HSUM(x) _mm512_reduce_add_ps(x)
#define V_EXP(x) exp512(x)

/* exp(x) for x <= 0: Cody-Waite reduction by ln 2, the Cephes degree-6
 * polynomial (about 1 ulp), 2^n by scalef; below FLT_MIN flushed to 0. */
static inline __m512 exp512(__m512 x)
{
    x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    f = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), f);
    __m512 p = _mm512_set1_ps(1.9875691500E-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3981999507E-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(8.3334519073E-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(4.1665795894E-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.6666665459E-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.0000001201E-1f));
    __m512 f2 = _mm512_mul_ps(f, f);
    __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, f2, f), _mm512_set1_ps(1.0f));
    y = _mm512_scalef_ps(y, n);
    __mmask16 tiny = _mm512_cmp_ps_mask(y, _mm512_set1_ps(FLT_MIN), _CMP_LT_OQ);
    return _mm512_mask_blend_ps(tiny, y, _mm512_setzero_ps());
}

#define DEC_MAXV 8
/* The g decay mask with the differences kept in registers (double, then
 * fp32): the generic version stored them and reloaded them wider, which
 * missed store forwarding on every row. */
#define GMASK_NATIVE 1
static void gmask_avx512(int n, const double *b, float scale, float *G, int ldg)
{
    const __m512 sv = _mm512_set1_ps(scale);
    for (int i = 0; i < n; i++) {
        float *gr = G + (size_t)i * ldg;
        const __m512d bi = _mm512_set1_pd(b[i + 1]);
        const int cnt = i + 1;
        for (int j = 0; j < cnt; j += 16) {
            const __mmask16 m = cnt - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cnt - j)) - 1u);
            const __m512d lo = _mm512_maskz_loadu_pd((__mmask8)(m & 0xFF), b + j + 1);
            const __m512d hi = _mm512_maskz_loadu_pd((__mmask8)(m >> 8), b + j + 9);
            const __m256 flo = _mm512_cvtpd_ps(_mm512_sub_pd(bi, lo));
            const __m256 fhi = _mm512_cvtpd_ps(_mm512_sub_pd(bi, hi));
            const __m512 x = _mm512_insertf32x8(_mm512_castps256_ps512(flo), fhi, 1);
            _mm512_mask_storeu_ps(gr + j, m, _mm512_mul_ps(exp512(x), sv));
        }
    }
}

#define QK_CASES QK_CASE(1, 1) QK_CASE(1, 2) QK_CASE(2, 1) QK_CASE(2, 2) QK_CASE(3, 1) QK_CASE(3, 2) QK_CASE(4, 1) QK_CASE(4, 2) QK_CASE(5, 1) QK_CASE(5, 2) QK_CASE(6, 1) QK_CASE(6, 2) QK_CASE(7, 1) QK_CASE(7, 2) QK_CASE(8, 1) QK_CASE(8, 2)
#define OUT_CASES OUT_CASE(1, 1) OUT_CASE(1, 2) OUT_CASE(2, 1) OUT_CASE(2, 2) OUT_CASE(3, 1) OUT_CASE(3, 2) OUT_CASE(4, 1) OUT_CASE(4, 2) OUT_CASE(5, 1) OUT_CASE(5, 2) OUT_CASE(6, 1) OUT_CASE(6, 2) OUT_CASE(7, 1) OUT_CASE(7, 2) OUT_CASE(8, 1) OUT_CASE(8, 2)
/* state: 6 rows x 4 vectors (24 accumulators; 4 loads and 6 broadcasts per
 * 24 fmas, against 2 and 8 per 16 at 8 x 2): -2..-6 % on the forward,
 * 2026-11-29; the sum over tokens per element is unchanged */
#define SMR 6
#define SNV 4
#define STATE_CASES STATE_CASE(1, 1) STATE_CASE(1, 2) STATE_CASE(1, 3) STATE_CASE(1, 4) STATE_CASE(2, 1) STATE_CASE(2, 2) STATE_CASE(2, 3) STATE_CASE(2, 4) STATE_CASE(3, 1) STATE_CASE(3, 2) STATE_CASE(3, 3) STATE_CASE(3, 4) STATE_CASE(4, 1) STATE_CASE(4, 2) STATE_CASE(4, 3) STATE_CASE(4, 4) STATE_CASE(5, 1) STATE_CASE(5, 2) STATE_CASE(5, 3) STATE_CASE(5, 4) STATE_CASE(6, 1) STATE_CASE(6, 2) STATE_CASE(6, 3) STATE_CASE(6, 4)
#include "kern_simd.inc"

/* 16 f16 or bf16 values to fp32 (exact) */
static inline __m512 half16(__m256i h, sgla_dtype dt)
{
    return dt == SGLA_F16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Masked loads and stores only for a row's tail, as in the AVX2 level (whole blocks by plain ones:
 * docs/perf-cpu.md, session 22). */
static void load_avx512(const void *src, sgla_dtype dt, float *dst, int cnt)
{
    if (dt == SGLA_F32) { /* inline: a libc call per short row costs more than the copy */
        const float *s = src;
        int i = 0;
        for (; i + 64 <= cnt; i += 64) {
            __m512 a = _mm512_loadu_ps(s + i), b = _mm512_loadu_ps(s + i + 16), c = _mm512_loadu_ps(s + i + 32),
                   e = _mm512_loadu_ps(s + i + 48);
            _mm512_storeu_ps(dst + i, a);
            _mm512_storeu_ps(dst + i + 16, b);
            _mm512_storeu_ps(dst + i + 32, c);
            _mm512_storeu_ps(dst + i + 48, e);
        }
        for (; i < cnt; i += 16) {
            __mmask16 m = cnt - i >= 16 ? (__mmask16)0xFFFF : V_MASK(cnt - i);
            _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_loadu_ps(m, s + i));
        }
        return;
    }
    const uint16_t *s = src;
    int i = 0;
    for (; i + 16 <= cnt; i += 16) _mm512_storeu_ps(dst + i, half16(_mm256_loadu_si256((const __m256i *)(s + i)), dt));
    if (i < cnt) {
        const __mmask16 m = V_MASK(cnt - i);
        _mm512_mask_storeu_ps(dst + i, m, half16(_mm256_maskz_loadu_epi16(m, s + i), dt));
    }
}

/* f32: tokens in groups of GATHER_IL, each 64-byte line of the group's
 * runs copied token by token, so GATHER_IL pages are read at once instead of
 * one run after another (more misses in flight: 4x2048x16x64 -8 %). */
#define GATHER_IL 8
static void gather_avx512(const void *src, sgla_dtype dt, int64_t tld, int ntok, int rows, int cnt, float *dst,
                          int64_t dld, int64_t rld)
{
    const int full = cnt / 16 * 16;
    const __mmask16 mt = V_MASK(cnt - full > 0 ? cnt - full : 16);
    if (dt != SGLA_F32) { /* f16 / bf16: the same order, converted on the way */
        const uint16_t *s = src;
        for (int i0 = 0; i0 < ntok; i0 += GATHER_IL) {
            const int i1 = ntok - i0 < GATHER_IL ? ntok : i0 + GATHER_IL;
            for (int r = 0; r < rows; r++) {
                const uint16_t *sr = s + (size_t)r * (size_t)cnt;
                float *dr = dst + (size_t)r * (size_t)rld;
                int c = 0;
                for (; c < full; c += 16)
                    for (int i = i0; i < i1; i++)
                        _mm512_storeu_ps(dr + (size_t)i * (size_t)dld + c,
                                         half16(_mm256_loadu_si256((const __m256i *)(sr + (size_t)i * (size_t)tld + c)), dt));
                if (c < cnt)
                    for (int i = i0; i < i1; i++)
                        _mm512_mask_storeu_ps(dr + (size_t)i * (size_t)dld + c, mt,
                                              half16(_mm256_maskz_loadu_epi16(mt, sr + (size_t)i * (size_t)tld + c), dt));
            }
        }
        return;
    }
    const float *s = src;
    for (int i0 = 0; i0 < ntok; i0 += GATHER_IL) {
        const int i1 = ntok - i0 < GATHER_IL ? ntok : i0 + GATHER_IL;
        for (int r = 0; r < rows; r++) {
            const float *sr = s + (size_t)r * (size_t)cnt;
            float *dr = dst + (size_t)r * (size_t)rld;
            int c = 0;
            for (; c < full; c += 16)
                for (int i = i0; i < i1; i++)
                    _mm512_storeu_ps(dr + (size_t)i * (size_t)dld + c, _mm512_loadu_ps(sr + (size_t)i * (size_t)tld + c));
            if (c < cnt)
                for (int i = i0; i < i1; i++)
                    _mm512_mask_storeu_ps(dr + (size_t)i * (size_t)dld + c, mt,
                                          _mm512_maskz_loadu_ps(mt, sr + (size_t)i * (size_t)tld + c));
        }
    }
}

/* 16 fp32 values to f16 or bf16, round to nearest even; a NaN stays a (quiet) NaN in bf16 */
static inline __m256i to_half16(__m512 x, sgla_dtype dt)
{
    if (dt == SGLA_F16) return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i u = _mm512_castps_si512(x);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512i qn = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, r, qn));
}

static void store_avx512(const float *src, sgla_dtype dt, void *dst, int cnt)
{
    if (dt == SGLA_F32) {
        /* o is written once and not read back here: streaming stores skip
         * the read-for-ownership of every line (whole aligned lines only);
         * the framework fences once at the end of the call */
        float *d = dst;
        int i = 0;
        if (((uintptr_t)d & 63) == 0 && cnt >= 16)
            for (; i + 16 <= cnt; i += 16) _mm512_stream_ps(d + i, _mm512_loadu_ps(src + i));
        for (; i + 16 <= cnt; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(src + i));
        if (i < cnt) _mm512_mask_storeu_ps(d + i, V_MASK(cnt - i), _mm512_maskz_loadu_ps(V_MASK(cnt - i), src + i));
        return;
    }
    uint16_t *d = dst;
    int i = 0;
    for (; i + 16 <= cnt; i += 16) _mm256_storeu_si256((__m256i *)(d + i), to_half16(_mm512_loadu_ps(src + i), dt));
    if (i < cnt) {
        const __mmask16 m = V_MASK(cnt - i);
        _mm256_mask_storeu_epi16(d + i, m, to_half16(_mm512_maskz_loadu_ps(m, src + i), dt));
    }
}

/* eight fp64 lanes, two accumulators; a float product is exact in fp64, so
 * fma and multiply-then-add give the same bits */
static double dot64_avx512(const float *a, const float *b, int n)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(a + i)), _mm512_cvtps_pd(_mm256_loadu_ps(b + i)), s0);
        s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(a + i + 8)), _mm512_cvtps_pd(_mm256_loadu_ps(b + i + 8)),
                             s1);
    }
    double t = 0.0;
    for (; i < n; i++) t += (double)a[i] * (double)b[i];
    return _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) + t;
}

const sgla_cpu_kernels sgla_cpu_kernels_avx512 = {
    "avx512", qk_avx512, out_avx512, state_avx512, scan_avx512, decode_avx512,
    vexp_avx512, gmask_avx512, trans_avx512, load_avx512, gather_avx512, store_avx512, wrows_avx512,
    dot64_avx512,
};

#endif /* SGLA_CPU_X86 */
