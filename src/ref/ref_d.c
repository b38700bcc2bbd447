/* Reference D: the factorised intra-chunk form — kept to show the hazard.
 *
 * Gamma_ij = exp(b_i - b_j) is split into exp(b_i) * exp(-b_j), so the
 * intra-chunk term becomes one product of pre-weighted operands:
 *
 *     P = (Q * exp(b_i)) (K * exp(-b_j))^T,   intra = (M ⊙ P) V
 *
 * with M the 0/1 causal mask applied by multiplication after the full
 * C x C product, exactly the "compute everything, then mask" pattern the
 * fast paths must never use.  exp(-b_j) is really materialised: it grows
 * like alpha^-(C-1), so once a chunk's cumulative log-gate passes about
 * -709 it is inf even in fp64 and the output turns NaN (inf * 0, inf - inf).
 * For moderate gates it agrees with A to rounding, which is its purpose:
 * the algebra is right, the numerics are not.
 *
 * Control flow: one pass over the chunks with a running state (output read
 * first, then decay-and-update), the usual single-kernel chunked loop. */
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sgla_status ref_d_forward(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t K = d->K, V = d->V, H = d->H, C = d->chunk, N = sgla_num_sequences(d);
    const double scale = (double)d->scale;
    const double need = (double)K * (double)V + (double)C * (4.0 * (double)K + (double)V + 1.0 + (double)C);
    size_t n;
    const sgla_status rc = ref_doubles("ref-d", "scratch", need, &n);
    if (rc != SGLA_OK) return rc;
    double *buf = malloc(n * sizeof *buf);
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-d: %zu doubles of scratch", n);
    ref_out_clear(d, o64);
    double *S = buf, *Qc = S + K * V, *Kc = Qc + C * K, *Qf = Kc + C * K, *Kf = Qf + C * K;
    double *Vc = Kf + C * K, *bc = Vc + C * V, *P = bc + C;

    for (int64_t seq = 0; seq < N; seq++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, seq, &b, &t0, &t1);
        const int64_t nc = ref_num_chunks(t1 - t0, C);
        for (int64_t h = 0; h < H; h++) {
            ref_state_init(d, seq, h, S);
            for (int64_t c = 0; c < nc; c++) {
                const int64_t s0 = t0 + c * C, L = (t1 - s0 < C) ? t1 - s0 : C;
                ref_load_rows(d, b, h, s0, L, Qc, Kc, Vc);
                ref_chunk_logcum(d, b, h, s0, L, bc);
                /* The factorised operands: exp(b_i) <= 1 on q, exp(-b_j) >= 1 on k. */
                for (int64_t r = 0; r < L; r++) {
                    const double up = exp(bc[r]), down = exp(-bc[r]);
                    for (int64_t i = 0; i < K; i++) {
                        Qf[r * K + i] = Qc[r * K + i] * up;
                        Kf[r * K + i] = Kc[r * K + i] * down;
                    }
                }
                /* Full product, then the causal mask by multiplication. */
                for (int64_t r = 0; r < L; r++)
                    for (int64_t s = 0; s < L; s++) {
                        double dot = 0.0;
                        for (int64_t i = 0; i < K; i++) dot += Qf[r * K + i] * Kf[s * K + i];
                        P[r * C + s] = dot * (s <= r ? 1.0 : 0.0);
                    }
                /* Output: inter-chunk read of the entering state + masked intra term. */
                for (int64_t r = 0; r < L; r++) {
                    double *o = o64 + ((b * d->T + s0 + r) * H + h) * V;
                    for (int64_t j = 0; j < V; j++) {
                        double x = 0.0;
                        for (int64_t i = 0; i < K; i++) x += Qf[r * K + i] * S[i * V + j];
                        for (int64_t s = 0; s < L; s++) x += P[r * C + s] * Vc[s * V + j];
                        o[j] = scale * x;
                    }
                }
                /* State update after the read: decay first, then add. */
                const double carry = exp(bc[L - 1]);
                for (int64_t e = 0; e < K * V; e++) S[e] *= carry;
                for (int64_t r = 0; r < L; r++) {
                    const double w = exp(bc[L - 1] - bc[r]);
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) S[i * V + j] += w * Kc[r * K + i] * Vc[r * V + j];
                }
            }
            ref_state_store(d, seq, h, S, ht64);
        }
    }
    free(buf);
    return SGLA_OK;
}
