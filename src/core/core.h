/* The floor of the library: errors, element access, sequence bounds and the
 * checks every backend shares.  Nothing in src/core calls a backend or the
 * dispatch; backends (src/ref, src/cpu, src/cuda) build on it and the
 * dispatch (src/dispatch.c) sits on top.  Not installed. */
#ifndef SGLA_CORE_H
#define SGLA_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "sgla.h" /* built with SGLA_EXPERIMENTAL_API (CMakeLists.txt): the library implements it */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors (error.c) ----------------------------------------------------- */

/* Record the detail for sgla_last_error() and return st. */
sgla_status sgla_fail(sgla_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Forget the detail of an earlier error (every public entry starts so). */
void sgla_clear_error(void);

/* ---- element access and sequences (tensor.c) ------------------------------ */

/* The dtype of the gates and states (g, g_gamma, h0, ht, dht, dg, ...) of a
 * call whose q, k, v have dtype dt: fp32, or fp64 with SGLA_F64. */
static inline sgla_dtype sgla_aux_dtype(sgla_dtype dt) { return dt == SGLA_F64 ? SGLA_F64 : SGLA_F32; }

/* ---- the state pool (sgla.h, experimental) --------------------------------- */

/* indices[n] (t_max == 0) or indices[n][t] */
static inline int64_t sgla_pool_index(const sgla_state_pool *p, int64_t n, int64_t t)
{
    const int64_t i = p->t_max ? n * p->t_max + t : n;
    return p->index_bits == 32 ? (int64_t)((const int32_t *)p->indices)[i] : ((const int64_t *)p->indices)[i];
}
/* num_accepted[n], or 1 where there is none (no t_max, or NULL) */
static inline int64_t sgla_pool_accepted(const sgla_state_pool *p, int64_t n)
{
    if (!p->t_max || !p->num_accepted) return 1;
    return p->index_bits == 32 ? (int64_t)((const int32_t *)p->num_accepted)[n] : ((const int64_t *)p->num_accepted)[n];
}
/* the slot sequence n starts from: -1 for a padded row */
static inline int64_t sgla_pool_read_slot(const sgla_state_pool *p, int64_t n)
{
    return sgla_pool_index(p, n, p->t_max ? sgla_pool_accepted(p, n) - 1 : 0);
}
/* 1 when sequence n reads its slot's state (not padded, has_initial_state) */
static inline int sgla_pool_continues(const sgla_state_pool *p, int64_t n)
{
    return sgla_pool_read_slot(p, n) >= 0 && (!p->has_initial_state || p->has_initial_state[n]);
}

/* The chunked forms take every log gate as max(g, SGLA_GATE_FLOOR).  exp(-128)
 * = 2.6e-56 is 0 in fp32 (below 2^-149), so a gate under the floor already
 * erases the state in any fp32 result; clamped, the chunk-local prefix sums
 * b_i - b_j stay small enough to keep their digits (-1e17 would leave none:
 * docs/numerics.md).  The recurrences (ref-a, the fp32 CUDA path) use g as it is. */
#define SGLA_GATE_FLOOR (-128.0)
static inline double sgla_gate_floor(double g) { return g < SGLA_GATE_FLOOR ? SGLA_GATE_FLOOR : g; }

/* Element i of a buffer of dtype dt, as double / stored from double (q, k,
 * v, o in the call's dtype; gates and states in sgla_aux_dtype's). */
double sgla_load(const void *p, sgla_dtype dt, int64_t i);
void sgla_store(void *p, sgla_dtype dt, int64_t i, double x);

/* Start/end token of sequence n (varlen or batch). Token index is into T
 * of batch row b: for varlen b = 0, for batch b = n. */
void sgla_seq_bounds(const sgla_forward_desc *d, int64_t n, int64_t *b, int64_t *t0, int64_t *t1);
/* The longest sequence's length (T without cu_seqlens): sizes per-sequence scratch. */
int64_t sgla_max_seq_len(const sgla_forward_desc *d);

/* a * b for a, b >= 0 into *out; 0 when it overflows int64. */
int sgla_mul_ok(int64_t a, int64_t b, int64_t *out);

/* ---- descriptors and checks (validate.c) ---------------------------------- */

/* The caller's descriptor into a full one of this library's layout: the
 * fields its `size` covers, defaults for the rest.  Refuses a NULL
 * descriptor, a size smaller than the first published layout, or a larger
 * one (a newer header) that sets fields this library does not know. */
sgla_status sgla_desc_read(const sgla_forward_desc *user, sgla_forward_desc *out);

/* The same for a backward descriptor: the caller's into out, and its forward
 * descriptor into fwd (out->fwd then points at fwd). */
sgla_status sgla_backward_desc_read(const sgla_backward_desc *user, sgla_backward_desc *out, sgla_forward_desc *fwd);

/* sgla_validate on a descriptor already read by sgla_desc_read. */
sgla_status sgla_check_desc(const sgla_forward_desc *d, int values_on_host);
/* The same for a workspace query: no data read, and q, k, v, o may be NULL (sgla.h). */
sgla_status sgla_check_query(const sgla_forward_desc *d);
/* The value checks alone (gates, cu_seqlens) on a descriptor whose shape is already valid and
 * whose g, g_gamma, cu_seqlens point at host copies; used by device backends. */
sgla_status sgla_check_host_values(const sgla_forward_desc *d);
/* The backward's checks (its forward's, then dout, dht and the gradients). */
sgla_status sgla_check_backward(const sgla_backward_desc *b, int values_on_host);
/* The same for a backward workspace query: no data read, and the tensors may be NULL (as sgla_check_query). */
sgla_status sgla_check_backward_query(const sgla_backward_desc *b);

/* Outputs o (bo bytes) and ht (bht bytes) against every input of d and each
 * other: each overlap is an SGLA_ERR_OVERLAP (for fp64 outputs, which are
 * never in place). */
sgla_status sgla_check_outputs(const sgla_forward_desc *d, const void *o, size_t bo, const char *oname,
                               const void *ht, size_t bht, const char *htname);

#ifdef __cplusplus
}
#endif

#endif
