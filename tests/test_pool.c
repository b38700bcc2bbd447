/* The state pool (sgla.h, experimental) on ref-a and the CPU backend, each
 * against the same computation done with plain calls (no pool): every
 * sequence's entering state copied out of its slot by hand, run alone, its
 * final (or per-token) states put back by hand.  Every edge: padded rows,
 * fresh and continuing requests, packed batches that mix prefills and single
 * decode tokens, speculative steps with every acceptance count, both pool
 * layouts, 32- and 64-bit indices; then the refusals (out-of-range slots and
 * counts, two writes to one slot, ht given, other backends, the backward),
 * each leaving the pool and o untouched. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "testutil.h"

enum { H = 2, K = 8, V = 12, KV = K * V, SLOTS = 9 };

typedef struct pcase {
    int nseq, t_max, v_first, bits64, inplace;
    int64_t len[6];        /* tokens of each sequence (packed) */
    int64_t idx[6][4];     /* [n] or [n][t] */
    int fresh[6];          /* has_initial_state[n] == 0 */
    int64_t accepted[6];   /* with t_max: num_accepted */
    sgla_dtype dt;         /* of q, k, v, o (0: f32) */
} pcase;

static float pool0[SLOTS * H * KV];

/* element (s, h, i, j) of a pool in its layout */
static size_t at(int vf, int64_t s, int64_t h, int64_t i, int64_t j)
{
    return (size_t)((s * H + h) * KV + (vf ? j * K + i : i * V + j));
}

/* the larger of a and b, NaN when either is (fmax drops a NaN: unwritten o would pass) */
static double worse(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

/* The worst error of the call over its bar (<= 1 passes): the pool (fp32) and fp32 o at 1e-6 on ref-a,
 * 2e-5 on the CPU; o in 16 bits, rounded once by each side, at the conformance bars */
static double run_case(const pcase *c, sgla_backend be, tu_rng *r, int64_t *checked)
{
    int64_t T = 0, cu[7] = {0};
    for (int n = 0; n < c->nseq; n++) cu[n + 1] = cu[n] + c->len[n], T += c->len[n];
    const int64_t nqk = T * H * K, nv = T * H * V;
    const sgla_dtype dt = c->dt;
    const size_t es = sgla_dtype_size(dt);
    const double bar = be == SGLA_BACKEND_REF_A ? 1e-6 : 2e-5, obar = dt == SGLA_F16 ? 1e-3 : dt == SGLA_BF16 ? 8e-3 : bar;
    char *q = malloc((size_t)(nqk + 1) * es), *k = malloc((size_t)(nqk + 1) * es), *v = malloc((size_t)(nv + 1) * es);
    char *ot = malloc((size_t)(nv + 1) * es), *o2t = malloc((size_t)(nv + 1) * es);
    float *g = malloc((size_t)(T * H + 1) * 4);
    double *o = malloc((size_t)(nv + 1) * 8), *o2 = malloc((size_t)(nv + 1) * 8);
    float pool[SLOTS * H * KV], want[SLOTS * H * KV];
    tu_fill(r, q, dt, nqk, 1.0), tu_fill(r, k, dt, nqk, 1.0), tu_fill(r, v, dt, nv, 1.0);
    for (int64_t i = 0; i < T * H; i++) g[i] = (float)-tu_uniform_range(r, 0, 0.4);
    memcpy(pool, pool0, sizeof pool);
    memcpy(want, pool0, sizeof want);
    int32_t i32[24], a32[6];
    int64_t i64[24], a64[6];
    const int tm = c->t_max ? c->t_max : 1;
    for (int n = 0; n < c->nseq; n++) {
        for (int t = 0; t < tm; t++) i32[n * tm + t] = (int32_t)c->idx[n][t], i64[n * tm + t] = c->idx[n][t];
        a32[n] = (int32_t)c->accepted[n], a64[n] = c->accepted[n];
    }
    unsigned char his[6];
    for (int n = 0; n < c->nseq; n++) his[n] = !c->fresh[n];
    sgla_state_pool p = {SLOTS, c->bits64 ? (const void *)i64 : (const void *)i32, c->bits64 ? 64 : 32,
                         c->t_max, his, NULL, (c->inplace ? SGLA_POOL_INPLACE : 0u) | (c->v_first ? SGLA_POOL_V_FIRST : 0u)};
    if (c->t_max) p.num_accepted = c->bits64 ? (const void *)a64 : (const void *)a32;
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.g = g, d.o = ot, d.h0 = pool, d.pool = &p, d.dtype = dt;
    d.B = 1, d.T = T, d.H = H, d.K = K, d.V = V, d.scale = 0.3f, d.chunk = 4;
    d.cu_seqlens = cu, d.num_seqs = c->nseq;
    tu_poison(ot, dt, nv);
    sgla_status st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_OK, "pool call (%s): %s (%s)", sgla_backend_name(be), sgla_status_string(st), sgla_last_error());
    tu_to_double(ot, dt, nv, o);
    /* the same by plain calls, one sequence (and, with t_max, one token) at a time */
    double err = 0, num = 0, den = 0;
    for (int n = 0; n < c->nseq; n++) {
        const int64_t rs = c->t_max ? c->idx[n][c->accepted[n] - 1] : c->idx[n][0];
        if (rs < 0) { /* padded: o is 0 */
            for (int64_t i = cu[n] * H * V; i < cu[n + 1] * H * V; i++) err = worse(err, fabs(o[i]) / obar), (*checked)++;
            continue;
        }
        float S[H * KV];
        for (int h = 0; h < H; h++)
            for (int i = 0; i < K; i++)
                for (int j = 0; j < V; j++) S[h * KV + i * V + j] = c->fresh[n] ? 0.f : pool0[at(c->v_first, rs, h, i, j)];
        const int64_t steps = c->t_max ? c->len[n] : 1, per = c->t_max ? 1 : c->len[n];
        for (int64_t st0 = 0; st0 < steps; st0++) {
            const int64_t t0 = cu[n] + st0 * per;
            sgla_forward_desc e;
            sgla_forward_desc_init(&e);
            e.q = q + t0 * H * K * es, e.k = k + t0 * H * K * es, e.v = v + t0 * H * V * es, e.g = g + t0 * H;
            e.o = o2t + t0 * H * V * es, e.dtype = dt;
            e.h0 = S, e.ht = S, e.B = 1, e.T = per, e.H = H, e.K = K, e.V = V, e.scale = 0.3f, e.chunk = 4;
            TU_CHECK(sgla_forward(&e, SGLA_BACKEND_REF_A) == SGLA_OK, "plain call: %s", sgla_last_error());
            const int64_t ws = !c->inplace ? -1 : c->t_max ? c->idx[n][st0] : c->idx[n][0];
            if (ws >= 0)
                for (int h = 0; h < H; h++)
                    for (int i = 0; i < K; i++)
                        for (int j = 0; j < V; j++) want[at(c->v_first, ws, h, i, j)] = S[h * KV + i * V + j];
        }
        tu_to_double(o2t + cu[n] * H * V * es, dt, (cu[n + 1] - cu[n]) * H * V, o2 + cu[n] * H * V);
        for (int64_t i = cu[n] * H * V; i < cu[n + 1] * H * V; i++)
            num += (o[i] - o2[i]) * (o[i] - o2[i]), den += (double)o2[i] * o2[i], (*checked)++;
    }
    double pn = 0, pd = 0;
    for (int i = 0; i < SLOTS * H * KV; i++) pn += (pool[i] - want[i]) * (pool[i] - want[i]), pd += (double)want[i] * want[i];
    err = worse(err, (den > 0 ? sqrt(num / den) : sqrt(num)) / obar); /* all-zero o2: absolute, NaN kept */
    err = worse(err, sqrt(pn / pd) / bar);
    *checked += SLOTS * H * KV;
    free(q), free(k), free(v), free(g), free(o), free(o2), free(ot), free(o2t);
    return isnan(err) ? INFINITY : err;
}

/* a call that must be refused with `want`, leaving pool and o untouched */
static void refused(const char *what, sgla_backend be, const sgla_state_pool *p, int64_t T, const int64_t *cu,
                    int nseq, int with_ht, sgla_status want)
{
    static float q[64 * H * K], k[64 * H * K], v[64 * H * V], o[64 * H * V], ht[8 * H * KV];
    float pool[SLOTS * H * KV];
    memcpy(pool, pool0, sizeof pool);
    for (int i = 0; i < 64 * H * K; i++) q[i] = k[i] = 0.25f;
    for (int i = 0; i < 64 * H * V; i++) v[i] = 0.5f, o[i] = -9.f;
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.o = o, d.h0 = pool, d.pool = p, d.ht = with_ht ? ht : NULL;
    d.B = 1, d.T = T, d.H = H, d.K = K, d.V = V, d.cu_seqlens = cu, d.num_seqs = nseq;
    const sgla_status st = sgla_forward(&d, be);
    TU_CHECK(st == want, "%s (%s): %s, want %s (%s)", what, sgla_backend_name(be), sgla_status_string(st),
             sgla_status_string(want), sgla_last_error());
    int same = !memcmp(pool, pool0, sizeof pool);
    for (int i = 0; i < T * H * V; i++) same &= o[i] == -9.f;
    TU_CHECK(same, "%s (%s): the refused call wrote the pool or o", what, sgla_backend_name(be));
}

/* A pool given SGLA_POOL_INPLACE is written: an input inside it is refused (it was read after its slots
 * were rewritten), as are outputs over its index arrays; a pool only read may share memory with inputs. */
static void overlaps(sgla_backend be)
{
    static float buf[SLOTS * H * KV + 4 * H * K], k[4 * H * K], v[4 * H * V], o[4 * H * V];
    float *pool = buf, *q = buf + SLOTS * H * KV - 8; /* q's first 8 values are the pool's last */
    static float before[sizeof buf / sizeof buf[0]];
    int32_t idx[2] = {5, 6};
    const int64_t cu[3] = {0, 3, 4};
    memcpy(pool, pool0, sizeof pool0);
    for (int i = SLOTS * H * KV; i < (int)(sizeof buf / sizeof buf[0]); i++) buf[i] = 0.25f;
    for (int i = 0; i < 4 * H * K; i++) k[i] = 0.25f;
    for (int i = 0; i < 4 * H * V; i++) v[i] = 0.5f, o[i] = -9.f;
    memcpy(before, buf, sizeof buf);
    sgla_state_pool p = {SLOTS, idx, 32, 0, NULL, NULL, SGLA_POOL_INPLACE, NULL};
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.o = o, d.h0 = pool, d.pool = &p;
    d.B = 1, d.T = 4, d.H = H, d.K = K, d.V = V, d.cu_seqlens = cu, d.num_seqs = 2;
    sgla_status st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_ERR_OVERLAP && !memcmp(buf, before, sizeof buf) && o[0] == -9.f,
             "q inside a pool written in place (%s): %s (%s)", sgla_backend_name(be), sgla_status_string(st),
             sgla_last_error());
    p.flags = 0; /* only read: q may lie in it */
    st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_OK && !memcmp(buf, before, sizeof buf), "q inside a pool only read (%s): %s (%s)",
             sgla_backend_name(be), sgla_status_string(st), sgla_last_error());
    p.flags = SGLA_POOL_INPLACE;
    d.q = k;
    for (int i = 0; i < 4 * H * V; i++) o[i] = -9.f;
    p.indices = (const int32_t *)(const void *)(o + 1); /* o written over the slot indices */
    st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_ERR_OVERLAP && o[1] == -9.f, "o over the pool's indices (%s): %s (%s)", sgla_backend_name(be),
             sgla_status_string(st), sgla_last_error());
    p.indices = idx;
    int64_t *cin = (int64_t *)(void *)(pool + 16); /* cu_seqlens inside the pool (a slot overwrote it) */
    cin[0] = 0, cin[1] = 3, cin[2] = 4;
    d.cu_seqlens = cin;
    memcpy(before, buf, sizeof buf);
    st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_ERR_OVERLAP && !memcmp(buf, before, sizeof buf), "cu_seqlens inside a pool written in place (%s): %s (%s)",
             sgla_backend_name(be), sgla_status_string(st), sgla_last_error());
    d.cu_seqlens = cu;
    /* indices [N][t_max] past 2^62 bytes: a size error, whatever is trusted (t_max * N was unchecked) */
    p.t_max = (int64_t)1 << 62, d.flags = SGLA_FLAG_SKIP_VALUE_CHECK;
    st = sgla_forward(&d, be);
    TU_CHECK(st == SGLA_ERR_SIZE_OVERFLOW && !memcmp(buf, before, sizeof buf), "t_max 2^62 (%s): %s (%s)",
             sgla_backend_name(be), sgla_status_string(st), sgla_last_error());
}

int main(void)
{
    uint64_t seed = tu_seed("test_pool");
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_fill(&r, pool0, SGLA_F32, SLOTS * H * KV, 1.0);
    static const pcase cases[] = {
        /* nseq, t_max, v_first, bits64, inplace, len, idx, fresh, accepted */
        {3, 0, 0, 0, 1, {5, 1, 9}, {{4}, {0}, {7}}, {0, 0, 1}, {0}},                  /* prefill, decode, fresh prefill */
        {4, 0, 1, 1, 1, {1, 1, 6, 1}, {{2}, {-1}, {5}, {8}}, {0, 0, 0, 1}, {0}},     /* V-first, a padded row */
        {2, 0, 0, 1, 0, {7, 3}, {{1}, {3}}, {0, 0}, {0}},                            /* not in place: pool unchanged */
        {5, 0, 0, 0, 1, {1, 1, 1, 1, 1}, {{0}, {1}, {2}, {-1}, {4}}, {0, 1, 0, 0, 0}, {0}}, /* a decode batch */
        {3, 4, 0, 0, 1, {4, 2, 3}, {{0, 1, 2, 3}, {4, 5, -1, -1}, {6, 7, 8, -1}}, {0, 0, 0}, {1, 2, 3}},
        {3, 4, 1, 1, 1, {4, 4, 1}, {{0, 1, 2, 3}, {4, 5, 6, 7}, {-1, 8, -1, -1}}, {0, 1, 0}, {4, 1, 1}},
        {2, 3, 0, 0, 1, {3, 3}, {{0, -1, 2}, {3, 4, 5}}, {0, 0}, {3, 2}},             /* a -1 slot mid-step */
        /* slot 5 written by the first sequence and read by the second (its one token writes slot 6): the
         * CPU gathers the entering states before any step writes */
        {2, 2, 0, 0, 1, {2, 1}, {{0, 5}, {6, 5}}, {0, 0}, {1, 2}},
        {2, 2, 1, 1, 1, {2, 1}, {{0, 5}, {6, 5}}, {0, 0}, {1, 2}},
    };
    const sgla_backend bes[2] = {SGLA_BACKEND_REF_A, SGLA_BACKEND_CPU};
    int64_t checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int b = 0; b < 2; b++) {
            const double e = run_case(&cases[i], bes[b], &r, &checked);
            printf("%s case %zu: worst rel error / bar %.2e\n", sgla_backend_name(bes[b]), i, e);
            TU_CHECK(e <= 1, "%s case %zu: error %.3e x the bar", sgla_backend_name(bes[b]), i, e);
        }
    /* the CPU's sequence split (long sequences, few items) on the same batches, both layouts */
    sgla_cpu_force_split(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double e = run_case(&cases[i], SGLA_BACKEND_CPU, &r, &checked);
        TU_CHECK(e <= 1, "cpu (split forced) case %zu: error %.3e x the bar", i, e);
    }
    sgla_cpu_force_split(-1);
    /* random batches: any mix of lengths (0 included), padding, fresh rows, layouts, index widths,
     * speculative steps with random acceptance; write slots drawn without replacement */
    for (int it = 0; it < 40; it++) {
        pcase c;
        memset(&c, 0, sizeof c);
        c.nseq = 1 + (int)(tu_uniform(&r) * 6);
        c.t_max = tu_uniform(&r) < 0.4 ? 1 + (int)(tu_uniform(&r) * 4) : 0;
        c.v_first = tu_uniform(&r) < 0.5, c.bits64 = tu_uniform(&r) < 0.5, c.inplace = tu_uniform(&r) < 0.8;
        c.dt = (sgla_dtype)(it % 3); /* f32, f16, bf16: the GPU pool test takes this CPU path as its reference */
        int64_t perm[SLOTS];
        for (int i = 0; i < SLOTS; i++) perm[i] = i;
        for (int i = SLOTS - 1; i > 0; i--) {
            const int j = (int)(tu_uniform(&r) * (i + 1));
            const int64_t x = perm[i];
            perm[i] = perm[j], perm[j] = x;
        }
        int next = 0;
        for (int n = 0; n < c.nseq; n++) {
            const int tm = c.t_max ? c.t_max : 1;
            c.len[n] = c.t_max ? (int64_t)(tu_uniform(&r) * (c.t_max + 1)) : (int64_t)(tu_uniform(&r) * 9);
            c.fresh[n] = tu_uniform(&r) < 0.2;
            c.accepted[n] = 1 + (int64_t)(tu_uniform(&r) * tm);
            for (int t = 0; t < tm; t++)
                c.idx[n][t] = tu_uniform(&r) < 0.15 || next >= SLOTS ? -1 : perm[next++];
            if (c.idx[n][c.t_max ? c.accepted[n] - 1 : 0] < 0 && tu_uniform(&r) < 0.5 && next < SLOTS)
                c.idx[n][c.t_max ? c.accepted[n] - 1 : 0] = perm[next++]; /* fewer padded rows */
        }
        for (int b = 0; b < 2; b++) {
            const double e = run_case(&c, bes[b], &r, &checked);
            TU_CHECK(e <= 1, "%s random %s case %d: error %.3e x the bar", sgla_backend_name(bes[b]),
                     sgla_dtype_name(c.dt), it, e);
        }
    }
    printf("%lld values compared\n", (long long)checked);

    /* refusals */
    const int64_t cu2[3] = {0, 3, 4};
    int32_t bad_hi[2] = {1, SLOTS}, bad_lo[2] = {1, -2}, dup[2] = {5, 5}, ok2[2] = {5, 6};
    for (int b = 0; b < 2; b++) {
        sgla_state_pool p = {SLOTS, bad_hi, 32, 0, NULL, NULL, SGLA_POOL_INPLACE};
        refused("slot = slots", bes[b], &p, 4, cu2, 2, 0, SGLA_ERR_POOL_INDEX);
        p.indices = bad_lo;
        refused("slot -2", bes[b], &p, 4, cu2, 2, 0, SGLA_ERR_POOL_INDEX);
        p.indices = dup;
        refused("two writes to one slot", bes[b], &p, 4, cu2, 2, 0, SGLA_ERR_POOL_CONFLICT);
        p.flags = 0; /* two reads of one slot are fine */
        p.indices = ok2;
        refused("ht with a pool", bes[b], &p, 4, cu2, 2, 1, SGLA_ERR_INVALID_ARGUMENT);
        int32_t sp[2][2] = {{1, 2}, {3, 4}}, acc_bad[2] = {1, 3}, acc0[2] = {0, 1};
        sgla_state_pool s = {SLOTS, sp, 32, 2, NULL, acc_bad, SGLA_POOL_INPLACE};
        const int64_t cu22[3] = {0, 2, 4};
        refused("num_accepted > t_max", bes[b], &s, 4, cu22, 2, 0, SGLA_ERR_POOL_INDEX);
        s.num_accepted = acc0;
        refused("num_accepted 0", bes[b], &s, 4, cu22, 2, 0, SGLA_ERR_POOL_INDEX);
        s.num_accepted = NULL;
        refused("a sequence longer than t_max", bes[b], &s, 4, cu2, 2, 0, SGLA_ERR_POOL_INDEX);
        s.index_bits = 16;
        refused("index_bits 16", bes[b], &s, 4, cu22, 2, 0, SGLA_ERR_INVALID_ARGUMENT);
        /* the host copy of cu_seqlens is checked like cu_seqlens */
        sgla_state_pool h = {SLOTS, ok2, 32, 0, NULL, NULL, SGLA_POOL_INPLACE, NULL};
        const int64_t hc_end[3] = {0, 3, 5}, hc_dec[3] = {0, 3, 2}, hc_start[3] = {1, 3, 4};
        h.host_cu_seqlens = hc_end;
        refused("host_cu_seqlens ending past T", bes[b], &h, 4, cu2, 2, 0, SGLA_ERR_CU_SEQLENS_END);
        h.host_cu_seqlens = hc_dec;
        refused("host_cu_seqlens decreasing", bes[b], &h, 4, cu2, 2, 0, SGLA_ERR_CU_SEQLENS_DECREASING);
        h.host_cu_seqlens = hc_start;
        refused("host_cu_seqlens not from 0", bes[b], &h, 4, cu2, 2, 0, SGLA_ERR_CU_SEQLENS_START);
        {   /* the workspace query reads no data (sgla.h): not the host offsets either */
            sgla_forward_desc qd;
            sgla_forward_desc_init(&qd);
            qd.h0 = pool0, qd.pool = &h, qd.B = 1, qd.T = 4, qd.H = H, qd.K = K, qd.V = V, qd.cu_seqlens = cu2;
            qd.num_seqs = 2;
            size_t nb = 7;
            const sgla_status st = sgla_workspace_size(&qd, bes[b], &nb);
            TU_CHECK(st == SGLA_OK && nb == 0, "workspace query with bad host offsets (%s): %s (%s), bytes %zu",
                     sgla_backend_name(bes[b]), sgla_status_string(st), sgla_last_error(), nb);
        }
        const int64_t hc_other[3] = {0, 1, 4}; /* valid offsets, but not cu_seqlens' */
        h.host_cu_seqlens = hc_other;
        refused("host_cu_seqlens other than cu_seqlens", bes[b], &h, 4, cu2, 2, 0, SGLA_ERR_INVALID_ARGUMENT);
        h.host_cu_seqlens = cu2;
        refused("host_cu_seqlens without cu_seqlens", bes[b], &h, 2, NULL, 2, 0, SGLA_ERR_INVALID_ARGUMENT);
    }
    for (int b = 0; b < 2; b++) overlaps(bes[b]);
    for (int b = 0; b < 2; b++) { /* CHECK_FINITE scans the slots the call reads, not the whole pool: a free
                                   * slot, or a fresh request's, may hold anything (a serving engine's pool) */
        static float q[4 * H * K], v[4 * H * V], o[4 * H * V], pool[SLOTS * H * KV];
        int32_t idx[2] = {5, 6};
        const uint8_t fresh[2] = {1, 0}; /* row 1 starts from zeros: slot 6 is written, not read */
        sgla_state_pool fp = {SLOTS, idx, 32, 0, fresh, NULL, 0, NULL};
        for (int i = 0; i < 4 * H * K; i++) q[i] = 0.25f;
        for (int i = 0; i < 4 * H * V; i++) v[i] = 0.5f;
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = d.k = q, d.v = v, d.o = o, d.h0 = pool, d.pool = &fp, d.flags = SGLA_FLAG_CHECK_FINITE;
        d.B = 1, d.T = 4, d.H = H, d.K = K, d.V = V, d.cu_seqlens = cu2, d.num_seqs = 2;
        const struct { int slot; sgla_status want; const char *what; } nan_in[3] = {
            {2, SGLA_OK, "a slot no row names"}, {6, SGLA_OK, "a fresh request's slot"},
            {5, SGLA_ERR_NONFINITE_INPUT, "a slot read"}};
        for (int j = 0; j < 3; j++) {
            memcpy(pool, pool0, sizeof pool);
            pool[(size_t)nan_in[j].slot * H * KV + 3] = NAN;
            const sgla_status st = sgla_forward(&d, bes[b]);
            TU_CHECK(st == nan_in[j].want, "CHECK_FINITE, NaN in %s (%s): %s, want %s (%s)", nan_in[j].what,
                     sgla_backend_name(bes[b]), sgla_status_string(st), sgla_status_string(nan_in[j].want),
                     sgla_last_error());
            int finite = 1; /* a slot not read reaches no output */
            for (int i = 0; st == SGLA_OK && i < 4 * H * V; i++) finite &= isfinite(o[i]) != 0;
            TU_CHECK(finite, "CHECK_FINITE, NaN in %s (%s): o holds a NaN", nan_in[j].what, sgla_backend_name(bes[b]));
        }
    }
    { /* trusted values (SKIP_VALUE_CHECK) with CHECK_FINITE: an accepted count out of range is not used to
       * index the slots (indices[n][-1] was read; ASan's build sees it) */
        static int32_t sp[2][2] = {{1, 2}, {3, 4}}, acc0[2] = {0, 3};
        static float q[4 * H * K], v[4 * H * V], o[4 * H * V];
        const int64_t cu22[3] = {0, 2, 4};
        sgla_state_pool s = {SLOTS, sp, 32, 2, NULL, acc0, 0, NULL};
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = d.k = q, d.v = v, d.o = o, d.h0 = pool0, d.pool = &s;
        d.flags = SGLA_FLAG_CHECK_FINITE | SGLA_FLAG_SKIP_VALUE_CHECK;
        d.B = 1, d.T = 4, d.H = H, d.K = K, d.V = V, d.cu_seqlens = cu22, d.num_seqs = 2;
        const sgla_status st = sgla_validate(&d, 1);
        TU_CHECK(st == SGLA_OK, "CHECK_FINITE | SKIP_VALUE_CHECK, accepted counts 0 and 3 of t_max 2: %s (%s)",
                 sgla_status_string(st), sgla_last_error());
    }
    sgla_state_pool p = {SLOTS, ok2, 32, 0, NULL, NULL, SGLA_POOL_INPLACE};
    refused("ref-b", SGLA_BACKEND_REF_B, &p, 4, cu2, 2, 0, SGLA_ERR_UNSUPPORTED_SHAPE);
    /* the CUDA backend takes a pool (device pointers): tests/test_gpu_pool.c */
    {
        float q[4 * H * K] = {0}, v[4 * H * V] = {0}, pool[SLOTS * H * KV], dq[4 * H * K], dv[4 * H * V];
        memcpy(pool, pool0, sizeof pool);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q, d.k = q, d.v = v, d.h0 = pool, d.pool = &p, d.B = 1, d.T = 4, d.H = H, d.K = K, d.V = V;
        d.cu_seqlens = cu2, d.num_seqs = 2;
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &d, b.dout = v, b.dq = dq, b.dk = dq, b.dv = dv;
        TU_CHECK(sgla_backward(&b, SGLA_BACKEND_CPU) == SGLA_ERR_UNSUPPORTED_SHAPE, "the backward took a pool");
    }
    return tu_finish("test_pool");
}
