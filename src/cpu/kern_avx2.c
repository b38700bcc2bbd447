/*
 * AVX2 + FMA micro-kernels (8 lanes, F16C for f16): the shared source
 * kern_simd.inc over 256-bit vectors, MR x NV = 6 x 2 vectors (12
 * accumulators of 16 registers).  Column tails use maskload/maskstore.
 * Contract: cpu_kernels.h.
 */
#include "cpu_kernels.h"

#ifdef SGLA_CPU_X86 /* other architectures: only the portable kernels */

#include <float.h>
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define VEC __m256
#define MASK __m256i
#define W 8
#define MR 6
#define NV 2
#define SFX(x) x##_avx2
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_LOADM(p, m) _mm256_maskload_ps((p), (m))
#define V_STORE(p, x) _mm256_storeu_ps((p), (x))
#define V_STOREM(p, m, x) _mm256_maskstore_ps((p), (m), (x))
#define V_STREAM(p, x) _mm256_stream_ps((p), (x))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_MULZ(m, a, b) _mm256_and_ps(_mm256_mul_ps((a), (b)), _mm256_castsi256_ps(m))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_MASK(cnt) mask256(cnt)
#define V_HSUM(x) hsum256(x)
#define V_EXP(x) exp256(x)

static inline __m256i mask256(int cnt)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline float hsum256(__m256 x)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* exp(x) for x <= 0: as exp512; 2^n built in the exponent field, n < -126
 * gives 0 (the result would be below FLT_MIN and is flushed anyway). */
static inline __m256 exp256(__m256 x)
{
    x = _mm256_max_ps(x, _mm256_set1_ps(-104.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 f = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    f = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), f);
    __m256 p = _mm256_set1_ps(1.9875691500E-4f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.3981999507E-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(8.3334519073E-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(4.1665795894E-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.6666665459E-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.0000001201E-1f));
    __m256 f2 = _mm256_mul_ps(f, f);
    __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, f2, f), _mm256_set1_ps(1.0f));
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i ok = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(-127));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23);
    __m256 two_n = _mm256_and_ps(_mm256_castsi256_ps(e), _mm256_castsi256_ps(ok));
    y = _mm256_mul_ps(y, two_n);
    __m256 big = _mm256_cmp_ps(y, _mm256_set1_ps(FLT_MIN), _CMP_GE_OQ);
    return _mm256_and_ps(y, big);
}

#define DEC_MAXV 4
#define QK_CASES QK_CASE(1, 1) QK_CASE(1, 2) QK_CASE(2, 1) QK_CASE(2, 2) QK_CASE(3, 1) QK_CASE(3, 2) QK_CASE(4, 1) QK_CASE(4, 2) QK_CASE(5, 1) QK_CASE(5, 2) QK_CASE(6, 1) QK_CASE(6, 2)
#define OUT_CASES OUT_CASE(1, 1) OUT_CASE(1, 2) OUT_CASE(2, 1) OUT_CASE(2, 2) OUT_CASE(3, 1) OUT_CASE(3, 2) OUT_CASE(4, 1) OUT_CASE(4, 2) OUT_CASE(5, 1) OUT_CASE(5, 2) OUT_CASE(6, 1) OUT_CASE(6, 2)
#define STATE_CASES STATE_CASE(1, 1) STATE_CASE(1, 2) STATE_CASE(2, 1) STATE_CASE(2, 2) STATE_CASE(3, 1) STATE_CASE(3, 2) STATE_CASE(4, 1) STATE_CASE(4, 2) STATE_CASE(5, 1) STATE_CASE(5, 2) STATE_CASE(6, 1) STATE_CASE(6, 2)
#include "kern_simd.inc"

static void load_avx2(const void *src, sgla_dtype dt, float *dst, int cnt)
{
    if (dt == SGLA_F32) { /* inline: a libc call per short row costs more than the copy */
        const float *s = src;
        int i = 0;
        for (; i + 32 <= cnt; i += 32) {
            __m256 a = _mm256_loadu_ps(s + i), b = _mm256_loadu_ps(s + i + 8), c = _mm256_loadu_ps(s + i + 16),
                   e = _mm256_loadu_ps(s + i + 24);
            _mm256_storeu_ps(dst + i, a);
            _mm256_storeu_ps(dst + i + 8, b);
            _mm256_storeu_ps(dst + i + 16, c);
            _mm256_storeu_ps(dst + i + 24, e);
        }
        for (; i + 8 <= cnt; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(s + i));
        for (; i < cnt; i++) dst[i] = s[i];
        return;
    }
    const uint16_t *s = src;
    int i = 0;
    for (; i + 8 <= cnt; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(s + i));
        __m256 x = dt == SGLA_F16 ? _mm256_cvtph_ps(h)
                                  : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        _mm256_storeu_ps(dst + i, x);
    }
    for (; i < cnt; i++) dst[i] = dt == SGLA_F16 ? sgla_f16_to_f32(s[i]) : sgla_bf16_to_f32(s[i]);
}

/* f32: tokens in groups of 8, each 64-byte line copied token by token
 * (as gather_avx512: more misses in flight). */
static void gather_avx2(const void *src, sgla_dtype dt, int64_t tld, int ntok, int rows, int cnt, float *dst,
                        int64_t dld, int64_t rld)
{
    const size_t es = dt == SGLA_F32 ? 4 : 2;
    if (dt != SGLA_F32 || cnt % 16) {
        for (int i = 0; i < ntok; i++)
            for (int r = 0; r < rows; r++)
                load_avx2((const char *)src + ((size_t)i * (size_t)tld + (size_t)r * (size_t)cnt) * es, dt,
                          dst + (size_t)r * (size_t)rld + (size_t)i * (size_t)dld, cnt);
        return;
    }
    const float *s = src;
    for (int i0 = 0; i0 < ntok; i0 += 8) {
        const int i1 = ntok - i0 < 8 ? ntok : i0 + 8;
        for (int r = 0; r < rows; r++) {
            const float *sr = s + (size_t)r * (size_t)cnt;
            float *dr = dst + (size_t)r * (size_t)rld;
            for (int c = 0; c < cnt; c += 16)
                for (int i = i0; i < i1; i++) {
                    const float *a = sr + (size_t)i * (size_t)tld + c;
                    float *b = dr + (size_t)i * (size_t)dld + c;
                    _mm256_storeu_ps(b, _mm256_loadu_ps(a));
                    _mm256_storeu_ps(b + 8, _mm256_loadu_ps(a + 8));
                }
        }
    }
}

static void store_avx2(const float *src, sgla_dtype dt, void *dst, int cnt)
{
    if (dt == SGLA_F32) {
        /* as store_avx512: whole aligned lines by streaming stores (no read for ownership; the
         * caller fences once at the end of the call), the rest plain */
        float *d = dst;
        int i = 0;
        if (((uintptr_t)d & 63) == 0)
            for (; i + 16 <= cnt; i += 16) {
                _mm256_stream_ps(d + i, _mm256_loadu_ps(src + i));
                _mm256_stream_ps(d + i + 8, _mm256_loadu_ps(src + i + 8));
            }
        if (i < cnt) memcpy(d + i, src + i, (size_t)(cnt - i) * sizeof(float));
        return;
    }
    uint16_t *d = dst;
    int i = 0;
    for (; i + 8 <= cnt; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        __m128i h;
        if (dt == SGLA_F16) {
            h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        } else {
            __m256i u = _mm256_castps_si256(x);
            __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
            __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF))), 16);
            __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
            __m256i qn = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
            r = _mm256_blendv_epi8(r, qn, nan);
            /* pack 8 x 32-bit (values < 2^16) to 16-bit */
            __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
            h = _mm_packus_epi32(lo, hi);
        }
        _mm_storeu_si128((__m128i *)(d + i), h);
    }
    for (; i < cnt; i++) d[i] = dt == SGLA_F16 ? sgla_f32_to_f16(src[i]) : sgla_f32_to_bf16(src[i]);
}

/* four fp64 lanes, two accumulators (float products are exact in fp64) */
static double dot64_avx2(const float *a, const float *b, int n)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + i)), _mm256_cvtps_pd(_mm_loadu_ps(b + i)), s0);
        s1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + i + 4)), _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4)), s1);
    }
    double t = 0.0;
    for (; i < n; i++) t += (double)a[i] * (double)b[i];
    const __m256d s = _mm256_add_pd(s0, s1);
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h))) + t;
}

const sgla_cpu_kernels sgla_cpu_kernels_avx2 = {
    "avx2", qk_avx2, out_avx2, state_avx2, scan_avx2, decode_avx2,
    vexp_avx2, gmask_avx2, trans_avx2, load_avx2, gather_avx2, store_avx2, wrows_avx2,
    dot64_avx2,
};

#endif /* SGLA_CPU_X86 */
