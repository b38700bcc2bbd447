/* Reference A: the token recurrence, straight from the definition.
 *
 *     S_t = exp(g_t) S_{t-1} + k_t v_t^T,     o_t = scale * q_t^T S_t
 *
 * One K x V state per (sequence, head), fp64 throughout.  This is the
 * ground truth the other references and every fast path are checked
 * against, so it is kept as literal as possible. */
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* one token: S = exp(g_t) S + k_t v_t^T, o_t = scale q_t^T S (qkv: K + K + V doubles of scratch) */
static void token_step(const sgla_forward_desc *d, int64_t b, int64_t t, int64_t h, double *S, double *qkv,
                       double *o64)
{
    const int64_t K = d->K, V = d->V;
    double *q = qkv, *k = q + K, *v = k + K;
    const double a = exp(ref_gate(d, b, t, h));
    ref_load_rows(d, b, h, t, 1, q, k, v);
    for (int64_t i = 0; i < K; i++)
        for (int64_t j = 0; j < V; j++) S[i * V + j] = a * S[i * V + j] + k[i] * v[j];
    double *o = o64 + ((b * d->T + t) * d->H + h) * V;
    for (int64_t j = 0; j < V; j++) {
        double acc = 0.0;
        for (int64_t i = 0; i < K; i++) acc += q[i] * S[i * V + j];
        o[j] = (double)d->scale * acc;
    }
}

sgla_status ref_a_forward(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t K = d->K, V = d->V, H = d->H, N = sgla_num_sequences(d);
    double *S = malloc((size_t)(K * V + 2 * K + V) * sizeof *S);
    if (!S) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a: state of %lld doubles", (long long)(K * V));
    ref_out_clear(d, o64);
    double *q = S + K * V; /* then k and v: token_step's scratch */

    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t h = 0; h < H; h++) {
            ref_state_init(d, n, h, S);
            for (int64_t t = t0; t < t1; t++) {
                token_step(d, b, t, h, S, q, o64);
            }
            ref_state_store(d, n, h, S, ht64);
        }
    }
    free(S);
    return SGLA_OK;
}

/* The state pool (sgla.h, experimental), by the same recurrence: the pool is
 * read as it was before the call (every write is kept aside and done last),
 * padded rows give o = 0, and with t_max the state after each token goes to
 * its own slot. */
sgla_status ref_a_pool(const sgla_forward_desc *d)
{
    const sgla_state_pool *p = d->pool;
    const int64_t K = d->K, V = d->V, H = d->H, N = sgla_num_sequences(d), kv = K * V;
    const int vf = (p->flags & SGLA_POOL_V_FIRST) != 0, inplace = (p->flags & SGLA_POOL_INPLACE) != 0;
    const sgla_dtype dt = d->dtype, adt = sgla_aux_dtype(d->dtype);
    /* the writes: slot, head and state, applied after every read */
    int64_t nw = 0, cap = 0;
    int64_t *ws = NULL;
    double *wv = NULL, *S = malloc((size_t)(kv + 2 * K + V) * sizeof *S);
    double *o64 = calloc((size_t)(d->B * d->T * H * V) + 1, sizeof *o64);
    sgla_status st = S && o64 ? SGLA_OK : sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a pool: scratch");
    double *q = S + kv; /* then k and v: token_step's scratch */
    for (int64_t n = 0; n < N && st == SGLA_OK; n++) {
        const int64_t r = sgla_pool_read_slot(p, n);
        if (r < 0) continue;
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t h = 0; h < H && st == SGLA_OK; h++) {
            for (int64_t i = 0; i < K; i++)
                for (int64_t j = 0; j < V; j++)
                    S[i * V + j] = sgla_pool_continues(p, n)
                                       ? sgla_load(d->h0, adt, (r * H + h) * kv + (vf ? j * K + i : i * V + j))
                                       : 0.0;
            for (int64_t t = t0; t <= t1 && st == SGLA_OK; t++) {
                /* the write of the state so far: after each token (t_max), or once at the end */
                const int64_t slot = !inplace ? -1 : p->t_max ? (t > t0 ? sgla_pool_index(p, n, t - t0 - 1) : -1)
                                                 : (t == t1 ? sgla_pool_index(p, n, 0) : -1);
                if (slot >= 0) {
                    if (nw == cap) {
                        cap = cap ? 2 * cap : 16;
                        int64_t *ws2 = realloc(ws, (size_t)cap * 2 * sizeof *ws);
                        double *wv2 = ws2 ? realloc(wv, (size_t)cap * (size_t)kv * sizeof *wv) : NULL;
                        if (ws2) ws = ws2;
                        if (wv2) wv = wv2;
                        if (!ws2 || !wv2) {
                            st = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a pool: pending writes");
                            break;
                        }
                    }
                    ws[2 * nw] = slot, ws[2 * nw + 1] = h;
                    memcpy(wv + nw * kv, S, (size_t)kv * sizeof *S);
                    nw++;
                }
                if (t == t1) break;
                token_step(d, b, t, h, S, q, o64);
            }
        }
    }
    if (st == SGLA_OK) {
        const int64_t nv = d->B * d->T * H * V;
        for (int64_t i = 0; i < nv; i++) sgla_store(d->o, dt, i, o64[i]);
        for (int64_t w = 0; w < nw; w++)
            for (int64_t i = 0; i < K; i++)
                for (int64_t j = 0; j < V; j++)
                    sgla_store((void *)d->h0, adt, (ws[2 * w] * H + ws[2 * w + 1]) * kv + (vf ? j * K + i : i * V + j),
                               wv[w * kv + i * V + j]);
    }
    free(ws), free(wv), free(S), free(o64);
    return st;
}
