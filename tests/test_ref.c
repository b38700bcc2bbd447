/* The fp64 reference family against itself: B, C and D against A over many
 * randomised shapes, gates, dtypes and chunk sizes; A against the quadratic
 * closed form; varlen against separate calls; the typed forward path.
 *
 * D (factorised) is compared only where every chunk-local cumulative
 * log-gate stays above -600: beyond about -709, exp(-b_j) overflows even in
 * fp64 and D must show that as a non-finite output, which is checked. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "testutil.h"

#define TOL 1e-12

typedef struct tcase {
    sgla_forward_desc d;
    void *q, *k, *v;
    float *g, *gg, *h0;
    int64_t *cu;
} tcase;

static void tcase_free(tcase *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->gg), free(c->h0), free(c->cu);
    memset(c, 0, sizeof *c);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* A gate value of the requested regime: 0 near-zero, 1 moderate, 2 very negative. */
static float draw_gate(tu_rng *r, int regime)
{
    switch (regime) {
    case 0: return (float)-tu_uniform_range(r, 0.0, 1e-4);
    case 1: return (float)log(tu_uniform_range(r, 0.5, 1.0));
    default: return tu_uniform(r) < 0.5 ? -30.0f : (float)tu_uniform_range(r, -30.0, -5.0);
    }
}

/* Most negative chunk-local cumulative log-gate over all chunks and heads. */
static double min_chunk_logcum(const sgla_forward_desc *d)
{
    double worst = 0.0;
    int64_t N = sgla_num_sequences(d);
    for (int64_t n = 0; n < N; n++) {
        int64_t b, t0, t1;
        sgla_seq_bounds(d, n, &b, &t0, &t1);
        for (int64_t h = 0; h < d->H; h++)
            for (int64_t s0 = t0; s0 < t1; s0 += d->chunk) {
                double acc = 0.0;
                for (int64_t t = s0; t < t1 && t < s0 + d->chunk; t++) {
                    acc += d->g ? ((const float *)d->g)[(b * d->T + t) * d->H + h]
                           : d->g_gamma ? ((const float *)d->g_gamma)[h] : 0.0;
                    if (acc < worst) worst = acc;
                }
            }
    }
    return worst;
}

static void make_case(tu_rng *r, tcase *c, int idx)
{
    memset(c, 0, sizeof *c);
    sgla_forward_desc *d = &c->d;
    sgla_forward_desc_init(d);
    static const int64_t chunks[] = {1, 2, 3, 4, 5, 7, 8, 16, 64};
    d->chunk = chunks[tu_int(r, 0, 8)];
    d->H = tu_int(r, 1, 3);
    d->K = tu_int(r, 1, 9);
    d->V = tu_int(r, 1, 9);
    d->dtype = (sgla_dtype)tu_int(r, 0, 2);
    d->scale = tu_uniform(r) < 0.3f ? 1.0f : (float)tu_uniform_range(r, 0.1, 2.0);
    int varlen = tu_uniform(r) < 0.3;
    int64_t C = d->chunk;
    if (varlen) {
        int64_t N = tu_int(r, 1, 5);
        c->cu = xmalloc((size_t)(N + 1) * sizeof *c->cu);
        c->cu[0] = 0;
        for (int64_t i = 0; i < N; i++) {
            int64_t choice = tu_int(r, 0, 5), len;
            switch (choice) {
            case 0: len = 0; break; /* empty sequences are allowed */
            case 1: len = 1; break;
            case 2: len = C > 1 ? C - 1 : 1; break;
            case 3: len = C; break;
            case 4: len = C + 1; break;
            default: len = tu_int(r, 0, 3 * C + 5); break;
            }
            c->cu[i + 1] = c->cu[i] + len;
        }
        d->B = 1;
        d->T = c->cu[N];
        d->cu_seqlens = c->cu;
        d->num_seqs = N;
    } else {
        d->B = tu_int(r, 1, 3);
        int64_t choice = idx % 7;
        switch (choice) {
        case 0: d->T = 0; break;
        case 1: d->T = 1; break;
        case 2: d->T = C > 1 ? C - 1 : 1; break;
        case 3: d->T = C; break;
        case 4: d->T = C + 1; break;
        case 5: d->T = tu_int(r, 2, 4 * C + 3); break;
        default: d->T = tu_int(r, 150, 260); break; /* long */
        }
        if (choice == 6 && d->chunk == 1 && d->K * d->V > 30) d->K = d->V = 5; /* keep ref-c's O(T^2/C) short */
    }
    int64_t nqk = d->B * d->T * d->H * d->K, nv = d->B * d->T * d->H * d->V;
    size_t es = sgla_dtype_size(d->dtype);
    c->q = xmalloc((size_t)nqk * es);
    c->k = xmalloc((size_t)nqk * es);
    c->v = xmalloc((size_t)nv * es);
    tu_fill(r, c->q, d->dtype, nqk, 1.0);
    tu_fill(r, c->k, d->dtype, nqk, 1.0);
    tu_fill(r, c->v, d->dtype, nv, 1.0);
    d->q = c->q, d->k = c->k, d->v = c->v;
    d->o = (void *)1; /* never written: references return fp64 */

    int gate = tu_int(r, 0, 2), regime = tu_int(r, 0, 2);
    if (gate == 1) {
        c->gg = xmalloc((size_t)d->H * sizeof *c->gg);
        for (int64_t h = 0; h < d->H; h++) c->gg[h] = draw_gate(r, regime);
        d->g_gamma = c->gg;
    } else if (gate == 2) {
        int64_t n = d->B * d->T * d->H;
        c->g = xmalloc((size_t)n * sizeof *c->g);
        for (int64_t i = 0; i < n; i++) c->g[i] = draw_gate(r, tu_uniform(r) < 0.8 ? regime : tu_int(r, 0, 2));
        d->g = c->g;
    }
    int64_t ns = sgla_num_sequences(d) * d->H * d->K * d->V;
    if (tu_uniform(r) < 0.6) {
        c->h0 = xmalloc((size_t)ns * sizeof *c->h0);
        for (int64_t i = 0; i < ns; i++) c->h0[i] = (float)tu_normal(r);
        d->h0 = c->h0;
    }
}

static const char *gate_name(const sgla_forward_desc *d) { return d->g ? "g" : d->g_gamma ? "g_gamma" : "none"; }

static void describe(const sgla_forward_desc *d, char *buf, size_t n)
{
    snprintf(buf, n, "B=%lld T=%lld H=%lld K=%lld V=%lld C=%lld %s gate=%s h0=%d varlen=%lld scale=%g",
             (long long)d->B, (long long)d->T, (long long)d->H, (long long)d->K, (long long)d->V,
             (long long)d->chunk, sgla_dtype_name(d->dtype), gate_name(d), d->h0 != NULL,
             (long long)(d->cu_seqlens ? d->num_seqs : 0), (double)d->scale);
}

static int has_nonfinite(const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 1;
    return 0;
}

/* Rel L2 treating two all-zero vectors as equal. */
static double rel(const double *a, const double *b, int64_t n) { return n == 0 ? 0.0 : tu_rel_l2(a, b, n); }

/* ||a - b|| / ||m||, m the same output of |q|, |k|, |v|, |h0| (every term's size, no cancellation): the
 * family's members sum the same terms in other orders and forms, so they differ by rounding of the
 * terms' sizes, not of their sum.  Judged against ||b|| alone, a sum that cancels (one token of K = 4
 * with q.k near 0: seed 973067973, case 75, 1.2e-12) made the test fail on rounding. */
static double rel_to(const double *a, const double *b, const double *m, int64_t n)
{
    double e = 0.0, s = 0.0;
    for (int64_t i = 0; i < n; i++) e += (a[i] - b[i]) * (a[i] - b[i]), s += m[i] * m[i];
    return e == 0.0 ? 0.0 : s == 0.0 ? INFINITY : sqrt(e / s);
}

/* x's inputs q, k, v, h0 with their signs cleared (the gates kept), in m (freed by tcase_free) */
static void abs_case(const tcase *x, tcase *m)
{
    memset(m, 0, sizeof *m);
    m->d = x->d;
    const sgla_forward_desc *d = &x->d;
    const int64_t nqk = d->B * d->T * d->H * d->K, nv = d->B * d->T * d->H * d->V;
    const size_t es = sgla_dtype_size(d->dtype);
    void **dst[3] = {&m->q, &m->k, &m->v};
    const void *src[3] = {x->q, x->k, x->v};
    const int64_t cnt[3] = {nqk, nqk, nv};
    for (int a = 0; a < 3; a++) {
        *dst[a] = xmalloc((size_t)cnt[a] * es);
        memcpy(*dst[a], src[a], (size_t)cnt[a] * es);
        for (int64_t i = 0; i < cnt[a]; i++) {
            if (es == 4) ((float *)*dst[a])[i] = fabsf(((float *)*dst[a])[i]);
            else ((uint16_t *)*dst[a])[i] &= 0x7fffu; /* f16, bf16: the sign bit */
        }
    }
    m->d.q = m->q, m->d.k = m->k, m->d.v = m->v;
    if (x->h0) {
        const int64_t ns = sgla_num_sequences(d) * d->H * d->K * d->V;
        m->h0 = xmalloc((size_t)ns * sizeof *m->h0);
        for (int64_t i = 0; i < ns; i++) m->h0[i] = fabsf(x->h0[i]);
        m->d.h0 = m->h0;
    }
}

static void check_family(tcase *c, int idx, int *d_compared, int *d_hazard)
{
    sgla_forward_desc *d = &c->d;
    int64_t nv = d->B * d->T * d->H * d->V, ns = sgla_num_sequences(d) * d->H * d->K * d->V;
    double *o[4], *ht[4];
    char desc[256];
    describe(d, desc, sizeof desc);
    for (int kk = 0; kk < 4; kk++) {
        o[kk] = xmalloc((size_t)(nv > 0 ? nv : 1) * sizeof(double));
        ht[kk] = xmalloc((size_t)ns * sizeof(double));
        sgla_status st = sgla_reference(d, (sgla_backend)(SGLA_BACKEND_REF_A + kk), o[kk], ht[kk]);
        TU_CHECK(st == SGLA_OK, "case %d ref %c: %s (%s) [%s]", idx, 'a' + kk, sgla_status_string(st),
                 sgla_last_error(), desc);
    }
    TU_CHECK(!has_nonfinite(o[0], nv) && !has_nonfinite(ht[0], ns), "case %d: ref-a not finite [%s]", idx, desc);
    tcase m; /* the terms' sizes */
    abs_case(c, &m);
    double *om = xmalloc((size_t)(nv > 0 ? nv : 1) * sizeof(double)), *htm = xmalloc((size_t)ns * sizeof(double));
    TU_CHECK(sgla_reference(&m.d, SGLA_BACKEND_REF_A, om, htm) == SGLA_OK, "case %d: ref-a of |inputs| failed [%s]",
             idx, desc);
    double worst = min_chunk_logcum(d);
    for (int kk = 1; kk < 4; kk++) {
        if (kk == 3 && worst < -600.0) {
            if (worst < -745.0 && d->T > 0) {
                (*d_hazard)++;
                TU_CHECK(has_nonfinite(o[3], nv), "case %d: ref-d should overflow (min b = %g) [%s]", idx, worst,
                         desc);
            }
            continue;
        }
        if (kk == 3) (*d_compared)++;
        const double eo = rel_to(o[kk], o[0], om, nv), eh = rel_to(ht[kk], ht[0], htm, ns);
        TU_CHECK(eo < TOL && eh < TOL, "case %d ref-%c vs ref-a: o %.3g, ht %.3g of the terms' size (rel %.3g, %.3g) [%s]",
                 idx, 'a' + kk, eo, eh, rel(o[kk], o[0], nv), rel(ht[kk], ht[0], ns), desc);
    }
    /* T = 0: the state passes through untouched. */
    if (d->T == 0)
        for (int64_t i = 0; i < ns; i++)
            if (ht[0][i] != (d->h0 ? (double)((const float *)d->h0)[i] : 0.0)) {
                TU_CHECK(0, "case %d: T = 0 must leave ht = h0", idx);
                break;
            }
    for (int kk = 0; kk < 4; kk++) free(o[kk]), free(ht[kk]);
    free(om), free(htm);
    tcase_free(&m);
}

/* o_t = scale (exp(G_t) q_t^T h0 + sum_{s<=t} exp(G_t - G_s) (q_t.k_s) v_s),
 * with G the cumulative log-gate of the whole sequence: independent of A. */
static void check_closed_form(tu_rng *r)
{
    for (int rep = 0; rep < 20; rep++) {
        tcase c;
        memset(&c, 0, sizeof c);
        sgla_forward_desc *d = &c.d;
        sgla_forward_desc_init(d);
        d->B = tu_int(r, 1, 2), d->T = tu_int(r, 1, 20), d->H = tu_int(r, 1, 2);
        d->K = tu_int(r, 1, 5), d->V = tu_int(r, 1, 5), d->scale = 0.7f;
        int64_t nqk = d->B * d->T * d->H * d->K, nv = d->B * d->T * d->H * d->V, ng = d->B * d->T * d->H;
        int64_t ns = d->B * d->H * d->K * d->V;
        c.q = xmalloc((size_t)nqk * 4), c.k = xmalloc((size_t)nqk * 4), c.v = xmalloc((size_t)nv * 4);
        c.g = xmalloc((size_t)ng * 4), c.h0 = xmalloc((size_t)ns * 4);
        tu_fill(r, c.q, SGLA_F32, nqk, 1.0), tu_fill(r, c.k, SGLA_F32, nqk, 1.0), tu_fill(r, c.v, SGLA_F32, nv, 1.0);
        tu_fill(r, c.h0, SGLA_F32, ns, 1.0);
        for (int64_t i = 0; i < ng; i++) c.g[i] = (float)log(tu_uniform_range(r, 0.6, 1.0));
        d->q = c.q, d->k = c.k, d->v = c.v, d->g = c.g, d->h0 = c.h0, d->o = (void *)1;
        double *o = xmalloc((size_t)nv * sizeof(double)), *want = xmalloc((size_t)nv * sizeof(double));
        TU_CHECK(sgla_reference(d, SGLA_BACKEND_REF_A, o, NULL) == SGLA_OK, "closed form: ref-a failed");
        const float *Q = c.q, *Kk = c.k, *Vv = c.v;
        for (int64_t b = 0; b < d->B; b++)
            for (int64_t h = 0; h < d->H; h++)
                for (int64_t t = 0; t < d->T; t++) {
                    double Gt = 0.0;
                    for (int64_t u = 0; u <= t; u++) Gt += c.g[(b * d->T + u) * d->H + h];
                    for (int64_t j = 0; j < d->V; j++) {
                        double acc = 0.0;
                        for (int64_t i = 0; i < d->K; i++)
                            acc += exp(Gt) * Q[((b * d->T + t) * d->H + h) * d->K + i] *
                                   c.h0[((b * d->H + h) * d->K + i) * d->V + j];
                        double Gs = 0.0;
                        for (int64_t s = 0; s <= t; s++) {
                            Gs += c.g[(b * d->T + s) * d->H + h];
                            double dot = 0.0;
                            for (int64_t i = 0; i < d->K; i++)
                                dot += (double)Q[((b * d->T + t) * d->H + h) * d->K + i] *
                                       Kk[((b * d->T + s) * d->H + h) * d->K + i];
                            acc += exp(Gt - Gs) * dot * Vv[((b * d->T + s) * d->H + h) * d->V + j];
                        }
                        want[((b * d->T + t) * d->H + h) * d->V + j] = (double)d->scale * acc;
                    }
                }
        double e = tu_rel_l2(o, want, nv);
        TU_CHECK(e < TOL, "closed form: ref-a rel L2 %.3g", e);
        free(o), free(want);
        tcase_free(&c);
    }
}

/* A varlen call equals separate B = 1 calls per sequence. */
static void check_varlen_split(tu_rng *r)
{
    for (int rep = 0; rep < 10; rep++) {
        tcase c;
        do {
            make_case(r, &c, rep);
            if (c.d.cu_seqlens) break;
            tcase_free(&c);
        } while (1);
        sgla_forward_desc *d = &c.d;
        int64_t nv = d->T * d->H * d->V, kv = d->H * d->K * d->V;
        double *o = xmalloc((size_t)(nv ? nv : 1) * 8), *ht = xmalloc((size_t)(d->num_seqs * kv) * 8);
        sgla_backend kind = (sgla_backend)(SGLA_BACKEND_REF_A + rep % 3);
        TU_CHECK(sgla_reference(d, kind, o, ht) == SGLA_OK, "varlen: reference failed");
        size_t es = sgla_dtype_size(d->dtype);
        for (int64_t n = 0; n < d->num_seqs; n++) {
            sgla_forward_desc s = *d;
            int64_t t0 = c.cu[n], len = c.cu[n + 1] - t0;
            s.cu_seqlens = NULL, s.num_seqs = 0, s.B = 1, s.T = len;
            s.q = (const char *)c.q + (size_t)(t0 * d->H * d->K) * es;
            s.k = (const char *)c.k + (size_t)(t0 * d->H * d->K) * es;
            s.v = (const char *)c.v + (size_t)(t0 * d->H * d->V) * es;
            if (c.g) s.g = c.g + t0 * d->H;
            if (c.h0) s.h0 = c.h0 + n * kv;
            double *os = xmalloc((size_t)(len * d->H * d->V + 1) * 8), *hs = xmalloc((size_t)kv * 8);
            TU_CHECK(sgla_reference(&s, kind, os, hs) == SGLA_OK, "varlen: split reference failed");
            int same = memcmp(os, o + t0 * d->H * d->V, (size_t)(len * d->H * d->V) * 8) == 0 &&
                       memcmp(hs, ht + n * kv, (size_t)kv * 8) == 0;
            TU_CHECK(same, "varlen rep %d seq %lld: differs from a separate call (%s)", rep, (long long)n,
                     sgla_backend_name(kind));
            free(os), free(hs);
        }
        free(o), free(ht);
        tcase_free(&c);
    }
}

/* The typed path (sgla_forward with a reference backend) rounds the fp64
 * result once into o and ht, and supports the in-place state update. */
static void check_typed(tu_rng *r)
{
    for (int rep = 0; rep < 12; rep++) {
        tcase c;
        make_case(r, &c, 5);
        sgla_forward_desc *d = &c.d;
        int64_t nv = d->B * d->T * d->H * d->V, ns = sgla_num_sequences(d) * d->H * d->K * d->V;
        double *o64 = xmalloc((size_t)(nv ? nv : 1) * 8), *h64 = xmalloc((size_t)ns * 8);
        void *o = xmalloc((size_t)(nv ? nv : 1) * sgla_dtype_size(d->dtype));
        float *ht = xmalloc((size_t)ns * 4);
        TU_CHECK(sgla_reference(d, SGLA_BACKEND_REF_B, o64, h64) == SGLA_OK, "typed: reference failed");
        d->o = o, d->ht = ht;
        /* NaN first: an element left unwritten fails below, whatever the allocator left there (a zero
         * state of an empty sequence matched fresh memory) */
        tu_poison(o, d->dtype, nv);
        tu_poison(ht, SGLA_F32, ns);
        sgla_status st = sgla_forward(d, SGLA_BACKEND_REF_B);
        TU_CHECK(st == SGLA_OK, "typed: forward %s (%s)", sgla_status_string(st), sgla_last_error());
        int bad = 0;
        for (int64_t i = 0; i < nv; i++) {
            double x;
            tu_to_double((const char *)o + (size_t)i * sgla_dtype_size(d->dtype), d->dtype, 1, &x);
            double want;
            switch (d->dtype) {
            case SGLA_F32: want = (float)o64[i]; break;
            case SGLA_F16: want = sgla_f16_to_f32(sgla_f64_to_f16(o64[i])); break;
            default: want = sgla_bf16_to_f32(sgla_f64_to_bf16(o64[i])); break;
            }
            if (x != want) bad++;
        }
        for (int64_t i = 0; i < ns; i++)
            if (ht[i] != (float)h64[i]) bad++;
        TU_CHECK(bad == 0, "typed: %d elements differ from the rounded fp64 result", bad);
        /* In place: ht == h0 gives the same final state. */
        if (c.h0) {
            float *st0 = xmalloc((size_t)ns * 4);
            memcpy(st0, c.h0, (size_t)ns * 4);
            d->h0 = st0, d->ht = st0;
            st = sgla_forward(d, SGLA_BACKEND_REF_C);
            TU_CHECK(st == SGLA_OK, "in place: %s", sgla_status_string(st));
            TU_CHECK(memcmp(st0, ht, (size_t)ns * 4) == 0 || ns == 0, "in place: state differs");
            free(st0);
        }
        free(o64), free(h64), free(o), free(ht);
        d->o = NULL, d->ht = NULL;
        tcase_free(&c);
    }
}

/* The case: T = 16, g[0] huge and finite, every other gate -0.3.  The
 * recurrence (ref-a) is the truth; the chunked forms and the CPU backend must
 * agree with it (before the gate floor they gave o[T-1] = 32.0 for 7.65). */
static void check_huge_gates(tu_rng *r)
{
    static const float huge[] = {-1e12f, -1e15f, -1e17f, -1e30f, -FLT_MAX};
    enum { T = 16, K = 8, V = 8 };
    float q[T * K], k[T * K], v[T * V], g[T], o[T * V];
    double o64[5][T * V];
    for (int i = 0; i < T * K; i++) q[i] = (float)tu_normal(r), k[i] = (float)tu_normal(r);
    for (int i = 0; i < T * V; i++) v[i] = (float)tu_normal(r);
    for (size_t hh = 0; hh < sizeof huge / sizeof huge[0]; hh++)
        for (int at = 0; at < 3; at++) { /* the huge gate first, mid-chunk, last */
            const int pos = at == 0 ? 0 : at == 1 ? 7 : T - 1;
            for (int t = 0; t < T; t++) g[t] = t == pos ? huge[hh] : -0.3f;
            sgla_forward_desc d;
            sgla_forward_desc_init(&d);
            d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.dtype = SGLA_F32;
            d.B = 1, d.T = T, d.H = 1, d.K = K, d.V = V, d.scale = 0.5f, d.chunk = 4;
            for (int kk = 0; kk < 4; kk++) {
                const sgla_status st = sgla_reference(&d, (sgla_backend)(SGLA_BACKEND_REF_A + kk), o64[kk], NULL);
                TU_CHECK(st == SGLA_OK, "huge gate %g: ref kind %d: %s", (double)huge[hh], kk, sgla_last_error());
            }
            TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CPU) == SGLA_OK, "huge gate: cpu: %s", sgla_last_error());
            for (int i = 0; i < T * V; i++) o64[4][i] = o[i];
            for (int kk = 1; kk < 5; kk++) {
                double num = 0, den = 0;
                for (int i = 0; i < T * V; i++) {
                    num += (o64[kk][i] - o64[0][i]) * (o64[kk][i] - o64[0][i]);
                    den += o64[0][i] * o64[0][i];
                }
                const double rel = sqrt(num / den), bar = kk == 4 ? 1e-6 : 1e-12;
                TU_CHECK(rel <= bar, "g[%d] = %g: %s rel %.3e against ref-a (bar %.0e)", pos, (double)huge[hh],
                         kk == 4 ? "cpu" : kk == 1 ? "ref-b" : kk == 2 ? "ref-c" : "ref-d", rel, bar);
            }
        }
}

/* SGLA_BACKEND_AUTO means one thing (sgla.h): the CPU backend, or REF_B for fp64 inputs */
static void check_auto(tu_rng *r)
{
    enum { T = 20, K = 4, V = 3 };
    double q[T * K], k[T * K], v[T * V], g[T], o[T * V], ob[T * V];
    for (int i = 0; i < T * K; i++) q[i] = tu_normal(r), k[i] = tu_normal(r);
    for (int i = 0; i < T * V; i++) v[i] = tu_normal(r);
    for (int i = 0; i < T; i++) g[i] = -0.2 * tu_uniform(r);
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.dtype = SGLA_F64;
    d.B = 1, d.T = T, d.H = 1, d.K = K, d.V = V, d.scale = 0.5f;
    TU_CHECK(sgla_forward(&d, SGLA_BACKEND_AUTO) == SGLA_OK, "auto with fp64 inputs: %s", sgla_last_error());
    d.o = ob;
    TU_CHECK(sgla_forward(&d, SGLA_BACKEND_REF_B) == SGLA_OK, "ref-b with fp64 inputs: %s", sgla_last_error());
    TU_CHECK(!memcmp(o, ob, sizeof o), "auto with fp64 inputs is not ref-b");
}

int main(void)
{
    uint64_t seed = tu_seed("test_ref");
    tu_rng r;
    tu_rng_init(&r, seed);
    int d_compared = 0, d_hazard = 0;
    const int ncases = 1500;
    for (int i = 0; i < ncases; i++) {
        tcase c;
        make_case(&r, &c, i);
        check_family(&c, i, &d_compared, &d_hazard);
        tcase_free(&c);
    }
    printf("test_ref: %d random cases; ref-d compared in %d, its overflow shown in %d\n", ncases, d_compared,
           d_hazard);
    check_closed_form(&r);
    check_varlen_split(&r);
    check_typed(&r);
    check_huge_gates(&r);
    check_auto(&r);
    return tu_finish("test_ref");
}
