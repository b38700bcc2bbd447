/* Internal header of the fp64 reference family (src/ref/) and of the
 * numeric experiments built on it: the one-chunk "fp16 storage, fp32
 * accumulate" evaluation of verification level 3 and the tables of
 * SPEC §4.  Not installed; used by the CLI (tools/) and the tests. */
#ifndef SGLA_REF_H
#define SGLA_REF_H

#include <stdint.h>

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the four references (each file implements one) -------------------- */

/* o64 (and ht64) by reference kind (SGLA_BACKEND_REF_A..REF_D); d validated. */
sgla_status sgla_ref_forward64(const sgla_forward_desc *d, sgla_backend kind, double *o64, double *ht64);

/* fp64 gradients: dq, dk [B,T,H,K], dv [B,T,H,V] required; dg [B,T,H] (per token,
 * also for g_gamma) and dh0 [N,H,K,V] when not NULL. */
typedef struct ref_grads {
    double *dq, *dk, *dv, *dg, *dh0;
} ref_grads;
/* By reference kind: REF_A (reverse-time recurrence) or REF_B (chunked); b validated
 * (ref_bwd.c). */
sgla_status sgla_ref_backward64(const sgla_backward_desc *b, sgla_backend kind, const ref_grads *g);
/* The same through the typed API: rounded into b's outputs, nothing written on failure. */
sgla_status sgla_ref_backward(const sgla_backward_desc *b, sgla_backend kind);

sgla_status ref_a_forward(const sgla_forward_desc *d, double *o64, double *ht64);
sgla_status ref_b_forward(const sgla_forward_desc *d, double *o64, double *ht64);
sgla_status ref_c_forward(const sgla_forward_desc *d, double *o64, double *ht64);
sgla_status ref_d_forward(const sgla_forward_desc *d, double *o64, double *ht64);

/* ---- shared helpers (ref_common.c) ------------------------------------- */

/* Natural-log gate of token t (absolute index into T) of batch row b, head h:
 * g[b,t,h], g_gamma[h], or 0 without a gate. */
double ref_gate(const sgla_forward_desc *d, int64_t b, int64_t t, int64_t h);
/* Reference A with a state pool (sgla.h, experimental): o, and the pool's slots in place. */
sgla_status ref_a_pool(const sgla_forward_desc *d);

/* Rows t0..t0+n-1 of q, k (n x K) and v (n x V) for batch row b, head h, as
 * double; any pointer may be NULL to skip that tensor. */
void ref_load_rows(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t t0, int64_t n,
                   double *q, double *k, double *v);

/* Chunk-local cumulative log-gates: bc[r] = g_1 + ... + g_{r+1} (0-based r)
 * for the n tokens starting at t0.  Restarts at every chunk by construction. */
void ref_chunk_logcum(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t t0, int64_t n,
                      double *bc);

/* S (K x V) <- h0[n,h] or zero. */
void ref_state_init(const sgla_forward_desc *d, int64_t n, int64_t h, double *S);
/* ht64[n,h] <- S when ht64 is given. */
void ref_state_store(const sgla_forward_desc *d, int64_t n, int64_t h, const double *S, double *ht64);

/* o64 <- 0, by each reference once its scratch is allocated (sgla_reference writes the caller's o64:
 * nothing before a failure can no longer happen).  Every position of o is covered by some sequence
 * after validation; zeroing keeps it defined under SGLA_FLAG_SKIP_VALUE_CHECK with inconsistent offsets. */
void ref_out_clear(const sgla_forward_desc *d, double *o64);

/* Number of chunks of a sequence of length len (0 for an empty one). */
int64_t ref_num_chunks(int64_t len, int64_t chunk);

/* A scratch size counted in double (C K overflows int64 where K is near 2^53 and T = 0, which
 * validation allows) into *n, or SGLA_ERR_OUT_OF_MEMORY naming who and what it is for. */
sgla_status ref_doubles(const char *who, const char *what, double need, size_t *n);

/* ---- a small seeded generator for the experiments (splitmix64) ---------- */

typedef struct ref_rng { uint64_t s; } ref_rng;
void ref_rng_init(ref_rng *r, uint64_t seed);
uint64_t ref_rng_next(ref_rng *r);
double ref_rng_uniform(ref_rng *r);            /* [0, 1) */
double ref_rng_normal(ref_rng *r);             /* N(0, 1), Box-Muller */
/* n values N(0, sd^2), each rounded once into dtype dt. */
void ref_rng_fill(ref_rng *r, void *p, sgla_dtype dt, int64_t n, double sd);

/* ---- verification level 3: one chunk in fp16 storage (ref_fp16.c) ------- */

typedef enum ref_l3_form {
    REF_L3_RATIO_F16_TABLE = 0, /* ratio form, Gamma table stored in fp16 (the article's experiment) */
    REF_L3_RATIO_F32_TABLE = 1, /* ratio form, Gamma table kept in fp32 (this library's rule) */
    REF_L3_FACTORISED = 2,      /* (Q*alpha^i)(K*alpha^-j)^T with both operands stored in fp16 */
    REF_L3_NUM_FORMS = 3
} ref_l3_form;

/* One chunk O = ((Q K^T) ⊙ Gamma) V, Gamma_ij = alpha^(i-j) for j <= i,
 * evaluated in the given form.  q, k: C x D, v: C x D, row-major fp32 inputs;
 * o: C x D result (fp32 values widened to double; NaN where the form fails).
 * Returns SGLA_ERR_OUT_OF_MEMORY or SGLA_OK. */
sgla_status ref_l3_chunk(const float *q, const float *k, const float *v, int C, int D, double alpha,
                         ref_l3_form form, double *o);

/* The same chunk in fp64 from the same fp32 inputs (the reference). */
sgla_status ref_l3_chunk_exact(const float *q, const float *k, const float *v, int C, int D,
                               double alpha, double *o);

/* Median over `trials` random inputs (N(0,1) rounded to fp32, drawn from
 * `seed`) of the rel L2 error of each form against fp64: med[REF_L3_NUM_FORMS].
 * A form that gives NaN in any trial reports NaN.  The draws depend only on
 * seed (callers pass a different seed per alpha). */
sgla_status ref_l3_median(double alpha, int C, int D, int trials, uint64_t seed,
                          double med[REF_L3_NUM_FORMS]);

/* ---- the tables of SPEC §4 (ref_tables.c) ------------------------------- */

typedef enum ref_fp_class { REF_FP_NORMAL = 0, REF_FP_SUBNORMAL = 1, REF_FP_ZERO = 2, REF_FP_INF = 3 } ref_fp_class;
const char *ref_fp_class_name(ref_fp_class c);
/* Class of x after rounding to fp16 / fp32 (round to nearest even). */
ref_fp_class ref_fp16_class(double x);
ref_fp_class ref_fp32_class(double x);

/* Factorised weight alpha^-j: the largest j >= 0 with alpha^-j <= limit
 * (65504 for fp16, FLT_MAX for fp32).  alpha in (0, 1); returns -1 for a bad alpha. */
int64_t ref_fact_max_exponent(double alpha, double limit);

/* Effective memory length L = ln(1e-3) / ln(alpha). */
double ref_memory_length(double alpha);

/* Direct cumulative product of n gates alpha_t ~ U(lo, hi) drawn from seed,
 * against the log-domain cumulative sum.  Two ways to hold a cumprod in a
 * narrow format: "step" does every multiply in the format (each product
 * rounded), "store" keeps a wider running product (fp32 for fp16, fp64 for
 * fp32) and rounds only what is stored.  For each, the first 1-based step
 * where the value leaves the normal range (subnormal, or straight to zero)
 * and where it is zero; 0 means never within n steps. */
typedef struct ref_cumprod_result {
    int64_t f16_step_sub, f16_step_zero, f16_store_sub, f16_store_zero;
    int64_t f32_step_sub, f32_step_zero, f32_store_sub, f32_store_zero;
    double f16_step_at_n, f16_store_at_n;   /* values at step n */
    double f32_step_at_n, f32_store_at_n;
    double exact_at_n;                      /* product of the fp32 gates in fp64 */
    double logsum_at_n;                     /* log-domain cumsum (fp32) at step n */
    double logdom_rel_err;                  /* |exp(logsum) - exact| / exact at step n */
} ref_cumprod_result;
sgla_status ref_cumprod_compare(uint64_t seed, int64_t n, double lo, double hi, ref_cumprod_result *out);

/* Largest 1/gamma_j = exp(-b_j) inside one chunk of C gates alpha_t ~ U(lo, hi)
 * (the factorised weight under data-dependent gates). */
double ref_fact_max_inverse_gamma(uint64_t seed, int64_t C, double lo, double hi);

#ifdef __cplusplus
}
#endif

#endif
