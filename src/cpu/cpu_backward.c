/*
 * The CPU backward: the chunked form of src/ref/ref_bwd.c (reference B) in
 * fp32 on the forward's micro-kernels (cpu_kernels.h; `state` is a general
 * tiled product Sout = Kt Vw + a Sin).  Per (sequence, head), in parallel
 * over the threads:
 *
 *   1. a forward pass keeps the entering state of every chunk, as S^T (the
 *      one form the reverse pass reads: no transpose a chunk);
 *   2. the chunks in reverse, with dS the gradient of the chunk's end state,
 *      rs = scale exp(b), w = exp(b_L - b), G = scale Gamma (0 above the
 *      diagonal, never evaluated there):
 *        A   = G ⊙ (Q K^T),  dP = tril(dO V^T),  dA = G ⊙ dP          qk
 *        dQ  = (rs ⊙ dO) S^T + dA K                                     state x 2
 *        dK  = (w ⊙ V) dS^T + dA^T Q                                    state x 2
 *        dV  = (w ⊙ K) dS + A^T dO                                      state x 2
 *        dS <- exp(b_L) dS + (rs ⊙ Q)^T dO                               state
 *   3. the gate, straight from a_t <dS_t, S_{t-1}> (ref_bwd.c's B): for
 *      token r, exp(b_L) <dS, S> + sum_{j<r} k_j.dKs_j + sum_{i>=r} q_i.dQs_i
 *      + sum_{i>=r, j<r} A_ij dP_ij, with dQs, dKs the state parts of dQ, dK
 *      above; sums of products, no difference of large terms, so a tiny dg
 *      keeps its relative accuracy.  dg_gamma[h] sums dg over the head's
 *      tokens per (sequence, head) item, then over the items in a fixed order:
 *      the bits do not depend on the thread count.
 *
 * Memory: the chunk states of one (sequence, head) per thread, (chunks + 1) x
 * V x K floats.
 *
 * With fewer (sequence, head) items than threads (or rounds they do not
 * fill: sgla_cpu_split_plan), the long items are split along their
 * sequence over the threads instead (item_split), in windows of chunks:
 * the chunks' state parts and dS parts in parallel, elementwise scans across
 * the chunks (states forward, dS back), the chunks' gradients in parallel.
 * Each state and dS element is scanned over the chunks in the sequential
 * loop's order with its fma (cpu_kernels.h: D from zero, then a S + D): the
 * same bits on every path and thread count, dg_gamma's sum included.
 */
#include "cpu_fpmode.h"
#include "cpu_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

typedef struct bplan {
    const sgla_backward_desc *b;
    const sgla_forward_desc *d;
    const sgla_cpu_kernels *kr;
    int C, K, V, ldk, ldv, ldc;
    size_t es;
    int gate;      /* 0 none, 1 gamma, 2 g */
    int64_t ncm;   /* chunks of the longest sequence */
} bplan;

/* One thread's scratch. */
typedef struct bscratch {
    float *Q, *Kp, *dQs, *dKs;                      /* C x ldk (dQs, dKs: the state parts, then dQ, dK; Q, Kp
                                                     * weighted in place once their last plain use is done) */
    float *Vp, *dO, *rdO, *dVs;                     /* C x ldv (dVs: the state part, then dV; Vp as Q, Kp) */
    float *Kt, *Vt;                                 /* K or V x ldc (Kt, dead after A, then holds (rs Q)^T) */
    float *G, *G1, *A, *dP, *dA, *AT, *dAT;         /* C x ldc */
    float *dSt;                                     /* V x ldk */
    float *rs, *w, *x;                              /* C (x: max(C, K, V) + 1) */
    float *dS;                                      /* K x ldv */
    float *states;                                  /* (ncm + 1) x V x ldk: S^T */
    double *bc, *u, *e, *c4;                        /* C + 1 */
    double *val;                                    /* C: the chunk's dg per token */
} bscratch;

static size_t bscratch_floats(const bplan *p, bscratch *s, float *m)
{
    const size_t C = (size_t)p->C, K = (size_t)p->K, V = (size_t)p->V;
    size_t mx = K > V ? K : V;
    if (C > mx) mx = C;
    size_t off = 0;
#define TAKE(ptr, cnt)                                                                                                 \
    do {                                                                                                               \
        if (m) ptr = m + off;                                                                                          \
        off += (size_t)round_up((int64_t)(cnt), 16);                                                                   \
    } while (0)
    float *bd = NULL, *ud = NULL, *ed = NULL, *cd = NULL, *vd = NULL;
    float **ck[] = {&s->Q, &s->Kp, &s->dQs, &s->dKs};
    float **cv[] = {&s->Vp, &s->dO, &s->rdO, &s->dVs};
    float **cc[] = {&s->G, &s->G1, &s->A, &s->dP, &s->dA, &s->AT, &s->dAT};
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++) TAKE(*ck[i], C * p->ldk);
    for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++) TAKE(*cv[i], C * p->ldv);
    for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++) TAKE(*cc[i], C * p->ldc);
    TAKE(s->Kt, K * p->ldc);
    TAKE(s->Vt, V * p->ldc);
    TAKE(s->dSt, V * p->ldk);
    TAKE(s->rs, C);
    TAKE(s->w, C);
    TAKE(s->x, mx + 1);
    TAKE(s->dS, K * p->ldv);
    TAKE(s->states, (size_t)(p->ncm + 1) * V * p->ldk);
    TAKE(bd, 2 * (C + 1));
    TAKE(ud, 2 * (C + 1));
    TAKE(ed, 2 * (C + 1));
    TAKE(cd, 2 * (C + 1));
    TAKE(vd, 2 * C);
#undef TAKE
    if (m) {
        s->bc = (double *)(void *)bd;
        s->u = (double *)(void *)ud;
        s->e = (double *)(void *)ed;
        s->c4 = (double *)(void *)cd;
        s->val = (double *)(void *)vd;
    }
    return off;
}

/* The gates of a chunk of n tokens at token t: G (scale Gamma; with_G = 0
 * skips it: the forward pass needs only w and the carry), rs = scale exp(b),
 * w = exp(b_n - b); returns the carry exp(b_n). */
static sgla_carry chunk_gates(const bplan *p, bscratch *s, int64_t bb, int64_t t, int64_t h, int n, int with_G)
{
    const sgla_forward_desc *d = p->d;
    const float scale = d->scale;
    double *b = s->bc;
    b[0] = 0.0;
    if (p->gate == 2) {
        const float *g = (const float *)d->g + ((bb * d->T + t) * d->H + h);
        for (int r = 1; r <= n; r++) b[r] = b[r - 1] + sgla_gate_floor((double)g[(int64_t)(r - 1) * d->H]);
    } else {
        const double gam = p->gate == 1 ? sgla_gate_floor((double)((const float *)d->g_gamma)[h]) : 0.0;
        for (int r = 1; r <= n; r++) b[r] = gam * r;
    }
    return sgla_cpu_gate_weights(p->kr, n, b, scale, with_G ? s->G : NULL, p->ldc, s->rs, s->w, s->x);
}

static int64_t tok_off(const sgla_forward_desc *d, int64_t bb, int64_t t, int64_t h, int64_t D)
{
    return ((bb * d->T + t) * d->H + h) * D;
}

/* n rows of a [B,T,H,D] tensor of dtype dt from token t into dst (ld) as fp32, by the forward's
 * gather (one head): its rows lie H D elements apart, and the gather keeps several tokens' lines in
 * flight where a row at a time waited for each */
static void pack_rows(const bplan *p, const void *src, int64_t bb, int64_t t, int64_t h, int n, int D, float *dst,
                      int ld)
{
    p->kr->gather((const char *)src + (size_t)tok_off(p->d, bb, t, h, D) * p->es, p->d->dtype, p->d->H * D, n, 1, D,
                  dst, ld, 0);
}

/* n rows into a [B,T,H,D] output */
static void store_rows(const bplan *p, void *dst, int64_t bb, int64_t t, int64_t h, int n, int D, const float *src,
                       int ld)
{
    for (int i = 0; i < n; i++)
        p->kr->store(src + (size_t)i * ld, p->d->dtype, (char *)dst + (size_t)tok_off(p->d, bb, t + i, h, D) * p->es, D);
}

/* Products with a triangular n x n left factor M (ld ldm), X n x cols (ld ldx):
 * Out = M X + Sin (Sin may be NULL), by bands of TRI_ROWS rows whose
 * reduction stops at the band's last nonzero column (lower: M[p][r] = 0 for
 * r > p) or starts at its first (upper: M[p][r] = 0 for r < p): about 60 %
 * of the full product at n = 64. The skipped terms are exact zeros. */
#define TRI_ROWS 12
static void tri_product(const sgla_cpu_kernels *kr, int upper, int n, int cols, const float *M, int ldm,
                        const float *X, int ldx, const float *Sin, float *Out, int ldo)
{
    for (int p0 = 0; p0 < n; p0 += TRI_ROWS) {
        const int rows = n - p0 < TRI_ROWS ? n - p0 : TRI_ROWS;
        const int r0 = upper ? p0 : 0, r1 = upper ? n : p0 + rows;
        kr->state(r1 - r0, rows, cols, M + (size_t)p0 * ldm + r0, ldm, X + (size_t)r0 * ldx, ldx, SGLA_CARRY_ONE,
                  Sin ? Sin + (size_t)p0 * ldo : NULL, Out + (size_t)p0 * ldo, ldo);
    }
}

/* The chunk's part of the state, S^T_out = a S^T_in + (w ⊙ V)^T K (Sin NULL: from zero, a not applied);
 * returns the chunk's carry a */
static sgla_carry chunk_state(const bplan *p, bscratch *s, int64_t bb, int64_t t, int64_t h, int n, const float *Sin,
                              float *Sout)
{
    const sgla_forward_desc *d = p->d;
    const sgla_cpu_kernels *kr = p->kr;
    const sgla_carry a = chunk_gates(p, s, bb, t, h, n, 0);
    pack_rows(p, d->k, bb, t, h, n, p->K, s->Kp, p->ldk);
    pack_rows(p, d->v, bb, t, h, n, p->V, s->Vp, p->ldv);
    kr->wrows(n, p->V, s->w, s->Vp, p->ldv, s->Vp, p->ldv);
    kr->trans(n, p->V, s->Vp, p->ldv, s->Vt, p->ldc);
    kr->state(n, p->V, p->K, s->Vt, p->ldc, s->Kp, p->ldk, Sin ? a : SGLA_CARRY_ONE, Sin, Sout, p->ldk);
    return a;
}

/* The gradient of the chunk's entering state from its end state's: dSout = a dSin + (rs ⊙ Q)^T dO (dSin
 * NULL: the chunk's part from zero), with Q, dO, rs of the chunk in s (Q weighted in place) */
static void chunk_dstate(const bplan *p, bscratch *s, int n, sgla_carry a, const float *dSin, float *dSout)
{
    const sgla_cpu_kernels *kr = p->kr;
    kr->wrows(n, p->K, s->rs, s->Q, p->ldk, s->Q, p->ldk);
    kr->trans(n, p->K, s->Q, p->ldk, s->Kt, p->ldc);
    kr->state(n, p->K, p->V, s->Kt, p->ldc, s->dO, p->ldv, dSin ? a : SGLA_CARRY_ONE, dSin, dSout, p->ldv);
}

/* The gradients of the chunk of n tokens at token t of head h, from St (S^T, its entering state) and dS
 * (the gradient of its end state, K x ldv): dq, dk, dv and dg written, val[r] (with a gate) the dg of
 * token r for the head's sum; returns the chunk's carry.  s->Q, s->dO are left packed (Q plain) for
 * the caller's dS step. */
static sgla_carry chunk_grads(const bplan *p, bscratch *s, int64_t bb, int64_t t, int64_t h, int n, const float *St,
                              const float *dS, double *val)
{
    const sgla_backward_desc *bd = p->b;
    const sgla_forward_desc *d = p->d;
    const sgla_cpu_kernels *kr = p->kr;
    const int K = p->K, V = p->V, ldk = p->ldk, ldv = p->ldv, ldc = p->ldc;
    const sgla_carry a = chunk_gates(p, s, bb, t, h, n, 1);
    pack_rows(p, d->q, bb, t, h, n, K, s->Q, ldk);
    pack_rows(p, d->k, bb, t, h, n, K, s->Kp, ldk);
    pack_rows(p, d->v, bb, t, h, n, V, s->Vp, ldv);
    pack_rows(p, bd->dout, bb, t, h, n, V, s->dO, ldv);
    kr->trans(n, K, s->Kp, ldk, s->Kt, ldc);
    kr->trans(n, V, s->Vp, ldv, s->Vt, ldc);
    /* A = G ⊙ QK^T; dP = tril(dO V^T) (G1: ones); dA = G ⊙ dP */
    kr->qk(n, K, s->Q, ldk, s->Kt, ldc, s->G, ldc, s->A, ldc);
    kr->qk(n, V, s->dO, ldv, s->Vt, ldc, s->G1, ldc, s->dP, ldc);
    for (int i = 0; i < n; i++) {
        const float *gr = s->G + (size_t)i * ldc, *pr = s->dP + (size_t)i * ldc;
        float *ar = s->dA + (size_t)i * ldc;
        for (int j = 0; j <= i; j++) ar[j] = gr[j] * pr[j];
        for (int j = i + 1; j < n; j++) ar[j] = 0.0f;
    }
    /* dQ = (rs ⊙ dO) S^T + dA K, the state part's dots with q (e, for dg) taken first, then the
     * triangular product added in place: each partial product is used while it is in cache */
    kr->wrows(n, V, s->rs, s->dO, ldv, s->rdO, ldv);
    kr->state(V, n, K, s->rdO, ldv, St, ldk, SGLA_CARRY_ONE, NULL, s->dQs, ldk);
    for (int r = 0; p->gate && r < n; r++) s->e[r] = kr->dot64(s->Q + (size_t)r * ldk, s->dQs + (size_t)r * ldk, K);
    tri_product(kr, 0, n, K, s->dA, ldc, s->Kp, ldk, s->dQs, s->dQs, ldk);
    /* dK = (w ⊙ V) dS^T + dA^T Q (u: the state part's dots with k) */
    kr->wrows(n, V, s->w, s->Vp, ldv, s->Vp, ldv); /* Vp's last plain use was Vt */
    kr->trans(K, V, dS, ldv, s->dSt, ldk);
    kr->state(V, n, K, s->Vp, ldv, s->dSt, ldk, SGLA_CARRY_ONE, NULL, s->dKs, ldk);
    for (int r = 0; p->gate && r < n; r++) s->u[r] = kr->dot64(s->Kp + (size_t)r * ldk, s->dKs + (size_t)r * ldk, K);
    kr->trans(n, n, s->dA, ldc, s->dAT, ldc);
    tri_product(kr, 1, n, K, s->dAT, ldc, s->Q, ldk, s->dKs, s->dKs, ldk);
    /* dV = (w ⊙ K) dS + A^T dO */
    kr->wrows(n, K, s->w, s->Kp, ldk, s->Kp, ldk); /* after Kt, dA K and the dots u */
    kr->state(K, n, V, s->Kp, ldk, dS, ldv, SGLA_CARRY_ONE, NULL, s->dVs, ldv);
    kr->trans(n, n, s->A, ldc, s->AT, ldc);
    tri_product(kr, 1, n, V, s->AT, ldc, s->dO, ldv, s->dVs, s->dVs, ldv);
    /* 3. the gate of token r: a <dS, S> + sum_{j<r} u_j + sum_{i>=r} e_i + sum_{i>=r, j<r} A_ij dP_ij */
    if (p->gate) {
        double ds = 0.0;
        for (int r = 0; r < V; r++) ds += kr->dot64(s->dSt + (size_t)r * ldk, St + (size_t)r * ldk, K);
        ds *= (double)a.a;
        for (int r = 0; r < n; r++) s->c4[r] = 0.0;
        /* c4_r = sum over i >= r of the row prefix sum_{j<r} A_ij dP_ij */
        for (int i = 1; i < n; i++) {
            const float *ar = s->A + (size_t)i * ldc, *pr = s->dP + (size_t)i * ldc;
            double pre = 0.0;
            for (int r = 1; r <= i; r++) {
                pre += (double)ar[r - 1] * (double)pr[r - 1];
                s->c4[r] += pre;
            }
        }
        double up = 0.0, es = 0.0;
        for (int r = 0; r < n; r++) es += s->e[r];
        float *dg = bd->dg ? (float *)bd->dg + ((bb * d->T + t) * d->H + h) : NULL;
        for (int r = 0; r < n; r++) {
            const double v = ds + up + es + s->c4[r];
            val[r] = v;
            if (dg) dg[(int64_t)r * d->H] = (float)v;
            up += s->u[r];
            es -= s->e[r];
        }
    }
    store_rows(p, bd->dq, bb, t, h, n, K, s->dQs, ldk);
    store_rows(p, bd->dk, bb, t, h, n, K, s->dKs, ldk);
    store_rows(p, bd->dv, bb, t, h, n, V, s->dVs, ldv);
    return a;
}

/* Sequence n_seq, head h; returns the head's sum of dg over the sequence. */
static double backward_item(const bplan *p, bscratch *s, int64_t n_seq, int64_t h)
{
    const sgla_backward_desc *bd = p->b;
    const sgla_forward_desc *d = p->d;
    const sgla_cpu_kernels *kr = p->kr;
    const int K = p->K, V = p->V, C = p->C, ldk = p->ldk, ldv = p->ldv;
    const size_t vkp = (size_t)V * ldk, kv = (size_t)K * V;
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n_seq, &bb, &t0, &t1);
    const int64_t nc = (t1 - t0 + C - 1) / C;

    /* 1. the entering state of every chunk (states[c] = S^T), and the end state states[nc];
     * S^T <- a S^T + (w ⊙ V)^T K sums the same products in the same order as S */
    const float *h0 = d->h0 ? (const float *)d->h0 + ((size_t)n_seq * d->H + h) * kv : NULL;
    if (h0) {
        kr->trans(K, V, h0, V, s->states, ldk);
    } else {
        for (int r = 0; r < V; r++) memset(s->states + (size_t)r * ldk, 0, (size_t)K * sizeof(float));
    }
    for (int64_t c = 0; c < nc; c++) {
        const int64_t t = t0 + c * C;
        const int n = (int)(t1 - t < C ? t1 - t : C);
        (void)chunk_state(p, s, bb, t, h, n, s->states + (size_t)c * vkp, s->states + (size_t)(c + 1) * vkp);
    }

    /* 2. the chunks in reverse, dS from dht */
    const float *dht = bd->dht ? (const float *)bd->dht + ((size_t)n_seq * d->H + h) * kv : NULL;
    for (int r = 0; r < K; r++) {
        float *row = s->dS + (size_t)r * ldv;
        if (dht) memcpy(row, dht + (size_t)r * V, (size_t)V * sizeof(float));
        else memset(row, 0, (size_t)V * sizeof(float));
    }
    double dg_sum = 0.0;
    for (int64_t c = nc - 1; c >= 0; c--) {
        const int64_t t = t0 + c * C;
        const int n = (int)(t1 - t < C ? t1 - t : C);
        const sgla_carry a = chunk_grads(p, s, bb, t, h, n, s->states + (size_t)c * vkp, s->dS, s->val);
        for (int r = 0; p->gate && r < n; r++) dg_sum += s->val[r];
        chunk_dstate(p, s, n, a, s->dS, s->dS); /* the entering state's gradient */
    }
    if (bd->dh0) {
        float *dh0 = (float *)bd->dh0 + ((size_t)n_seq * d->H + h) * kv;
        for (int r = 0; r < K; r++) memcpy(dh0 + (size_t)r * V, s->dS + (size_t)r * ldv, (size_t)V * sizeof(float));
    }
    return dg_sum;
}

static int64_t item_chunks(const sgla_forward_desc *d, int64_t n, int C)
{
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n, &bb, &t0, &t1);
    return (t1 - t0 + C - 1) / C;
}

/* ---- one item split along the sequence (called by every thread of the parallel region) ---- */

/* The split's shared buffers: the entering states S (S^T, V x ldk each) of every chunk (keep) or of one
 * window's chunks; a window's end-state gradients dSw (K x ldv each); the state entering every window
 * (ck, V x ldk each, nw + 1 of them); the running dS rows; each chunk's carry and its tokens' dg (C a
 * chunk, with a gate) */
typedef struct bsplit {
    float *S, *dSw, *ck, *run;
    sgla_carry *carry;
    double *val;
    int64_t win; /* chunks a window */
    int keep;    /* S holds every chunk's state */
    float *mem;  /* the block they lie in (sgla_cpu_scratch_take) */
} bsplit;

#define SPLIT_ROWS 8 /* state rows a scan task */
/* The split keeps every chunk's state up to this size, else computes them twice: on a 2-vCPU Intel VM,
 * keeping them was 8-10 % faster up to 28 MB of states and 15 % slower from 38 MB (docs/perf-cpu.md,
 * session 53) */
#define SPLIT_KEEP_BYTES (24.0 * 1024 * 1024)

/* Block ib of SPLIT_ROWS rows of S^T scanned over the chunks [w0, w1), whose parts lie in Sw (each left
 * holding its chunk's entering state): from the rows at `from` (NULL: h0's, or zeros) to those at `to` */
static void scan_state_rows(const bplan *p, const bsplit *sp, int64_t ib, const float *h0, const float *from, float *to,
                            float *Sw, int64_t w0, int64_t w1)
{
    const int K = p->K, V = p->V, ldk = p->ldk;
    const size_t vkp = (size_t)V * ldk;
    for (int64_t r = ib * SPLIT_ROWS; r < V && r < (ib + 1) * SPLIT_ROWS; r++) {
        float *cr = to + (size_t)r * ldk;
        if (!from)
            for (int k = 0; k < K; k++) cr[k] = h0 ? h0[(size_t)k * V + r] : 0.0f;
        else if (from != to)
            memcpy(cr, from + (size_t)r * ldk, (size_t)K * sizeof(float));
        for (int64_t c = w0; c < w1; c++) p->kr->scan(K, sp->carry[c], cr, Sw + (size_t)(c - w0) * vkp + (size_t)r * ldk);
    }
}

/* Sequence n_seq, head h, as backward_item, in windows of chunks (about 1 MiB of states each, so that
 * they stay in cache between the passes over them).  1: the windows in order: the chunks' state parts in
 * parallel, then an elementwise scan across them; ck[w] keeps the state entering window w.  2: the windows
 * from the last: the dS parts in parallel, scanned back elementwise from the next window's; the window's
 * gradients in parallel.  Unless every chunk's state was kept (keep: up to SPLIT_KEEP_BYTES), step 2
 * computes the window's state parts again and scans them from ck[w]: twice the state products, but only
 * a window's states in memory, where keeping a long sequence's states cost more in memory traffic. The
 * head's dg sum is left to the caller, from sp->val. */
static void item_split(const bplan *p, bscratch *s, const bsplit *sp, int64_t n_seq, int64_t h)
{
    const sgla_backward_desc *bd = p->b;
    const sgla_forward_desc *d = p->d;
    const sgla_cpu_kernels *kr = p->kr;
    const int K = p->K, V = p->V, C = p->C, ldk = p->ldk, ldv = p->ldv;
    const size_t vkp = (size_t)V * ldk, kvp = (size_t)K * ldv, kv = (size_t)K * V;
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n_seq, &bb, &t0, &t1);
    const int64_t nc = (t1 - t0 + C - 1) / C, win = sp->win, nw = (nc + win - 1) / win;
    const float *h0 = d->h0 ? (const float *)d->h0 + ((size_t)n_seq * d->H + h) * kv : NULL;
    const float *dht = bd->dht ? (const float *)bd->dht + ((size_t)n_seq * d->H + h) * kv : NULL;
    float *dh0 = bd->dh0 ? (float *)bd->dh0 + ((size_t)n_seq * d->H + h) * kv : NULL;
    const int64_t nvb = (V + SPLIT_ROWS - 1) / SPLIT_ROWS, nkb = (K + SPLIT_ROWS - 1) / SPLIT_ROWS;

    /* 1. per element of S^T, (s, D_c) -> (a_c s + D_c, s) over the chunks in order (kept: every window;
     * else all but the last, whose entering state is all step 2 needs); ck[w] the state entering window
     * w > 0 (window 0 starts from h0) */
    for (int64_t w = 0; w < (sp->keep ? nw : nw - 1); w++) {
        const int64_t w0 = w * win, w1 = w0 + win < nc ? w0 + win : nc;
        float *Sw = sp->S + (sp->keep ? (size_t)w0 * vkp : 0);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t c = w0; c < w1; c++) {
            const int64_t t = t0 + c * C;
            const int n = (int)(t1 - t < C ? t1 - t : C);
            sp->carry[c] = chunk_state(p, s, bb, t, h, n, NULL, Sw + (size_t)(c - w0) * vkp);
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t ib = 0; ib < nvb; ib++)
            scan_state_rows(p, sp, ib, h0, w ? sp->ck + (size_t)w * vkp : NULL, sp->ck + (size_t)(w + 1) * vkp, Sw, w0,
                            w1);
    }
    /* 2. the windows from the last */
    for (int64_t w = nw - 1; w >= 0; w--) {
        const int64_t w0 = w * win, w1 = w0 + win < nc ? w0 + win : nc;
        float *Sw = sp->S + (sp->keep ? (size_t)w0 * vkp : 0);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t c = w0; c < w1; c++) {
            const int64_t t = t0 + c * C;
            const int n = (int)(t1 - t < C ? t1 - t : C);
            if (sp->keep) (void)chunk_gates(p, s, bb, t, h, n, 0);
            else sp->carry[c] = chunk_state(p, s, bb, t, h, n, NULL, Sw + (size_t)(c - w0) * vkp);
            pack_rows(p, d->q, bb, t, h, n, K, s->Q, ldk);
            pack_rows(p, bd->dout, bb, t, h, n, V, s->dO, ldv);
            chunk_dstate(p, s, n, SGLA_CARRY_ONE, NULL, sp->dSw + (size_t)(c - w0) * kvp);
        }
        /* the states forward from ck[w] (rows of S^T; not kept), dS back (rows of dS) */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t ib = sp->keep ? nvb : 0; ib < nvb + nkb; ib++) {
            if (ib < nvb) {
                scan_state_rows(p, sp, ib, h0, w ? sp->ck + (size_t)w * vkp : NULL, sp->ck + (size_t)w * vkp, Sw, w0, w1);
            } else {
                for (int64_t r = (ib - nvb) * SPLIT_ROWS; r < K && r < (ib - nvb + 1) * SPLIT_ROWS; r++) {
                    float *cr = sp->run + (size_t)r * ldv;
                    if (w == nw - 1) {
                        if (dht) memcpy(cr, dht + (size_t)r * V, (size_t)V * sizeof(float));
                        else memset(cr, 0, (size_t)V * sizeof(float));
                    }
                    for (int64_t c = w1 - 1; c >= w0; c--)
                        kr->scan(V, sp->carry[c], cr, sp->dSw + (size_t)(c - w0) * kvp + (size_t)r * ldv);
                    if (w == 0 && dh0) memcpy(dh0 + (size_t)r * V, cr, (size_t)V * sizeof(float));
                }
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t c = w0; c < w1; c++) {
            const int64_t t = t0 + c * C;
            const int n = (int)(t1 - t < C ? t1 - t : C);
            (void)chunk_grads(p, s, bb, t, h, n, Sw + (size_t)(c - w0) * vkp, sp->dSw + (size_t)(c - w0) * kvp,
                              sp->val ? sp->val + (size_t)c * C : s->val);
        }
        /* (implicit barrier: the next window's parts overwrite these) */
    }
}

/* the head's dg sum in backward_item's order: chunks from the last, tokens in order */
static double split_dg_sum(const bplan *p, const bsplit *sp, int64_t n_seq)
{
    int64_t bb, t0, t1;
    sgla_seq_bounds(p->d, n_seq, &bb, &t0, &t1);
    double sum = 0.0;
    for (int64_t c = (t1 - t0 + p->C - 1) / p->C - 1; c >= 0; c--) {
        const int64_t t = t0 + c * p->C;
        const int n = (int)(t1 - t < p->C ? t1 - t : p->C);
        for (int r = 0; r < n; r++) sum += sp->val[(size_t)c * p->C + r];
    }
    return sum;
}

sgla_status sgla_cpu_backward(const sgla_backward_desc *b, sgla_backend kind)
{
    (void)kind;
    const sgla_forward_desc *d = b->fwd;
    sgla_status ok = sgla_cpu_supports(d);
    if (ok != SGLA_OK) return ok;
    /* No token and no dh0: only dg_gamma (a sum over no tokens) to write.  As
     * for the forward, an empty input may claim 2^40 heads. */
    if (d->B * d->T == 0 && !b->dh0) {
        if (b->dg_gamma) memset(b->dg_gamma, 0, (size_t)d->H * sizeof(float));
        return SGLA_OK;
    }
    bplan p;
    memset(&p, 0, sizeof p);
    p.b = b;
    p.d = d;
    p.kr = sgla_cpu_kernels_current();
    /* The compute block: the caller's chunk, capped at 32 tokens where a head is small (K or V <= 64,
     * the other <= 128).  Per token the backward's five triangular products grow with the block and
     * its state-sized steps per block (dS^T, <dS, S>, the kept state) shrink with it; at 32 they
     * balance there (4x2048x16x64: -9 %; K = V = 128 equal, K = V = 256 slower: docs/perf-cpu.md,
     * session 29).  Exact for any block length; the block depends on the shape alone. */
    const int small = (d->K <= 64 && d->V <= 128) || (d->K <= 128 && d->V <= 64);
    p.C = (int)(small && d->chunk > 32 ? 32 : d->chunk);
    p.K = (int)d->K;
    p.V = (int)d->V;
    p.ldk = (int)round_up(p.K, 16) + 16;
    p.ldv = (int)round_up(p.V, 16) + 16;
    p.ldc = (int)round_up(p.C, 16) + 16;
    p.es = sgla_dtype_size(d->dtype);
    p.gate = d->g ? 2 : d->g_gamma ? 1 : 0;
    const int64_t N = sgla_num_sequences(d), items = N * d->H;
    const int64_t ncm = (sgla_max_seq_len(d) + p.C - 1) / p.C;
    double *dg_part = d->g_gamma && b->dg_gamma ? calloc((size_t)items, sizeof(double)) : NULL;
    if (d->g_gamma && b->dg_gamma && !dg_part)
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "CPU backward: %lld partial sums", (long long)items);

    /* Split the sequences (item_split) where that keeps more threads busy; its thread time over the whole
     * item's, on two threads: 0.97-1.17x where the states are kept, 1.21x where they are computed twice
     * (docs/perf-cpu.md, session 53) */
    const int keep = (double)ncm * p.V * p.ldk * sizeof(float) <= SPLIT_KEEP_BYTES;
    const int fsplit = sgla_cpu_forced_split();
    int64_t split_min, whole_max;
    sgla_cpu_split_plan(d, p.C, keep ? 1.125 : 1.25, fsplit, &split_min, &whole_max);
    int split = split_min != INT64_MAX;
    int nth = sgla_cpu_threads(d->threads, split ? ncm : items);
    bsplit sp;
    memset(&sp, 0, sizeof sp);
    if (split) {
        /* a window: about 1 MiB of states and as much of dS, two chunks a thread (as the forward's split,
         * cpu_forward.c) */
        const double vkp = (double)p.V * p.ldk, kvp = (double)p.K * p.ldv;
        const int64_t w = (int64_t)(1024.0 * 1024 / ((vkp > kvp ? vkp : kvp) * sizeof(float)));
        sp.win = w > 2 * (int64_t)nth ? w : 2 * (int64_t)nth;
        if (sp.win > ncm) sp.win = ncm;
        const int64_t nw = (ncm + sp.win - 1) / sp.win;
        sp.keep = keep && fsplit != 2;
        /* one block from the scratch pool (kept between calls: megabytes mapped afresh each call cost
         * their page faults), in floats */
        const double parts[6] = {(double)(sp.keep ? ncm : sp.win) * vkp, (double)sp.win * kvp, (double)(nw + 1) * vkp,
                                 kvp, (double)ncm * (sizeof(sgla_carry) / sizeof(float)),
                                 dg_part ? (double)ncm * p.C * (sizeof(double) / sizeof(float)) : 0.0};
        double total = 0.0;
        for (int i = 0; i < 6; i++) total += parts[i] + 16;
        if (total * sizeof(float) < (double)SIZE_MAX / 4) {
            sp.mem = sgla_cpu_scratch_take((size_t)total);
        }
        if (sp.mem) {
            float *m = sp.mem;
            float **dst[4] = {&sp.S, &sp.dSw, &sp.ck, &sp.run};
            for (int i = 0; i < 4; i++) *dst[i] = m, m += round_up((int64_t)parts[i], 16);
            sp.carry = (sgla_carry *)(void *)m;
            m += round_up((int64_t)parts[4], 16);
            sp.val = dg_part ? (double *)(void *)m : NULL;
        }
        if (!sp.mem) {
            split = 0; /* the same results without the split, slower */
            nth = sgla_cpu_threads(d->threads, items);
        }
    }
    /* a thread's scratch keeps the states of a whole item where items run whole (on the split, those of
     * the items too short to split) */
    p.ncm = split ? whole_max : ncm;
    bscratch probe;
    const size_t floats = bscratch_floats(&p, &probe, NULL);
    int fail = (double)floats * sizeof(float) > (double)SIZE_MAX / 4;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth) if (nth > 1 && !fail)
#endif
    {
        const sgla_fpmode fpm = sgla_fpmode_enter();
        bscratch s;
        float *mem = fail ? NULL : sgla_cpu_scratch_take(floats);
        if (!mem) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            fail = 1;
        } else {
            bscratch_floats(&p, &s, mem);
            /* G: zero above the diagonal for good (gmask writes only below);
             * G1: the causal mask of dO V^T, the same for every chunk */
            for (int i = 0; i < p.C; i++)
                for (int j = 0; j < p.C; j++) {
                    s.G[(size_t)i * p.ldc + j] = 0.0f;
                    s.G1[(size_t)i * p.ldc + j] = j <= i ? 1.0f : 0.0f;
                }
        }
        /* every thread runs the loop (its iterations are shared); a failed
         * allocation anywhere makes every thread skip the work, so nothing
         * is written */
        int failed;
#ifdef _OPENMP
#pragma omp barrier
#pragma omp atomic read
#endif
        failed = fail;
        if (!failed && split) {
            /* items shorter than split_min run whole, the others one after another on every thread */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
            for (int64_t it = 0; it < items; it++)
                if (item_chunks(d, it / d->H, p.C) < split_min) {
                    const double sum = backward_item(&p, &s, it / d->H, it % d->H);
                    if (dg_part) dg_part[it] = sum;
                }
            for (int64_t it = 0; it < items; it++)
                if (item_chunks(d, it / d->H, p.C) >= split_min) {
                    item_split(&p, &s, &sp, it / d->H, it % d->H);
                    /* (sp.val is next written after barriers this thread passes too) */
#ifdef _OPENMP
#pragma omp master
#endif
                    if (dg_part) dg_part[it] = split_dg_sum(&p, &sp, it / d->H);
                }
        } else if (!failed) {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
            for (int64_t it = 0; it < items; it++) {
                const double sum = backward_item(&p, &s, it / d->H, it % d->H);
                if (dg_part) dg_part[it] = sum;
            }
        }
        sgla_cpu_scratch_give(mem);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* drains the outputs' streaming stores (kr->store) */
        sgla_fpmode_leave(fpm);
    }
    sgla_cpu_scratch_give(sp.mem);
    if (fail) {
        free(dg_part);
        return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "CPU backward: %zu bytes of scratch a thread", floats * sizeof(float));
    }
    if (dg_part) {
        for (int64_t h = 0; h < d->H; h++) {
            double acc = 0.0;
            for (int64_t n = 0; n < N; n++) acc += dg_part[n * d->H + h];
            ((float *)b->dg_gamma)[h] = (float)acc;
        }
        free(dg_part);
    }
    return SGLA_OK;
}
