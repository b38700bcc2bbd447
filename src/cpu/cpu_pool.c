/* The CPU backend's state pool (sgla.h, experimental).  The common case (one
 * slot per sequence, either layout, no slot read by one sequence and written
 * by another) runs the ordinary forward on the slots in place: each state is
 * read and written once (a V-first slot through the forward's per-item
 * scratch).  Speculative steps (per-token states) run the SIMD decode step
 * token by token on each (sequence, head)'s state in a thread's buffer,
 * writing every token's state to its slot as it goes; where a slot one
 * sequence writes is another's entering state, the entering states are
 * gathered first.  Otherwise (a slot written twice, possible only with
 * SGLA_FLAG_SKIP_VALUE_CHECK, and the non-speculative calls the in-place
 * path cannot take): gather the entering states into an [N, H, K, V] array,
 * run, and scatter the states back.
 * Either way the pool is read as it was before the call, and the outputs of
 * padded rows are zeroed. */
#include "cpu_fpmode.h"
#include "cpu_kernels.h"
#include "core/backend.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* slot s of the pool for head h: KxV, or VxK (V-first) */
static const float *slot_ptr(const sgla_forward_desc *d, int64_t s, int64_t h)
{
    return (const float *)d->h0 + (s * d->H + h) * d->K * d->V;
}

/* dst[c][r] = src[r][c] for an R x C block, in 16 x 16 tiles (both sides stay in cache) */
static void transpose(const float *src, int64_t R, int64_t C, float *dst)
{
    for (int64_t r0 = 0; r0 < R; r0 += 16)
        for (int64_t c0 = 0; c0 < C; c0 += 16) {
            const int64_t r1 = r0 + 16 < R ? r0 + 16 : R, c1 = c0 + 16 < C ? c0 + 16 : C;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) dst[c * R + r] = src[r * C + c];
        }
}

/* the state sequence n enters with, head h, as [K][V] (zeros for a fresh one) */
static void load_state(const sgla_forward_desc *d, int64_t n, int64_t h, float *dst)
{
    const sgla_state_pool *p = d->pool;
    const int64_t K = d->K, V = d->V;
    if (!sgla_pool_continues(p, n)) {
        memset(dst, 0, (size_t)(K * V) * sizeof *dst);
        return;
    }
    const float *src = slot_ptr(d, sgla_pool_read_slot(p, n), h);
    if (!(p->flags & SGLA_POOL_V_FIRST)) memcpy(dst, src, (size_t)(K * V) * sizeof *dst);
    else transpose(src, V, K, dst); /* [V][K] -> [K][V] */
}

static void gather(const sgla_forward_desc *d, float *S0)
{
    const int64_t N = sgla_num_sequences(d), H = d->H, kv = d->K * d->V;
#pragma omp parallel for schedule(static) num_threads(sgla_cpu_threads(d->threads, N * H)) if (N * H > 1)
    for (int64_t nh = 0; nh < N * H; nh++) load_state(d, nh / H, nh % H, S0 + nh * kv);
}

static void put_slot(const sgla_forward_desc *d, int64_t s, int64_t h, const float *S)
{
    float *dst = (float *)slot_ptr(d, s, h);
    const int64_t K = d->K, V = d->V;
    if (!(d->pool->flags & SGLA_POOL_V_FIRST)) memcpy(dst, S, (size_t)(K * V) * sizeof *dst);
    else transpose(S, K, V, dst); /* [K][V] -> [V][K] */
}

/* speculative steps: the token recurrence (sequences of at most t_max tokens) on the gathered
 * states S0 (advanced in place), or, S0 NULL, on each (sequence, head)'s state read into the thread's
 * buffer as it starts; every token's state written to its slot as it goes (direct), or kept in St
 * [N][t_max][H][K][V] for the caller's scatter (St not NULL), or neither (the pool not written); each
 * token by the SIMD level's decode step, as a one-token forward call runs it.  buf: step_floats() a
 * thread, taken before (nothing fails once o is being written). */
static size_t step_floats(const sgla_forward_desc *d, int own_state)
{
    return (size_t)(2 * (d->K + d->V) + 64) + (own_state ? (size_t)(d->K * d->V + 15) / 16 * 16 : 0);
}

static void token_steps(const sgla_forward_desc *d, float *S0, float *St, int direct, float *buf, int nth)
{
    const int64_t N = sgla_num_sequences(d), H = d->H, kv = d->K * d->V, tm = d->pool->t_max;
    const int K = (int)d->K, V = (int)d->V;
    const sgla_dtype dt = d->dtype;
    const size_t es = sgla_dtype_size(dt);
    const sgla_cpu_kernels *kr = sgla_cpu_kernels_current();
#pragma omp parallel num_threads(nth) if (nth > 1)
    {
        const sgla_fpmode fpm = sgla_fpmode_enter();
#ifdef _OPENMP
        float *q = buf + (size_t)omp_get_thread_num() * step_floats(d, !S0);
#else
        float *q = buf;
#endif
        float *k = q + K, *v = k + K, *o = v + V, *own = o + V + 64 - (2 * (K + V)) % 16;
#pragma omp for schedule(dynamic)
        for (int64_t nh = 0; nh < N * H; nh++) {
            const int64_t n = nh / H, h = nh - n * H;
            if (sgla_pool_read_slot(d->pool, n) < 0) continue;
            int64_t b, t0, t1;
            sgla_seq_bounds(d, n, &b, &t0, &t1);
            float *S = S0 ? S0 + nh * kv : own;
            if (!S0) load_state(d, n, h, S);
            for (int64_t t = t0; t < t1; t++) {
                const int64_t row = (b * d->T + t) * H + h;
                const double lg = sgla_gate_floor(d->g ? ((const float *)d->g)[row]
                                                  : d->g_gamma ? ((const float *)d->g_gamma)[h] : 0.0);
                /* the one-token chunk's weights: rs = scale exp(g), the diagonal's scale exp(0) */
                float x = (float)lg, e;
                kr->vexp(&x, &e, 1);
                kr->load((const char *)d->q + (size_t)(row * K) * es, dt, q, K);
                kr->load((const char *)d->k + (size_t)(row * K) * es, dt, k, K);
                kr->load((const char *)d->v + (size_t)(row * V) * es, dt, v, V);
                kr->decode(K, V, q, k, v, d->scale * e, d->scale, sgla_carry_of(lg), S, S, o);
                kr->store(o, dt, (char *)d->o + (size_t)(row * V) * es, V);
                if (direct) {
                    const int64_t slot = sgla_pool_index(d->pool, n, t - t0);
                    if (slot >= 0) put_slot(d, slot, h, S);
                } else if (St) {
                    memcpy(St + ((n * tm + (t - t0)) * H + h) * kv, S, (size_t)kv * sizeof *S);
                }
            }
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* drains the outputs' streaming stores (kr->store) */
        sgla_fpmode_leave(fpm);
    }
}

/* How the speculative steps may write the pool: 0, keep every token's state and scatter them in
 * order after the steps (a slot written twice); 1, write them as they go, the entering states
 * gathered first (no slot written twice, but one read by another sequence); 2, as 1, each state read
 * as its steps start (no slot that one sequence writes is read by another) */
static int write_mode(const sgla_forward_desc *d)
{
    const sgla_state_pool *p = d->pool;
    const int64_t N = sgla_num_sequences(d);
    int64_t *writer = malloc((size_t)(p->slots ? p->slots : 1) * sizeof *writer);
    if (!writer) return 0;
    for (int64_t s = 0; s < p->slots; s++) writer[s] = -1;
    int mode = 2;
    for (int64_t n = 0; n < N && mode; n++) {
        if (sgla_pool_read_slot(p, n) < 0) continue;
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t t = 0; t < t1 - t0 && mode; t++) {
            const int64_t s = sgla_pool_index(p, n, t);
            if (s < 0) continue;
            if (s >= p->slots || writer[s] >= 0) mode = 0; /* (out of range: SGLA_FLAG_SKIP_VALUE_CHECK's to answer) */
            if (!mode) break;
            writer[s] = n;
        }
    }
    for (int64_t n = 0; n < N && mode == 2; n++) {
        const int64_t r = sgla_pool_continues(p, n) ? sgla_pool_read_slot(p, n) : -1;
        if (r >= p->slots || (r >= 0 && writer[r] >= 0 && writer[r] != n)) mode = r >= p->slots ? 0 : 1;
    }
    free(writer);
    return mode;
}

/* o = 0 on the tokens of padded rows */
static void zero_padded(const sgla_forward_desc *d)
{
    const size_t es = sgla_dtype_size(d->dtype);
    for (int64_t n = 0; n < sgla_num_sequences(d); n++) {
        if (sgla_pool_read_slot(d->pool, n) >= 0) continue;
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t t = t0; t < t1; t++)
            memset((char *)d->o + (size_t)((b * d->T + t) * d->H * d->V) * es, 0, (size_t)(d->H * d->V) * es);
    }
}

/* The in-place path when it is exact: 1 with the call done, 0 to take the gather path
 * (speculative steps, a slot one sequence reads and another writes). */
static int in_place(const sgla_forward_desc *d, sgla_status *st)
{
    const sgla_state_pool *p = d->pool;
    if (p->t_max) return 0;
    const int64_t N = sgla_num_sequences(d);
    const int inplace = (p->flags & SGLA_POOL_INPLACE) != 0;
    int64_t *in = malloc((size_t)(2 * N) * sizeof *in), *reader = malloc((size_t)p->slots * sizeof *reader);
    int ok = in && reader;
    if (ok) {
        int64_t *out = in + N;
        for (int64_t s = 0; s < p->slots; s++) reader[s] = -1;
        for (int64_t n = 0; n < N; n++) {
            const int64_t r = sgla_pool_read_slot(p, n);
            in[n] = sgla_pool_continues(p, n) ? r : -1;
            out[n] = inplace && r >= 0 ? r : -1;
            if (in[n] >= 0) reader[in[n]] = reader[in[n]] == -1 ? n : -2;
        }
        for (int64_t n = 0; n < N && ok; n++) /* a slot written here is read by this sequence alone, or by none */
            if (out[n] >= 0 && reader[out[n]] != -1 && reader[out[n]] != n) ok = 0;
        if (ok) {
            *st = sgla_cpu_forward_slots(d, in, out, (p->flags & SGLA_POOL_V_FIRST) != 0);
            if (*st == SGLA_OK) zero_padded(d);
        }
    }
    free(in), free(reader);
    return ok;
}

sgla_status sgla_cpu_pool_forward(const sgla_forward_desc *d)
{
    const sgla_state_pool *p = d->pool;
    const int64_t N = sgla_num_sequences(d), H = d->H, kv = d->K * d->V;
    sgla_status ok = sgla_cpu_supports(d);
    if (ok != SGLA_OK) return ok;
    sgla_status done;
    if (in_place(d, &done)) return done;
    const int inplace = (p->flags & SGLA_POOL_INPLACE) != 0;
    const size_t ns = (size_t)(N * H * kv);
    const int nth = sgla_cpu_threads(d->threads, N * H);
    /* speculative steps writing the pool: as they go (direct), each state read as its steps start
     * (fused), where the slots allow */
    const int mode = inplace && p->t_max ? write_mode(d) : p->t_max ? 2 : 0;
    const int direct = inplace && mode > 0, fused = p->t_max && mode == 2;
    /* the steps' buffers (small, every serving step) from the scratch pool, kept between calls; the
     * gathered states (N H K V floats, rare paths) for the call alone */
    const size_t nb = p->t_max ? (size_t)nth * step_floats(d, fused) : 0;
    float *S0 = fused ? NULL : malloc((ns ? ns : 1) * sizeof(float)), *St = NULL;
    float *buf = nb ? sgla_cpu_scratch_take(nb) : NULL;
    if (inplace && !direct) St = malloc(((p->t_max ? (size_t)p->t_max : 1) * ns + 1) * sizeof(float));
    if ((!fused && !S0) || (nb && !buf) || (inplace && !direct && !St)) {
        free(S0), sgla_cpu_scratch_give(buf), free(St);
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "CPU pool: %zu floats of gathered states", ns);
    }
    if (!fused) gather(d, S0);
    sgla_status st = SGLA_OK;
    if (p->t_max) {
        token_steps(d, S0, St, direct, buf, nth);
    } else {
        sgla_forward_desc plain = *d;
        plain.pool = NULL, plain.h0 = S0, plain.ht = St;
        st = sgla_cpu_forward_out(&plain, d->dtype, d->o);
    }
    if (st == SGLA_OK) {
        zero_padded(d);
        if (inplace && !direct)
#pragma omp parallel for schedule(dynamic) num_threads(sgla_cpu_threads(d->threads, N)) if (N > 1)
            for (int64_t n = 0; n < N; n++) {
                if (sgla_pool_read_slot(p, n) < 0) continue;
                int64_t b, t0, t1;
                sgla_seq_bounds(d, n, &b, &t0, &t1);
                if (!p->t_max) {
                    for (int64_t h = 0; h < H; h++) put_slot(d, sgla_pool_index(p, n, 0), h, St + (n * H + h) * kv);
                } else {
                    for (int64_t t = 0; t < t1 - t0; t++) {
                        const int64_t s = sgla_pool_index(p, n, t);
                        if (s < 0) continue;
                        for (int64_t h = 0; h < H; h++)
                            put_slot(d, s, h, St + ((n * p->t_max + t) * H + h) * kv);
                    }
                }
            }
    }
    free(S0), sgla_cpu_scratch_give(buf), free(St);
    return st;
}
