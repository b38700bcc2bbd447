/*
 * CPU backend internals: the micro-kernel table each SIMD level fills, and
 * the entry points the tests use to force a level or get fp32 output.
 *
 * THE MICRO-KERNEL CONTRACT (every level implements exactly this; the
 * framework in cpu_forward.c does the packing, gates and threading).
 *
 * All matrices are fp32, row-major with the given leading dimension (in
 * floats).  n is the number of tokens in the chunk (1..C), K and V the head
 * dimensions.  Packed operands come from the framework:
 *   Q  [n][K]   queries of the chunk                       (ldq)
 *   Kt [K][n]   keys of the chunk, transposed              (ldkt)
 *   Vp [n][V]   values                                     (ldv)
 *   Vw [n][V]   values times the write weights exp(b_n - b_r) (ldv)
 *   G  [n][n]   scale * exp(b_i - b_j) for j <= i, and 0 for j > i; the
 *               framework never evaluates the masked entries (SPEC §2).
 *   rs [n]      read weights scale * exp(b_i)
 *   a           carry exp(b_n)
 *
 * qk:    A[i][j] = G[i][j] * sum_{p<K} Q[i][p] Kt[p][j]   for 0 <= j <= i < n,
 *        A[i][j] = 0 for j > i, set (not multiplied: q.k may be inf/NaN
 *        there); the decay mask fused in the epilogue; tiles wholly above
 *        the diagonal are not computed.
 * out:   O[i][:] = rs[i] * sum_{p<K} Q[i][p] S[p][:]  then
 *                  + sum_{j<=i} A[i][j] Vp[j][:]        (one accumulator,
 *        only j <= i: a later token never reaches an earlier output;
 *        the read weights fused between the two products; S is read only).
 *        nt != 0: O is the caller's fp32 output, every row 64-byte aligned
 *        and V a multiple of 16; the kernel may use streaming stores.
 * state: D[p][:] = sum_{r<n} Kt[p][r] Vw[r][:]  (the write weights are in Vw)
 *        Sout = carry(a) Sin + D elementwise, or Sout = D when Sin == NULL;
 *        carry_apply below says how (a is a sgla_carry).
 *        Sin may equal Sout.  The accumulation order over r is fixed
 *        (r = 0..n-1, one fma per term, from zero), so D is the same number
 *        whichever thread computes it.
 * scan:  for each of cnt elements: (s, d) <- (carry(a) s + d, s): d
 *        receives the state at the chunk's start, s moves on.
 * decode:(one token) o[:] = fma(A11, v, rs * (q^T Sin)) with A11 = g11*(q.k);
 *        Sout[p][:] = carry(a) Sin[p][:] + k[p] * v[:].  Sin may equal Sout;
 *        the state is read and written once.
 * vexp:  y = exp(x) for x <= 0 (x finite), results below FLT_MIN flushed
 *        to 0 (they are < 1.2e-38 of the largest weight, 1); y may be x.
 * gmask: G[i][j] = scale * exp((float)(b[i+1] - b[j+1])) for j <= i < n
 *        (b: chunk-local cumulative log-gates in double, b[0] = 0); G[i][j]
 *        for j > i is left alone (never evaluated).
 * trans: dst[c][i] = src[i][c] for i < n, c < K (packing Kt).
 * wrows: dst[i][c] = src[i][c] * w[i] for i < n, c < cnt (the write
 *        weights into Vw: one fp32 product, the same at every level).
 * load:  dst[0..cnt) = fp32 of src (f32/f16/bf16), exact.
 * gather: a chunk's group of heads: for token i < ntok and head r < rows,
 *        dst[r*rld + i*dld + c] = fp32 of src[i*tld + r*cnt + c], c < cnt
 *        (tld: token stride of src in elements); exact, any order.
 * dot64: sum_{i<n} a[i] b[i] in fp64 (each product exact), the summation
 *        order fixed per level: the same bits on every thread and call.
 * store: dst[0..cnt) = src rounded to dt, round to nearest even; may use
 *        streaming (non-temporal) stores: the caller issues a full fence
 *        before the data is read by another thread.
 */
#ifndef SGLA_CPU_KERNELS_H
#define SGLA_CPU_KERNELS_H

#include <math.h>

#include "core/core.h"

/* A chunk's carry a = exp(b_n) applied to the state, S' = a S + D.  Near 1 it is
 * applied as S + ((a - 1) S + D) with a - 1 = expm1(b_n) computed directly, so
 * that a's rounding (the same in every chunk) does not compound over a long
 * sequence; below 1/2 as a S + D, where a - 1 would lose a's relative digits.
 * The kernels take both and pick by `near1`. */
typedef struct sgla_carry {
    float a, am1;
    int near1; /* a > 1/2 */
} sgla_carry;

/* a = 1: Sout = Sin + D (sums into an existing product) */
#define SGLA_CARRY_ONE ((sgla_carry){1.0f, 0.0f, 1})

static inline sgla_carry sgla_carry_of(double bn)
{
    sgla_carry c;
    c.a = (float)exp(bn);
    c.am1 = (float)expm1(bn);
    c.near1 = bn > -0.6931471805599453;
    return c;
}

/* a S + D, in the form `near1` picks (the SIMD kernels do the same without a branch) */
static inline float sgla_carry_apply(sgla_carry a, float s, float d)
{
    return a.near1 ? s + fmaf(a.am1, s, d) : fmaf(a.a, s, d);
}

typedef struct sgla_cpu_kernels {
    const char *name;
    void (*qk)(int n, int K, const float *Q, int ldq, const float *Kt, int ldkt,
               const float *G, int ldg, float *A, int lda);
    void (*out)(int n, int K, int V, const float *Q, int ldq, const float *rs,
                const float *S, int lds, const float *A, int lda, const float *Vp, int ldv,
                float *O, int ldo, int nt);
    void (*state)(int n, int K, int V, const float *Kt, int ldkt, const float *Vw, int ldv,
                  sgla_carry a, const float *Sin, float *Sout, int lds);
    void (*scan)(int64_t cnt, sgla_carry a, float *s, float *d);
    void (*decode)(int K, int V, const float *q, const float *k, const float *v, float rs,
                   float g11, sgla_carry a, const float *Sin, float *Sout, float *o);
    void (*vexp)(const float *x, float *y, int cnt);
    void (*gmask)(int n, const double *b, float scale, float *G, int ldg);
    void (*trans)(int n, int K, const float *src, int lds, float *dst, int ldd);
    void (*load)(const void *src, sgla_dtype dt, float *dst, int cnt);
    void (*gather)(const void *src, sgla_dtype dt, int64_t tld, int ntok, int rows, int cnt, float *dst,
                   int64_t dld, int64_t rld);
    void (*store)(const float *src, sgla_dtype dt, void *dst, int cnt);
    void (*wrows)(int n, int cnt, const float *w, const float *src, int lds, float *dst, int ldd);
    double (*dot64)(const float *a, const float *b, int n);
} sgla_cpu_kernels;

extern const sgla_cpu_kernels sgla_cpu_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
#define SGLA_CPU_X86 1
extern const sgla_cpu_kernels sgla_cpu_kernels_avx2;
extern const sgla_cpu_kernels sgla_cpu_kernels_avx512;
#endif

enum { SGLA_CPU_ISA_AUTO = 0, SGLA_CPU_ISA_SCALAR = 1, SGLA_CPU_ISA_AVX2 = 2, SGLA_CPU_ISA_AVX512 = 3 };

/* Best level this CPU runs (SGLA_CPU_ISA_*). */
int sgla_cpu_isa_detect(void);
/* Force a level for the whole process (tests, bench); AUTO restores the
 * default (SGLA_CPU_ISA=scalar|avx2|avx512 in the environment at the first
 * call, capped at the best; else the best).  Returns 0 if the CPU cannot run the level (nothing changes). */
int sgla_cpu_force_isa(int isa);
/* The level the next call will use, and its name. */
int sgla_cpu_isa_current(void);
const char *sgla_cpu_isa_name(int isa);
/* A level's name ("scalar", "avx2", "avx512") to SGLA_CPU_ISA_*; AUTO for
 * NULL or anything else.  SGLA_CPU_ISA is read once, at the first call. */
int sgla_cpu_isa_parse(const char *name);

/* The CPU forward with the output written as out_dt into o_out (instead of
 * d->dtype into d->o): lets the tests check the f16/bf16 input path against
 * fp64 without the output rounding.  d must have been validated. */
sgla_status sgla_cpu_forward_out(const sgla_forward_desc *d, sgla_dtype out_dt, void *o_out);
/* What the CPU backend refuses in any call (f64, a chunk past [1, 1024], K or V past 65536),
 * checked by its calls and its workspace queries alike. */
sgla_status sgla_cpu_supports(const sgla_forward_desc *d);

/* The micro-kernels of the level the next call will use. */
const sgla_cpu_kernels *sgla_cpu_kernels_current(void);
/* Scratch kept between calls (64-byte aligned, at least `floats`: the
 * smallest kept block that fits, or a new one), and its return (NULL: none);
 * NULL when out of memory. */
float *sgla_cpu_scratch_take(size_t floats);
void sgla_cpu_scratch_give(float *m);
/* Threads of a call with threads = 0. */
int sgla_cpu_default_threads(void);
/* The threads a call runs on: `requested` (0: the default), at most `useful`
 * (its items of work) and 4 x the processors: more only cost, and a huge count
 * fails in the OpenMP runtime, which then ends the process. */
int sgla_cpu_threads(int requested, int64_t useful);

/* A chunk's weights from its cumulative log-gates b[0..n] (b[0] = 0): G (when
 * not NULL; rows 0..n-1, the part above the diagonal left alone), rs = scale
 * exp(b), w = exp(b_n - b); returns the carry exp(b_n).  x: n + 1 floats of
 * scratch.  Shared by the forward and the backward so both weight alike. */
sgla_carry sgla_cpu_gate_weights(const sgla_cpu_kernels *kr, int n, const double *b, float scale, float *G, int ldg,
                                 float *rs, float *w, float *x);

/* The CPU backward (cpu_backward.c); b validated. */
sgla_status sgla_cpu_backward(const sgla_backward_desc *b, sgla_backend kind);

/* The forward with a state pool (cpu_pool.c), and the forward that reads and writes
 * pool slots in place (slot_in / slot_out per sequence, -1: zeros / not kept). */
sgla_status sgla_cpu_pool_forward(const sgla_forward_desc *d);
sgla_status sgla_cpu_forward_slots(const sgla_forward_desc *d, const int64_t *slot_in, const int64_t *slot_out,
                                   int v_first);

/* Testing hook: the number of threads at which the sequence is split
 * (work items < threads), forward and backward, can be forced: 1 = always
 * split sequences with two or more chunks, 2 = as 1, and the backward's
 * split computes its chunk states twice rather than keep them, 0 = never
 * split, -1 = default rule; sgla_cpu_forced_split reads it. */
void sgla_cpu_force_split(int mode);
/* Which of d's (sequence, head) items to split over the threads, in blocks of C tokens: those of at least
 * *split_min chunks (INT64_MAX: none, every item runs whole); *whole_max, the most chunks of an item run
 * whole.  cost: the split's thread time over the whole item's; forced: the hook (-1 the rule, 0 none, 1 or
 * 2 every item of two chunks or more). */
void sgla_cpu_split_plan(const sgla_forward_desc *d, int C, double cost, int forced, int64_t *split_min,
                         int64_t *whole_max);
int sgla_cpu_forced_split(void);

/* Micro-benchmarks for `sgla bench` (cpu_bench.c): seconds for reps rounds
 * of the four per-chunk products on every thread; the FMA peak in GFLOP/s
 * of the given level on `threads` threads; copy bandwidth in GB/s (bytes
 * read + written). */
double sgla_cpu_bench_kernels(int C, int K, int V, int threads, int reps);
double sgla_cpu_bench_fma_peak(int threads, int isa);
double sgla_cpu_bench_copy_bw(int threads, size_t bytes);

#endif
