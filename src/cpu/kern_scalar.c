/*
 * Portable C micro-kernels: every build has them; the SIMD levels must give
 * the same results to fp32 rounding (not bitwise: their summation inside an
 * fma chain is the same, but exp differs).  Contract: cpu_kernels.h.
 *
 * The inner loops are written so a compiler can vectorise them over the
 * contiguous output columns; the accumulation order over the reduction index
 * is the contract's (ascending, one term at a time).
 */
#include "cpu_kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void qk_scalar(int n, int K, const float *Q, int ldq, const float *Kt, int ldkt,
                      const float *G, int ldg, float *A, int lda)
{
    for (int i = 0; i < n; i++) {
        float *ar = A + (size_t)i * lda;
        for (int j = 0; j < n; j++) ar[j] = 0.0f;
        for (int p = 0; p < K; p++) {
            const float qv = Q[(size_t)i * ldq + p];
            const float *kr = Kt + (size_t)p * ldkt;
            for (int j = 0; j <= i; j++) ar[j] += qv * kr[j];
        }
        const float *gr = G + (size_t)i * ldg;
        for (int j = 0; j <= i; j++) ar[j] *= gr[j];
    }
}

static void out_scalar(int n, int K, int V, const float *Q, int ldq, const float *rs,
                       const float *S, int lds, const float *A, int lda, const float *Vp, int ldv,
                       float *O, int ldo, int nt)
{
    (void)nt;
    for (int i = 0; i < n; i++) {
        float *orow = O + (size_t)i * ldo;
        for (int c = 0; c < V; c++) orow[c] = 0.0f;
        for (int p = 0; p < K; p++) {
            const float qv = Q[(size_t)i * ldq + p];
            const float *sr = S + (size_t)p * lds;
            for (int c = 0; c < V; c++) orow[c] += qv * sr[c];
        }
        const float r = rs[i];
        for (int c = 0; c < V; c++) orow[c] *= r;
        for (int j = 0; j <= i; j++) {
            const float av = A[(size_t)i * lda + j];
            const float *vr = Vp + (size_t)j * ldv;
            for (int c = 0; c < V; c++) orow[c] += av * vr[c];
        }
    }
}

static void state_scalar(int n, int K, int V, const float *Kt, int ldkt, const float *Vw, int ldv,
                         sgla_carry a, const float *Sin, float *Sout, int lds)
{
    float acc[256];
    for (int p = 0; p < K; p++) {
        const float *kr = Kt + (size_t)p * ldkt;
        for (int c0 = 0; c0 < V; c0 += 256) {
            int nc = V - c0 < 256 ? V - c0 : 256;
            for (int c = 0; c < nc; c++) acc[c] = 0.0f;
            for (int r = 0; r < n; r++) {
                const float kv = kr[r];
                const float *vr = Vw + (size_t)r * ldv + c0;
                for (int c = 0; c < nc; c++) acc[c] += kv * vr[c];
            }
            float *so = Sout + (size_t)p * lds + c0;
            if (Sin) {
                const float *si = Sin + (size_t)p * lds + c0;
                for (int c = 0; c < nc; c++) so[c] = sgla_carry_apply(a, si[c], acc[c]);
            } else {
                memcpy(so, acc, (size_t)nc * sizeof(float));
            }
        }
    }
}

static void scan_scalar(int64_t cnt, sgla_carry a, float *s, float *d)
{
    for (int64_t i = 0; i < cnt; i++) {
        const float cur = s[i];
        s[i] = sgla_carry_apply(a, cur, d[i]);
        d[i] = cur;
    }
}

static void decode_scalar(int K, int V, const float *q, const float *k, const float *v, float rs,
                          float g11, sgla_carry a, const float *Sin, float *Sout, float *o)
{
    float qk = 0.0f;
    for (int p = 0; p < K; p++) qk += q[p] * k[p];
    const float A11 = g11 * qk;
    for (int c = 0; c < V; c++) o[c] = 0.0f;
    for (int p = 0; p < K; p++) {
        const float qv = q[p], kv = k[p];
        const float *si = Sin + (size_t)p * V;
        float *so = Sout + (size_t)p * V;
        for (int c = 0; c < V; c++) {
            const float s = si[c];
            o[c] += qv * s;
            so[c] = sgla_carry_apply(a, s, kv * v[c]);
        }
    }
    for (int c = 0; c < V; c++) o[c] = fmaf(A11, v[c], rs * o[c]);
}

static void vexp_scalar(const float *x, float *y, int cnt)
{
    for (int i = 0; i < cnt; i++) {
        float e = (float)exp((double)x[i]);
        y[i] = e < FLT_MIN ? 0.0f : e;
    }
}

static void gmask_scalar(int n, const double *b, float scale, float *G, int ldg)
{
    for (int i = 0; i < n; i++) {
        float *gr = G + (size_t)i * ldg;
        for (int j = 0; j <= i; j++) gr[j] = (float)(b[i + 1] - b[j + 1]);
        vexp_scalar(gr, gr, i + 1);
        for (int j = 0; j <= i; j++) gr[j] *= scale;
    }
}

static void trans_scalar(int n, int K, const float *src, int lds, float *dst, int ldd)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < K; c++) dst[(size_t)c * ldd + i] = src[(size_t)i * lds + c];
}

static void load_scalar(const void *src, sgla_dtype dt, float *dst, int cnt)
{
    switch (dt) {
    case SGLA_F32: memcpy(dst, src, (size_t)cnt * sizeof(float)); break;
    case SGLA_F16:
        for (int i = 0; i < cnt; i++) dst[i] = sgla_f16_to_f32(((const uint16_t *)src)[i]);
        break;
    case SGLA_BF16:
        for (int i = 0; i < cnt; i++) dst[i] = sgla_bf16_to_f32(((const uint16_t *)src)[i]);
        break;
    case SGLA_F64: break; /* refused before the kernels */
    }
}

static void wrows_scalar(int n, int cnt, const float *w, const float *src, int lds, float *dst, int ldd)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < cnt; c++) dst[(size_t)i * ldd + c] = src[(size_t)i * lds + c] * w[i];
}

static void gather_scalar(const void *src, sgla_dtype dt, int64_t tld, int ntok, int rows, int cnt, float *dst,
                          int64_t dld, int64_t rld)
{
    const size_t es = dt == SGLA_F32 ? 4 : 2;
    for (int i = 0; i < ntok; i++)
        for (int r = 0; r < rows; r++)
            load_scalar((const char *)src + ((size_t)i * (size_t)tld + (size_t)r * (size_t)cnt) * es, dt,
                        dst + (size_t)r * (size_t)rld + (size_t)i * (size_t)dld, cnt);
}

static void store_scalar(const float *src, sgla_dtype dt, void *dst, int cnt)
{
    switch (dt) {
    case SGLA_F32: memcpy(dst, src, (size_t)cnt * sizeof(float)); break;
    case SGLA_F16:
        for (int i = 0; i < cnt; i++) ((uint16_t *)dst)[i] = sgla_f32_to_f16(src[i]);
        break;
    case SGLA_BF16:
        for (int i = 0; i < cnt; i++) ((uint16_t *)dst)[i] = sgla_f32_to_bf16(src[i]);
        break;
    case SGLA_F64: break; /* refused before the kernels */
    }
}

/* eight partial sums: independent chains the compiler can put in vector lanes */
static double dot64_scalar(const float *a, const float *b, int n)
{
    double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) p[j] += (double)a[i + j] * (double)b[i + j];
    for (; i < n; i++) p[i & 7] += (double)a[i] * (double)b[i];
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

const sgla_cpu_kernels sgla_cpu_kernels_scalar = {
    "scalar", qk_scalar, out_scalar, state_scalar, scan_scalar, decode_scalar,
    vexp_scalar, gmask_scalar, trans_scalar, load_scalar, gather_scalar, store_scalar, wrows_scalar,
    dot64_scalar,
};
