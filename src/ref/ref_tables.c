/* The numeric tables of SPEC §4 (article §3, §3.2, §6, §2.1), computed:
 * floating-point classes come from actually rounding, cumulative products
 * from emulated fp16/fp32 arithmetic.  Printing lives in tools/cmd_tables.c;
 * the tests check the figures through these functions. */
#include "ref/ref.h"

#include <float.h>
#include <math.h>

const char *ref_fp_class_name(ref_fp_class c)
{
    switch (c) {
    case REF_FP_NORMAL: return "normal";
    case REF_FP_SUBNORMAL: return "subnormal";
    case REF_FP_ZERO: return "zero";
    case REF_FP_INF: return "inf";
    }
    return "?";
}

ref_fp_class ref_fp16_class(double x)
{
    uint16_t h = sgla_f64_to_f16(x);
    unsigned e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return REF_FP_INF; /* NaN never reaches here from the tables */
    if (e == 0) return m ? REF_FP_SUBNORMAL : REF_FP_ZERO;
    return REF_FP_NORMAL;
}

ref_fp_class ref_fp32_class(double x)
{
    float f = (float)x; /* round to nearest even, gradual underflow */
    switch (fpclassify(f)) {
    case FP_ZERO: return REF_FP_ZERO;
    case FP_SUBNORMAL: return REF_FP_SUBNORMAL;
    case FP_INFINITE: return REF_FP_INF;
    default: return REF_FP_NORMAL;
    }
}

int64_t ref_fact_max_exponent(double alpha, double limit)
{
    if (!(alpha > 0.0 && alpha < 1.0) || !(limit >= 1.0)) return -1;
    /* Start from the logarithm, then settle the boundary on pow itself so the
     * answer is the largest j with alpha^-j <= limit as evaluated in fp64. */
    int64_t j = (int64_t)floor(log(limit) / -log(alpha));
    while (j > 0 && pow(alpha, -(double)j) > limit) j--;
    while (pow(alpha, -(double)(j + 1)) <= limit) j++;
    return j;
}

double ref_memory_length(double alpha) { return log(1e-3) / log(alpha); }

/* Record the first step where x leaves the normal range and where it is 0. */
static void track(double x, double smallest_normal, int64_t t, int64_t *sub, int64_t *zero)
{
    if (!*sub && fabs(x) < smallest_normal) *sub = t;
    if (!*zero && x == 0.0) *zero = t;
}

sgla_status ref_cumprod_compare(uint64_t seed, int64_t n, double lo, double hi, ref_cumprod_result *out)
{
    if (n < 1 || !(lo > 0.0) || !(hi <= 1.0) || lo > hi)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "cumprod: need n >= 1 and 0 < lo <= hi <= 1");
    ref_rng rng;
    ref_rng_init(&rng, seed);
    ref_cumprod_result r = {0};
    float p16 = 1.0f, p32 = 1.0f, run32 = 1.0f, logsum = 0.0f;
    double exact = 1.0;
    float s16 = 1.0f, s32 = 1.0f;
    for (int64_t t = 1; t <= n; t++) {
        const double a = lo + (hi - lo) * ref_rng_uniform(&rng);
        const float a32 = (float)a;
        const float a16 = sgla_f16_to_f32(sgla_f64_to_f16(a));
        /* fp16 multiply: the fp32 product of two fp16 values is exact, so
         * one rounding to fp16 is the correctly rounded fp16 product. */
        p16 = sgla_f16_to_f32(sgla_f32_to_f16(p16 * a16));
        p32 = p32 * a32;
        run32 = run32 * a16;                     /* fp32 running product of the fp16 gates */
        s16 = sgla_f16_to_f32(sgla_f32_to_f16(run32));
        exact *= (double)a32;                    /* no underflow in fp64 for these n */
        s32 = (float)exact;
        logsum += (float)log((double)a32);
        track(p16, 0x1p-14, t, &r.f16_step_sub, &r.f16_step_zero);
        track(s16, 0x1p-14, t, &r.f16_store_sub, &r.f16_store_zero);
        track(p32, 0x1p-126, t, &r.f32_step_sub, &r.f32_step_zero);
        track(s32, 0x1p-126, t, &r.f32_store_sub, &r.f32_store_zero);
    }
    r.f16_step_at_n = p16;
    r.f16_store_at_n = s16;
    r.f32_step_at_n = p32;
    r.f32_store_at_n = s32;
    r.exact_at_n = exact;
    r.logsum_at_n = logsum;
    r.logdom_rel_err = exact > 0.0 ? fabs(exp((double)logsum) - exact) / exact : NAN;
    *out = r;
    return SGLA_OK;
}

double ref_fact_max_inverse_gamma(uint64_t seed, int64_t C, double lo, double hi)
{
    ref_rng rng;
    ref_rng_init(&rng, seed);
    double b = 0.0, worst = 1.0;
    for (int64_t j = 0; j < C; j++) {
        b += log(lo + (hi - lo) * ref_rng_uniform(&rng));
        if (exp(-b) > worst) worst = exp(-b);
    }
    return worst;
}
