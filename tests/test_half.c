/* fp16 / bf16 conversions: exhaustive round trips of every 16-bit pattern,
 * and narrowing conversions against a slow exact reference (search the
 * sorted table of finite values, compare distances exactly, ties to even),
 * on every midpoint and its neighbours plus random inputs. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

/* Value of a non-negative, non-NaN pattern of a format with mb fraction
 * bits and exponent bias; the inf pattern is given the value 2^(emax+1),
 * which makes "round to the inf pattern" fall out of the nearest search. */
static double pattern_value(uint16_t p, int mb, int bias)
{
    int e = p >> mb;
    int m = p & ((1 << mb) - 1);
    if (e == 0) return ldexp((double)m, 1 - bias - mb);
    return ldexp((double)((1 << mb) + m), e - bias - mb);
}

/* Slow exact rounding of x (finite or inf) to a format: binary search over
 * the magnitudes 0 .. inf pattern. */
static uint16_t slow_round(double x, int mb, int bias)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    const uint16_t inf = (uint16_t)(((1u << (15 - mb)) - 1u) << mb);
    if (isinf(a) || a >= pattern_value(inf, mb, bias)) return sign | inf;
    uint16_t lo = 0, hi = inf; /* value(lo) <= a < value(hi) */
    while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (pattern_value(mid, mb, bias) <= a) lo = mid;
        else hi = mid;
    }
    double dl = a - pattern_value(lo, mb, bias), dh = pattern_value(hi, mb, bias) - a; /* both exact */
    uint16_t r = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    return sign | r;
}

static uint16_t slow_f16(double x) { return slow_round(x, 10, 15); }
static uint16_t slow_bf16(double x) { return slow_round(x, 7, 127); }

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void check_value(double x, int *bad16, int *bad16d, int *badbf, int *badbfd)
{
    float f = (float)x;
    if ((double)f == x || isinf(x)) {
        if (sgla_f32_to_f16(f) != slow_f16(x) && (*bad16)++ < 5)
            fprintf(stderr, "f32->f16 %a: got %04x want %04x\n", x, sgla_f32_to_f16(f), slow_f16(x));
        if (sgla_f32_to_bf16(f) != slow_bf16(x) && (*badbf)++ < 5)
            fprintf(stderr, "f32->bf16 %a: got %04x want %04x\n", x, sgla_f32_to_bf16(f), slow_bf16(x));
    }
    if (sgla_f64_to_f16(x) != slow_f16(x) && (*bad16d)++ < 5)
        fprintf(stderr, "f64->f16 %a: got %04x want %04x\n", x, sgla_f64_to_f16(x), slow_f16(x));
    if (sgla_f64_to_bf16(x) != slow_bf16(x) && (*badbfd)++ < 5)
        fprintf(stderr, "f64->bf16 %a: got %04x want %04x\n", x, sgla_f64_to_bf16(x), slow_bf16(x));
}

static void exhaustive_round_trips(void)
{
    int bad_f16 = 0, bad_val = 0, bad_nan = 0, bad_bf = 0, bad_bf_nan = 0;
    for (uint32_t p = 0; p < 65536; p++) {
        uint16_t h = (uint16_t)p;
        float f = sgla_f16_to_f32(h);
        int is_nan = ((h >> 10) & 0x1F) == 0x1F && (h & 0x3FF);
        if (is_nan) {
            uint16_t r = sgla_f32_to_f16(f);
            /* NaN stays NaN, quiet, same sign */
            if (!isnan(f) || ((r >> 10) & 0x1F) != 0x1F || !(r & 0x200) || (r & 0x8000) != (h & 0x8000)) bad_nan++;
            if (!isnan(f) || !!signbit(f) != !!(h & 0x8000)) bad_nan++;
        } else {
            double want = pattern_value(h & 0x7FFF, 10, 15);
            if ((h & 0x7FFF) == 0x7C00) want = INFINITY;
            if (h & 0x8000) want = -want;
            if ((double)f != want || !!signbit(f) != !!(h & 0x8000)) bad_val++;
            if (sgla_f32_to_f16(f) != h || sgla_f64_to_f16((double)f) != h) bad_f16++;
        }
        float b = sgla_bf16_to_f32(h);
        int b_nan = ((h >> 7) & 0xFF) == 0xFF && (h & 0x7F);
        if (b_nan) {
            uint16_t r = sgla_f32_to_bf16(b);
            if (!isnan(b) || ((r >> 7) & 0xFF) != 0xFF || !(r & 0x40) || (r & 0x8000) != (h & 0x8000)) bad_bf_nan++;
        } else {
            if (fbits(b) != ((uint32_t)h << 16)) bad_bf++;
            if (sgla_f32_to_bf16(b) != h || sgla_f64_to_bf16((double)b) != h) bad_bf++;
        }
    }
    TU_CHECK(bad_val == 0, "f16->f32 values: %d patterns wrong", bad_val);
    TU_CHECK(bad_f16 == 0, "f16 round trip: %d patterns changed", bad_f16);
    TU_CHECK(bad_nan == 0, "f16 NaN handling: %d failures", bad_nan);
    TU_CHECK(bad_bf == 0, "bf16 round trip: %d patterns changed", bad_bf);
    TU_CHECK(bad_bf_nan == 0, "bf16 NaN handling: %d failures", bad_bf_nan);
}

/* Every midpoint between neighbouring finite values (and the one above the
 * largest finite), exactly and one fp32/fp64 ulp either side. */
static void midpoints(void)
{
    int b16 = 0, b16d = 0, bbf = 0, bbfd = 0;
    for (int fmt = 0; fmt < 2; fmt++) {
        int mb = fmt ? 7 : 10, bias = fmt ? 127 : 15;
        uint16_t inf = (uint16_t)(((1u << (15 - mb)) - 1u) << mb);
        for (uint16_t p = 0; p < inf; p++) {
            double mid = 0.5 * (pattern_value(p, mb, bias) + pattern_value((uint16_t)(p + 1), mb, bias));
            for (int s = 0; s < 2; s++) {
                double m = s ? -mid : mid;
                check_value(m, &b16, &b16d, &bbf, &bbfd);
                check_value(nextafter(m, INFINITY), &b16, &b16d, &bbf, &bbfd);
                check_value(nextafter(m, -INFINITY), &b16, &b16d, &bbf, &bbfd);
                check_value((double)nextafterf((float)m, INFINITY), &b16, &b16d, &bbf, &bbfd);
                check_value((double)nextafterf((float)m, -INFINITY), &b16, &b16d, &bbf, &bbfd);
            }
        }
    }
    TU_CHECK(b16 == 0, "f32->f16 at midpoints: %d wrong", b16);
    TU_CHECK(b16d == 0, "f64->f16 at midpoints: %d wrong", b16d);
    TU_CHECK(bbf == 0, "f32->bf16 at midpoints: %d wrong", bbf);
    TU_CHECK(bbfd == 0, "f64->bf16 at midpoints: %d wrong", bbfd);
}

static void random_inputs(tu_rng *r)
{
    int b16 = 0, b16d = 0, bbf = 0, bbfd = 0;
    for (int i = 0; i < 400000; i++) {
        /* fp32 patterns over the whole range, and concentrated on fp16's */
        uint32_t u = (uint32_t)tu_next(r);
        if (i & 1) {
            uint32_t e = (uint32_t)tu_int(r, 127 - 30, 127 + 17);
            u = (u & 0x807FFFFFu) | (e << 23);
        }
        if (i % 3 == 0) u &= ~((1u << tu_int(r, 0, 22)) - 1u); /* short mantissas: many ties */
        float f = from_fbits(u);
        if (isnan(f)) continue;
        check_value((double)f, &b16, &b16d, &bbf, &bbfd);
        /* doubles with bits below fp32 precision: the direct path must see them */
        uint64_t v = tu_next(r);
        int e = (int)tu_int(r, 1023 - 30, 1023 + 17);
        if (i & 1) e = (int)tu_int(r, 1023 - 140, 1023 + 130);
        v = (v & 0x800FFFFFFFFFFFFFull) | ((uint64_t)e << 52);
        double x;
        memcpy(&x, &v, 8);
        check_value(x, &b16, &b16d, &bbf, &bbfd);
    }
    TU_CHECK(b16 == 0 && b16d == 0 && bbf == 0 && bbfd == 0, "random inputs: %d %d %d %d wrong", b16, b16d, bbf,
             bbfd);
}

static void specific(void)
{
    TU_CHECK(sgla_f32_to_f16(65504.0f) == 0x7BFF, "65504 -> max finite");
    TU_CHECK(sgla_f32_to_f16(65519.0f) == 0x7BFF, "65519 -> 65504");
    TU_CHECK(sgla_f32_to_f16(65520.0f) == 0x7C00, "65520 -> inf (tie rounds to even = inf)");
    TU_CHECK(sgla_f64_to_f16(65519.99999) == 0x7BFF, "f64 65519.99999 -> 65504");
    TU_CHECK(sgla_f64_to_f16(1e300) == 0x7C00 && sgla_f64_to_f16(-1e300) == 0xFC00, "f64 huge -> inf");
    TU_CHECK(sgla_f32_to_f16(INFINITY) == 0x7C00 && sgla_f32_to_f16(-INFINITY) == 0xFC00, "inf");
    TU_CHECK(sgla_f32_to_f16(0x1p-24f) == 0x0001, "2^-24 -> smallest subnormal");
    TU_CHECK(sgla_f32_to_f16(0x1p-25f) == 0x0000, "2^-25 ties to even zero");
    TU_CHECK(sgla_f32_to_f16(-0x1p-25f) == 0x8000, "-2^-25 -> -0");
    TU_CHECK(sgla_f32_to_f16(0x1.000002p-25f) == 0x0001, "just above 2^-25 -> 2^-24");
    TU_CHECK(sgla_f32_to_f16(0x1.8p-24f) == 0x0002, "1.5 * 2^-24 ties to even 2 * 2^-24");
    TU_CHECK(sgla_f32_to_f16(0x1p-14f - 0x1p-25f) == 0x0400, "largest subnormal + half ulp -> smallest normal");
    TU_CHECK(sgla_f32_to_f16(0x1p-14f) == 0x0400, "smallest normal");
    TU_CHECK(sgla_f16_to_f32(0x0001) == 0x1p-24f && sgla_f16_to_f32(0x03FF) == 0x1.ff8p-15f, "subnormal values");
    TU_CHECK(sgla_f32_to_f16(-0.0f) == 0x8000 && sgla_f32_to_f16(0.0f) == 0x0000, "signed zero");
    TU_CHECK(sgla_f32_to_f16(1e-30f) == 0 && sgla_f32_to_f16(FLT_TRUE_MIN) == 0, "tiny -> 0");
    TU_CHECK(sgla_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00, "1 + 2^-11 ties to even 1");
    TU_CHECK(sgla_f32_to_f16(1.0f + 0x1.8p-10f) == 0x3C02, "1 + 1.5 ulp ties to even");
    /* The double-rounding trap: x just above a midpoint, with (float)x == midpoint. */
    double x = 1.0 + 0x1p-11 + 0x1p-40;
    TU_CHECK((double)(float)x == 1.0 + 0x1p-11, "setup: float rounds onto the midpoint");
    TU_CHECK(sgla_f64_to_f16(x) == 0x3C01, "f64 direct: just above the midpoint rounds up");
    TU_CHECK(sgla_f32_to_f16((float)x) == 0x3C00, "through float it would round to even (double rounding)");
    x = 1.0 + 0x1p-8 + 0x1p-35;
    TU_CHECK(sgla_f64_to_bf16(x) == 0x3F81 && sgla_f32_to_bf16((float)x) == 0x3F80, "bf16 double rounding trap");
    TU_CHECK(sgla_f32_to_bf16(FLT_MAX) == 0x7F80, "bf16: FLT_MAX rounds to inf");
    TU_CHECK(sgla_f32_to_bf16(0x1.fep127f) == 0x7F7F, "bf16: largest finite");
    TU_CHECK(sgla_f32_to_bf16(FLT_TRUE_MIN) == 0x0000, "bf16: 2^-149 ties... rounds to 0");
    TU_CHECK(sgla_f32_to_bf16(0x1p-133f) == 0x0001, "bf16: smallest subnormal 2^-133");
    TU_CHECK(sgla_f64_to_bf16(0x1p-134) == 0x0000 && sgla_f64_to_bf16(0x1.0000001p-134) == 0x0001,
             "bf16: half the smallest subnormal ties to 0, above rounds up");
    /* NaN: quiet, sign kept, from signalling too */
    float snan = from_fbits(0x7F800001u), nsnan = from_fbits(0xFF800001u);
    uint16_t h = sgla_f32_to_f16(snan), hn = sgla_f32_to_f16(nsnan);
    TU_CHECK((h & 0x7E00) == 0x7E00 && !(h & 0x8000) && (hn & 0x8000) && (hn & 0x7E00) == 0x7E00, "f16 NaN quiet+sign");
    uint16_t bq = sgla_f32_to_bf16(snan), bn = sgla_f32_to_bf16(nsnan);
    TU_CHECK((bq & 0x7FC0) == 0x7FC0 && !(bq & 0x8000) && (bn & 0x8000), "bf16 NaN quiet+sign");
    TU_CHECK(isnan(sgla_f16_to_f32(sgla_f64_to_f16(NAN))) && isnan(sgla_bf16_to_f32(sgla_f64_to_bf16(-NAN))), "f64 NaN");
    TU_CHECK(sgla_f64_to_bf16(-NAN) & 0x8000, "f64 -NaN keeps sign in bf16");
}

int main(void)
{
    uint64_t seed = tu_seed("test_half");
    tu_rng r;
    tu_rng_init(&r, seed);
    exhaustive_round_trips();
    specific();
    midpoints();
    random_inputs(&r);
    return tu_finish("test_half");
}
