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

void tu_rng_init(tu_rng *r, uint64_t seed) { ref_rng_init(r, seed); }
uint64_t tu_next(tu_rng *r) { return ref_rng_next(r); }
double tu_uniform(tu_rng *r) { return ref_rng_uniform(r); }
double tu_uniform_range(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_uniform(r); }
double tu_normal(tu_rng *r) { return ref_rng_normal(r); }

int64_t tu_int(tu_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

void tu_fill(tu_rng *r, void *p, sgla_dtype dt, int64_t n, double sd) { ref_rng_fill(r, p, dt, n, sd); }

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
        case SGLA_F64: out[i] = ((const double *)p)[i]; break;
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
        case SGLA_F64: ((double *)p)[i] = NAN; break;
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
