/* IEEE binary16 and bfloat16 conversions by integer bit manipulation.
 *
 * All narrowing conversions go through one rounding routine that takes an
 * exact value sig * 2^(E - top) (sig an integer whose leading bit is at
 * position `top`, or smaller for an unnormalised input) and rounds it to
 * nearest, ties to even, into a format with `mb` fraction bits and normal
 * exponents emin..emax.  Because the source bits are used directly, the
 * double -> half paths round once (no double rounding through float). */
#include "core/core.h"

#include <string.h>

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint64_t f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Round sig * 2^(E - top) (finite, sign apart) to a 16-bit pattern with mb
 * fraction bits and normal exponents emin..emax; inf on overflow. */
static uint16_t half_round(uint16_t sign, uint64_t sig, int top, int E, int mb, int emin, int emax)
{
    const uint16_t inf = (uint16_t)(((1u << (15 - mb)) - 1u) << mb);
    if (sig == 0) return sign;
    if (E > emax) return (uint16_t)(sign | inf);
    int shift, biased;
    if (E >= emin) {
        shift = top - mb;
        biased = E - emin + 1;
    } else {
        /* Subnormal target: the quantum is fixed at 2^(emin - mb). */
        shift = top - mb + (emin - E);
        biased = 0;
    }
    /* Below half the smallest subnormal: rounds to a signed zero. */
    if (shift > 63) return sign;
    uint64_t q = sig >> shift;
    uint64_t rem = sig & ((UINT64_C(1) << shift) - 1u);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    /* q carries the implicit bit for normals, so adding it to (biased-1)
     * lets a carry out of the fraction bump the exponent: the largest
     * subnormal rounds up to the smallest normal, the largest finite up to
     * inf. */
    uint64_t r = biased ? ((uint64_t)(biased - 1) << mb) + q : q;
    if (r >= inf) return (uint16_t)(sign | inf);
    return (uint16_t)(sign | (uint16_t)r);
}

/* The two 16-bit formats: mantissa bits, exponent range, the infinity and
 * the quiet bit of a NaN. */
typedef struct half_fmt {
    int mbits, emin, emax;
    uint16_t inf, quiet;
} half_fmt;
static const half_fmt fmt_f16 = {10, -14, 15, 0x7C00u, 0x0200u};
static const half_fmt fmt_bf16 = {7, -126, 127, 0x7F80u, 0x0040u};

/* A float of mb mantissa bits and exponent bias `bias`, taken apart (sign
 * already in 16-bit place, e the biased exponent field, all ones at e_top),
 * rounded to f.  NaN stays quiet with its top payload bits. */
static uint16_t encode(uint16_t sign, uint32_t e, uint32_t e_top, uint64_t m, int mb, int bias, const half_fmt *f)
{
    if (e == e_top) return (uint16_t)(sign | f->inf | (m ? f->quiet | (uint16_t)(m >> (mb - f->mbits)) : 0u));
    if (e == 0) return half_round(sign, m, mb, 1 - bias, f->mbits, f->emin, f->emax);
    return half_round(sign, m | (UINT64_C(1) << mb), mb, (int)e - bias, f->mbits, f->emin, f->emax);
}

static uint16_t from_f32(float x, const half_fmt *f)
{
    const uint32_t u = f32_bits(x);
    return encode((uint16_t)((u >> 16) & 0x8000u), (u >> 23) & 0xFFu, 0xFFu, u & 0x7FFFFFu, 23, 127, f);
}

static uint16_t from_f64(double x, const half_fmt *f)
{
    const uint64_t u = f64_bits(x);
    return encode((uint16_t)((u >> 48) & 0x8000u), (uint32_t)(u >> 52) & 0x7FFu, 0x7FFu,
                  u & ((UINT64_C(1) << 52) - 1u), 52, 1023, f);
}

uint16_t sgla_f32_to_f16(float x) { return from_f32(x, &fmt_f16); }
uint16_t sgla_f64_to_f16(double x) { return from_f64(x, &fmt_f16); }
uint16_t sgla_f32_to_bf16(float x) { return from_f32(x, &fmt_bf16); }
uint16_t sgla_f64_to_bf16(double x) { return from_f64(x, &fmt_bf16); }

float sgla_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) /* inf, or NaN with its payload (quiet bit kept) */
        return f32_from_bits(sign | 0x7F800000u | (m << 13));
    if (e == 0) {
        if (m == 0) return f32_from_bits(sign);
        /* Subnormal m * 2^-24: normalise so the leading bit is implicit. */
        int ex = -14;
        while (!(m & 0x400u)) {
            m <<= 1;
            ex--;
        }
        return f32_from_bits(sign | ((uint32_t)(ex + 127) << 23) | ((m & 0x3FFu) << 13));
    }
    return f32_from_bits(sign | ((e - 15u + 127u) << 23) | (m << 13));
}

float sgla_bf16_to_f32(uint16_t b)
{
    /* bfloat16 is the top half of a binary32: exact. */
    return f32_from_bits((uint32_t)b << 16);
}
