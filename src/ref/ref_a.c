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

sgla_status ref_a_forward(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t K = d->K, V = d->V, H = d->H, N = sgla_num_sequences(d);
    const double scale = (double)d->scale;
    double *S = malloc((size_t)(K * V + 2 * K + V) * sizeof *S);
    if (!S) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a: state of %lld doubles", (long long)(K * V));
    double *q = S + K * V, *k = q + K, *v = k + K;

    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t h = 0; h < H; h++) {
            ref_state_init(d, n, h, S);
            for (int64_t t = t0; t < t1; t++) {
                const double a = exp(ref_gate(d, b, t, h));
                ref_load_rows(d, b, h, t, 1, q, k, v);
                for (int64_t i = 0; i < K; i++)
                    for (int64_t j = 0; j < V; j++) S[i * V + j] = a * S[i * V + j] + k[i] * v[j];
                double *o = o64 + ((b * d->T + t) * H + h) * V;
                for (int64_t j = 0; j < V; j++) {
                    double acc = 0.0;
                    for (int64_t i = 0; i < K; i++) acc += q[i] * S[i * V + j];
                    o[j] = scale * acc;
                }
            }
            ref_state_store(d, n, h, S, ht64);
        }
    }
    free(S);
    return SGLA_OK;
}
