/* The backward (sgla_backward):
 *
 *   1. the fp64 references against central finite differences of the fp64
 *      forward (SGLA_F64 through ref-a) for every input, q, k, v, g, g_gamma
 *      and h0, on small shapes with partial chunks, varlen with an empty
 *      sequence, K != V, dht; and ref-a (reverse-time recurrence) against
 *      ref-b (chunked, the kernels' form) at 1e-12;
 *   2. the CPU backward against fp64 through the conformance harness
 *      (tools/conform.h), every dtype and gate form, each SIMD level; K, V
 *      up to 256, chunks that are no power of two, T = 0 and 1 in 16 bits;
 *   3. the CPU backward's bits do not depend on the thread count;
 *   4. the backward's validation: every status, nothing written on error.
 * Seeded and printed (SGLA_SEED replays). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "cpu/cpu_kernels.h"
#include "testutil.h"

/* ---- 1. finite differences ------------------------------------------------------------ */

typedef struct fd_case {
    int64_t B, T, H, K, V, C;
    int gate; /* 0 none, 1 g_gamma, 2 g, 3 g with 0 and -30 */
    int h0, dht;
    int nseq; /* > 0: cu_seqlens = cut points below */
    int64_t cu[6];
} fd_case;

typedef struct fd_data {
    fd_case c;
    int64_t N, nqk, nv, ng, ns;
    double *q, *k, *v, *g, *gg, *h0, *dout, *dht, *o, *ht;
    sgla_forward_desc d;
} fd_data;

static double *dalloc(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

static void fd_init(fd_data *x, const fd_case *c, tu_rng *r)
{
    memset(x, 0, sizeof *x);
    x->c = *c;
    x->N = c->nseq ? c->nseq : c->B;
    x->nqk = c->B * c->T * c->H * c->K, x->nv = c->B * c->T * c->H * c->V, x->ng = c->B * c->T * c->H;
    x->ns = x->N * c->H * c->K * c->V;
    x->q = dalloc(x->nqk), x->k = dalloc(x->nqk), x->v = dalloc(x->nv), x->dout = dalloc(x->nv), x->o = dalloc(x->nv);
    x->ht = dalloc(x->ns);
    for (int64_t i = 0; i < x->nqk; i++) x->q[i] = tu_normal(r), x->k[i] = tu_normal(r);
    for (int64_t i = 0; i < x->nv; i++) x->v[i] = tu_normal(r), x->dout[i] = tu_normal(r);
    if (c->gate >= 2) {
        x->g = dalloc(x->ng);
        for (int64_t i = 0; i < x->ng; i++)
            x->g[i] = c->gate == 3 ? (tu_uniform(r) < 0.5 ? 0.0 : -30.0) : -tu_uniform_range(r, 0.02, 0.4);
    } else if (c->gate == 1) {
        x->gg = dalloc(c->H);
        for (int64_t h = 0; h < c->H; h++) x->gg[h] = -tu_uniform_range(r, 0.02, 0.4);
    }
    if (c->h0) {
        x->h0 = dalloc(x->ns);
        for (int64_t i = 0; i < x->ns; i++) x->h0[i] = 0.5 * tu_normal(r);
    }
    if (c->dht) {
        x->dht = dalloc(x->ns);
        for (int64_t i = 0; i < x->ns; i++) x->dht[i] = tu_normal(r);
    }
    sgla_forward_desc_init(&x->d);
    x->d.q = x->q, x->d.k = x->k, x->d.v = x->v, x->d.o = x->o, x->d.ht = x->ht, x->d.dtype = SGLA_F64;
    x->d.B = c->B, x->d.T = c->T, x->d.H = c->H, x->d.K = c->K, x->d.V = c->V, x->d.chunk = c->C;
    x->d.g = x->g, x->d.g_gamma = x->gg, x->d.h0 = x->h0, x->d.scale = 0.7f;
    if (c->nseq) x->d.cu_seqlens = c->cu, x->d.num_seqs = c->nseq;
}

static void fd_free(fd_data *x)
{
    free(x->q), free(x->k), free(x->v), free(x->g), free(x->gg), free(x->h0), free(x->dout), free(x->dht), free(x->o);
    free(x->ht);
}

/* L = <o, dout> + <ht, dht> by the fp64 forward of ref-a */
static double fd_loss(fd_data *x)
{
    sgla_status st = sgla_forward(&x->d, SGLA_BACKEND_REF_A);
    TU_CHECK(st == SGLA_OK, "fd forward: %s (%s)", sgla_status_string(st), sgla_last_error());
    double L = 0.0;
    for (int64_t i = 0; i < x->nv; i++) L += x->o[i] * x->dout[i];
    for (int64_t i = 0; x->dht && i < x->ns; i++) L += x->ht[i] * x->dht[i];
    return L;
}

typedef struct grads {
    double *dq, *dk, *dv, *dg, *dgg, *dh0;
} grads;

static sgla_status fd_backward(fd_data *x, sgla_backend kind, grads *gr)
{
    gr->dq = dalloc(x->nqk), gr->dk = dalloc(x->nqk), gr->dv = dalloc(x->nv);
    gr->dg = x->g ? dalloc(x->ng) : NULL;
    gr->dgg = x->gg ? dalloc(x->c.H) : NULL;
    gr->dh0 = x->h0 ? dalloc(x->ns) : NULL;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &x->d;
    b.dout = x->dout, b.dht = x->dht;
    b.dq = gr->dq, b.dk = gr->dk, b.dv = gr->dv, b.dg = gr->dg, b.dg_gamma = gr->dgg, b.dh0 = gr->dh0;
    return sgla_backward(&b, kind);
}

static void grads_free(grads *g) { free(g->dq), free(g->dk), free(g->dv), free(g->dg), free(g->dgg), free(g->dh0); }

/* every element of p (n of them) against the central difference of the loss */
static double fd_worst(fd_data *x, double *p, int64_t n, const double *ana, int is_gate, double *scale)
{
    double worst = 0.0, mx = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double keep = p[i], eps = 1e-6 * (fabs(keep) > 1 ? fabs(keep) : 1.0);
        double fd;
        if (is_gate && keep > -2 * eps) { /* a log-gate at 0 cannot go up: the one-sided second-order form */
            const double l0 = fd_loss(x);
            p[i] = keep - eps;
            const double l1 = fd_loss(x);
            p[i] = keep - 2 * eps;
            const double l2 = fd_loss(x);
            fd = (3 * l0 - 4 * l1 + l2) / (2 * eps);
        } else {
            p[i] = keep + eps;
            const double lp = fd_loss(x);
            p[i] = keep - eps;
            const double lm = fd_loss(x);
            fd = (lp - lm) / (2 * eps);
        }
        p[i] = keep;
        if (fabs(fd - ana[i]) > worst || isnan(ana[i])) worst = isnan(ana[i]) ? INFINITY : fabs(fd - ana[i]);
        if (fabs(fd) > mx) mx = fabs(fd);
    }
    *scale = mx > 1 ? mx : 1;
    return worst;
}

static double max_diff(const double *a, const double *b, int64_t n, double *mx)
{
    double w = 0.0;
    *mx = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs(a[i] - b[i]);
        if (d > w || isnan(d)) w = isnan(d) ? INFINITY : d;
        if (fabs(b[i]) > *mx) *mx = fabs(b[i]);
    }
    return w;
}

static void fd_check(const fd_case *c, tu_rng *r)
{
    fd_data x;
    fd_init(&x, c, r);
    grads ga, gb;
    sgla_status sa = fd_backward(&x, SGLA_BACKEND_REF_A, &ga), sb = fd_backward(&x, SGLA_BACKEND_REF_B, &gb);
    char name[160];
    snprintf(name, sizeof name, "B=%lld T=%lld H=%lld K=%lld V=%lld C=%lld gate=%d h0=%d dht=%d nseq=%d",
             (long long)c->B, (long long)c->T, (long long)c->H, (long long)c->K, (long long)c->V, (long long)c->C,
             c->gate, c->h0, c->dht, c->nseq);
    TU_CHECK(sa == SGLA_OK && sb == SGLA_OK, "%s: backward %s / %s (%s)", name, sgla_status_string(sa),
             sgla_status_string(sb), sgla_last_error());
    struct {
        const char *what;
        double *p;
        int64_t n;
        const double *a, *b;
    } t[6] = {{"q", x.q, x.nqk, ga.dq, gb.dq},   {"k", x.k, x.nqk, ga.dk, gb.dk},
              {"v", x.v, x.nv, ga.dv, gb.dv},    {"g", x.g, x.ng, ga.dg, gb.dg},
              {"g_gamma", x.gg, c->H, ga.dgg, gb.dgg}, {"h0", x.h0, x.ns, ga.dh0, gb.dh0}};
    printf("fd %s:", name);
    for (int i = 0; i < 6; i++) {
        if (!t[i].p) continue;
        double sc, mx;
        const double w = fd_worst(&x, t[i].p, t[i].n, t[i].a, i == 3 || i == 4, &sc);
        const double ab = max_diff(t[i].b, t[i].a, t[i].n, &mx);
        printf(" d%s fd %.1e a~b %.1e", t[i].what, w / sc, ab / mx);
        TU_CHECK(w <= 1e-6 * sc, "%s: d%s off the finite differences by %.3e (scale %.3e)", name, t[i].what, w, sc);
        TU_CHECK(ab <= 1e-12 * mx, "%s: d%s of ref-a and ref-b differ by %.3e (max %.3e)", name, t[i].what, ab, mx);
    }
    printf("\n");
    grads_free(&ga), grads_free(&gb);
    fd_free(&x);
}

/* ---- 2, 3: the CPU backward ------------------------------------------------------------ */

static void cpu_cases(tu_rng *r)
{
    enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, ALPHA = CONFORM_GATE_ALPHA, G = CONFORM_GATE_G };
    static const conform_case cases[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq, chunk, threads */
        {SGLA_F32, G, CONFORM_MILD, 2, 1, 2, 16, 16, 1, 1, 0, 0, 0, 0},
        {SGLA_F32, G, CONFORM_MILD, 2, 150, 3, 32, 48, 1, 1, 0, 0, 64, 0},
        {SGLA_F32, G, CONFORM_MIX30, 1, 300, 2, 64, 32, 1, 1, 0, 4, 32, 2},
        {SGLA_F32, G, CONFORM_NEAR0, 1, 200, 2, 24, 40, 0, 1, 0, 0, 16, 0},
        {SGLA_F32, GAMMA, CONFORM_MILD, 2, 130, 2, 32, 32, 1, 1, 0, 0, 64, 0},
        {SGLA_F32, ALPHA, CONFORM_NEAR0, 1, 97, 3, 20, 12, 0, 0, 0, 0, 32, 1},
        {SGLA_F32, NONE, CONFORM_MILD, 1, 70, 2, 16, 24, 1, 0, 0, 3, 16, 0},
        {SGLA_F32, NONE, CONFORM_MILD, 1, 0, 2, 8, 8, 1, 1, 0, 0, 0, 0},
        {SGLA_F16, G, CONFORM_MILD, 2, 100, 2, 32, 64, 1, 1, 0, 0, 64, 0},
        {SGLA_BF16, GAMMA, CONFORM_MILD, 1, 200, 2, 64, 64, 1, 1, 0, 0, 64, 0},
        {SGLA_BF16, G, CONFORM_NEG30, 1, 128, 2, 32, 32, 1, 1, 0, 3, 64, 0},
        {SGLA_F32, G, CONFORM_RESET, 1, 300, 2, 32, 32, 1, 1, 0, 0, 64, 0},
        {SGLA_F32, G, CONFORM_RESET, 1, 200, 2, 16, 24, 1, 1, 0, 3, 16, 0},
        {SGLA_F32, GAMMA, CONFORM_RESET, 1, 130, 2, 16, 16, 1, 1, 0, 0, 32, 0},
        {SGLA_F32, G, CONFORM_MILD, 2, 90, 2, 16, 24, 1, 1, 1, 0, 32, 0}, /* dh0 == dht in place */
        /* K, V of 128 and 256, K != V both ways, partial chunks, h0 + dht + dh0 */
        {SGLA_F32, G, CONFORM_MILD, 1, 100, 2, 128, 128, 1, 1, 0, 0, 64, 0},
        {SGLA_F32, GAMMA, CONFORM_MILD, 1, 90, 2, 256, 256, 1, 1, 0, 0, 32, 0},
        {SGLA_F32, G, CONFORM_NEAR0, 1, 75, 2, 128, 64, 1, 1, 0, 0, 64, 0},
        {SGLA_F32, GAMMA, CONFORM_MILD, 1, 70, 2, 64, 192, 1, 1, 0, 0, 32, 0},
        {SGLA_F32, G, CONFORM_MIX30, 1, 120, 2, 256, 128, 1, 1, 0, 3, 64, 2},
        {SGLA_BF16, G, CONFORM_MILD, 1, 80, 2, 256, 128, 1, 1, 0, 0, 64, 0},
        {SGLA_F16, GAMMA, CONFORM_MILD, 1, 60, 1, 128, 256, 1, 1, 0, 0, 32, 0},
        /* chunks that are no power of two */
        {SGLA_F32, G, CONFORM_MILD, 1, 40, 2, 16, 24, 1, 1, 0, 0, 3, 0},
        {SGLA_F32, GAMMA, CONFORM_MILD, 2, 37, 2, 24, 16, 1, 1, 0, 0, 5, 0},
        {SGLA_F32, G, CONFORM_MIX30, 1, 130, 2, 32, 48, 1, 1, 0, 3, 24, 2},
        {SGLA_F32, G, CONFORM_NEAR0, 1, 150, 2, 64, 32, 1, 1, 0, 0, 48, 0},
        {SGLA_F32, GAMMA, CONFORM_MILD, 1, 250, 2, 32, 32, 1, 1, 0, 0, 100, 0},
        {SGLA_BF16, G, CONFORM_MILD, 1, 101, 2, 48, 32, 1, 1, 0, 0, 100, 0},
        {SGLA_F16, G, CONFORM_MILD, 1, 60, 2, 32, 32, 1, 1, 0, 0, 5, 0},
        /* T = 0 and 1 in 16 bits; f16 with g_gamma and no gate; none and alpha in 16 bits */
        {SGLA_F16, G, CONFORM_MILD, 1, 0, 2, 16, 16, 1, 1, 0, 0, 0, 0},
        {SGLA_BF16, GAMMA, CONFORM_MILD, 2, 0, 2, 8, 24, 1, 1, 0, 0, 16, 0},
        {SGLA_F16, GAMMA, CONFORM_MILD, 2, 1, 2, 16, 16, 1, 1, 0, 0, 0, 0},
        {SGLA_BF16, G, CONFORM_MILD, 2, 1, 2, 32, 16, 1, 1, 0, 0, 0, 0},
        {SGLA_F16, GAMMA, CONFORM_MILD, 2, 100, 2, 32, 64, 1, 1, 0, 0, 64, 0},
        {SGLA_F16, NONE, CONFORM_MILD, 1, 70, 2, 16, 24, 1, 1, 0, 3, 16, 0},
        {SGLA_BF16, NONE, CONFORM_MILD, 2, 65, 2, 32, 32, 1, 1, 0, 0, 32, 0},
        {SGLA_F16, ALPHA, CONFORM_NEAR0, 1, 97, 3, 20, 12, 1, 1, 0, 0, 32, 1},
        {SGLA_BF16, ALPHA, CONFORM_MILD, 1, 80, 2, 32, 16, 0, 1, 0, 0, 16, 0},
        /* fixed cuts (conform_cuts256): empty first and last sequences, lengths 1, 63, 65, starts on and
         * off chunk boundaries */
        {SGLA_F32, G, CONFORM_MILD, 1, 256, 3, 32, 48, 1, 1, 0, 8, 64, 0, conform_cuts256},
        {SGLA_BF16, GAMMA, CONFORM_MILD, 1, 256, 2, 64, 64, 1, 1, 1, 8, 64, 2, conform_cuts256},
        {SGLA_F16, G, CONFORM_MIX30, 1, 256, 2, 16, 24, 1, 1, 0, 8, 32, 0, conform_cuts256},
        {SGLA_F32, ALPHA, CONFORM_MILD, 1, 256, 2, 128, 64, 0, 1, 0, 8, 48, 1, conform_cuts256},
    };
    static const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conform_data x;
        sgla_status st = conform_draw(&x, &cases[i], r, SGLA_BACKEND_REF_A);
        if (st == SGLA_OK) st = conform_draw_backward(&x, r);
        TU_CHECK(st == SGLA_OK, "conform_draw_backward: %s (%s)", sgla_status_string(st), sgla_last_error());
        if (st != SGLA_OK) {
            conform_free(&x);
            continue;
        }
        for (int ii = 0; ii < 3; ii++) {
            if (!sgla_cpu_force_isa(isas[ii])) continue;
            conform_bresult res;
            conform_check_backward(&x, SGLA_BACKEND_CPU, &res);
            printf("[%s] ", sgla_cpu_isa_name(isas[ii]));
            conform_print_backward(stdout, &res);
            TU_CHECK(res.pass, "%s (%s)", res.label, sgla_cpu_isa_name(isas[ii]));
        }
        sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);
        /* ref-b through the typed API, too */
        conform_bresult rb;
        conform_check_backward(&x, SGLA_BACKEND_REF_B, &rb);
        conform_print_backward(stdout, &rb);
        TU_CHECK(rb.pass, "%s", rb.label);
        conform_free(&x);
    }
}

/* The dg dots of every ISA level against a long double sum: within the fp64
 * summation bound (n + 1) eps sum|a b| (float products are exact in fp64),
 * and the same bits when repeated. */
static void dot64_levels(tu_rng *r)
{
    static const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
    float a[301], b[301];
    for (int trial = 0; trial < 40; trial++) {
        const int n = trial < 20 ? trial : (int)tu_int(r, 20, 300);
        const int off = (int)tu_int(r, 0, 1); /* unaligned rows too */
        for (int i = 0; i < n + off; i++) a[i] = (float)tu_normal(r), b[i] = (float)tu_normal(r);
        long double exact = 0.0L, mag = 0.0L;
        for (int i = 0; i < n; i++) {
            exact += (long double)a[off + i] * (long double)b[off + i];
            mag += fabsl((long double)a[off + i] * (long double)b[off + i]);
        }
        for (int ii = 0; ii < 3; ii++) {
            if (!sgla_cpu_force_isa(isas[ii])) continue;
            const sgla_cpu_kernels *kr = sgla_cpu_kernels_current();
            const double d1 = kr->dot64(a + off, b + off, n), d2 = kr->dot64(a + off, b + off, n);
            TU_CHECK(d1 == d2 && fabsl((long double)d1 - exact) <= (n + 1) * 1.2e-16L * mag,
                     "dot64 %s n=%d: %.17g vs %.17Lg (repeat %.17g)", kr->name, n, d1, exact, d2);
        }
    }
    sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);
    printf("dot64: every level within fp64 rounding of the exact sum\n");
}

/* the same gradients, to the bit, on 1, 2 and 3 threads (dh0 too); every element written */
static void thread_independence(tu_rng *r)
{
    const conform_case c = {SGLA_F32, CONFORM_GATE_G, CONFORM_MILD, 2, 190, 3, 32, 24, 1, 1, 0, 0, 32, 0};
    conform_data x;
    if (conform_draw(&x, &c, r, SGLA_BACKEND_REF_A) != SGLA_OK || conform_draw_backward(&x, r) != SGLA_OK) {
        TU_CHECK(0, "thread independence: draw failed");
        conform_free(&x);
        return;
    }
    float *out[4][5]; /* 1, 2, 3 threads; then 2 with SGLA_FLAG_BWD_HALF_STATES (a CUDA plan's: ignored here) */
    const int64_t n[5] = {x.nqk, x.nqk, x.nv, x.ng, x.ns};
    for (int t = 0; t < 4; t++) {
        for (int j = 0; j < 5; j++) out[t][j] = malloc((size_t)n[j] * 4), tu_poison(out[t][j], SGLA_F32, n[j]);
        sgla_forward_desc f = x.d;
        f.threads = t < 3 ? t + 1 : 2;
        if (t == 3) f.flags |= SGLA_FLAG_BWD_HALF_STATES;
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &f, b.dout = x.dout, b.dht = x.dht;
        b.dq = out[t][0], b.dk = out[t][1], b.dv = out[t][2], b.dg = out[t][3], b.dh0 = out[t][4];
        TU_CHECK(sgla_backward(&b, SGLA_BACKEND_CPU) == SGLA_OK, "threads %d: %s", t + 1, sgla_last_error());
    }
    for (int j = 0; j < 5; j++) TU_CHECK(tu_count_poison(out[0][j], SGLA_F32, n[j]) == 0, "gradient %d not fully written", j);
    for (int t = 1; t < 4; t++) {
        int same = 1;
        for (int j = 0; j < 5; j++) same &= !memcmp(out[0][j], out[t][j], (size_t)n[j] * 4);
        if (t < 3) TU_CHECK(same, "%d threads gave other bits than 1", t + 1);
        else TU_CHECK(same, "SGLA_FLAG_BWD_HALF_STATES moved the CPU backward's bits");
    }
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 5; j++) free(out[t][j]);
    conform_free(&x);
}

/* The sequence split (fewer items than threads, or forced): the same bits as the whole-item loop on one
 * thread, for every gradient, dg_gamma and dh0 included; one window and several, K < V and K > V, items
 * too short to split beside split ones, partial last chunks, every output element written */
static void split_identity(tu_rng *r)
{
    static const int64_t cuts[9] = {0, 0, 1, 64, 64, 129, 300, 364, 364}; /* lengths 0 1 63 0 65 171 64 0 */
    const conform_case cases[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq, chunk, threads, cuts */
        {SGLA_F32, CONFORM_GATE_G, CONFORM_MILD, 1, 700, 1, 32, 24, 1, 1, 0, 0, 32, 0, NULL},
        {SGLA_BF16, CONFORM_GATE_GAMMA, CONFORM_MILD, 1, 64 * 40 + 17, 1, 128, 128, 1, 1, 0, 0, 64, 0, NULL},
        {SGLA_F32, CONFORM_GATE_NONE, CONFORM_MILD, 2, 300, 1, 64, 96, 0, 0, 0, 0, 64, 0, NULL},
        {SGLA_F16, CONFORM_GATE_G, CONFORM_MILD, 1, 364, 1, 16, 40, 1, 1, 0, 8, 16, 0, cuts},
        {SGLA_F32, CONFORM_GATE_GAMMA, CONFORM_MILD, 1, 45 * 32 + 5, 2, 200, 24, 0, 1, 0, 0, 32, 0, NULL},
    };
    /* threads, the split hook (2: the chunk states computed twice, not kept) and dh0 written over dht (where
     * the case has both); the first (one thread, no split) is the baseline */
    static const int runs[][3] = {{1, 0, 0}, {1, 1, 0}, {1, 2, 0}, {2, -1, 0}, {3, -1, 0}, {2, 1, 1},
                                  {3, 2, 1}, {3, 0, 0}, {8, 1, 0}, {5, 2, 1}};
    const int nruns = (int)(sizeof runs / sizeof runs[0]);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const conform_case *c = &cases[ci];
        conform_data x;
        if (conform_draw(&x, c, r, SGLA_BACKEND_REF_A) != SGLA_OK || conform_draw_backward(&x, r) != SGLA_OK) {
            TU_CHECK(0, "split case %zu: draw failed", ci);
            conform_free(&x);
            continue;
        }
        const int gg = c->gate == CONFORM_GATE_GAMMA, gt = c->gate == CONFORM_GATE_G;
        /* dq, dk, dv in the inputs' dtype; dg, dg_gamma, dh0 (with h0) fp32 */
        const int64_t n[6] = {x.nqk, x.nqk, x.nv, gt ? x.ng : 0, gg ? x.d.H : 0, c->h0 ? x.ns : 0};
        const sgla_dtype dt[6] = {c->dtype, c->dtype, c->dtype, SGLA_F32, SGLA_F32, SGLA_F32};
        char *out[sizeof runs / sizeof runs[0]][6];
        for (int ri = 0; ri < nruns; ri++) {
            for (int j = 0; j < 6; j++) {
                out[ri][j] = n[j] ? malloc((size_t)n[j] * sgla_dtype_size(dt[j])) : NULL;
                if (out[ri][j]) tu_poison(out[ri][j], dt[j], n[j]);
            }
            sgla_forward_desc f = x.d;
            f.threads = runs[ri][0];
            sgla_backward_desc b;
            sgla_backward_desc_init(&b);
            b.fwd = &f, b.dout = x.dout, b.dht = x.dht;
            b.dq = out[ri][0], b.dk = out[ri][1], b.dv = out[ri][2], b.dg = out[ri][3], b.dg_gamma = out[ri][4];
            b.dh0 = out[ri][5];
            if (runs[ri][2] && b.dh0 && b.dht) { /* in place: dht's values in dh0's buffer */
                memcpy(b.dh0, x.dht, (size_t)n[5] * sizeof(float));
                b.dht = b.dh0;
            }
            sgla_cpu_force_split(runs[ri][1]);
            const sgla_status st = sgla_backward(&b, SGLA_BACKEND_CPU);
            sgla_cpu_force_split(-1);
            TU_CHECK(st == SGLA_OK, "split case %zu threads %d split %d: %s", ci, runs[ri][0], runs[ri][1],
                     sgla_last_error());
        }
        for (int j = 0; j < 6; j++)
            if (n[j])
                TU_CHECK(tu_count_poison(out[0][j], dt[j], n[j]) == 0, "split case %zu: output %d not fully written", ci,
                         j);
        for (int ri = 1; ri < nruns; ri++)
            for (int j = 0; j < 6; j++)
                if (n[j]) {
                    const size_t es = sgla_dtype_size(dt[j]);
                    int64_t first = -1;
                    for (int64_t i = 0; i < n[j] && first < 0; i++)
                        if (memcmp(out[0][j] + i * es, out[ri][j] + i * es, es)) first = i;
                    TU_CHECK(first < 0, "split case %zu (%s K=%lld V=%lld T=%lld) threads %d split %d: output %d "
                             "differs from one thread first at element %lld", ci, sgla_dtype_name(c->dtype),
                             (long long)c->K, (long long)c->V, (long long)c->T, runs[ri][0], runs[ri][1], j,
                             (long long)first);
                }
        for (int ri = 0; ri < nruns; ri++)
            for (int j = 0; j < 6; j++) free(out[ri][j]);
        conform_free(&x);
    }
    printf("split: the same bits on 1-8 threads, split or not, dh0 over dht or not (%zu cases)\n",
           sizeof cases / sizeof cases[0]);
}

/* ---- 4. validation -------------------------------------------------------------------------- */

enum { VB = 1, VT = 6, VH = 2, VK = 3, VV = 4 };
#define VNQK (VB * VT * VH * VK)
#define VNV (VB * VT * VH * VV)
#define VNS (VB * VH * VK * VV)
static float vq[VNQK], vk[VNQK], vv[VNV], vg[VB * VT * VH], vgg[VH], vh0[VNS], vdo[VNV], vdht[VNS];
static float vdq[VNQK], vdk[VNQK], vdv[VNV], vdg[VB * VT * VH], vdgg[VH], vdh0[VNS];

static void vbase(sgla_forward_desc *f, sgla_backward_desc *b)
{
    sgla_forward_desc_init(f);
    f->q = vq, f->k = vk, f->v = vv, f->g = vg, f->h0 = vh0;
    f->B = VB, f->T = VT, f->H = VH, f->K = VK, f->V = VV, f->chunk = 4;
    sgla_backward_desc_init(b);
    b->fwd = f;
    b->dout = vdo, b->dht = vdht;
    b->dq = vdq, b->dk = vdk, b->dv = vdv, b->dg = vdg, b->dh0 = vdh0;
}

static void vexpect(const char *what, const sgla_backward_desc *b, sgla_backend be, sgla_status want)
{
    float *outs[] = {vdq, vdk, vdv, vdg, vdgg, vdh0};
    const size_t sizes[] = {sizeof vdq, sizeof vdk, sizeof vdv, sizeof vdg, sizeof vdgg, sizeof vdh0};
    for (int i = 0; i < 6; i++) memset(outs[i], 0x7f, sizes[i]);
    sgla_status st = sgla_backward(b, be);
    TU_CHECK(st == want, "%s: got %d (%s: %s), want %d", what, (int)st, sgla_status_string(st), sgla_last_error(),
             (int)want);
    if (want != SGLA_OK) {
        TU_CHECK(sgla_last_error()[0] != '\0', "%s: no detail", what);
        int same = 1;
        for (int i = 0; i < 6; i++)
            for (size_t j = 0; j < sizes[i] / 4; j++) same &= ((const uint32_t *)(const void *)outs[i])[j] == 0x7f7f7f7fu;
        TU_CHECK(same, "%s: an output was written", what);
    }
}

static void validation(tu_rng *r)
{
    tu_fill(r, vq, SGLA_F32, VNQK, 1.0), tu_fill(r, vk, SGLA_F32, VNQK, 1.0), tu_fill(r, vv, SGLA_F32, VNV, 1.0);
    tu_fill(r, vdo, SGLA_F32, VNV, 1.0), tu_fill(r, vh0, SGLA_F32, VNS, 1.0), tu_fill(r, vdht, SGLA_F32, VNS, 1.0);
    for (int i = 0; i < VB * VT * VH; i++) vg[i] = -0.1f;
    for (int i = 0; i < VH; i++) vgg[i] = -0.2f;
    sgla_forward_desc f;
    sgla_backward_desc b;
    static const sgla_backend bes[] = {SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B, SGLA_BACKEND_CPU};
    for (size_t i = 0; i < 3; i++) {
        const sgla_backend be = bes[i];
        vbase(&f, &b);
        vexpect("valid", &b, be, SGLA_OK);
        b.dh0 = vdht; /* in place */
        vexpect("dh0 == dht", &b, be, SGLA_OK);
        vbase(&f, &b);
        b.dq = NULL;
        vexpect("dq NULL", &b, be, SGLA_ERR_NULL_POINTER);
        vbase(&f, &b);
        b.dout = NULL;
        vexpect("dout NULL", &b, be, SGLA_ERR_NULL_POINTER);
        vbase(&f, &b);
        b.fwd = NULL;
        vexpect("fwd NULL", &b, be, SGLA_ERR_NULL_POINTER);
        vbase(&f, &b);
        f.g = NULL;
        vexpect("dg without g", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        b.dg = NULL, b.dg_gamma = vdgg;
        vexpect("dg_gamma without g_gamma", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        f.h0 = NULL;
        vexpect("dh0 without h0", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        b.dk = vdq;
        vexpect("dk is dq", &b, be, SGLA_ERR_OVERLAP);
        vbase(&f, &b);
        b.dq = vq;
        vexpect("dq over q", &b, be, SGLA_ERR_OVERLAP);
        vbase(&f, &b);
        b.dv = vdo;
        vexpect("dv over dout", &b, be, SGLA_ERR_OVERLAP);
        vbase(&f, &b);
        b.dh0 = vdht + 1;
        vexpect("dh0 across dht", &b, be, SGLA_ERR_OVERLAP);
        {   /* dh0 == dht in place, where dht is another input too: still an overlap */
            float qsnap[VNQK];
            memcpy(qsnap, vq, sizeof vq);
            vbase(&f, &b);
            b.dht = b.dh0 = vq;
            vexpect("dh0 == dht == q", &b, be, SGLA_ERR_OVERLAP);
            TU_CHECK(!memcmp(qsnap, vq, sizeof vq), "dh0 == dht == q: q written");
            vbase(&f, &b);
            b.dht = b.dh0 = vh0;
            vexpect("dh0 == dht == h0", &b, be, SGLA_ERR_OVERLAP);
        }
        vbase(&f, &b);
        b.workspace = vdk + 1, b.workspace_bytes = 16;
        vexpect("workspace on dk", &b, be, SGLA_ERR_OVERLAP);
        vbase(&f, &b);
        b.workspace = (void *)(vdo + 2), b.workspace_bytes = 4;
        vexpect("workspace on dout", &b, be, SGLA_ERR_OVERLAP);
        {   /* a workspace query that fails (in the backend: the CPU takes no f64) writes no size */
            vbase(&f, &b);
            f.dtype = SGLA_F64, f.q = f.k = f.v = NULL, f.g = NULL, f.h0 = NULL;
            b.dout = b.dq = b.dk = b.dv = NULL, b.dht = NULL, b.dg = NULL, b.dh0 = NULL;
            size_t nb = 12345;
            const sgla_status st = sgla_backward_workspace_size(&b, SGLA_BACKEND_CPU, &nb);
            TU_CHECK(st == SGLA_ERR_UNSUPPORTED_DTYPE && nb == 12345, "failed backward workspace query: %s, bytes %zu",
                     sgla_status_string(st), nb);
        }
        vbase(&f, &b);
        vg[3] = 0.5f;
        vexpect("positive g", &b, be, SGLA_ERR_POSITIVE_GATE);
        vg[3] = -0.1f;
        vbase(&f, &b);
        f.K = 0;
        vexpect("K = 0", &b, be, SGLA_ERR_INVALID_SIZE);
        vbase(&f, &b);
        b.size = 7;
        vexpect("backward descriptor size 7", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        b.size = offsetof(sgla_backward_desc, workspace_bytes) + 4; /* ends inside workspace_bytes */
        vexpect("backward descriptor cut inside a field", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        b.size = sizeof b - 4; /* ends inside workspace_limit */
        vexpect("backward descriptor cut inside workspace_limit", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        b.size = offsetof(sgla_backward_desc, workspace_limit); /* the layout before it: read as 0 */
        b.workspace_limit = 1; /* past the size given (and a CUDA field): the older layout is what is checked */
        vexpect("backward descriptor of the layout before workspace_limit", &b, be, SGLA_OK);
        vbase(&f, &b);
        f.size = offsetof(sgla_forward_desc, pool) + 4; /* ends inside pool */
        vexpect("forward descriptor cut inside a field", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        f.size = 7;
        vexpect("forward descriptor size 7", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        b.workspace_bytes = 8;
        vexpect("workspace_bytes without workspace", &b, be, SGLA_ERR_INVALID_ARGUMENT);
        vbase(&f, &b);
        f.flags = SGLA_FLAG_CHECK_FINITE;
        vdo[5] = NAN;
        vexpect("NaN in dout with CHECK_FINITE", &b, be, SGLA_ERR_NONFINITE_INPUT);
        vdo[5] = 0.25f;
    }
    vbase(&f, &b);
    vexpect("ref-c has no backward", &b, SGLA_BACKEND_REF_C, SGLA_ERR_BACKEND_UNAVAILABLE);
    vexpect("ref-d has no backward", &b, SGLA_BACKEND_REF_D, SGLA_ERR_BACKEND_UNAVAILABLE);
    {
        size_t wsc = 7;
        TU_CHECK(sgla_backward_workspace_size(&b, SGLA_BACKEND_REF_C, &wsc) == SGLA_ERR_BACKEND_UNAVAILABLE,
                 "ref-c's backward workspace query: the call's status");
    }
    vexpect("backend 42", &b, (sgla_backend)42, SGLA_ERR_INVALID_BACKEND);
    f.dtype = SGLA_F64;
    {
        static double q64[VNQK], k64[VNQK], v64[VNV], g64[VB * VT * VH], h064[VNS], do64[VNV], dht64[VNS];
        static double dq64[VNQK], dk64[VNQK], dv64[VNV], dg64[VB * VT * VH], dh064[VNS];
        f.q = q64, f.k = k64, f.v = v64, f.g = g64, f.h0 = h064;
        b.dout = do64, b.dht = dht64, b.dq = dq64, b.dk = dk64, b.dv = dv64, b.dg = dg64, b.dh0 = dh064;
        TU_CHECK(sgla_backward(&b, SGLA_BACKEND_CPU) == SGLA_ERR_UNSUPPORTED_DTYPE, "f64 on the CPU backend");
        TU_CHECK(sgla_backward(&b, SGLA_BACKEND_REF_B) == SGLA_OK, "f64 on ref-b: %s", sgla_last_error());
    }
    size_t ws = 7;
    vbase(&f, &b);
    TU_CHECK(sgla_backward_workspace_size(&b, SGLA_BACKEND_CPU, &ws) == SGLA_OK && ws == 0, "CPU workspace %zu", ws);
    TU_CHECK(sgla_backward_workspace_size(&b, SGLA_BACKEND_CPU, NULL) == SGLA_ERR_NULL_POINTER, "workspace into NULL");
    /* T = 0: dh0 = dht, nothing else */
    vbase(&f, &b);
    f.T = 0;
    memset(vdh0, 0, sizeof vdh0);
    for (size_t i = 0; i < 3; i++) {
        TU_CHECK(sgla_backward(&b, bes[i]) == SGLA_OK && !memcmp(vdh0, vdht, sizeof vdh0), "T = 0 on %s: dh0 != dht",
                 sgla_backend_name(bes[i]));
        memset(vdh0, 0, sizeof vdh0);
    }
}

int main(void)
{
    uint64_t seed = tu_seed("test_backward");
    tu_rng r;
    tu_rng_init(&r, seed);
    static const fd_case fds[] = {
        /* B, T, H, K, V, C, gate, h0, dht, nseq, cu */
        {2, 9, 2, 3, 4, 4, 2, 1, 1, 0, {0}},
        {1, 10, 2, 4, 3, 3, 1, 0, 1, 0, {0}},
        {2, 7, 1, 3, 3, 4, 0, 1, 0, 0, {0}},
        {1, 11, 2, 3, 2, 4, 2, 1, 1, 3, {0, 5, 5, 11}},
        {1, 9, 1, 2, 3, 4, 3, 1, 1, 0, {0}},
        {1, 1, 2, 3, 3, 4, 2, 1, 1, 0, {0}},
    };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) fd_check(&fds[i], &r);
    dot64_levels(&r);
    cpu_cases(&r);
    thread_independence(&r);
    split_identity(&r);
    validation(&r);
    return tu_finish("test_backward");
}
