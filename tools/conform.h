/* The conformance harness: one backend against the fp64 reference on fresh
 * random inputs.  Used by the tests (tests/test_gpu_forward.c,
 * tests/test_cpu_forward.c), `sgla verify` (levels 4-5) and the benchmarks'
 * checks (`sgla bench`), so that every one of them draws, poisons, runs and
 * judges the same way:
 *
 *   - inputs drawn from a seeded generator (callers print the seed);
 *   - o and ht poisoned with NaN before the run, every element checked written;
 *   - relative L2 error and max-abs error against the fp64 reference
 *     (ref-a, the token recurrence, unless told otherwise); NaN never passes.
 *
 * Bars (SPEC §4 level 4): rel L2 <= 1e-3 (fp16), 8e-3 (bf16), 1e-5 (fp32), and
 * max |out - ref| <= 4 x bar x max |ref|, for o and for ht.
 *
 * For SGLA_BACKEND_CUDA the inputs are copied to the current device and the
 * call runs on a non-blocking stream with SGLA_FLAG_CHECK_DEVICE_VALUES. */
#ifndef SGLA_CONFORM_H
#define SGLA_CONFORM_H

#include <stdint.h>
#include <stdio.h>

#include "cuda/cuda_dev.h"
#include "ref/ref.h"
#include "sgla.h"

typedef enum conform_gate { CONFORM_GATE_NONE, CONFORM_GATE_GAMMA, CONFORM_GATE_ALPHA, CONFORM_GATE_G } conform_gate;
/* Values of the log-gates: U(-0.3, 0); near 0 (20% exactly 0, else U(-1e-3, 0));
 * all -30; half 0 and half -30 (the state resets and holds). */
/* RESET: mild gates with about 3 % of them huge and finite (-1e12, -1e17, -1e30, -FLT_MAX),
 * how users write "forget everything here" (-inf is refused); g_gamma: such a value on
 * every other head */
/* NEAR1: every gate -1e-7 (a decay within 1e-7 of 1: long memories, where a carry's
 * rounding would compound) */
typedef enum conform_range {
    CONFORM_MILD,
    CONFORM_NEAR0,
    CONFORM_NEG30,
    CONFORM_MIX30,
    CONFORM_RESET,
    CONFORM_NEAR1
} conform_range;

typedef struct conform_case {
    sgla_dtype dtype;
    int gate;            /* conform_gate */
    int range;           /* conform_range */
    int64_t B, T, H, K, V;
    int h0, ht, inplace; /* h0 given; ht asked for; ht written over h0 (needs both) */
    int nseq;            /* > 0: varlen, B = 1, nseq sequences of drawn lengths (the second empty when nseq > 2) */
    int64_t chunk;       /* 0: 64 */
    int threads;         /* CPU backend threads; 0: default */
    const int64_t *cuts; /* nseq > 0: these offsets [nseq + 1] (0 .. T) instead of drawn ones */
} conform_case;

/* Cut layouts for packed batches of T = 256 (conform_case.cuts, nseq 8): an empty first and last
 * sequence, lengths 1, 63, 0, 65, 63 and 64, starts on and off chunk boundaries. */
extern const int64_t conform_cuts256[9];

/* A case drawn: host inputs and the fp64 reference outputs; with
 * conform_draw_backward also dout, dht and the fp64 reference gradients. */
typedef struct conform_data {
    conform_case c;
    sgla_forward_desc d; /* host pointers; o and ht unset */
    int64_t N, nqk, nv, ns, ng;
    void *q, *k, *v;
    float *g, *g_gamma, *h0;
    int64_t *cu;
    double *o64, *ht64;
    /* backward */
    void *dout;   /* [B,T,H,V] in the case's dtype */
    float *dht;   /* [N,H,K,V] when the case has ht */
    double *dq64, *dk64, *dv64, *dg64, *dgg64, *dh064;
    double *dgg_scale; /* [H] sum over the head's tokens of |dg_t|: what dg_gamma is judged against */
} conform_data;

typedef struct conform_result {
    sgla_status status;   /* of the backend's call */
    char label[192];      /* the case in words */
    double bar;           /* rel L2 bar of the dtype */
    double o_rel, o_max_abs, o_max_ref, ht_rel, ht_max_abs, ht_max_ref; /* max_abs: max |out - ref|, <= 4 bar max|ref| */
    int64_t o_unwritten, ht_unwritten;
    int has_ht; /* ht was asked for and judged */
    int64_t other_changed; /* conform_check_pool: elements of the slots no sequence owns that changed */
    int pass;
} conform_result;

/* The rel L2 bar of a dtype. */
double conform_bar(sgla_dtype dt);

/* Draw the case's inputs from r and compute the reference of kind ref_kind
 * (0: ref-a).  Returns SGLA_OK or the failing status (the detail is in
 * sgla_last_error()); on failure x holds nothing to free. */
sgla_status conform_draw(conform_data *x, const conform_case *c, ref_rng *r, sgla_backend ref_kind);
void conform_free(conform_data *x);

/* Run backend `be` on the drawn case and judge it.  For SGLA_BACKEND_CUDA,
 * `force` (or NULL) is the plan passed to sgla_cuda_forward_forced.  Returns
 * res->pass; a CUDA runtime failure of the harness itself is a failed case
 * with status SGLA_ERR_CUDA. */
int conform_check(const conform_data *x, sgla_backend be, const sgla_cuda_plan *force, conform_result *res);

/* The case through a state pool (experimental API): its N sequences on N of 2N fp32 slots, sequence n
 * on slot 2N - 1 - 2n, h0 read from the slots and the final states written back (SGLA_POOL_INPLACE; the
 * host copy of cu_seqlens given); o and the written slots judged as o and ht, the N other slots must
 * keep every bit.  Needs a case with h0 and ht, not in place. */
int conform_check_pool(const conform_data *x, sgla_backend be, conform_result *res);

/* One line: "ok  <label>: o rel ... maxabs ... ht rel ... maxabs ..." (FAIL and the
 * reason when it failed). */
void conform_print(FILE *f, const conform_result *res);

/* ---- the backward ------------------------------------------------------------------ */

/* Draw dout (and dht when the case asks for ht) from r and compute the fp64
 * reference gradients (ref-a, through sgla_backward on an fp64 copy of every
 * input); needs conform_draw first.  conform_free frees them too. */
sgla_status conform_draw_backward(conform_data *x, ref_rng *r);

enum { CONFORM_DQ, CONFORM_DK, CONFORM_DV, CONFORM_DG, CONFORM_DGG, CONFORM_DH0, CONFORM_NGRAD };
typedef struct conform_bresult {
    sgla_status status;
    char label[192];
    double bar;                        /* rel L2 bar of every gradient */
    double bars[CONFORM_NGRAD];        /* the bar each gradient was judged by */
    /* rel[]: ||out - ref|| / ||ref||, but for dg_gamma ||out - ref|| / ||sum_t |dg_t|||
     * (per head): a sum over every token judged against the size of its terms */
    int present[CONFORM_NGRAD];        /* the gradients the case has */
    double rel[CONFORM_NGRAD];         /* rel L2 against fp64 */
    int64_t unwritten[CONFORM_NGRAD];  /* elements left NaN */
    int64_t worst[CONFORM_NGRAD];      /* the element farthest from fp64, its value and fp64's */
    double worst_out[CONFORM_NGRAD], worst_ref[CONFORM_NGRAD];
    /* dq, dk, dv, dh0 also by their farthest element: |out - ref| <= 4 bar max|ref|, as o in the
     * forward (one wrong element hides in the rel L2 of a large tensor) */
    double max_abs[CONFORM_NGRAD], max_ref[CONFORM_NGRAD];
    int failed[CONFORM_NGRAD];         /* a present gradient above a bar or not fully written */
    int pass;
} conform_bresult;

/* The backward bar of a dtype (rel L2 of each gradient). */
double conform_bwd_bar(sgla_dtype dt);

/* Run backend be's backward on the drawn case (outputs poisoned) and judge
 * every gradient against fp64.  Returns res->pass. */
int conform_check_backward(const conform_data *x, sgla_backend be, conform_bresult *res);
/* the CUDA backward's path for conform_check_backward: 0 the usual one, 1 CUDA
 * cores, 2 tensor cores (sgla_cuda_backward_forced) */
extern int conform_bwd_path;
/* and its sequence split: 0 the usual one, 1 none, n segments */
extern int conform_bwd_nseg;
/* and, >= 1, the three passes in that many time windows, every other chunk's state kept (1: one window,
 * the whole sequence; sgla_cuda_backward_windows; the two above unread) */
extern int conform_bwd_tseg;
/* and, > 1, the three passes in that many batch groups (sgla_cuda_backward_groups; the three above unread) */
extern int conform_bwd_groups;
void conform_print_backward(FILE *f, const conform_bresult *res);

#endif
