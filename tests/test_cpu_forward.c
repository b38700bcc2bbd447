/* The CPU backend against fp64 over randomized shapes and every feature:
 * gate forms, scale, h0/ht (in place too), partial chunks, varlen with empty
 * sequences, K != V, odd sizes, chunk sizes, f16/bf16 inputs, each SIMD
 * level forced in turn.  The fp64 answer is sgla_reference(REF_A) when the
 * reference family is built, else a private token recurrence (below).
 * Outputs are poisoned with NaN first: every element must be written, and a
 * NaN anywhere fails the comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "cpu/cpu_kernels.h"
#include "testutil.h"

/* The definition, token by token, in double (S: K x V). */
static void private_recurrence(const sgla_forward_desc *d, double *o64, double *ht64)
{
    const int64_t N = sgla_num_sequences(d), H = d->H, K = d->K, V = d->V;
    double *S = malloc((size_t)(K * V) * sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            int64_t b, t0, t1;
            sgla_seq_bounds(d, n, &b, &t0, &t1);
            for (int64_t i = 0; i < K * V; i++) S[i] = d->h0 ? ((const float *)d->h0)[(n * H + h) * K * V + i] : 0.0;
            for (int64_t t = t0; t < t1; t++) {
                int64_t row = (b * d->T + t) * H + h;
                double g = d->g ? ((const float *)d->g)[row] : d->g_gamma ? ((const float *)d->g_gamma)[h] : 0.0;
                double al = exp(g);
                for (int64_t p = 0; p < K; p++) {
                    double kp = sgla_load(d->k, d->dtype, row * K + p);
                    for (int64_t c = 0; c < V; c++)
                        S[p * V + c] = al * S[p * V + c] + kp * sgla_load(d->v, d->dtype, row * V + c);
                }
                for (int64_t c = 0; c < V; c++) {
                    double acc = 0;
                    for (int64_t p = 0; p < K; p++) acc += sgla_load(d->q, d->dtype, row * K + p) * S[p * V + c];
                    o64[row * V + c] = (double)d->scale * acc;
                }
            }
            if (ht64)
                for (int64_t i = 0; i < K * V; i++) ht64[(n * H + h) * K * V + i] = S[i];
        }
    free(S);
}

static int ref_is_private = -1;

static void reference(const sgla_forward_desc *d, double *o64, double *ht64)
{
    if (ref_is_private != 1) {
        sgla_status st = sgla_reference(d, SGLA_BACKEND_REF_A, o64, ht64);
        if (st == SGLA_OK) {
            ref_is_private = 0;
            return;
        }
        if (ref_is_private == 0) TU_CHECK(0, "sgla_reference failed: %s", sgla_last_error());
        ref_is_private = 1;
        printf("note: sgla_reference unavailable (%s); using the private recurrence\n", sgla_last_error());
    }
    private_recurrence(d, o64, ht64);
}

typedef struct cfg {
    int64_t B, T, H, K, V, C;
    sgla_dtype dt;
    int gate;          /* 0 none, 1 gamma, 2 g */
    double glo, ghi;   /* log-gate range */
    float scale;
    int h0, ht, inplace;
    int64_t nseq;      /* > 0: varlen with this many sequences (B = 1) */
    int fp32_out;      /* f16/bf16 inputs, fp32 output (internal entry point) */
    int threads;
    int o_misalign;    /* o 16 bytes past a 64-byte boundary */
} cfg;

static int64_t n_cases = 0;

/* |x| of n values of dtype dt in place (the sign bit cleared: exact in every dtype) */
static void abs_values(void *p, sgla_dtype dt, int64_t n)
{
    if (sgla_dtype_size(dt) == 2)
        for (int64_t i = 0; i < n; i++) ((uint16_t *)p)[i] &= 0x7fffu;
    else
        for (int64_t i = 0; i < n; i++) ((uint32_t *)p)[i] &= 0x7fffffffu;
}

/* The output's condition: ||o|| from |q|, |k|, |v|, |h0| (the decays and scale's sign do not cancel) over
 * ||o|| (o64), 1 where nothing cancels.  fp32's rounding is relative to the former: where q . k nearly
 * cancels (T = 1, K = 14, SGLA_SEED 147298852 gave 2.4e-5) a bar of 1e-5 of ||o|| is a bar below fp32. */
static double condition(const sgla_forward_desc *d, int64_t nqk, int64_t nv, int64_t ns, const double *o64)
{
    const size_t es = sgla_dtype_size(d->dtype);
    void *q = malloc((size_t)(nqk + 1) * es), *k = malloc((size_t)(nqk + 1) * es), *v = malloc((size_t)(nv + 1) * es);
    float *h0 = d->h0 ? malloc((size_t)ns * sizeof(float)) : NULL;
    double *oa = malloc((size_t)(nv + 1) * sizeof(double));
    memcpy(q, d->q, (size_t)nqk * es), memcpy(k, d->k, (size_t)nqk * es), memcpy(v, d->v, (size_t)nv * es);
    abs_values(q, d->dtype, nqk), abs_values(k, d->dtype, nqk), abs_values(v, d->dtype, nv);
    if (h0) memcpy(h0, d->h0, (size_t)ns * sizeof(float)), abs_values(h0, SGLA_F32, ns);
    sgla_forward_desc a = *d;
    a.q = q, a.k = k, a.v = v, a.h0 = h0, a.ht = NULL, a.o = NULL;
    a.scale = fabsf(d->scale);
    reference(&a, oa, NULL);
    double na = 0, no = 0;
    for (int64_t i = 0; i < nv; i++) na += oa[i] * oa[i], no += o64[i] * o64[i];
    free(q), free(k), free(v), free(h0), free(oa);
    return no > 0 ? sqrt(na / no) : 1.0;
}

static void describe(const cfg *c, char *buf, size_t n)
{
    snprintf(buf, n, "B=%lld T=%lld H=%lld K=%lld V=%lld C=%lld %s gate=%d[%g,%g] scale=%g h0=%d ht=%d inplace=%d nseq=%lld fp32out=%d thr=%d misalign=%d isa=%s",
             (long long)c->B, (long long)c->T, (long long)c->H, (long long)c->K, (long long)c->V, (long long)c->C,
             sgla_dtype_name(c->dt), c->gate, c->glo, c->ghi, (double)c->scale, c->h0, c->ht, c->inplace,
             (long long)c->nseq, c->fp32_out, c->threads, c->o_misalign, sgla_cpu_isa_name(sgla_cpu_isa_current()));
}

static void run_case(tu_rng *r, const cfg *c)
{
    char desc[400];
    describe(c, desc, sizeof desc);
    n_cases++;
    const size_t es = sgla_dtype_size(c->dt);
    const int64_t B = c->nseq > 0 ? 1 : c->B, T = c->T;
    const int64_t nqk = B * T * c->H * c->K, nv = B * T * c->H * c->V;
    const int64_t N = c->nseq > 0 ? c->nseq : B;
    const int64_t ns = N * c->H * c->K * c->V;
    void *q = malloc((size_t)(nqk + 1) * es), *k = malloc((size_t)(nqk + 1) * es);
    void *v = malloc((size_t)(nv + 1) * es);
    sgla_dtype odt = c->fp32_out ? SGLA_F32 : c->dt;
    /* o 64-byte aligned (the streaming path for fp32) or deliberately not */
    const size_t obytes = ((size_t)(nv + 1) * sgla_dtype_size(odt) + 64 + 63) / 64 * 64;
    char *o_base = aligned_alloc(64, obytes);
    void *o = o_base + (c->o_misalign ? 16 : 0);
    float *g = NULL, *gg = NULL, *h0 = NULL, *ht = NULL;
    int64_t *cu = NULL;
    double sd = 1.0 / sqrt((double)c->K);
    tu_fill(r, q, c->dt, nqk, 1.0);
    tu_fill(r, k, c->dt, nqk, sd);
    tu_fill(r, v, c->dt, nv, 1.0);
    if (c->gate == 2) {
        g = malloc((size_t)(B * T * c->H + 1) * sizeof(float));
        for (int64_t i = 0; i < B * T * c->H; i++) g[i] = (float)tu_uniform_range(r, c->glo, c->ghi);
    } else if (c->gate == 1) {
        gg = malloc((size_t)c->H * sizeof(float));
        for (int64_t h = 0; h < c->H; h++) gg[h] = (float)tu_uniform_range(r, c->glo, c->ghi);
    }
    if (c->h0 || c->inplace) {
        h0 = malloc((size_t)ns * sizeof(float));
        for (int64_t i = 0; i < ns; i++) h0[i] = (float)(tu_normal(r) * 0.5);
    }
    if (c->ht || c->inplace) ht = c->inplace ? h0 : malloc((size_t)ns * sizeof(float));
    if (c->nseq > 0) {
        cu = malloc((size_t)(c->nseq + 1) * sizeof(int64_t));
        cu[0] = 0;
        for (int64_t i = 1; i < c->nseq; i++) cu[i] = tu_int(r, 0, T);
        cu[c->nseq] = T;
        for (int64_t i = 1; i < c->nseq; i++) /* sort */
            for (int64_t j = i; j > 1 && cu[j] < cu[j - 1]; j--) {
                int64_t t = cu[j]; cu[j] = cu[j - 1]; cu[j - 1] = t;
            }
        if (c->nseq >= 3) cu[2] = cu[1]; /* at least one empty sequence */
    }
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q; d.k = k; d.v = v; d.o = o; d.dtype = c->dt;
    d.B = B; d.T = T; d.H = c->H; d.K = c->K; d.V = c->V;
    d.g = g; d.g_gamma = gg; d.scale = c->scale; d.h0 = h0; d.ht = ht;
    d.cu_seqlens = cu; d.num_seqs = c->nseq > 0 ? c->nseq : 0;
    d.chunk = c->C; d.threads = c->threads;

    double *o64 = malloc((size_t)(nv + 1) * sizeof(double));
    double *ht64 = malloc((size_t)(ns + 1) * sizeof(double));
    double *oc = malloc((size_t)(nv + 1) * sizeof(double));
    double *htc = malloc((size_t)(ns + 1) * sizeof(double));
    reference(&d, o64, ht64);
    /* fp32's bar: 1e-5 up to a condition of 16, then 6.25e-7 x the condition, ~10 ulps of the terms'
     * magnitudes (the worst seed seen had 0.9: 2.4e-5 at 467; these inputs' median is 3, and gates near 0
     * over 200 tokens reach 48 with errors of 2.3e-7).  Taken before the call: in place, h0 becomes ht */
    const double cond = odt == SGLA_F32 && nv > 0 ? condition(&d, nqk, nv, ns, o64) : 1.0;
    const double cf = cond > 16 ? cond / 16 : 1.0;

    tu_poison(o, odt, nv);
    if (ht && !c->inplace) tu_poison(ht, SGLA_F32, ns);
    sgla_status st;
    if (c->fp32_out) {
        st = sgla_validate(&d, 1);
        if (st == SGLA_OK) st = sgla_cpu_forward_out(&d, SGLA_F32, o);
    } else {
        st = sgla_forward(&d, SGLA_BACKEND_CPU);
    }
    TU_CHECK(st == SGLA_OK, "%s: status %d (%s)", desc, (int)st, sgla_last_error());
    if (st == SGLA_OK) {
        TU_CHECK(tu_count_poison(o, odt, nv) == 0, "%s: %lld output elements not written", desc,
                 (long long)tu_count_poison(o, odt, nv));
        tu_to_double(o, odt, nv, oc);
        double tol = 1e-5 * cf;
        if (odt == SGLA_F16) tol = 1e-3;
        if (odt == SGLA_BF16) tol = 8e-3;
        double rel = tu_rel_l2(oc, o64, nv), mx = tu_max_abs(oc, o64, nv);
        double omax = 0;
        for (int64_t i = 0; i < nv; i++) omax = fmax(omax, fabs(o64[i]));
        /* per element: fp32 accumulation over <= T terms, bounded by the largest output */
        double mtol = tol * (omax + 1e-30) * (odt == SGLA_F32 ? 4 : 2);
        TU_CHECK(rel <= tol || (nv > 0 && rel == 0), "%s: o rel L2 %.3e > %.1e (condition %.1f)", desc, rel, tol, cond);
        TU_CHECK(mx <= mtol, "%s: o max abs %.3e > %.3e", desc, mx, mtol);
        if (odt != SGLA_F32) {
            /* against the fp64 answer rounded once to the output type: within an ulp */
            int64_t bad = 0;
            for (int64_t i = 0; i < nv; i++) {
                double rr = odt == SGLA_F16 ? sgla_f16_to_f32(sgla_f64_to_f16(o64[i]))
                                            : sgla_bf16_to_f32(sgla_f64_to_bf16(o64[i]));
                double ulp = odt == SGLA_F16 ? fmax(fabs(rr) * 0x1p-10, 0x1p-24) : fmax(fabs(rr) * 0x1p-7, 0x1p-133);
                if (!(fabs(oc[i] - rr) <= ulp + 2e-5 * omax)) bad++;
            }
            TU_CHECK(bad == 0, "%s: %lld outputs differ from the rounded fp64 answer by more than an ulp", desc,
                     (long long)bad);
        }
        if (ht) {
            TU_CHECK(tu_count_poison(ht, SGLA_F32, ns) == 0, "%s: ht not fully written", desc);
            tu_to_double(ht, SGLA_F32, ns, htc);
            double hrel = tu_rel_l2(htc, ht64, ns);
            TU_CHECK(hrel <= 1e-5 || (ns > 0 && hrel == 0), "%s: ht rel L2 %.3e", desc, hrel);
        }
    }
    free(q); free(k); free(v); free(o_base); free(g); free(gg); free(h0);
    if (!c->inplace) free(ht);
    free(cu); free(o64); free(ht64); free(oc); free(htc);
}

static cfg random_cfg(tu_rng *r, int big)
{
    cfg c;
    memset(&c, 0, sizeof c);
    static const int64_t chunks[] = {16, 32, 64, 128, 16, 64};
    c.C = chunks[tu_int(r, 0, 5)];
    c.B = tu_int(r, 1, 2);
    c.H = tu_int(r, 1, 3);
    if (big) {
        c.K = tu_int(r, 0, 1) ? 64 : tu_int(r, 1, 80);
        c.V = tu_int(r, 0, 1) ? 64 : tu_int(r, 1, 80);
    } else {
        c.K = tu_int(r, 1, 24);
        c.V = tu_int(r, 1, 24);
    }
    switch (tu_int(r, 0, 6)) {
    case 0: c.T = 0; break;
    case 1: c.T = 1; break;
    case 2: c.T = c.C - 1; break;
    case 3: c.T = c.C; break;
    case 4: c.T = c.C + 1; break;
    default: c.T = tu_int(r, 2, 3 * c.C + 7); break;
    }
    c.dt = (sgla_dtype)tu_int(r, 0, 2);
    c.gate = (int)tu_int(r, 0, 2);
    switch (tu_int(r, 0, 3)) {
    case 0: c.glo = -1e-3; c.ghi = 0; break;
    case 1: c.glo = -30; c.ghi = -25; break;
    case 2: c.glo = -0.5; c.ghi = -0.001; break;
    default: c.glo = -5; c.ghi = 0; break;
    }
    c.scale = tu_int(r, 0, 1) ? 1.0f : (float)tu_uniform_range(r, 0.05, 2.0);
    c.h0 = (int)tu_int(r, 0, 1);
    c.ht = (int)tu_int(r, 0, 1);
    c.inplace = c.h0 && c.ht && tu_int(r, 0, 1);
    if (tu_int(r, 0, 3) == 0) c.nseq = tu_int(r, 1, 5);
    c.fp32_out = c.dt != SGLA_F32 && tu_int(r, 0, 1);
    c.threads = (int)tu_int(r, 1, 3);
    c.o_misalign = (int)tu_int(r, 0, 1);
    if (tu_int(r, 0, 2) == 0) c.V = 16 * tu_int(r, 1, 5); /* V % 16 == 0: the streaming path */
    return c;
}

/* A decay close to 1 over a long sequence (issue: constant g = -1e-7 gave ht
 * 2e-5 off at T = 1e5, one-signed, because the per-chunk carry exp(b_C) was
 * rounded the same way every chunk).  ht against the fp64 recurrence, both gate
 * forms, chunk 64 and 16, every ISA level. */
static void check_alpha_near_one(tu_rng *r)
{
    enum { K = 16, V = 16 };
    /* SGLA_NEAR1_T=1000000 measures the longer sequence of docs/numerics.md §7 (the bar grows with
     * the square root of the chunk count, as the rounding left does) */
    const char *te = getenv("SGLA_NEAR1_T");
    const int T = te && atoi(te) >= 1000 && atoi(te) <= 10000000 ? atoi(te) : 100000;
    const double bar = 3e-6 * sqrt(T / 1e5 > 1 ? T / 1e5 : 1);
    float *q = malloc((size_t)T * K * 4), *k = malloc((size_t)T * K * 4), *v = malloc((size_t)T * V * 4);
    float *g = malloc((size_t)T * 4), *o = malloc((size_t)T * V * 4), ht[K * V];
    double *o64 = malloc((size_t)T * V * 8), ht64[K * V];
    if (!q || !k || !v || !g || !o || !o64) {
        TU_CHECK(0, "alpha near 1: out of memory");
        goto out;
    }
    for (int64_t i = 0; i < (int64_t)T * K; i++) q[i] = (float)tu_normal(r), k[i] = (float)tu_normal(r) * 0.01f;
    for (int64_t i = 0; i < (int64_t)T * V; i++) v[i] = (float)tu_normal(r);
    for (int64_t t = 0; t < T; t++) g[t] = -1e-7f;
    const float gamma = -1e-7f;
    for (int form = 0; form < 2; form++) {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q, d.k = k, d.v = v, d.o = o, d.ht = ht, d.dtype = SGLA_F32;
        if (form) d.g_gamma = &gamma;
        else d.g = g;
        d.B = 1, d.T = T, d.H = 1, d.K = K, d.V = V, d.scale = 0.25f;
        TU_CHECK(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, ht64) == SGLA_OK, "alpha near 1: ref-a: %s",
                 sgla_last_error());
        static const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
        for (int ii = 0; ii < 3; ii++) {
            if (!sgla_cpu_force_isa(isas[ii])) continue;
            for (int ck = 0; ck < 2; ck++) {
                d.chunk = ck ? 16 : 64;
                TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CPU) == SGLA_OK, "alpha near 1: cpu: %s", sgla_last_error());
                double num = 0, den = 0;
                for (int i = 0; i < K * V; i++) num += (ht[i] - ht64[i]) * (ht[i] - ht64[i]), den += ht64[i] * ht64[i];
                const double rel = sqrt(num / den);
                printf("alpha = exp(-1e-7), T = %d, %s, chunk %d, %s: ht rel %.2e\n", T, form ? "g_gamma" : "g",
                       (int)d.chunk, sgla_cpu_isa_name(isas[ii]), rel);
                TU_CHECK(rel <= bar, "alpha near 1 (%s, chunk %d, %s): ht rel %.2e > %.1e", form ? "g_gamma" : "g",
                         (int)d.chunk, sgla_cpu_isa_name(isas[ii]), rel, bar);
            }
        }
        sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);
    }
out:
    free(q), free(k), free(v), free(g), free(o), free(o64);
}

/* Through the harness on every ISA level: heads past 128 (the block stays the caller's chunk there, and the
 * heads per item follow K and V: 2 to 4 at these sizes on one thread, one on the split path), K != V both
 * ways, chunks that are no power of two (3, 5, 24, 48, 100: the blocks' partial tails), and the gate forms
 * none and alpha in 16 bits.  Partial chunks, h0/ht (in place too), varlen. */
static void conform_isa_cases(tu_rng *r)
{
    enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, ALPHA = CONFORM_GATE_ALPHA, G = CONFORM_GATE_G };
    static const conform_case cases[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq, chunk, threads */
        /* K, V > 128: 4 pairs on one thread, sequential path with head groups */
        {SGLA_F32, G, CONFORM_MILD, 1, 100, 4, 160, 160, 1, 1, 0, 0, 64, 1},
        {SGLA_F32, GAMMA, CONFORM_MILD, 1, 150, 1, 256, 128, 0, 1, 0, 0, 64, 2}, /* 1 pair, 2 threads: split */
        {SGLA_BF16, G, CONFORM_MILD, 1, 200, 1, 128, 320, 1, 1, 0, 0, 64, 2},
        {SGLA_F32, G, CONFORM_NEAR0, 2, 90, 2, 96, 320, 1, 1, 1, 0, 32, 1},
        {SGLA_F32, ALPHA, CONFORM_MILD, 1, 33, 3, 320, 96, 0, 1, 0, 0, 16, 2},
        {SGLA_F32, G, CONFORM_RESET, 1, 77, 4, 192, 160, 1, 1, 0, 0, 48, 1},
        {SGLA_F32, GAMMA, CONFORM_MILD, 1, 130, 2, 256, 256, 1, 1, 0, 3, 64, 2},
        {SGLA_BF16, G, CONFORM_MILD, 1, 90, 4, 96, 320, 1, 1, 0, 0, 32, 1},
        {SGLA_BF16, GAMMA, CONFORM_MIX30, 1, 130, 2, 256, 256, 1, 1, 0, 3, 64, 2},
        {SGLA_F16, GAMMA, CONFORM_NEAR0, 2, 70, 2, 192, 192, 1, 1, 1, 0, 0, 0},
        {SGLA_F16, G, CONFORM_MILD, 1, 65, 3, 256, 128, 1, 1, 0, 0, 64, 1},
        {SGLA_F16, NONE, CONFORM_MILD, 1, 40, 2, 160, 96, 1, 1, 0, 0, 32, 2},
        /* chunks that are no power of two */
        {SGLA_F32, G, CONFORM_MILD, 1, 50, 3, 16, 24, 1, 1, 0, 0, 3, 2},
        {SGLA_F32, GAMMA, CONFORM_MILD, 2, 41, 2, 24, 16, 1, 1, 0, 0, 5, 1},
        {SGLA_F32, G, CONFORM_MIX30, 1, 130, 2, 32, 48, 1, 1, 0, 3, 24, 2},
        {SGLA_F32, G, CONFORM_MILD, 1, 150, 1, 64, 64, 1, 1, 0, 0, 48, 2},
        {SGLA_F32, GAMMA, CONFORM_NEAR0, 1, 250, 2, 32, 32, 0, 1, 0, 0, 100, 1},
        {SGLA_BF16, G, CONFORM_MILD, 1, 101, 2, 48, 32, 1, 1, 0, 0, 100, 0},
        {SGLA_F16, G, CONFORM_MILD, 1, 60, 2, 32, 32, 1, 1, 1, 0, 5, 2},
        /* none and alpha in 16 bits */
        {SGLA_F16, ALPHA, CONFORM_MILD, 2, 70, 2, 32, 48, 1, 1, 0, 0, 32, 0},
        {SGLA_BF16, ALPHA, CONFORM_NEAR0, 1, 90, 3, 64, 32, 0, 1, 0, 0, 64, 2},
        {SGLA_BF16, NONE, CONFORM_MILD, 1, 66, 2, 40, 24, 1, 1, 0, 2, 16, 0},
        {SGLA_F16, NONE, CONFORM_MILD, 2, 1, 2, 64, 64, 1, 1, 1, 0, 0, 0},
        /* fixed cuts (conform_cuts256): empty first and last sequences, lengths 1, 63, 65 */
        {SGLA_F32, G, CONFORM_MILD, 1, 256, 2, 64, 64, 1, 1, 0, 8, 64, 2, conform_cuts256},
        {SGLA_BF16, GAMMA, CONFORM_MILD, 1, 256, 2, 128, 64, 1, 1, 1, 8, 32, 0, conform_cuts256},
        {SGLA_F16, G, CONFORM_MIX30, 1, 256, 3, 160, 96, 0, 1, 0, 8, 16, 1, conform_cuts256},
    };
    static const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conform_data x;
        sgla_status st = conform_draw(&x, &cases[i], r, SGLA_BACKEND_REF_A);
        TU_CHECK(st == SGLA_OK, "conform_draw: %s (%s)", sgla_status_string(st), sgla_last_error());
        if (st != SGLA_OK) continue;
        for (int ii = 0; ii < 3; ii++) {
            if (!sgla_cpu_force_isa(isas[ii])) continue;
            conform_result res;
            conform_check(&x, SGLA_BACKEND_CPU, NULL, &res);
            printf("[%s] ", sgla_cpu_isa_name(isas[ii]));
            conform_print(stdout, &res);
            TU_CHECK(res.pass, "%s (%s)", res.label, sgla_cpu_isa_name(isas[ii]));
            n_cases++;
        }
        sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);
        conform_free(&x);
    }
}

int main(void)
{
    uint64_t seed = tu_seed("test_cpu_forward");
    tu_rng r;
    tu_rng_init(&r, seed);
    check_alpha_near_one(&r);
    const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
    for (int ii = 0; ii < 3; ii++) {
        if (!sgla_cpu_force_isa(isas[ii])) {
            printf("isa %s: not available on this CPU, skipped\n", sgla_cpu_isa_name(isas[ii]));
            continue;
        }
        /* fixed edge cases */
        cfg c;
        memset(&c, 0, sizeof c);
        c.B = 2; c.H = 2; c.K = 5; c.V = 7; c.C = 16; c.scale = 0.7f; c.threads = 2;
        c.dt = SGLA_F32; c.gate = 2; c.glo = -0.3; c.ghi = 0; c.h0 = 1; c.ht = 1;
        const int64_t Ts[] = {0, 1, 15, 16, 17, 100};
        for (int i = 0; i < 6; i++) {
            c.T = Ts[i];
            run_case(&r, &c);
        }
        c.inplace = 1; c.T = 1; c.B = 3; c.K = 32; c.V = 48; /* decode in place */
        run_case(&r, &c);
        c.gate = 1; c.T = 40; run_case(&r, &c);
        c.gate = 0; c.T = 33; c.scale = 1.0f; c.inplace = 0; c.h0 = 0; run_case(&r, &c);
        c.nseq = 4; c.T = 70; c.gate = 2; c.glo = -30; c.ghi = -29; run_case(&r, &c);
        c.nseq = 0; c.B = 1; c.K = 64; c.V = 64; c.C = 64; c.T = 200; c.glo = -1e-4; c.ghi = 0; run_case(&r, &c);
        c.dt = SGLA_F16; c.fp32_out = 1; run_case(&r, &c);
        c.dt = SGLA_BF16; run_case(&r, &c);
        c.fp32_out = 0; run_case(&r, &c);
        c.dt = SGLA_F16; run_case(&r, &c);
        c.dt = SGLA_F32; c.V = 48; c.T = 150; c.B = 2; c.H = 3; run_case(&r, &c); /* aligned fp32 o, V % 16 == 0 */
        c.o_misalign = 1; run_case(&r, &c);
        c.o_misalign = 0;
        /* random */
        int nrand = 40;
        for (int i = 0; i < nrand; i++) {
            cfg rc = random_cfg(&r, i % 8 == 0);
            run_case(&r, &rc);
        }
    }
    sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);

    /* the same cases as the GPU's, through the conformance harness (tools/conform.h), on the
     * CPU backend and on AUTO: the one judge every backend faces */
    {
        enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, ALPHA = CONFORM_GATE_ALPHA, G = CONFORM_GATE_G };
        static const conform_case cases[] = {
            /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq, chunk, threads */
            {SGLA_F32, G, CONFORM_MILD, 2, 1, 2, 64, 64, 1, 1, 0, 0, 0, 0},
            {SGLA_F32, G, CONFORM_MIX30, 1, 300, 2, 128, 64, 1, 1, 1, 3, 0, 2},
            {SGLA_F32, GAMMA, CONFORM_NEAR0, 2, 130, 2, 32, 96, 0, 1, 0, 0, 16, 0},
            {SGLA_F32, ALPHA, CONFORM_MILD, 1, 65, 3, 20, 12, 1, 1, 0, 0, 32, 1},
            {SGLA_F32, NONE, CONFORM_MILD, 1, 0, 2, 8, 8, 1, 1, 0, 0, 0, 0},
            {SGLA_F16, G, CONFORM_MILD, 2, 63, 2, 64, 128, 1, 1, 0, 0, 0, 0},
            {SGLA_BF16, G, CONFORM_NEG30, 1, 200, 2, 128, 128, 1, 1, 0, 4, 0, 0},
            {SGLA_BF16, GAMMA, CONFORM_MILD, 3, 1, 2, 64, 32, 1, 1, 1, 0, 0, 0},
            /* huge finite negative gates (issue: -1e17 gave 32.0 for 7.65) */
            {SGLA_F32, G, CONFORM_RESET, 2, 300, 2, 32, 48, 1, 1, 0, 0, 0, 0},
            {SGLA_F32, G, CONFORM_RESET, 1, 400, 2, 16, 16, 1, 1, 0, 3, 16, 2},
            {SGLA_F32, GAMMA, CONFORM_RESET, 1, 150, 2, 16, 16, 1, 1, 0, 0, 64, 0},
            {SGLA_BF16, G, CONFORM_RESET, 1, 300, 2, 64, 64, 1, 1, 0, 0, 0, 0},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            conform_data x;
            sgla_status st = conform_draw(&x, &cases[i], &r, SGLA_BACKEND_REF_A);
            TU_CHECK(st == SGLA_OK, "conform_draw: %s (%s)", sgla_status_string(st), sgla_last_error());
            if (st != SGLA_OK) continue;
            for (int be = 0; be < 2; be++) {
                conform_result res;
                conform_check(&x, be ? SGLA_BACKEND_AUTO : SGLA_BACKEND_CPU, NULL, &res);
                conform_print(stdout, &res);
                TU_CHECK(res.pass, "%s", res.label);
                n_cases++;
            }
            conform_free(&x);
        }
    }

    conform_isa_cases(&r);

    /* NaN never passes: the comparison rejects it, and a NaN input shows in o */
    {
        double a2[2] = {1.0, NAN}, b2[2] = {1.0, 1.0};
        TU_CHECK(!(tu_rel_l2(a2, b2, 2) <= 1e-5), "a NaN passed the rel L2 check");
        TU_CHECK(!(tu_max_abs(a2, b2, 2) <= 1e-5), "a NaN passed the max-abs check");
        float q[4 * 8], k[4 * 8], v[4 * 8], o[4 * 8];
        for (int i = 0; i < 32; i++) q[i] = k[i] = v[i] = 0.5f;
        q[8] = NAN; /* token 1 */
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q; d.k = k; d.v = v; d.o = o; d.B = 1; d.T = 4; d.H = 1; d.K = 8; d.V = 8; d.chunk = 16;
        sgla_status st = sgla_forward(&d, SGLA_BACKEND_CPU);
        TU_CHECK(st == SGLA_OK && isnan(o[8]) && !isnan(o[0]), "NaN in q[token 1] must give NaN in o[token 1] only");
        /* causality holds for inf/NaN too: a bad last token leaves the earlier outputs finite */
        static const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
        for (int ii = 0; ii < 3; ii++) {
            if (!sgla_cpu_force_isa(isas[ii])) continue;
            static float q2[40 * 2 * 16], k2[40 * 2 * 16], v2[40 * 2 * 16], o2[40 * 2 * 16];
            for (int i = 0; i < 40 * 2 * 16; i++) q2[i] = k2[i] = v2[i] = 0.25f;
            for (int c = 0; c < 16; c++) { /* token 37 of both heads */
                k2[(37 * 2 + 0) * 16 + c] = INFINITY;
                v2[(37 * 2 + 1) * 16 + c] = NAN;
            }
            sgla_forward_desc_init(&d);
            d.q = q2; d.k = k2; d.v = v2; d.o = o2; d.B = 1; d.T = 40; d.H = 2; d.K = 16; d.V = 16; d.chunk = 64;
            st = sgla_forward(&d, SGLA_BACKEND_CPU);
            int bad = 0;
            for (int i = 0; i < 37 * 2 * 16; i++) bad += !isfinite(o2[i]);
            TU_CHECK(st == SGLA_OK && bad == 0, "isa %s: %d outputs before the inf/NaN token are not finite",
                     sgla_cpu_isa_name(isas[ii]), bad);
        }
        sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);
    }
    printf("%lld cases\n", (long long)n_cases);
    return tu_finish("test_cpu_forward");
}
