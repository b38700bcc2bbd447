#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tu_failures = 0;
int tu_checks = 0;

uint64_t tu_seed(const char *test_name)
{
    const char *e = getenv("SGLA_SEED");
    uint64_t s;
    if (e && *e) {
        s = strtoull(e, NULL, 10);
    } else {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        s = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
        s %= 1000000000u;
    }
    printf("%s: seed %llu (replay with SGLA_SEED=%llu)\n", test_name, (unsigned long long)s,
           (unsigned long long)s);
    return s;
}

void tu_rng_init(tu_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; }

uint64_t tu_next(tu_rng *r)
{ /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double tu_uniform(tu_rng *r) { return (double)(tu_next(r) >> 11) * 0x1.0p-53; }
double tu_uniform_range(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_uniform(r); }

double tu_normal(tu_rng *r)
{
    double u1 = tu_uniform(r), u2 = tu_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int64_t tu_int(tu_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

void tu_fill(tu_rng *r, void *p, sgla_dtype dt, int64_t n, double sd)
{
    for (int64_t i = 0; i < n; i++) {
        double x = tu_normal(r) * sd;
        switch (dt) {
        case SGLA_F32: ((float *)p)[i] = (float)x; break;
        case SGLA_F16: ((uint16_t *)p)[i] = sgla_f64_to_f16(x); break;
        case SGLA_BF16: ((uint16_t *)p)[i] = sgla_f64_to_bf16(x); break;
        }
    }
}

double tu_rel_l2(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return NAN;
        double d = a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    if (den == 0) return num == 0 ? 0.0 : INFINITY;
    return sqrt(num / den);
}

double tu_max_abs(const double *a, const double *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return NAN;
        double d = fabs(a[i] - b[i]);
        if (d > m) m = d;
    }
    return m;
}

void tu_to_double(const void *p, sgla_dtype dt, int64_t n, double *out)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case SGLA_F32: out[i] = ((const float *)p)[i]; break;
        case SGLA_F16: out[i] = sgla_f16_to_f32(((const uint16_t *)p)[i]); break;
        case SGLA_BF16: out[i] = sgla_bf16_to_f32(((const uint16_t *)p)[i]); break;
        }
    }
}

void tu_poison(void *p, sgla_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case SGLA_F32: ((float *)p)[i] = NAN; break;
        case SGLA_F16: ((uint16_t *)p)[i] = 0x7E00; break;
        case SGLA_BF16: ((uint16_t *)p)[i] = 0x7FC0; break;
        }
    }
}

int64_t tu_count_poison(const void *p, sgla_dtype dt, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = 0.0;
        tu_to_double((const char *)p + (size_t)i * sgla_dtype_size(dt), dt, 1, &x);
        if (isnan(x)) c++;
    }
    return c;
}

int tu_finish(const char *test_name)
{
    printf("%s: %d passed, %d failed\n", test_name, tu_checks - tu_failures, tu_failures);
    return tu_failures ? 1 : 0;
}
