/* Reference B: chunked and vectorised, with the three weight positions.
 *
 * Inside chunk [t] of length L (the last one may be shorter), with the
 * chunk-local cumulative log-gate b_r = g_1 + ... + g_r (restarting at each
 * chunk, so every exponent below is a difference of b's that is <= 0):
 *
 *     Gamma_ij = exp(b_i - b_j), j <= i   (never evaluated for j > i)
 *     write    = exp(b_L - b_r)            (k rows, decayed to the chunk end)
 *     carry    = exp(b_L)                  (the whole state across the chunk)
 *     read     = exp(b_r)                  (q rows, from the chunk start)
 *
 *     Delta[t]  = (K[t] * write)^T V[t]
 *     S[t+1]    = carry[t] S[t] + Delta[t]
 *     O[t]      = scale * ((Q[t] * read) S[t] + ((Q[t] K[t]^T) ⊙ Gamma) V[t])
 *
 * Structured like a vectorised implementation: first every chunk's
 * contribution Delta and carry, then the exclusive prefix of states, then
 * all outputs from (chunk, entering state) pairs. */
#include "ref/ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

sgla_status ref_b_forward(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t K = d->K, V = d->V, H = d->H, C = d->chunk, N = sgla_num_sequences(d);
    const double scale = (double)d->scale;

    /* Longest sequence decides the per-(sequence, head) scratch. */
    const int64_t maxlen = sgla_max_seq_len(d);
    const int64_t nc_max = ref_num_chunks(maxlen, C);
    const int64_t kv = K * V;
    size_t n_chunk;
    const sgla_status rc = ref_doubles("ref-b", "scratch a chunk",
                                       (double)C * (3.0 * (double)K + 2.0 * (double)V + (double)C + 1.0), &n_chunk);
    if (rc != SGLA_OK) return rc;
    if ((uint64_t)(nc_max + 1) > (SIZE_MAX / sizeof(double) - n_chunk) / (uint64_t)(2 * kv + 1))
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-b: scratch for %lld chunks overflows size_t",
                         (long long)nc_max);
    size_t n_all = (size_t)((nc_max + 1) * kv * 2 + nc_max) + n_chunk;
    double *buf = malloc(n_all * sizeof *buf);
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-b: %zu doubles of scratch", n_all);
    ref_out_clear(d, o64);
    double *delta = buf;                          /* [nc][K][V] chunk contributions */
    double *state = delta + nc_max * kv;          /* [nc+1][K][V] entering states */
    double *carry = state + (nc_max + 1) * kv;    /* [nc] */
    double *Q = carry + nc_max, *Kc = Q + C * K, *Vc = Kc + C * K;
    double *A = Vc + C * V, *bc = A + C * C, *W = bc + C, *Oc = W + C * K;

    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        const int64_t nc = ref_num_chunks(t1 - t0, C);
        for (int64_t h = 0; h < H; h++) {
            /* Phase 1: each chunk's contribution, decayed to its own end. */
            for (int64_t c = 0; c < nc; c++) {
                const int64_t s0 = t0 + c * C, L = (t1 - s0 < C) ? t1 - s0 : C;
                ref_load_rows(d, b, h, s0, L, NULL, Kc, Vc);
                ref_chunk_logcum(d, b, h, s0, L, bc);
                for (int64_t r = 0; r < L; r++) {
                    const double w = exp(bc[L - 1] - bc[r]);
                    for (int64_t i = 0; i < K; i++) W[r * K + i] = w * Kc[r * K + i];
                }
                double *D = delta + c * kv;
                memset(D, 0, (size_t)kv * sizeof *D);
                for (int64_t r = 0; r < L; r++)
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) D[i * V + j] += W[r * K + i] * Vc[r * V + j];
                carry[c] = exp(bc[L - 1]);
            }
            /* Phase 2: exclusive prefix of states, old state decayed first. */
            ref_state_init(d, n, h, state);
            for (int64_t c = 0; c < nc; c++)
                for (int64_t e = 0; e < kv; e++)
                    state[(c + 1) * kv + e] = carry[c] * state[c * kv + e] + delta[c * kv + e];
            ref_state_store(d, n, h, state + nc * kv, ht64);

            /* Phase 3: outputs, inter-chunk (read weights) + intra-chunk (ratio form). */
            for (int64_t c = 0; c < nc; c++) {
                const int64_t s0 = t0 + c * C, L = (t1 - s0 < C) ? t1 - s0 : C;
                const double *S = state + c * kv;
                ref_load_rows(d, b, h, s0, L, Q, Kc, Vc);
                ref_chunk_logcum(d, b, h, s0, L, bc);
                for (int64_t r = 0; r < L; r++) {
                    const double w = exp(bc[r]);
                    for (int64_t i = 0; i < K; i++) W[r * K + i] = w * Q[r * K + i];
                }
                /* A = (Q K^T) ⊙ Gamma on the lower triangle only. */
                for (int64_t r = 0; r < L; r++)
                    for (int64_t s = 0; s < L; s++) {
                        if (s > r) {
                            A[r * C + s] = 0.0;
                            continue;
                        }
                        double dot = 0.0;
                        for (int64_t i = 0; i < K; i++) dot += Q[r * K + i] * Kc[s * K + i];
                        A[r * C + s] = dot * exp(bc[r] - bc[s]);
                    }
                for (int64_t r = 0; r < L; r++)
                    for (int64_t j = 0; j < V; j++) {
                        double inter = 0.0, intra = 0.0;
                        for (int64_t i = 0; i < K; i++) inter += W[r * K + i] * S[i * V + j];
                        for (int64_t s = 0; s <= r; s++) intra += A[r * C + s] * Vc[s * V + j];
                        Oc[r * V + j] = scale * (inter + intra);
                    }
                for (int64_t r = 0; r < L; r++)
                    memcpy(o64 + ((b * d->T + s0 + r) * H + h) * V, Oc + r * V, (size_t)V * sizeof *Oc);
            }
        }
    }
    free(buf);
    return SGLA_OK;
}
