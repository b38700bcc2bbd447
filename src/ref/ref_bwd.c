/* The fp64 references of the backward (sgla.h, sgla_backward):
 *
 * A, the reverse-time recurrence, straight from the definition: per
 * (sequence, head), with dS the gradient of the state after token t,
 *     dS  += scale q_t dout_t^T
 *     dq_t = scale S_t dout_t,  dk_t = dS v_t,  dv_t = dS^T k_t
 *     dg_t = a_t <dS, S_{t-1}>,  dS = a_t dS
 * from dS = dht, ending in dh0 = dS.  The states are recomputed from
 * checkpoints every 64 tokens (a block at a time), so memory stays small.
 *
 * B, chunked like the kernels: the entering state S of every chunk from a
 * forward pass, then the chunks in reverse with dS' (the gradient of the
 * chunk's end state).  With b_r the chunk-local cumulative log-gate, L the
 * chunk length, P_ij = q_i.k_j, dP_ij = dout_i.v_j and Gamma_ij = exp(b_i - b_j)
 * evaluated for j <= i only:
 *     dq_i = scale (exp(b_i) S dout_i + sum_{j<=i} Gamma_ij dP_ij k_j)
 *     dk_j = scale sum_{i>=j} Gamma_ij dP_ij q_i + exp(b_L - b_j) dS' v_j
 *     dv_j = scale sum_{i>=j} Gamma_ij P_ij dout_i + exp(b_L - b_j) dS'^T k_j
 *     dS   = exp(b_L) dS' + scale sum_i exp(b_i) q_i dout_i^T
 * and the gate gradient of token r of the chunk from A's a_t <dS_t, S_{t-1}>
 * written out with the chunk's quantities (no difference of large terms, so
 * a tiny dg stays accurate: the identity q_r.dq_r - k_r.dk_r that fla uses
 * cancels when the decay is strong):
 *     dg_r = exp(b_L) <dS', S> + sum_{j<r} exp(b_L - b_j) k_j^T dS' v_j
 *          + scale sum_{i>=r} exp(b_i) q_i^T S dout_i
 *          + scale sum_{i>=r} sum_{j<r} Gamma_ij P_ij dP_ij.
 *
 * Both write fp64 gradients into ref_grads (dg per token whenever there is a
 * gate; the caller sums it into dg_gamma). */
#include "ref/ref.h"
#include "core/backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CKPT = 64 }; /* ref-a: tokens between checkpoints */

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* dS <- the gradient at the end of sequence n, head h (dht or 0) */
static void dstate_init(const sgla_backward_desc *bd, int64_t n, int64_t h, double *dS)
{
    const sgla_forward_desc *d = bd->fwd;
    const int64_t kv = d->K * d->V;
    for (int64_t i = 0; i < kv; i++)
        dS[i] = bd->dht ? sgla_load(bd->dht, sgla_aux_dtype(d->dtype), (n * d->H + h) * kv + i) : 0.0;
}

static void load_dout(const sgla_backward_desc *bd, int64_t b, int64_t t, int64_t h, double *dout)
{
    const sgla_forward_desc *d = bd->fwd;
    const int64_t row = (b * d->T + t) * d->H + h;
    for (int64_t j = 0; j < d->V; j++) dout[j] = sgla_load(bd->dout, d->dtype, row * d->V + j);
}

static sgla_status ref_a_backward(const sgla_backward_desc *bd, const ref_grads *gr)
{
    const sgla_forward_desc *d = bd->fwd;
    const int64_t K = d->K, V = d->V, H = d->H, N = sgla_num_sequences(d), kv = K * V;
    const double scale = (double)d->scale;
    const int64_t maxlen = sgla_max_seq_len(d);
    const int64_t nck = maxlen / CKPT + 1;
    /* checkpoints [nck][kv], the states of one block [CKPT + 1][kv], dS, rows */
    const double need = ((double)nck + CKPT + 2) * (double)kv + 2.0 * (double)K + 2.0 * (double)V;
    if (need * sizeof(double) > (double)SIZE_MAX / 2)
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a backward: %.3g doubles of scratch", need);
    double *buf = malloc((size_t)need * sizeof(double));
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-a backward: %.3g doubles of scratch", need);
    double *ck = buf, *blk = ck + nck * kv, *dS = blk + (CKPT + 1) * kv;
    double *q = dS + kv, *k = q + K, *v = k + K, *dout = v + V;

    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        const int64_t len = t1 - t0;
        for (int64_t h = 0; h < H; h++) {
            /* forward: ck[m] is the state before token t0 + 64 m (dS serves as the working state) */
            double *S = dS;
            ref_state_init(d, n, h, S);
            for (int64_t t = t0; t < t1; t++) {
                if ((t - t0) % CKPT == 0) memcpy(ck + (t - t0) / CKPT * kv, S, (size_t)kv * sizeof *S);
                const double a = exp(ref_gate(d, b, t, h));
                ref_load_rows(d, b, h, t, 1, NULL, k, v);
                for (int64_t i = 0; i < K; i++)
                    for (int64_t j = 0; j < V; j++) S[i * V + j] = a * S[i * V + j] + k[i] * v[j];
            }
            /* backward, a block at a time: blk[r] is the state after r tokens of the block */
            dstate_init(bd, n, h, dS);
            for (int64_t m = len > 0 ? (len - 1) / CKPT : -1; m >= 0; m--) {
                const int64_t bs = t0 + m * CKPT, be = bs + CKPT < t1 ? bs + CKPT : t1;
                memcpy(blk, ck + m * kv, (size_t)kv * sizeof *blk);
                for (int64_t t = bs; t < be; t++) {
                    const double a = exp(ref_gate(d, b, t, h));
                    const double *Sp = blk + (t - bs) * kv;
                    double *Sn = blk + (t - bs + 1) * kv;
                    ref_load_rows(d, b, h, t, 1, NULL, k, v);
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) Sn[i * V + j] = a * Sp[i * V + j] + k[i] * v[j];
                }
                for (int64_t t = be - 1; t >= bs; t--) {
                    const double a = exp(ref_gate(d, b, t, h));
                    const double *Sp = blk + (t - bs) * kv, *St = Sp + kv;
                    const int64_t row = (b * d->T + t) * H + h;
                    ref_load_rows(d, b, h, t, 1, q, k, v);
                    load_dout(bd, b, t, h, dout);
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) dS[i * V + j] += scale * q[i] * dout[j];
                    for (int64_t i = 0; i < K; i++) {
                        gr->dq[row * K + i] = scale * dot(St + i * V, dout, V);
                        gr->dk[row * K + i] = dot(dS + i * V, v, V);
                    }
                    for (int64_t j = 0; j < V; j++) {
                        double acc = 0.0;
                        for (int64_t i = 0; i < K; i++) acc += dS[i * V + j] * k[i];
                        gr->dv[row * V + j] = acc;
                    }
                    if (gr->dg) gr->dg[row] = a * dot(dS, Sp, kv);
                    for (int64_t i = 0; i < kv; i++) dS[i] *= a;
                }
            }
            if (gr->dh0) memcpy(gr->dh0 + (n * H + h) * kv, dS, (size_t)kv * sizeof *dS);
        }
    }
    free(buf);
    return SGLA_OK;
}

static sgla_status ref_b_backward(const sgla_backward_desc *bd, const ref_grads *gr)
{
    const sgla_forward_desc *d = bd->fwd;
    const int64_t K = d->K, V = d->V, H = d->H, C = d->chunk, N = sgla_num_sequences(d), kv = K * V;
    const double scale = (double)d->scale;
    const int64_t maxlen = sgla_max_seq_len(d);
    const int64_t ncm = ref_num_chunks(maxlen, C);
    /* states [ncm + 1][kv], dS; per chunk Q, K (C x K), V, dO (C x V), dQ, dK, dV, b, db */
    const double need = ((double)ncm + 2) * (double)kv + (double)C * (4.0 * (double)K + 3.0 * (double)V + 3.0);
    if (need * sizeof(double) > (double)SIZE_MAX / 2)
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-b backward: %.3g doubles of scratch", need);
    double *buf = malloc((size_t)need * sizeof(double));
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "ref-b backward: %.3g doubles of scratch", need);
    double *st = buf, *dS = st + (ncm + 1) * kv, *Q = dS + kv, *Kc = Q + C * K, *dQ = Kc + C * K, *dK = dQ + C * K;
    double *Vc = dK + C * K, *dO = Vc + C * V, *dV = dO + C * V, *bc = dV + C * V, *db = bc + C;

    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        const int64_t nc = ref_num_chunks(t1 - t0, C);
        for (int64_t h = 0; h < H; h++) {
            /* the entering state of every chunk, and the final one */
            ref_state_init(d, n, h, st);
            for (int64_t c = 0; c < nc; c++) {
                const int64_t s0 = t0 + c * C, L = t1 - s0 < C ? t1 - s0 : C;
                const double *S = st + c * kv;
                double *S1 = st + (c + 1) * kv;
                ref_load_rows(d, b, h, s0, L, NULL, Kc, Vc);
                ref_chunk_logcum(d, b, h, s0, L, bc);
                const double carry = exp(bc[L - 1]);
                for (int64_t i = 0; i < kv; i++) S1[i] = carry * S[i];
                for (int64_t r = 0; r < L; r++) {
                    const double w = exp(bc[L - 1] - bc[r]);
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) S1[i * V + j] += w * Kc[r * K + i] * Vc[r * V + j];
                }
            }
            dstate_init(bd, n, h, dS);
            for (int64_t c = nc - 1; c >= 0; c--) {
                const int64_t s0 = t0 + c * C, L = t1 - s0 < C ? t1 - s0 : C;
                const double *S = st + c * kv;
                ref_load_rows(d, b, h, s0, L, Q, Kc, Vc);
                for (int64_t r = 0; r < L; r++) load_dout(bd, b, s0 + r, h, dO + r * V);
                ref_chunk_logcum(d, b, h, s0, L, bc);
                const double bL = bc[L - 1];
                for (int64_t r = 0; r < L; r++) {
                    const double rd = exp(bc[r]), wr = exp(bL - bc[r]);
                    /* dq_r: the state term, then the chunk's keys j <= r */
                    for (int64_t i = 0; i < K; i++) dQ[r * K + i] = rd * dot(S + i * V, dO + r * V, V);
                    for (int64_t j = 0; j <= r; j++) {
                        const double gm = exp(bc[r] - bc[j]) * dot(dO + r * V, Vc + j * V, V);
                        for (int64_t i = 0; i < K; i++) dQ[r * K + i] += gm * Kc[j * K + i];
                    }
                    for (int64_t i = 0; i < K; i++) dQ[r * K + i] *= scale;
                    /* dk_r, dv_r: the end state's gradient, then the chunk's queries i >= r */
                    for (int64_t i = 0; i < K; i++) dK[r * K + i] = wr * dot(dS + i * V, Vc + r * V, V);
                    for (int64_t j = 0; j < V; j++) {
                        double acc = 0.0;
                        for (int64_t i = 0; i < K; i++) acc += dS[i * V + j] * Kc[r * K + i];
                        dV[r * V + j] = wr * acc;
                    }
                    for (int64_t i2 = r; i2 < L; i2++) {
                        const double gm = scale * exp(bc[i2] - bc[r]);
                        const double dp = gm * dot(dO + i2 * V, Vc + r * V, V), p = gm * dot(Q + i2 * K, Kc + r * K, K);
                        for (int64_t i = 0; i < K; i++) dK[r * K + i] += dp * Q[i2 * K + i];
                        for (int64_t j = 0; j < V; j++) dV[r * V + j] += p * dO[i2 * V + j];
                    }
                }
                if (gr->dg) {
                    /* u_j, e_i of the header, then for each r the four terms */
                    double *u = db, *e = db + C;
                    const double t1 = exp(bL) * dot(dS, S, kv);
                    for (int64_t r = 0; r < L; r++) {
                        double uu = 0.0, ee = 0.0;
                        for (int64_t i = 0; i < K; i++) {
                            uu += Kc[r * K + i] * dot(dS + i * V, Vc + r * V, V);
                            ee += Q[r * K + i] * dot(S + i * V, dO + r * V, V);
                        }
                        u[r] = exp(bL - bc[r]) * uu;
                        e[r] = scale * exp(bc[r]) * ee;
                    }
                    for (int64_t r = 0; r < L; r++) {
                        double acc = t1;
                        for (int64_t j = 0; j < r; j++) acc += u[j];
                        for (int64_t i2 = r; i2 < L; i2++) {
                            acc += e[i2];
                            for (int64_t j = 0; j < r; j++)
                                acc += scale * exp(bc[i2] - bc[j]) * dot(Q + i2 * K, Kc + j * K, K) *
                                       dot(dO + i2 * V, Vc + j * V, V);
                        }
                        gr->dg[(b * d->T + s0 + r) * H + h] = acc;
                    }
                }
                for (int64_t r = 0; r < L; r++) {
                    const int64_t row = (b * d->T + s0 + r) * H + h;
                    memcpy(gr->dq + row * K, dQ + r * K, (size_t)K * sizeof(double));
                    memcpy(gr->dk + row * K, dK + r * K, (size_t)K * sizeof(double));
                    memcpy(gr->dv + row * V, dV + r * V, (size_t)V * sizeof(double));
                }
                /* the entering state's gradient */
                const double carry = exp(bL);
                for (int64_t i = 0; i < kv; i++) dS[i] *= carry;
                for (int64_t r = 0; r < L; r++) {
                    const double rd = scale * exp(bc[r]);
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < V; j++) dS[i * V + j] += rd * Q[r * K + i] * dO[r * V + j];
                }
            }
            if (gr->dh0) memcpy(gr->dh0 + (n * H + h) * kv, dS, (size_t)kv * sizeof *dS);
        }
    }
    free(buf);
    return SGLA_OK;
}

sgla_status sgla_ref_backward64(const sgla_backward_desc *bd, sgla_backend kind, const ref_grads *gr)
{
    const sgla_forward_desc *d = bd->fwd;
    /* positions no sequence covers (inconsistent offsets under SGLA_FLAG_SKIP_VALUE_CHECK) stay 0 */
    memset(gr->dq, 0, (size_t)(d->B * d->T * d->H * d->K) * sizeof(double));
    memset(gr->dk, 0, (size_t)(d->B * d->T * d->H * d->K) * sizeof(double));
    memset(gr->dv, 0, (size_t)(d->B * d->T * d->H * d->V) * sizeof(double));
    if (gr->dg) memset(gr->dg, 0, (size_t)(d->B * d->T * d->H) * sizeof(double));
    if (d->B * d->T == 0 && !gr->dh0) return SGLA_OK; /* no token and no dh0: nothing to compute */
    switch (kind) {
    case SGLA_BACKEND_REF_A: return ref_a_backward(bd, gr);
    case SGLA_BACKEND_REF_B: return ref_b_backward(bd, gr);
    default: break;
    }
    return sgla_fail(SGLA_ERR_INVALID_BACKEND, "%s has no backward: the references with one are ref-a and ref-b",
                     kind == SGLA_BACKEND_REF_C ? "ref-c" : kind == SGLA_BACKEND_REF_D ? "ref-d" : "this kind");
}

/* A reference backward through the typed API: fp64 gradients into scratch,
 * then rounded into the outputs, so nothing is written on failure. */
sgla_status sgla_ref_backward(const sgla_backward_desc *bd, sgla_backend kind)
{
    const sgla_forward_desc *d = bd->fwd;
    const sgla_dtype dt = d->dtype, adt = sgla_aux_dtype(dt);
    const int64_t nqk = d->B * d->T * d->H * d->K, nv = d->B * d->T * d->H * d->V, ng = d->B * d->T * d->H;
    const int64_t ns = sgla_num_sequences(d) * d->H * d->K * d->V;
    const int gate = d->g || d->g_gamma;
    const double total = 2.0 * (double)nqk + (double)nv + (gate ? (double)ng : 0) + (bd->dh0 ? (double)ns : 0);
    if (total * sizeof(double) > (double)SIZE_MAX / 2)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "reference backward scratch of %.3g doubles", total);
    double *buf = malloc((size_t)(total > 0 ? total : 1) * sizeof(double));
    if (!buf) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "reference backward scratch of %.3g doubles", total);
    ref_grads gr = {buf, buf + nqk, buf + 2 * nqk, NULL, NULL};
    double *next = gr.dv + nv;
    if (gate) gr.dg = next, next += ng;
    if (bd->dh0) gr.dh0 = next;
    sgla_status st = sgla_ref_backward64(bd, kind, &gr);
    if (st == SGLA_OK) {
        for (int64_t i = 0; i < nqk; i++) sgla_store(bd->dq, dt, i, gr.dq[i]), sgla_store(bd->dk, dt, i, gr.dk[i]);
        for (int64_t i = 0; i < nv; i++) sgla_store(bd->dv, dt, i, gr.dv[i]);
        if (bd->dg)
            for (int64_t i = 0; i < ng; i++) sgla_store(bd->dg, adt, i, gr.dg[i]);
        if (bd->dg_gamma)
            for (int64_t h = 0; h < d->H; h++) {
                double acc = 0.0;
                for (int64_t bt = 0; bt < d->B * d->T; bt++) acc += gr.dg[bt * d->H + h];
                sgla_store(bd->dg_gamma, adt, h, acc);
            }
        if (bd->dh0)
            for (int64_t i = 0; i < ns; i++) sgla_store(bd->dh0, adt, i, gr.dh0[i]);
    }
    free(buf);
    return st;
}
