/* Shared test helpers: a seeded RNG whose seed is printed so any failure can
 * be replayed (SGLA_SEED=<n> overrides), error norms, poisoning. */
#ifndef SGLA_TESTUTIL_H
#define SGLA_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include "sgla.h"
#include "ref/ref.h"

typedef ref_rng tu_rng; /* the library's splitmix64 (src/ref) */

/* Seed from $SGLA_SEED or from the clock; prints "seed: N" with the test name. */
uint64_t tu_seed(const char *test_name);
void tu_rng_init(tu_rng *r, uint64_t seed);
uint64_t tu_next(tu_rng *r);
double tu_uniform(tu_rng *r);                 /* [0, 1) */
double tu_uniform_range(tu_rng *r, double lo, double hi);
double tu_normal(tu_rng *r);
int64_t tu_int(tu_rng *r, int64_t lo, int64_t hi); /* inclusive */

/* Fill a buffer of dtype dt with N(0,1)*sd values (rounded to dt). */
void tu_fill(tu_rng *r, void *p, sgla_dtype dt, int64_t n, double sd);

/* ||a - b||_2 / ||b||_2 and max |a - b|; NaN anywhere gives NaN. */
double tu_rel_l2(const double *a, const double *b, int64_t n);
double tu_max_abs(const double *a, const double *b, int64_t n);

/* Convert a typed buffer to double. */
void tu_to_double(const void *p, sgla_dtype dt, int64_t n, double *out);

/* Poison: fill with NaN of the dtype; tu_count_poison counts what is left. */
void tu_poison(void *p, sgla_dtype dt, int64_t n);
int64_t tu_count_poison(const void *p, sgla_dtype dt, int64_t n);

/* Assertion bookkeeping: CHECK prints file:line and the message on failure. */
extern int tu_failures;
extern int tu_checks;
#define TU_CHECK(cond, ...)                                                   \
    do {                                                                      \
        tu_checks++;                                                          \
        if (!(cond)) {                                                        \
            tu_failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
        }                                                                     \
    } while (0)
/* Print "N passed, M failed" and return the exit status. */
int tu_finish(const char *test_name);

#endif
