/* The CPU backend's state pool (sgla.h, experimental).  The common case (one
 * slot per sequence, either layout, no slot read by one sequence and written
 * by another) runs the ordinary forward on the slots in place: each state is
 * read and written once (a V-first slot through the forward's per-item
 * scratch).  Otherwise (speculative steps with per-token states): gather the
 * entering states into an [N, H, K, V] array, run the token recurrence, and
 * scatter the states back.
 * Either way the pool is read as it was before the call, and the outputs of
 * padded rows are zeroed. */
#include "cpu_fpmode.h"
#include "cpu_kernels.h"
#include "core/backend.h"

#include <stdlib.h>
#include <string.h>

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

static void gather(const sgla_forward_desc *d, float *S0)
{
    const sgla_state_pool *p = d->pool;
    const int64_t N = sgla_num_sequences(d), H = d->H, K = d->K, V = d->V, kv = K * V;
    const int vf = (p->flags & SGLA_POOL_V_FIRST) != 0;
#pragma omp parallel for schedule(static) num_threads(sgla_cpu_threads(d->threads, N * H)) if (N * H > 1)
    for (int64_t nh = 0; nh < N * H; nh++) {
        const int64_t n = nh / H, h = nh - n * H;
        float *dst = S0 + nh * kv;
        if (!sgla_pool_continues(p, n)) {
            memset(dst, 0, (size_t)kv * sizeof *dst);
            continue;
        }
        const float *src = slot_ptr(d, sgla_pool_read_slot(p, n), h);
        if (!vf) memcpy(dst, src, (size_t)kv * sizeof *dst);
        else transpose(src, V, K, dst); /* [V][K] -> [K][V] */
    }
}

static void put_slot(const sgla_forward_desc *d, int64_t s, int64_t h, const float *S)
{
    float *dst = (float *)slot_ptr(d, s, h);
    const int64_t K = d->K, V = d->V;
    if (!(d->pool->flags & SGLA_POOL_V_FIRST)) memcpy(dst, S, (size_t)(K * V) * sizeof *dst);
    else transpose(S, K, V, dst); /* [K][V] -> [V][K] */
}

/* speculative steps: the token recurrence (sequences of at most t_max tokens) on the gathered
 * states S0 (advanced in place: nothing to allocate, so nothing fails once o is being written), every
 * token's state kept in St [N][t_max][H][K][V] when the pool is written (St not NULL) */
static void token_steps(const sgla_forward_desc *d, float *S0, float *St)
{
    const int64_t N = sgla_num_sequences(d), H = d->H, K = d->K, V = d->V, kv = K * V, tm = d->pool->t_max;
    const sgla_dtype dt = d->dtype;
#pragma omp parallel for schedule(dynamic) num_threads(sgla_cpu_threads(d->threads, N * H)) if (N * H > 1)
    for (int64_t nh = 0; nh < N * H; nh++) {
        const int64_t n = nh / H, h = nh - n * H;
        if (sgla_pool_read_slot(d->pool, n) < 0) continue;
        const sgla_fpmode fpm = sgla_fpmode_enter();
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        float *S = S0 + nh * kv;
        for (int64_t t = t0; t < t1; t++) {
            const int64_t row = (b * d->T + t) * H + h;
            double lg = d->g ? ((const float *)d->g)[row] : d->g_gamma ? ((const float *)d->g_gamma)[h] : 0.0;
            const sgla_carry a = sgla_carry_of(sgla_gate_floor(lg));
            for (int64_t i = 0; i < K; i++) {
                const float ki = (float)sgla_load(d->k, dt, row * K + i);
                for (int64_t j = 0; j < V; j++)
                    S[i * V + j] = sgla_carry_apply(a, S[i * V + j], ki * (float)sgla_load(d->v, dt, row * V + j));
            }
            for (int64_t j = 0; j < V; j++) {
                double acc = 0.0;
                for (int64_t i = 0; i < K; i++) acc += (double)sgla_load(d->q, dt, row * K + i) * S[i * V + j];
                sgla_store(d->o, dt, row * V + j, (double)d->scale * acc);
            }
            if (St) memcpy(St + ((n * tm + (t - t0)) * H + h) * kv, S, (size_t)kv * sizeof *S);
        }
        sgla_fpmode_leave(fpm);
    }
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
    sgla_status direct;
    if (in_place(d, &direct)) return direct;
    const int inplace = (p->flags & SGLA_POOL_INPLACE) != 0;
    const size_t ns = (size_t)(N * H * kv);
    float *S0 = malloc((ns ? ns : 1) * sizeof(float));
    float *St = NULL;
    if (inplace) St = malloc(((p->t_max ? (size_t)p->t_max : 1) * ns + 1) * sizeof(float));
    if (!S0 || (inplace && !St)) {
        free(S0), free(St);
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "CPU pool: %zu floats of gathered states", ns);
    }
    gather(d, S0);
    sgla_status st = SGLA_OK;
    if (p->t_max) {
        token_steps(d, S0, St);
    } else {
        sgla_forward_desc plain = *d;
        plain.pool = NULL, plain.h0 = S0, plain.ht = St;
        st = sgla_cpu_forward_out(&plain, d->dtype, d->o);
    }
    if (st == SGLA_OK) {
        zero_padded(d);
        if (inplace)
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
    free(S0), free(St);
    return st;
}
