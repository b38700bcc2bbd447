/* Reference C: a mirror of the GPU kernel's control flow.
 *
 * The kernel's grid covers (batch or sequence, head, chunk); each block
 * owns one chunk's output and needs the state entering that chunk.  Here
 * every block rebuilds that state from h0 by streaming over the previous
 * chunks (decay the old state first, then add the chunk's decayed K^T V),
 * then reads it before anything updates it (exclusive prefix).  That is
 * O(N^2 / C) work per sequence, which is fine for a reference.
 *
 * Weights are formed as the kernel forms them: exp2 of log2-scaled,
 * chunk-local cumulative gates, each exponent a difference <= 0. */
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REF_LOG2E 1.442695040888963407359924681001892137

/* Chunk-local cumulative gates in log2 units. */
static void logcum2(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t s0, int64_t L, double *b2)
{
    ref_chunk_logcum(d, b, h, s0, L, b2);
    for (int64_t r = 0; r < L; r++) b2[r] *= REF_LOG2E;
}

/* S <- exp2(b2_L) S + (K * exp2(b2_L - b2))^T V for chunk [s0, s0+L). */
static void stream_chunk(const sgla_forward_desc *d, int64_t b, int64_t h, int64_t s0, int64_t L,
                         double *S, double *Kc, double *Vc, double *b2)
{
    const int64_t K = d->K, V = d->V;
    ref_load_rows(d, b, h, s0, L, NULL, Kc, Vc);
    logcum2(d, b, h, s0, L, b2);
    const double carry = exp2(b2[L - 1]);
    for (int64_t e = 0; e < K * V; e++) S[e] *= carry;
    for (int64_t r = 0; r < L; r++) {
        const double w = exp2(b2[L - 1] - b2[r]);
        for (int64_t i = 0; i < K; i++) {
            const double kw = w * Kc[r * K + i];
            for (int64_t j = 0; j < V; j++) S[i * V + j] += kw * Vc[r * V + j];
        }
    }
}

sgla_status ref_c_forward(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t K = d->K, V = d->V, H = d->H, C = d->chunk, N = sgla_num_sequences(d);
    const double scale = (double)d->scale;
    const double need = (double)K * (double)V + (double)C * (2.0 * (double)K + (double)V + 1.0 + (double)C) + (double)V;
    size_t n;
    const sgla_status rc = ref_doubles("ref-c", "scratch", need, &n);
    if (rc != SGLA_OK) return rc;
    double *buf = malloc(n * sizeof *buf);
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-c: %zu doubles of scratch", n);
    ref_out_clear(d, o64);
    double *S = buf, *Qc = S + K * V, *Kc = Qc + C * K, *Vc = Kc + C * K, *b2 = Vc + C * V;
    double *A = b2 + C, *acc = A + C * C;

    for (int64_t seq = 0; seq < N; seq++) {          /* grid z: batch / sequence */
        int64_t b, t0, t1;
        sgla_seq_bounds(d, seq, &b, &t0, &t1);
        const int64_t nc = ref_num_chunks(t1 - t0, C);
        for (int64_t h = 0; h < H; h++) {            /* grid y: head */
            for (int64_t blk = 0; blk < nc; blk++) { /* grid x: chunk */
                /* (1) the entering state, rebuilt from h0 through chunks 0..blk-1 */
                ref_state_init(d, seq, h, S);
                for (int64_t c = 0; c < blk; c++) stream_chunk(d, b, h, t0 + c * C, C, S, Kc, Vc, b2);

                const int64_t s0 = t0 + blk * C, L = (t1 - s0 < C) ? t1 - s0 : C;
                ref_load_rows(d, b, h, s0, L, Qc, Kc, Vc);
                logcum2(d, b, h, s0, L, b2);
                /* (3) intra-chunk scores, Gamma evaluated only where s <= r */
                for (int64_t r = 0; r < L; r++)
                    for (int64_t s = 0; s < L; s++) {
                        double gam = 0.0, dot = 0.0;
                        if (s <= r) {
                            gam = exp2(b2[r] - b2[s]);
                            for (int64_t i = 0; i < K; i++) dot += Qc[r * K + i] * Kc[s * K + i];
                        }
                        A[r * C + s] = dot * gam;
                    }
                for (int64_t r = 0; r < L; r++) {
                    /* (2) inter-chunk read: (q_r * exp2(b2_r)) S */
                    const double wq = exp2(b2[r]);
                    for (int64_t j = 0; j < V; j++) {
                        double x = 0.0;
                        for (int64_t i = 0; i < K; i++) x += (Qc[r * K + i] * wq) * S[i * V + j];
                        acc[j] = x;
                    }
                    for (int64_t s = 0; s <= r; s++)
                        for (int64_t j = 0; j < V; j++) acc[j] += A[r * C + s] * Vc[s * V + j];
                    double *o = o64 + ((b * d->T + s0 + r) * H + h) * V;
                    for (int64_t j = 0; j < V; j++) o[j] = scale * acc[j];
                }
            }
            /* The final state: what the last block leaves after its update. */
            if (ht64) {
                ref_state_init(d, seq, h, S);
                for (int64_t c = 0; c < nc; c++) {
                    const int64_t s0 = t0 + c * C, L = (t1 - s0 < C) ? t1 - s0 : C;
                    stream_chunk(d, b, h, s0, L, S, Kc, Vc, b2);
                }
                ref_state_store(d, seq, h, S, ht64);
            }
        }
    }
    free(buf);
    return SGLA_OK;
}
