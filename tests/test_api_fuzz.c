/* A fuzz of the public C API (sgla.h, the experimental state pool too) on the
 * host backends (the references and the CPU; never CUDA).
 *
 * Targeted adversarial cases first: NULL arguments, descriptor sizes, huge
 * sizes with tiny buffers (a size error, never an access), the references'
 * scratch at K = 2^53, T = 0 (chunk 1024, refs B-D), a pool's t_max near 2^62
 * under SGLA_FLAG_SKIP_VALUE_CHECK, a pool written in place (SGLA_POOL_INPLACE)
 * with q, g or cu_seqlens inside it and o over it or over its indices, gates
 * at their limits (positive, NaN, inf, denormal, -1e30), cu_seqlens faults,
 * SGLA_FLAG_CHECK_FINITE, the backward at T = 0, threads, the workspace,
 * causality (a NaN at token t reaches no earlier o) and the CPU's largest heads.
 *
 * Then random cases of four kinds (forward, backward, pool, sgla_reference):
 * random shapes, dtypes, gates, packed batches, in-place states, with 0 to 2
 * injected faults (bad sizes and flags, overflow shapes, NULL pointers,
 * misalignment, overlaps, bad cu_seqlens and gates, bad backends).  Outputs are
 * poisoned (0xFF bytes) first; every call must give an allowed status, leave
 * every output untouched on failure and write every element on success, agree
 * with its workspace query and sgla_validate, give the same bits with another
 * thread count (CPU), and agree with ref-a in fp64.
 *
 * SGLA_SEED replays a run; SGLA_FUZZ_CASES=N sets the number of random cases
 * of each kind; SGLA_FUZZ_CASE=I runs random case I alone (the index is in
 * every failure message). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

enum { DEFAULT_CASES = 800 }; /* of each kind: ~2 s in a Release build, ~10 s under ASan + UBSan (2 cores) */

static tu_rng R;        /* the current case's stream */
static char ctx[96];    /* what runs now, the prefix of every message: "fwd case 12 (seed S)" */
static int have_cuda;   /* a usable CUDA device: CUDA is never called on host pointers then */

typedef uint64_t sset; /* a set of statuses, one bit each */
static sset bit(int s) { return s >= 0 && s < 64 ? (sset)1 << s : 0; }

static int chance(double p) { return tu_uniform(&R) < p; }

/* ---- buffers ------------------------------------------------------------------------------ */
/* every buffer: its exact size (ASan sees overflows), poisoned with 0xFF (a NaN in every float format) */
typedef struct buf {
    unsigned char *p;
    size_t n;
} buf;

static buf balloc(size_t n)
{
    buf b = {malloc(n ? n : 1), n};
    memset(b.p, 0xFF, n ? n : 1);
    return b;
}

static void bfree(buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

static sgla_dtype auxdt(sgla_dtype dt) { return dt == SGLA_F64 ? SGLA_F64 : SGLA_F32; }

static double ld(const void *p, sgla_dtype dt, int64_t i)
{
    double x = NAN;
    tu_to_double((const char *)p + (size_t)i * sgla_dtype_size(dt), dt, 1, &x);
    return x;
}

static void st_(void *p, sgla_dtype dt, int64_t i, double x)
{
    switch (dt) {
    case SGLA_F32: ((float *)p)[i] = (float)x; break;
    case SGLA_F64: ((double *)p)[i] = x; break;
    case SGLA_F16: ((uint16_t *)p)[i] = sgla_f64_to_f16(x); break;
    case SGLA_BF16: ((uint16_t *)p)[i] = sgla_f64_to_bf16(x); break;
    }
}

/* the first element of n still all 0xFF (never written), or -1 */
static int64_t first_unwritten(const void *p, sgla_dtype dt, int64_t n)
{
    const size_t es = sgla_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *c = (const unsigned char *)p + (size_t)i * es;
        size_t j = 0;
        while (j < es && c[j] == 0xFF) j++;
        if (j == es) return i;
    }
    return -1;
}

/* max |a - ref| over max |ref| (finite); NaN on both sides, or the same inf, is agreement */
static double relerr(const void *a, sgla_dtype dt, const double *ref, int64_t n, int64_t *worst)
{
    double mx = 0, e = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > mx) mx = fabs(ref[i]);
    for (int64_t i = 0; i < n; i++) {
        const double x = ld(a, dt, i), r = ref[i];
        if (isnan(r) && isnan(x)) continue;
        if (isinf(r) && x == r) continue;
        const double d = fabs(x - r);
        if (!(d <= e)) {
            e = d;
            *worst = i;
        }
    }
    return isnan(e) ? INFINITY : e / (mx > 1e-30 ? mx : 1e-30);
}

static double tol_of(sgla_dtype dt) { return dt == SGLA_F64 ? 1e-9 : dt == SGLA_F32 ? 2e-4 : dt == SGLA_F16 ? 4e-3 : 2e-2; }

/* st must be one of `allowed` (an error, with a detail in sgla_last_error), or OK when allowed is empty */
static void check_status(const char *what, int st, sset allowed, const char *desc)
{
    if (!allowed) {
        TU_CHECK(st == SGLA_OK, "%s: %s: got %s (%s), want OK | %s", ctx, what, sgla_status_string((sgla_status)st),
                 sgla_last_error(), desc);
        if (st == SGLA_OK)
            TU_CHECK(!sgla_last_error()[0], "%s: %s: OK but sgla_last_error() = '%s'", ctx, what, sgla_last_error());
        return;
    }
    const int ok = st != SGLA_OK && (allowed & bit(st));
    char want[700] = "";
    if (!ok)
        for (int s = 1; s < 64; s++)
            if (allowed & bit(s)) {
                strncat(want, sgla_status_string((sgla_status)s), sizeof want - strlen(want) - 3);
                strncat(want, "; ", sizeof want - strlen(want) - 1);
            }
    TU_CHECK(ok, "%s: %s: got %s (%s), want one of { %s} | %s", ctx, what, sgla_status_string((sgla_status)st),
             sgla_last_error(), want, desc);
    if (ok) TU_CHECK(sgla_last_error()[0], "%s: %s: %s with an empty sgla_last_error() | %s", ctx, what,
                     sgla_status_string((sgla_status)st), desc);
}

/* ---- a random forward descriptor ---------------------------------------------------------- */
typedef struct fcase {
    sgla_dtype dt;
    int64_t B, T, H, K, V, C, N;
    int use_cu, use_h0, use_ht, inplace, gate; /* gate 0 none, 1 g_gamma, 2 g */
    int64_t *cu;
    buf q, k, v, o, g, gg, h0, ht, cub;
    float scale;
    int threads;
    unsigned flags;
    sgla_forward_desc d;
    char desc[600];
} fcase;

static void describe(fcase *c, const sgla_forward_desc *d, int backend)
{
    char cu[200] = "";
    if (d->cu_seqlens && c->use_cu) {
        int off = 0;
        for (int64_t i = 0; i <= c->N && i < 12 && off < 180; i++)
            off += snprintf(cu + off, sizeof cu - (size_t)off, "%lld,", (long long)((const int64_t *)c->cub.p)[i]);
    }
    snprintf(c->desc, sizeof c->desc,
             "backend=%d dt=%d B=%lld T=%lld H=%lld K=%lld V=%lld chunk=%lld cu=%s[%s] nseq=%lld h0=%d ht=%d%s gate=%s "
             "scale=%g threads=%d flags=0x%x",
             backend, (int)d->dtype, (long long)d->B, (long long)d->T, (long long)d->H, (long long)d->K,
             (long long)d->V, (long long)d->chunk, d->cu_seqlens ? "yes" : "no", cu, (long long)d->num_seqs,
             d->h0 != NULL, d->ht != NULL, (d->ht && d->ht == d->h0) ? "(inplace)" : "",
             d->g ? "g" : d->g_gamma ? "gamma" : "none", (double)d->scale, d->threads, d->flags);
}

static double gate_value(void)
{
    const double u = tu_uniform(&R);
    if (u < 0.5) return -tu_uniform(&R) * 0.3;
    if (u < 0.7) return -tu_uniform(&R) * 5;
    if (u < 0.8) return 0.0;
    if (u < 0.85) return -0.0;
    if (u < 0.9) return -1e30;
    if (u < 0.93) return -FLT_MIN / 4; /* denormal */
    if (u < 0.96) return -200;
    return -1e-8;
}

static void fcase_make(fcase *c)
{
    memset(c, 0, sizeof *c);
    static const sgla_dtype dts[] = {SGLA_F32, SGLA_F16, SGLA_BF16, SGLA_F64};
    c->dt = dts[tu_int(&R, 0, 3)];
    c->use_cu = chance(0.3);
    c->B = c->use_cu ? 1 : tu_int(&R, 1, 3);
    static const int64_t Ts[] = {0, 1, 2, 3, 5, 15, 16, 17, 31, 33, 64, 65, 100, 130};
    c->T = Ts[tu_int(&R, 0, 13)];
    c->H = tu_int(&R, 1, 3);
    static const int64_t dims[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64};
    c->K = dims[tu_int(&R, 0, 14)];
    c->V = dims[tu_int(&R, 0, 14)];
    if (chance(0.04)) c->K = tu_int(&R, 100, 300), c->T = tu_int(&R, 0, 40), c->H = 1;
    if (chance(0.04)) c->V = tu_int(&R, 100, 300), c->T = tu_int(&R, 0, 40), c->H = 1;
    if (chance(0.05) && c->K * c->V <= 256) c->T = tu_int(&R, 200, 700);
    static const int64_t chunks[] = {1, 2, 3, 15, 16, 17, 32, 64, 100, 128, 1000, 1024};
    c->C = chunks[tu_int(&R, 0, 11)];
    if (c->use_cu) {
        c->N = tu_int(&R, 1, 6);
        c->cu = calloc((size_t)c->N + 1, 8);
        c->cu[c->N] = c->T;
        for (int64_t i = 1; i < c->N; i++) c->cu[i] = tu_int(&R, 0, c->T);
        for (int64_t i = 1; i < c->N; i++)
            for (int64_t j = i + 1; j < c->N; j++)
                if (c->cu[j] < c->cu[i]) {
                    const int64_t t = c->cu[i];
                    c->cu[i] = c->cu[j], c->cu[j] = t;
                }
    } else
        c->N = c->B;
    c->use_h0 = chance(0.5);
    c->use_ht = chance(0.6);
    c->inplace = c->use_h0 && c->use_ht && chance(0.3);
    c->gate = (int)tu_int(&R, 0, 2);
    const double u = tu_uniform(&R);
    c->scale = u < 0.6 ? (float)(1.0 / sqrt((double)c->K)) : u < 0.7 ? 0.0f : u < 0.8 ? -0.7f : u < 0.9 ? 3.0f : 1.0f;
    c->threads = chance(0.5) ? 0 : (int)tu_int(&R, 1, 9);
    if (chance(0.2)) c->flags |= SGLA_FLAG_CHECK_FINITE;
    if (chance(0.1)) c->flags |= SGLA_FLAG_ALLOW_TF32;
    if (chance(0.05)) c->flags |= SGLA_FLAG_CHECK_DEVICE_VALUES;

    const sgla_dtype dt = c->dt, adt = auxdt(dt);
    const int64_t bth = c->B * c->T * c->H, ns = c->N * c->H * c->K * c->V;
    c->q = balloc((size_t)(bth * c->K) * sgla_dtype_size(dt));
    c->k = balloc((size_t)(bth * c->K) * sgla_dtype_size(dt));
    c->v = balloc((size_t)(bth * c->V) * sgla_dtype_size(dt));
    c->o = balloc((size_t)(bth * c->V) * sgla_dtype_size(dt));
    tu_fill(&R, c->q.p, dt, bth * c->K, 1.0);
    tu_fill(&R, c->k.p, dt, bth * c->K, 1.0);
    tu_fill(&R, c->v.p, dt, bth * c->V, 1.0);
    if (c->gate == 2) {
        c->g = balloc((size_t)bth * sgla_dtype_size(adt));
        for (int64_t i = 0; i < bth; i++) st_(c->g.p, adt, i, gate_value());
    }
    if (c->gate == 1) {
        c->gg = balloc((size_t)c->H * sgla_dtype_size(adt));
        for (int64_t i = 0; i < c->H; i++) st_(c->gg.p, adt, i, gate_value());
    }
    if (c->use_h0) {
        c->h0 = balloc((size_t)ns * sgla_dtype_size(adt));
        tu_fill(&R, c->h0.p, adt, ns, 1.0);
    }
    if (c->use_ht && !c->inplace) c->ht = balloc((size_t)ns * sgla_dtype_size(adt));
    if (c->use_cu) {
        c->cub = balloc((size_t)(c->N + 1) * 8);
        memcpy(c->cub.p, c->cu, (size_t)(c->N + 1) * 8);
    }
    sgla_forward_desc *d = &c->d;
    sgla_forward_desc_init(d);
    d->dtype = dt;
    d->B = c->B, d->T = c->T, d->H = c->H, d->K = c->K, d->V = c->V;
    d->q = c->q.p, d->k = c->k.p, d->v = c->v.p, d->o = c->o.p;
    d->g = c->g.p, d->g_gamma = c->gg.p;
    d->scale = c->scale;
    d->h0 = c->h0.p;
    d->ht = c->inplace ? c->h0.p : c->ht.p;
    d->cu_seqlens = c->use_cu ? (const int64_t *)c->cub.p : NULL;
    d->num_seqs = c->use_cu ? c->N : 0;
    d->chunk = c->C;
    d->threads = c->threads;
    d->flags = c->flags;
}

static void fcase_free(fcase *c)
{
    bfree(&c->q), bfree(&c->k), bfree(&c->v), bfree(&c->o), bfree(&c->g), bfree(&c->gg), bfree(&c->h0),
        bfree(&c->ht), bfree(&c->cub);
    free(c->cu);
}

/* 0 to 2 faults into d (a copy of c->d; some write c's buffers); returns the statuses then allowed */
static sset inject_faults(fcase *c, sgla_forward_desc *d, int *backend, int for_backward)
{
    sset al = 0;
    const int nf = chance(0.5) ? 0 : (int)tu_int(&R, 1, 2);
    for (int f = 0; f < nf; f++) {
        const int64_t T = d->T;
        switch ((int)tu_int(&R, 0, 33)) {
        case 0: d->B = -1 - tu_int(&R, 0, 1000); al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 1: d->T = -1 - tu_int(&R, 0, 5); al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 2: d->H = chance(0.5) ? -1 : INT64_MIN; al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 3: d->K = chance(0.5) ? 0 : -3; al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 4: d->V = chance(0.5) ? 0 : INT64_MIN; al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 5: d->dtype = chance(0.5) ? (sgla_dtype)4 : (sgla_dtype)-1; al |= bit(SGLA_ERR_UNSUPPORTED_DTYPE); break;
        case 6: {
            static const int64_t bad[] = {0, -1, 1025, 4096, INT64_MAX, INT64_MIN};
            d->chunk = bad[tu_int(&R, 0, 5)];
            al |= bit(SGLA_ERR_UNSUPPORTED_CHUNK);
            break;
        }
        case 7: d->threads = chance(0.5) ? -1 : INT32_MIN; al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 8: d->flags |= chance(0.5) ? 0x20u : 0x80000000u; al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 9: /* overflow shapes with the small buffers */
            if (T > 0) d->K = chance(0.5) ? INT64_MAX : ((int64_t)1 << 61);
            else d->H = INT64_MAX / 2, d->V = 3;
            al |= bit(SGLA_ERR_SIZE_OVERFLOW);
            break;
        case 10:
            if (d->cu_seqlens) d->B = 2, al |= bit(SGLA_ERR_CU_SEQLENS_BATCH);
            break;
        case 11:
            if (d->cu_seqlens) d->num_seqs = chance(0.5) ? 0 : -5, al |= bit(SGLA_ERR_INVALID_NUM_SEQS);
            break;
        case 12:
            if (d->cu_seqlens && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
                ((int64_t *)c->cub.p)[0] = chance(0.5) ? 1 : -1;
                al |= bit(SGLA_ERR_CU_SEQLENS_START) | bit(SGLA_ERR_CU_SEQLENS_DECREASING);
                if (c->N == 1 || c->T <= 1) al |= bit(SGLA_ERR_CU_SEQLENS_END);
            }
            break;
        case 13:
            if (d->cu_seqlens && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
                ((int64_t *)c->cub.p)[c->N] = c->T + (chance(0.5) ? 1 : -1);
                al |= bit(SGLA_ERR_CU_SEQLENS_END) | bit(SGLA_ERR_CU_SEQLENS_DECREASING);
            }
            break;
        case 14:
            if (d->cu_seqlens && c->N >= 2 && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
                ((int64_t *)c->cub.p)[1] = c->T + 5;
                al |= bit(SGLA_ERR_CU_SEQLENS_DECREASING);
            }
            break;
        case 15:
            if (T > 0) {
                const int w = (int)tu_int(&R, 0, 3);
                if (w == 0) d->q = NULL;
                if (w == 1) d->k = NULL;
                if (w == 2) d->v = NULL;
                if (w == 3) {
                    if (for_backward) break;
                    d->o = NULL;
                }
                al |= bit(SGLA_ERR_NULL_POINTER);
            }
            break;
        case 16: /* both gates; g pointing at g_gamma's H values must be refused before it is read */
            if (d->g && !d->g_gamma) d->g_gamma = c->g.p, al |= bit(SGLA_ERR_BOTH_GATES);
            else if (d->g_gamma && !d->g) d->g = c->gg.p, al |= bit(SGLA_ERR_BOTH_GATES);
            break;
        case 17: /* a gate value positive, NaN, inf or a positive denormal */
            if ((d->g || d->g_gamma) && !(d->g && d->g_gamma) && d->g != (const void *)c->gg.p &&
                !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
                const sgla_dtype adt = auxdt(c->dt);
                void *gp = d->g ? c->g.p : c->gg.p;
                const int64_t n = d->g ? c->B * c->T * c->H : c->H;
                if (n == 0) break;
                const int64_t i = tu_int(&R, 0, n - 1);
                const double u = tu_uniform(&R);
                if (u < 0.3) st_(gp, adt, i, 1e-3), al |= bit(SGLA_ERR_POSITIVE_GATE);
                else if (u < 0.5) st_(gp, adt, i, NAN), al |= bit(SGLA_ERR_NONFINITE_GATE);
                else if (u < 0.7) st_(gp, adt, i, -INFINITY), al |= bit(SGLA_ERR_NONFINITE_GATE);
                else if (u < 0.8) st_(gp, adt, i, INFINITY), al |= bit(SGLA_ERR_NONFINITE_GATE);
                else st_(gp, adt, i, adt == SGLA_F64 ? 4.9e-324 : 1e-45), al |= bit(SGLA_ERR_POSITIVE_GATE);
            }
            break;
        case 18: {
            const double u = tu_uniform(&R);
            d->scale = u < 0.4 ? NAN : u < 0.7 ? INFINITY : -INFINITY;
            al |= bit(SGLA_ERR_INVALID_SCALE);
            break;
        }
        case 19: /* misaligned */
            if (T > 0) d->q = (const char *)c->q.p + 1, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
            break;
        case 20:
            if (d->h0) d->h0 = (const char *)c->h0.p + 2, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
            break;
        case 21:
            if (!for_backward) d->workspace = NULL, d->workspace_bytes = 16, al |= bit(SGLA_ERR_INVALID_ARGUMENT);
            break;
        case 22: {
            static const size_t bad[] = {0, 1, 8, 100, 4097, (size_t)-1, 0xdeadbeef};
            d->size = bad[tu_int(&R, 0, 6)];
            al |= bit(SGLA_ERR_INVALID_ARGUMENT);
            break;
        }
        case 23:
            if (T > 0 && !for_backward && c->q.n >= c->o.n && d->dtype == c->dt)
                d->o = (void *)d->q, al |= bit(SGLA_ERR_OVERLAP);
            break;
        case 24: /* ht over h0, not exactly */
            if (d->ht && !for_backward && d->ht != d->h0 && c->use_h0)
                d->ht = (char *)c->h0.p + sgla_dtype_size(auxdt(c->dt)), al |= bit(SGLA_ERR_OVERLAP);
            break;
        case 25:
            if ((d->flags & SGLA_FLAG_CHECK_FINITE) && T > 0 && d->q) {
                const int64_t n = c->B * c->T * c->H * c->K;
                st_(chance(0.5) ? c->q.p : c->k.p, c->dt, tu_int(&R, 0, n - 1), chance(0.5) ? NAN : -INFINITY);
                al |= bit(SGLA_ERR_NONFINITE_INPUT);
            }
            break;
        case 26:
            *backend = chance(0.5) ? 7 : -1;
            al |= bit(SGLA_ERR_INVALID_BACKEND);
            break;
        case 27: /* CUDA without a device (never called on host pointers where there is one) */
            if (!have_cuda) *backend = SGLA_BACKEND_CUDA, al |= bit(SGLA_ERR_BACKEND_UNAVAILABLE);
            break;
        case 28:
            if (d->ht && c->ht.p && !for_backward)
                d->ht = (char *)c->ht.p + 2, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
            break;
        case 29:
            if (d->g && c->g.p) /* not after case 16 made g g_gamma's buffer */
                d->g = (const char *)c->g.p + 1, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
            break;
        case 30:
            if (d->cu_seqlens)
                d->cu_seqlens = (const int64_t *)(const void *)((const char *)c->cub.p + 4),
                al |= bit(SGLA_ERR_INVALID_ARGUMENT);
            break;
        case 31: /* N*H*K*V overflows */
            if (d->cu_seqlens) d->num_seqs = INT64_MAX, al |= bit(SGLA_ERR_SIZE_OVERFLOW);
            break;
        case 32:
            if ((d->flags & SGLA_FLAG_CHECK_FINITE) && d->h0) {
                st_((void *)c->h0.p, auxdt(c->dt), tu_int(&R, 0, c->N * c->H * c->K * c->V - 1), NAN);
                al |= bit(SGLA_ERR_NONFINITE_INPUT);
            }
            break;
        case 33: /* in place: allowed */
            if (d->h0 && d->ht && !for_backward && d->ht == (void *)c->ht.p && d->h0 == (const void *)c->h0.p)
                d->ht = (void *)d->h0;
            break;
        }
    }
    /* the CPU backend refuses fp64 */
    if (*backend == SGLA_BACKEND_CPU && d->dtype == SGLA_F64) al |= bit(SGLA_ERR_UNSUPPORTED_DTYPE);
    return al;
}

/* ---- forward ------------------------------------------------------------------------------ */
static void run_fwd_case(void)
{
    fcase c;
    fcase_make(&c);
    static const int backends[] = {SGLA_BACKEND_AUTO, SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B, SGLA_BACKEND_REF_C,
                                   SGLA_BACKEND_REF_D, SGLA_BACKEND_CPU,   SGLA_BACKEND_CPU,   SGLA_BACKEND_CPU};
    int backend = backends[tu_int(&R, 0, 7)];
    sgla_forward_desc d = c.d;
    const sset al = inject_faults(&c, &d, &backend, 0);
    describe(&c, &d, backend);

    const int64_t nv = c.B * c.T * c.H * c.V, ns = c.N * c.H * c.K * c.V;
    unsigned char *o_before = malloc(c.o.n + 1), *ht_before = NULL, *h0_copy = NULL;
    memcpy(o_before, c.o.p, c.o.n);
    if (c.use_h0) {
        h0_copy = malloc(c.h0.n + 1);
        memcpy(h0_copy, c.h0.p, c.h0.n);
    }
    if (c.use_ht && !c.inplace) {
        ht_before = malloc(c.ht.n + 1);
        memcpy(ht_before, c.ht.p, c.ht.n);
    }

    /* the workspace query: *bytes written only on success, 0 for a host backend */
    size_t wsb = 12345;
    const int stw = sgla_workspace_size(&d, (sgla_backend)backend, &wsb);
    if (stw != SGLA_OK) TU_CHECK(wsb == 12345, "%s: workspace_size wrote *bytes on failure (%s) | %s", ctx,
                                 sgla_status_string((sgla_status)stw), c.desc);
    else if (backend != SGLA_BACKEND_CUDA)
        TU_CHECK(wsb == 0, "%s: workspace_size = %zu for a host backend | %s", ctx, wsb, c.desc);

    if (chance(0.03)) sgla_release_memory();
    const int st = sgla_forward(&d, (sgla_backend)backend);
    check_status("forward", st, al, c.desc);
    /* the query agrees with the call on everything but values */
    if (st == SGLA_OK)
        TU_CHECK(stw == SGLA_OK, "%s: forward OK but workspace_size %s | %s", ctx, sgla_status_string((sgla_status)stw),
                 c.desc);
    if (stw == SGLA_OK && st != SGLA_OK)
        TU_CHECK(st == SGLA_ERR_POSITIVE_GATE || st == SGLA_ERR_NONFINITE_GATE || st == SGLA_ERR_NONFINITE_INPUT ||
                     st == SGLA_ERR_CU_SEQLENS_START || st == SGLA_ERR_CU_SEQLENS_END ||
                     st == SGLA_ERR_CU_SEQLENS_DECREASING || st == SGLA_ERR_NULL_POINTER ||
                     st == SGLA_ERR_OUT_OF_MEMORY,
                 "%s: workspace_size OK but forward %s (%s) | %s", ctx, sgla_status_string((sgla_status)st),
                 sgla_last_error(), c.desc);
    const int stv = sgla_validate(&d, 1);
    if (st == SGLA_OK)
        TU_CHECK(stv == SGLA_OK, "%s: forward OK but sgla_validate %s | %s", ctx,
                 sgla_status_string((sgla_status)stv), c.desc);

    if (st != SGLA_OK) {
        TU_CHECK(!memcmp(o_before, c.o.p, c.o.n), "%s: forward failed but o was written | %s", ctx, c.desc);
        if (ht_before)
            TU_CHECK(!memcmp(ht_before, c.ht.p, c.ht.n), "%s: forward failed but ht was written | %s", ctx, c.desc);
        if (h0_copy && c.inplace)
            TU_CHECK(!memcmp(h0_copy, c.h0.p, c.h0.n), "%s: forward failed but the in-place state was written | %s",
                     ctx, c.desc);
        goto out;
    }
    const int inpl = d.ht && d.ht == d.h0;
    if (h0_copy && !inpl) TU_CHECK(!memcmp(h0_copy, c.h0.p, c.h0.n), "%s: forward wrote its input h0 | %s", ctx, c.desc);
    const sgla_dtype odt = d.dtype, adt = auxdt(d.dtype);
    int64_t u = first_unwritten(c.o.p, odt, nv);
    TU_CHECK(u < 0, "%s: forward OK but o[%lld] unwritten | %s", ctx, (long long)u, c.desc);
    void *htp = d.ht;
    if (htp) {
        u = first_unwritten(htp, adt, ns);
        TU_CHECK(u < 0, "%s: forward OK but ht[%lld] unwritten | %s", ctx, (long long)u, c.desc);
    }
    /* the CPU's bits do not depend on the thread count (sgla.h) */
    if ((backend == SGLA_BACKEND_CPU || (backend == SGLA_BACKEND_AUTO && d.dtype != SGLA_F64)) && !inpl) {
        sgla_forward_desc e = d;
        buf o2 = balloc(c.o.n), ht2 = {0};
        e.o = o2.p;
        if (d.ht) ht2 = balloc(c.ht.n), e.ht = ht2.p;
        e.threads = d.threads == 1 ? 2 : 1;
        const int s3 = sgla_forward(&e, (sgla_backend)backend);
        TU_CHECK(s3 == SGLA_OK, "%s: rerun with threads=%d: %s | %s", ctx, e.threads,
                 sgla_status_string((sgla_status)s3), c.desc);
        if (s3 == SGLA_OK) {
            TU_CHECK(!memcmp(o2.p, c.o.p, c.o.n), "%s: o bits differ with threads=%d | %s", ctx, e.threads, c.desc);
            if (d.ht)
                TU_CHECK(!memcmp(ht2.p, d.ht, c.ht.n), "%s: ht bits differ with threads=%d | %s", ctx, e.threads,
                         c.desc);
        }
        bfree(&o2), bfree(&ht2);
    }
    /* against ref-a in fp64, on the original inputs (h0 restored); ref-d shows the hazard by design */
    if (d.size == sizeof d && d.B == c.B && d.T == c.T && d.H == c.H && d.K == c.K && d.V == c.V && d.dtype == c.dt &&
        d.h0 == (const void *)c.h0.p && backend != SGLA_BACKEND_REF_D) {
        sgla_forward_desc r = d;
        buf h0b = {0};
        if (c.use_h0) {
            h0b = balloc(c.h0.n);
            memcpy(h0b.p, h0_copy, c.h0.n);
            r.h0 = h0b.p;
        }
        r.o = NULL, r.ht = NULL;
        r.flags &= ~SGLA_FLAG_SKIP_VALUE_CHECK;
        double *o64 = malloc((size_t)(nv + 1) * 8), *h64 = malloc((size_t)(ns + 1) * 8);
        const int s2 = sgla_reference(&r, SGLA_BACKEND_REF_A, o64, htp ? h64 : NULL);
        TU_CHECK(s2 == SGLA_OK, "%s: reference failed %s (%s) after forward OK | %s", ctx,
                 sgla_status_string((sgla_status)s2), sgla_last_error(), c.desc);
        if (s2 == SGLA_OK) {
            const double grow = 1.0 + (double)c.T / 64.0; /* long sequences accumulate */
            const double tol = tol_of(d.dtype) * grow, tolh = tol_of(adt) * grow;
            int64_t w = 0;
            double e = relerr(c.o.p, odt, o64, nv, &w);
            TU_CHECK(e <= tol, "%s: o rel err %.3g > %.3g (worst %lld: %g vs %g) | %s", ctx, e, tol, (long long)w,
                     nv ? ld(c.o.p, odt, w) : 0.0, nv ? o64[w] : 0.0, c.desc);
            if (htp) {
                w = 0;
                e = relerr(htp, adt, h64, ns, &w);
                TU_CHECK(e <= tolh, "%s: ht rel err %.3g > %.3g (worst %lld: %g vs %g) | %s", ctx, e, tolh,
                         (long long)w, ld(htp, adt, w), h64[w], c.desc);
            }
        }
        free(o64), free(h64);
        bfree(&h0b);
    }
out:
    free(o_before), free(ht_before), free(h0_copy);
    fcase_free(&c);
}

/* ---- backward ----------------------------------------------------------------------------- */
static void run_bwd_case(void)
{
    fcase c;
    fcase_make(&c);
    static const int backends[] = {SGLA_BACKEND_AUTO, SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B, SGLA_BACKEND_CPU,
                                   SGLA_BACKEND_CPU,  SGLA_BACKEND_CPU,   SGLA_BACKEND_REF_C};
    int backend = backends[tu_int(&R, 0, 6)];
    sgla_forward_desc f = c.d;
    f.o = NULL; /* not read */
    f.ht = chance(0.5) ? NULL : f.ht;
    sset al = inject_faults(&c, &f, &backend, 1);
    if (backend == SGLA_BACKEND_REF_C || backend == SGLA_BACKEND_REF_D) al |= bit(SGLA_ERR_BACKEND_UNAVAILABLE);

    const sgla_dtype dt = c.dt, adt = auxdt(dt);
    const int64_t bth = c.B * c.T * c.H, nqk = bth * c.K, nv = bth * c.V, ns = c.N * c.H * c.K * c.V;
    buf dout = balloc((size_t)nv * sgla_dtype_size(dt)), dht = {0}, dq = balloc((size_t)nqk * sgla_dtype_size(dt)),
        dk = balloc((size_t)nqk * sgla_dtype_size(dt)), dv = balloc((size_t)nv * sgla_dtype_size(dt)), dg = {0}, dgg = {0}, dh0 = {0};
    tu_fill(&R, dout.p, dt, nv, 1.0);
    const int use_dht = chance(0.5), want_dg = c.gate == 2 && chance(0.7), want_dgg = c.gate == 1 && chance(0.7),
              want_dh0 = c.use_h0 && chance(0.7), dh0_inplace = want_dh0 && use_dht && chance(0.3);
    if (use_dht) {
        dht = balloc((size_t)ns * sgla_dtype_size(adt));
        tu_fill(&R, dht.p, adt, ns, 1.0);
    }
    if (want_dg) dg = balloc((size_t)bth * sgla_dtype_size(adt));
    if (want_dgg) dgg = balloc((size_t)c.H * sgla_dtype_size(adt));
    if (want_dh0 && !dh0_inplace) dh0 = balloc((size_t)ns * sgla_dtype_size(adt));

    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f;
    b.dout = dout.p, b.dht = dht.p, b.dq = dq.p, b.dk = dk.p, b.dv = dv.p, b.dg = dg.p, b.dg_gamma = dgg.p;
    b.dh0 = dh0_inplace ? dht.p : dh0.p;
    void *extra = NULL; /* a gradient buffer the forward has no tensor for */

    if (chance(0.3)) {
        switch ((int)tu_int(&R, 0, 12)) {
        case 0: if (c.T > 0) b.dout = NULL, al |= bit(SGLA_ERR_NULL_POINTER); break;
        case 1: if (c.T > 0) b.dq = NULL, al |= bit(SGLA_ERR_NULL_POINTER); break;
        case 2: if (c.T > 0) b.dv = NULL, al |= bit(SGLA_ERR_NULL_POINTER); break;
        case 3: if (c.gate != 2) b.dg = extra = malloc(64 * 8), al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 4: if (c.gate != 1) b.dg_gamma = extra = malloc(64 * 8), al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 5: if (!c.use_h0) b.dh0 = extra = malloc(8), al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 6:
            if (c.T > 0 && dq.n <= c.q.n && dt == f.dtype && f.q == (const void *)c.q.p)
                b.dq = (void *)c.q.p, al |= bit(SGLA_ERR_OVERLAP);
            break;
        case 7:
            if (use_dht && b.dh0 && ns > 1) b.dh0 = (char *)dht.p + sgla_dtype_size(adt), al |= bit(SGLA_ERR_OVERLAP);
            break;
        case 8:
            if (c.T > 0) b.dk = (char *)dk.p + 1, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
            break;
        case 9: {
            static const size_t bad[] = {0, 8, 4097, 0xdeadbeef};
            b.size = bad[tu_int(&R, 0, 3)];
            al |= bit(SGLA_ERR_INVALID_ARGUMENT);
            break;
        }
        case 10: b.fwd = NULL, al |= bit(SGLA_ERR_NULL_POINTER); break;
        case 11:
            if ((f.flags & SGLA_FLAG_CHECK_FINITE) && nv > 0)
                st_(dout.p, dt, tu_int(&R, 0, nv - 1), INFINITY), al |= bit(SGLA_ERR_NONFINITE_INPUT);
            break;
        case 12:
            if (c.T > 0 && dq.n == dk.n) b.dk = dq.p, al |= bit(SGLA_ERR_OVERLAP); /* dq and dk one buffer */
            break;
        }
    }
    describe(&c, &f, backend);
    {
        char more[160];
        snprintf(more, sizeof more, " | bwd: dht=%d dg=%d dgg=%d dh0=%d%s", b.dht != NULL, b.dg != NULL,
                 b.dg_gamma != NULL, b.dh0 != NULL, b.dh0 && b.dh0 == b.dht ? "(inplace)" : "");
        strncat(c.desc, more, sizeof c.desc - strlen(c.desc) - 1);
    }

    void *outs[6] = {b.dq, b.dk, b.dv, b.dg, b.dg_gamma, b.dh0};
    const size_t outn[6] = {(size_t)nqk * sgla_dtype_size(dt),  (size_t)nqk * sgla_dtype_size(dt),  (size_t)nv * sgla_dtype_size(dt),
                            (size_t)bth * sgla_dtype_size(adt), (size_t)c.H * sgla_dtype_size(adt), (size_t)ns * sgla_dtype_size(adt)};
    const sgla_dtype outdt[6] = {dt, dt, dt, adt, adt, adt};
    const int64_t outcnt[6] = {nqk, nqk, nv, bth, c.H, ns};
    static const char *const names[6] = {"dq", "dk", "dv", "dg", "dg_gamma", "dh0"};
    unsigned char *snaps[6] = {0};
    const int own[6] = {b.dq == (void *)dq.p,  b.dk == (void *)dk.p,         b.dv == (void *)dv.p,
                        b.dg == (void *)dg.p, b.dg_gamma == (void *)dgg.p, b.dh0 == (void *)dh0.p || (b.dh0 && b.dh0 == (void *)dht.p)};
    for (int i = 0; i < 6; i++)
        if (outs[i] && own[i]) {
            snaps[i] = malloc(outn[i] + 1);
            memcpy(snaps[i], outs[i], outn[i]);
        }
    unsigned char *dht_copy = NULL;
    if (use_dht) {
        dht_copy = malloc(dht.n + 1);
        memcpy(dht_copy, dht.p, dht.n);
    }

    size_t wsb = 777;
    const int stw = sgla_backward_workspace_size(&b, (sgla_backend)backend, &wsb);
    if (stw != SGLA_OK) TU_CHECK(wsb == 777, "%s: backward workspace_size wrote *bytes on failure | %s", ctx, c.desc);
    const int st = sgla_backward(&b, (sgla_backend)backend);
    check_status("backward", st, al, c.desc);
    if (st == SGLA_OK) {
        TU_CHECK(stw == SGLA_OK, "%s: backward OK but workspace_size %s | %s", ctx,
                 sgla_status_string((sgla_status)stw), c.desc);
        const int stv = sgla_validate_backward(&b, 1);
        TU_CHECK(stv == SGLA_OK, "%s: backward OK but sgla_validate_backward %s | %s", ctx,
                 sgla_status_string((sgla_status)stv), c.desc);
    }

    if (st != SGLA_OK) {
        for (int i = 0; i < 6; i++)
            if (snaps[i])
                TU_CHECK(!memcmp(snaps[i], outs[i], outn[i]), "%s: backward failed (%s) but %s was written | %s", ctx,
                         sgla_status_string((sgla_status)st), names[i], c.desc);
        goto out;
    }
    for (int i = 0; i < 6; i++)
        if (outs[i] && own[i]) {
            const int64_t u = first_unwritten(outs[i], outdt[i], outcnt[i]);
            TU_CHECK(u < 0, "%s: backward OK but %s[%lld] unwritten | %s", ctx, names[i], (long long)u, c.desc);
        }
    /* the CPU's bits do not depend on the thread count */
    if ((backend == SGLA_BACKEND_CPU || (backend == SGLA_BACKEND_AUTO && dt != SGLA_F64)) && b.fwd == &f &&
        !(b.dh0 && b.dh0 == b.dht)) {
        sgla_forward_desc f2 = f;
        f2.threads = f.threads == 1 ? 2 : 1;
        sgla_backward_desc b2 = b;
        b2.fwd = &f2;
        buf o2[6];
        void **slot[6] = {&b2.dq, &b2.dk, &b2.dv, &b2.dg, &b2.dg_gamma, &b2.dh0};
        for (int i = 0; i < 6; i++) {
            o2[i] = (buf){0};
            if (outs[i] && own[i]) o2[i] = balloc(outn[i]), *slot[i] = o2[i].p;
        }
        const int s3 = sgla_backward(&b2, (sgla_backend)backend);
        TU_CHECK(s3 == SGLA_OK, "%s: backward rerun with threads=%d: %s | %s", ctx, f2.threads,
                 sgla_status_string((sgla_status)s3), c.desc);
        for (int i = 0; i < 6 && s3 == SGLA_OK; i++)
            if (o2[i].p)
                TU_CHECK(!memcmp(o2[i].p, outs[i], outn[i]), "%s: backward %s bits differ with threads=%d | %s", ctx,
                         names[i], f2.threads, c.desc);
        for (int i = 0; i < 6; i++) bfree(&o2[i]);
    }
    /* against ref-a's backward on fp64 copies of every input */
    if (b.fwd == &f && f.size == sizeof f && f.B == c.B && f.T == c.T && f.H == c.H && f.K == c.K && f.V == c.V &&
        f.dtype == dt && backend != SGLA_BACKEND_REF_A) {
        sgla_forward_desc r = f;
        buf q64 = balloc((size_t)nqk * 8), k64 = balloc((size_t)nqk * 8), v64 = balloc((size_t)nv * 8),
            do64 = balloc((size_t)nv * 8), g64 = {0}, gg64 = {0}, h064 = {0}, dht64 = {0};
        for (int64_t i = 0; i < nqk; i++) st_(q64.p, SGLA_F64, i, ld(f.q, dt, i)), st_(k64.p, SGLA_F64, i, ld(f.k, dt, i));
        for (int64_t i = 0; i < nv; i++)
            st_(v64.p, SGLA_F64, i, ld(f.v, dt, i)), st_(do64.p, SGLA_F64, i, ld(b.dout, dt, i));
        if (f.g) {
            g64 = balloc((size_t)bth * 8);
            for (int64_t i = 0; i < bth; i++) st_(g64.p, SGLA_F64, i, ld(f.g, adt, i));
        }
        if (f.g_gamma) {
            gg64 = balloc((size_t)c.H * 8);
            for (int64_t i = 0; i < c.H; i++) st_(gg64.p, SGLA_F64, i, ld(f.g_gamma, adt, i));
        }
        if (f.h0) {
            h064 = balloc((size_t)ns * 8);
            for (int64_t i = 0; i < ns; i++) st_(h064.p, SGLA_F64, i, ld(f.h0, adt, i));
        }
        if (b.dht) {
            dht64 = balloc((size_t)ns * 8);
            for (int64_t i = 0; i < ns; i++) st_(dht64.p, SGLA_F64, i, ld(dht_copy, adt, i));
        }
        r.dtype = SGLA_F64;
        r.q = q64.p, r.k = k64.p, r.v = v64.p, r.g = g64.p, r.g_gamma = gg64.p, r.h0 = h064.p, r.ht = NULL, r.o = NULL;
        r.flags &= ~SGLA_FLAG_SKIP_VALUE_CHECK;
        buf rq = balloc((size_t)nqk * 8), rk = balloc((size_t)nqk * 8), rv = balloc((size_t)nv * 8), rg = {0},
            rgg = {0}, rh0 = {0};
        if (b.dg) rg = balloc((size_t)bth * 8);
        if (b.dg_gamma) rgg = balloc((size_t)c.H * 8);
        if (b.dh0) rh0 = balloc((size_t)ns * 8);
        sgla_backward_desc rb;
        sgla_backward_desc_init(&rb);
        rb.fwd = &r;
        rb.dout = do64.p, rb.dht = dht64.p, rb.dq = rq.p, rb.dk = rk.p, rb.dv = rv.p, rb.dg = rg.p;
        rb.dg_gamma = rgg.p, rb.dh0 = rh0.p;
        const int s2 = sgla_backward(&rb, SGLA_BACKEND_REF_A);
        TU_CHECK(s2 == SGLA_OK, "%s: ref-a fp64 backward failed %s (%s) | %s", ctx, sgla_status_string((sgla_status)s2),
                 sgla_last_error(), c.desc);
        if (s2 == SGLA_OK) {
            const double *refs[6] = {(double *)rq.p, (double *)rk.p,  (double *)rv.p,
                                     (double *)rg.p, (double *)rgg.p, (double *)rh0.p};
            for (int i = 0; i < 6; i++) {
                if (!outs[i] || !refs[i] || !own[i]) continue;
                double tol = tol_of(dt) * 4 * (1.0 + (double)c.T / 32.0);
                if (dt != SGLA_F64 && (i == 3 || i == 4)) tol *= 10; /* the gate's gradients: sums */
                int64_t w = 0;
                const double e = relerr(outs[i], outdt[i], refs[i], outcnt[i], &w);
                TU_CHECK(e <= tol, "%s: backward %s rel err %.3g > %.3g (worst %lld: %g vs %g) | %s", ctx, names[i], e,
                         tol, (long long)w, ld(outs[i], outdt[i], w), refs[i][w], c.desc);
            }
        }
        bfree(&q64), bfree(&k64), bfree(&v64), bfree(&do64), bfree(&g64), bfree(&gg64), bfree(&h064), bfree(&dht64);
        bfree(&rq), bfree(&rk), bfree(&rv), bfree(&rg), bfree(&rgg), bfree(&rh0);
    }
out:
    for (int i = 0; i < 6; i++) free(snaps[i]);
    free(dht_copy), free(extra);
    bfree(&dout), bfree(&dht), bfree(&dq), bfree(&dk), bfree(&dv), bfree(&dg), bfree(&dgg), bfree(&dh0);
    fcase_free(&c);
}

/* ---- the state pool: the CPU against ref-a on identical copies ----------------------------- */
static int64_t idx_at(const void *p, int bits, int64_t i)
{
    return bits == 32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static void run_pool_case(void)
{
    static const sgla_dtype dts[] = {SGLA_F32, SGLA_F16, SGLA_BF16};
    const sgla_dtype dt = dts[tu_int(&R, 0, 2)];
    int64_t H = tu_int(&R, 1, 3), K = tu_int(&R, 1, 9), V = tu_int(&R, 1, 9);
    if (chance(0.3)) K = 16, V = 16;
    const int64_t N = tu_int(&R, 1, 5), slots = tu_int(&R, 1, 8);
    const int64_t t_max = chance(0.4) ? tu_int(&R, 1, 4) : 0;
    const int use_cu = chance(0.6) || N > 1;
    int64_t *cu = calloc((size_t)N + 1, 8), T, B = 1;
    if (use_cu) {
        for (int64_t n = 0; n < N; n++)
            cu[n + 1] = cu[n] + (t_max ? tu_int(&R, t_max > 1 ? 0 : 1, t_max) : chance(0.5) ? 1 : tu_int(&R, 0, 40));
        T = cu[N];
    } else {
        B = N;
        T = t_max ? tu_int(&R, 0, t_max) : tu_int(&R, 0, 20);
    }
    const int bits = chance(0.5) ? 32 : 64;
    const unsigned pflags = (chance(0.7) ? SGLA_POOL_INPLACE : 0) | (chance(0.4) ? SGLA_POOL_V_FIRST : 0);
    const int64_t nidx = N * (t_max ? t_max : 1);
    buf idx = balloc((size_t)nidx * (size_t)(bits / 8)), acc = {0}, his = {0};
    const int use_acc = t_max && chance(0.5);
    /* distinct slots mostly, -1 sometimes, a possible conflict sometimes */
    int64_t np = 0;
    for (int64_t i = 0; i < nidx; i++) {
        int64_t s;
        if (chance(0.15)) s = -1;
        else if (chance(0.1)) s = tu_int(&R, 0, slots - 1);
        else s = np < slots ? np++ : -1;
        if (bits == 32) ((int32_t *)idx.p)[i] = (int32_t)s;
        else ((int64_t *)idx.p)[i] = s;
    }
    if (use_acc) {
        acc = balloc((size_t)N * (size_t)(bits / 8));
        for (int64_t n = 0; n < N; n++) {
            const int64_t a = tu_int(&R, 1, t_max);
            if (bits == 32) ((int32_t *)acc.p)[n] = (int32_t)a;
            else ((int64_t *)acc.p)[n] = a;
        }
    }
    if (chance(0.4)) {
        his = balloc((size_t)N);
        for (int64_t n = 0; n < N; n++) his.p[n] = (unsigned char)tu_int(&R, 0, 1);
    }
    const int64_t bth = B * T * H, pn = slots * H * K * V;
    buf q = balloc((size_t)(bth * K) * sgla_dtype_size(dt)), k = balloc((size_t)(bth * K) * sgla_dtype_size(dt)),
        v = balloc((size_t)(bth * V) * sgla_dtype_size(dt)), o = balloc((size_t)(bth * V) * sgla_dtype_size(dt)),
        o2 = balloc((size_t)(bth * V) * sgla_dtype_size(dt)), pool = balloc((size_t)pn * 4), pool2 = balloc((size_t)pn * 4),
        g = {0}, gg = {0}, cub = {0}, hcu = {0};
    tu_fill(&R, q.p, dt, bth * K, 1), tu_fill(&R, k.p, dt, bth * K, 1), tu_fill(&R, v.p, dt, bth * V, 1);
    tu_fill(&R, pool.p, SGLA_F32, pn, 1);
    memcpy(pool2.p, pool.p, pool.n);
    const int gate = (int)tu_int(&R, 0, 2);
    if (gate == 2) {
        g = balloc((size_t)bth * 4);
        for (int64_t i = 0; i < bth; i++) ((float *)g.p)[i] = (float)gate_value();
    } else if (gate == 1) {
        gg = balloc((size_t)H * 4);
        for (int64_t i = 0; i < H; i++) ((float *)gg.p)[i] = (float)gate_value();
    }
    if (use_cu) {
        cub = balloc((size_t)(N + 1) * 8);
        memcpy(cub.p, cu, (size_t)(N + 1) * 8);
        if (chance(0.3)) {
            hcu = balloc((size_t)(N + 1) * 8);
            memcpy(hcu.p, cu, (size_t)(N + 1) * 8);
        }
    }
    sgla_state_pool p;
    memset(&p, 0, sizeof p);
    p.slots = slots, p.indices = idx.p, p.index_bits = bits, p.t_max = t_max, p.has_initial_state = his.p;
    p.num_accepted = acc.p, p.flags = pflags, p.host_cu_seqlens = (const int64_t *)(const void *)hcu.p;
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.dtype = dt, d.B = B, d.T = T, d.H = H, d.K = K, d.V = V;
    d.q = q.p, d.k = k.p, d.v = v.p, d.o = o.p, d.g = g.p, d.g_gamma = gg.p, d.h0 = pool.p;
    d.cu_seqlens = use_cu ? (const int64_t *)(const void *)cub.p : NULL, d.num_seqs = use_cu ? N : 0;
    d.chunk = chance(0.3) ? 1 : chance(0.5) ? 64 : 16;
    d.threads = (int)tu_int(&R, 0, 4);
    d.pool = &p;
    sset al = 0;
    if (chance(0.3)) {
        switch ((int)tu_int(&R, 0, 9)) {
        case 0: p.slots = 0, al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 1: p.index_bits = 16, al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 2: p.t_max = -1, al |= bit(SGLA_ERR_INVALID_SIZE); break;
        case 3: p.flags |= 0x4, al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        case 4: p.indices = NULL, al |= bit(SGLA_ERR_NULL_POINTER); break;
        case 5: d.ht = o2.p, al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP); break;
        case 6:
            if (bits == 32) ((int32_t *)idx.p)[tu_int(&R, 0, nidx - 1)] = chance(0.5) ? (int32_t)slots : -2;
            else ((int64_t *)idx.p)[tu_int(&R, 0, nidx - 1)] = chance(0.5) ? slots : INT64_MIN;
            al |= bit(SGLA_ERR_POOL_INDEX) | bit(SGLA_ERR_POOL_CONFLICT);
            break;
        case 7:
            if (use_acc) {
                if (bits == 32) ((int32_t *)acc.p)[tu_int(&R, 0, N - 1)] = chance(0.5) ? 0 : (int32_t)(t_max + 1);
                else ((int64_t *)acc.p)[tu_int(&R, 0, N - 1)] = chance(0.5) ? -1 : t_max + 1;
                al |= bit(SGLA_ERR_POOL_INDEX);
            }
            break;
        case 8:
            if (hcu.p) {
                ((int64_t *)hcu.p)[N] += 1;
                al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_CU_SEQLENS_END);
            }
            break;
        case 9: if (!t_max && acc.p) al |= bit(SGLA_ERR_INVALID_ARGUMENT); break;
        }
    }
    /* out-of-range slots, sequences longer than t_max and conflicts by the documented rule */
    {
        const int64_t tm = p.t_max > 0 ? p.t_max : 1;
        unsigned char *seen = calloc((size_t)slots + 1, 1);
        int bad_idx = 0, conflict = 0, toolong = 0;
        for (int64_t n = 0; n < N && p.t_max >= 0 && p.indices; n++) {
            const int64_t a = p.num_accepted ? idx_at(acc.p, bits, n) : 1;
            for (int64_t t = 0; t < tm; t++) {
                const int64_t s = idx_at(idx.p, bits, p.t_max ? n * p.t_max + t : n);
                if (s < -1 || s >= slots) bad_idx = 1;
            }
            if (a < 1 || a > tm) continue;
            const int64_t rslot = idx_at(idx.p, bits, p.t_max ? n * p.t_max + a - 1 : n);
            const int64_t len = use_cu ? cu[n + 1] - cu[n] : T;
            if (p.t_max && len > p.t_max && rslot >= 0) toolong = 1;
            if (!(p.flags & SGLA_POOL_INPLACE) || rslot < 0 || bad_idx) continue;
            const int64_t nw = p.t_max ? len : 1;
            for (int64_t t = 0; t < nw && t < tm; t++) {
                const int64_t s = idx_at(idx.p, bits, p.t_max ? n * p.t_max + t : n);
                if (s < 0 || s >= slots) continue;
                if (seen[s]) conflict = 1;
                seen[s] = 1;
            }
        }
        free(seen);
        if (bad_idx || toolong) al |= bit(SGLA_ERR_POOL_INDEX);
        if (conflict) al |= bit(SGLA_ERR_POOL_CONFLICT) | bit(SGLA_ERR_POOL_INDEX);
    }
    char desc[600];
    snprintf(desc, sizeof desc,
             "pool dt=%d B=%lld T=%lld H=%lld K=%lld V=%lld N=%lld cu=%d slots=%lld t_max=%lld bits=%d flags=0x%x "
             "acc=%d his=%d hcu=%d gate=%d chunk=%lld threads=%d",
             (int)dt, (long long)B, (long long)T, (long long)H, (long long)K, (long long)V, (long long)N, use_cu,
             (long long)slots, (long long)p.t_max, bits, p.flags, use_acc, his.p != NULL, hcu.p != NULL, gate,
             (long long)d.chunk, d.threads);
    unsigned char *o_before = malloc(o.n + 1);
    memcpy(o_before, o.p, o.n);
    sgla_state_pool p2 = p;
    sgla_forward_desc d2 = d;
    d2.o = o2.p, d2.h0 = pool2.p, d2.pool = &p2;
    const int st = sgla_forward(&d, SGLA_BACKEND_CPU);
    check_status("pool cpu", st, al, desc);
    const int st2 = sgla_forward(&d2, SGLA_BACKEND_REF_A);
    check_status("pool ref-a", st2, al, desc);
    TU_CHECK(st == st2, "%s: pool: cpu %s, ref-a %s | %s", ctx, sgla_status_string((sgla_status)st),
             sgla_status_string((sgla_status)st2), desc);
    if (st != SGLA_OK) {
        TU_CHECK(!memcmp(o_before, o.p, o.n), "%s: pool call failed but o was written | %s", ctx, desc);
        TU_CHECK(!memcmp(pool.p, pool2.p, pool.n), "%s: pool call failed but the pool was written | %s", ctx, desc);
    } else {
        const int64_t u = first_unwritten(o.p, dt, bth * V);
        TU_CHECK(u < 0, "%s: pool call OK but o[%lld] unwritten | %s", ctx, (long long)u, desc);
        double *ref = malloc((size_t)(bth * V + pn + 1) * 8);
        for (int64_t i = 0; i < bth * V; i++) ref[i] = ld(o2.p, dt, i);
        int64_t w = 0;
        double e = relerr(o.p, dt, ref, bth * V, &w);
        TU_CHECK(e <= tol_of(dt) * 4, "%s: pool o: cpu vs ref-a rel %.3g (worst %lld) | %s", ctx, e, (long long)w, desc);
        for (int64_t i = 0; i < pn; i++) ref[i] = ((const float *)pool2.p)[i];
        w = 0;
        e = relerr(pool.p, SGLA_F32, ref, pn, &w);
        TU_CHECK(e <= 1e-4, "%s: pool states: cpu vs ref-a rel %.3g (worst %lld: %g vs %g) | %s", ctx, e, (long long)w,
                 (double)((const float *)pool.p)[w], ref[w], desc);
        free(ref);
    }
    free(o_before), free(cu);
    bfree(&idx), bfree(&acc), bfree(&his), bfree(&q), bfree(&k), bfree(&v), bfree(&o), bfree(&o2), bfree(&pool);
    bfree(&pool2), bfree(&g), bfree(&gg), bfree(&cub), bfree(&hcu);
}

/* ---- sgla_reference ----------------------------------------------------------------------- */
static void run_ref_case(void)
{
    fcase c;
    fcase_make(&c);
    int kind = (int)tu_int(&R, 1, 4);
    if (chance(0.05)) kind = chance(0.5) ? 0 : 5;
    sgla_forward_desc d = c.d;
    int be = kind;
    sset al = inject_faults(&c, &d, &be, 1);
    /* the backend faults and the CPU's fp64 refusal do not apply: kind is the reference's */
    if (be != kind) al &= ~(bit(SGLA_ERR_INVALID_BACKEND) | bit(SGLA_ERR_BACKEND_UNAVAILABLE));
    if (kind == SGLA_BACKEND_CPU && d.dtype == SGLA_F64 && c.d.dtype == SGLA_F64)
        al &= ~bit(SGLA_ERR_UNSUPPORTED_DTYPE);
    if (kind < 1 || kind > 4) al |= bit(SGLA_ERR_INVALID_BACKEND);
    describe(&c, &d, kind);
    const int64_t nv = c.B * c.T * c.H * c.V, ns = c.N * c.H * c.K * c.V;
    buf o64 = balloc((size_t)nv * 8), h64 = {0};
    const int want_ht = chance(0.5);
    if (want_ht) h64 = balloc((size_t)ns * 8);
    double *op = (double *)(void *)o64.p, *hp = (double *)(void *)h64.p;
    if (chance(0.05) && c.T > 0) op = NULL, al |= bit(SGLA_ERR_NULL_POINTER);
    if (chance(0.03) && want_ht)
        hp = (double *)(void *)(h64.p + 4), al |= bit(SGLA_ERR_INVALID_ARGUMENT) | bit(SGLA_ERR_OVERLAP);
    unsigned char *ob = malloc(o64.n + 1), *hb = malloc(h64.n + 1);
    memcpy(ob, o64.p, o64.n);
    if (h64.n) memcpy(hb, h64.p, h64.n);
    const int st = sgla_reference(&d, (sgla_backend)kind, op, hp);
    check_status("reference", st, al, c.desc);
    const int own_ht = hp && hp == (double *)(void *)h64.p;
    if (st != SGLA_OK) {
        TU_CHECK(!memcmp(ob, o64.p, o64.n), "%s: reference failed but o64 was written | %s", ctx, c.desc);
        if (h64.n) TU_CHECK(!memcmp(hb, h64.p, h64.n), "%s: reference failed but ht64 was written | %s", ctx, c.desc);
    } else {
        int64_t u = first_unwritten(o64.p, SGLA_F64, nv);
        TU_CHECK(u < 0, "%s: reference OK but o64[%lld] unwritten | %s", ctx, (long long)u, c.desc);
        if (own_ht) {
            u = first_unwritten(h64.p, SGLA_F64, ns);
            TU_CHECK(u < 0, "%s: reference OK but ht64[%lld] unwritten | %s", ctx, (long long)u, c.desc);
        }
        /* refs B and C compute the same function as ref-a (ref-d shows the hazard by design) */
        if (kind != SGLA_BACKEND_REF_A && kind != SGLA_BACKEND_REF_D && op) {
            buf a = balloc((size_t)nv * 8), ah = balloc((size_t)ns * 8);
            const int s2 = sgla_reference(&d, SGLA_BACKEND_REF_A, (double *)(void *)a.p, hp ? (double *)(void *)ah.p : NULL);
            TU_CHECK(s2 == SGLA_OK, "%s: ref-a failed after kind %d OK: %s | %s", ctx, kind,
                     sgla_status_string((sgla_status)s2), c.desc);
            if (s2 == SGLA_OK) {
                const double tol = 1e-9 * (1 + (double)c.T);
                int64_t w = 0;
                double e = relerr(o64.p, SGLA_F64, (const double *)(const void *)a.p, nv, &w);
                TU_CHECK(e <= tol, "%s: reference kind %d o64 vs ref-a %.3g (worst %lld) | %s", ctx, kind, e,
                         (long long)w, c.desc);
                if (own_ht) {
                    e = relerr(h64.p, SGLA_F64, (const double *)(const void *)ah.p, ns, &w);
                    TU_CHECK(e <= tol, "%s: reference kind %d ht64 vs ref-a %.3g | %s", ctx, kind, e, c.desc);
                }
            }
            bfree(&a), bfree(&ah);
        }
    }
    free(ob), free(hb);
    bfree(&o64), bfree(&h64);
    fcase_free(&c);
}

/* ======================================= targeted cases ===================================== */
static float *fbuf(size_t n, float x)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = x;
    return p;
}

static void base(sgla_forward_desc *d, int64_t B, int64_t T, int64_t H, int64_t K, int64_t V)
{
    sgla_forward_desc_init(d);
    d->B = B, d->T = T, d->H = H, d->K = K, d->V = V;
}

/* status st must be want; fmt names the call */
static void expect(int st, int want, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    TU_CHECK(st == want, "%s: %s: got %s (%s), want %s", ctx, what, sgla_status_string((sgla_status)st),
             sgla_last_error(), sgla_status_string((sgla_status)want));
}

/* every entry point with NULL or out-of-range arguments */
static void t_misc(void)
{
    size_t b = 5;
    expect(sgla_forward(NULL, SGLA_BACKEND_CPU), SGLA_ERR_NULL_POINTER, "forward NULL desc");
    expect(sgla_backward(NULL, SGLA_BACKEND_CPU), SGLA_ERR_NULL_POINTER, "backward NULL desc");
    expect(sgla_workspace_size(NULL, SGLA_BACKEND_CPU, &b), SGLA_ERR_NULL_POINTER, "workspace_size NULL desc");
    expect(sgla_backward_workspace_size(NULL, SGLA_BACKEND_CPU, &b), SGLA_ERR_NULL_POINTER,
           "backward_workspace_size NULL desc");
    expect(sgla_validate(NULL, 1), SGLA_ERR_NULL_POINTER, "validate NULL");
    expect(sgla_validate_backward(NULL, 1), SGLA_ERR_NULL_POINTER, "validate_backward NULL");
    expect(sgla_reference(NULL, SGLA_BACKEND_REF_A, NULL, NULL), SGLA_ERR_NULL_POINTER, "reference NULL");
    TU_CHECK(b == 5, "%s: a failed workspace query wrote *bytes", ctx);
    sgla_forward_desc d;
    base(&d, 1, 0, 1, 1, 1);
    expect(sgla_workspace_size(&d, SGLA_BACKEND_CPU, NULL), SGLA_ERR_NULL_POINTER, "workspace_size bytes NULL");
    TU_CHECK(sgla_num_sequences(NULL) == 0, "%s: sgla_num_sequences(NULL) != 0", ctx);
    sgla_forward_desc_init(NULL);
    sgla_backward_desc_init(NULL);
    for (int s = -3; s < 40; s++) TU_CHECK(sgla_status_string((sgla_status)s), "%s: status string %d NULL", ctx, s);
    TU_CHECK(sgla_dtype_name((sgla_dtype)99) && sgla_dtype_size((sgla_dtype)-7) == 0, "%s: bad dtype name/size", ctx);
    TU_CHECK(sgla_backend_name((sgla_backend)-1) && sgla_backend_name((sgla_backend)1000), "%s: bad backend name NULL",
             ctx);
    TU_CHECK(!sgla_backend_available((sgla_backend)-1) && !sgla_backend_available((sgla_backend)7),
             "%s: a bad backend available", ctx);
#ifndef SGLA_HAVE_CUDA
    TU_CHECK(!sgla_backend_available(SGLA_BACKEND_CUDA), "%s: CUDA available in a build without it", ctx);
#endif
    TU_CHECK(sgla_backend_available(SGLA_BACKEND_CPU), "%s: the CPU backend unavailable", ctx);
    /* sgla_backend_available leaves sgla_last_error() as it was */
    sgla_forward(NULL, SGLA_BACKEND_CPU);
    char before[300];
    snprintf(before, sizeof before, "%s", sgla_last_error());
    sgla_backend_available(SGLA_BACKEND_CUDA);
    sgla_backend_available((sgla_backend)99);
    TU_CHECK(!strcmp(before, sgla_last_error()), "%s: sgla_backend_available changed sgla_last_error()", ctx);
    double o64[4];
    expect(sgla_reference(&d, SGLA_BACKEND_CPU, o64, NULL), SGLA_ERR_INVALID_BACKEND, "reference kind cpu");
    expect(sgla_reference(&d, (sgla_backend)99, o64, NULL), SGLA_ERR_INVALID_BACKEND, "reference kind 99");
    expect(sgla_reference(&d, SGLA_BACKEND_AUTO, o64, NULL), SGLA_ERR_INVALID_BACKEND, "reference kind auto");
    /* a successful call clears sgla_last_error() */
    sgla_forward(NULL, SGLA_BACKEND_CPU);
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "T=0 without outputs");
    TU_CHECK(!sgla_last_error()[0], "%s: sgla_last_error() not cleared: %s", ctx, sgla_last_error());
}

/* descriptor sizes: an older layout accepted, a bigger one with a zero tail accepted, a non-zero tail refused */
static void t_sizes(void)
{
    float q[4] = {1, 2, 3, 4}, k[4] = {1, 1, 1, 1}, v[4] = {1, 2, 3, 4}, o[4];
    unsigned char *big = calloc(1, 4096 + 64);
    sgla_forward_desc *d = (sgla_forward_desc *)(void *)big;
    base(d, 1, 4, 1, 1, 1);
    d->q = q, d->k = k, d->v = v, d->o = o;
    d->size = offsetof(sgla_forward_desc, workspace_bytes) + sizeof(size_t);
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_OK, "older layout");
    d->size = 4096;
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_OK, "size 4096, zero tail");
    big[4000] = 1;
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_ERR_INVALID_ARGUMENT, "size 4096, non-zero tail");
    d->size = 4097;
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_ERR_INVALID_ARGUMENT, "size 4097");
    d->size = offsetof(sgla_forward_desc, pool) + 4;
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_ERR_INVALID_ARGUMENT, "size ending inside pool");
    free(big);
    sgla_forward_desc f;
    base(&f, 1, 4, 1, 1, 1);
    f.q = q, f.k = k, f.v = v;
    float dout[4] = {1, 1, 1, 1}, dq[4], dk[4], dv[4];
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f, b.dout = dout, b.dq = dq, b.dk = dk, b.dv = dv;
    b.size = offsetof(sgla_backward_desc, workspace_bytes) + sizeof(size_t);
    expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_OK, "backward older layout");
    b.size = offsetof(sgla_backward_desc, workspace_limit) + 3;
    expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_ERR_INVALID_ARGUMENT, "backward size inside workspace_limit");
}

/* huge sizes with tiny buffers: a size error from every host backend and the query, never an access */
static void t_huge(void)
{
    static float tiny[16];
    double o64[16], h64[16];
    const int64_t huge[] = {(int64_t)1 << 31, (int64_t)1 << 40, (int64_t)1 << 53, (int64_t)1 << 61, INT64_MAX};
    for (int i = 0; i < 5; i++)
        for (int which = 0; which < 5; which++) {
            sgla_forward_desc d;
            base(&d, 1, 3, 1, 2, 2);
            int64_t *f = which == 0 ? &d.B : which == 1 ? &d.T : which == 2 ? &d.H : which == 3 ? &d.K : &d.V;
            *f = huge[i];
            d.q = tiny, d.k = tiny + 4, d.v = tiny + 8, d.o = o64;
            /* only the shapes past 2^62 bytes: the smaller are valid shapes whose buffers the caller claims */
            const long double elems = (long double)d.B * d.T * d.H * (d.K > d.V ? d.K : d.V) * 4;
            const long double st = (long double)d.B * d.H * d.K * d.V * 4;
            if (elems <= 4.6e18L && st <= 4.6e18L) continue;
            for (int be = SGLA_BACKEND_AUTO; be <= SGLA_BACKEND_CPU; be++) {
                size_t ws = 1;
                expect(sgla_workspace_size(&d, (sgla_backend)be, &ws), SGLA_ERR_SIZE_OVERFLOW,
                       "workspace_size, field %d = %lld, backend %d", which, (long long)*f, be);
                expect(sgla_forward(&d, (sgla_backend)be), SGLA_ERR_SIZE_OVERFLOW, "forward, field %d = %lld, backend %d",
                       which, (long long)*f, be);
            }
            expect(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, h64), SGLA_ERR_SIZE_OVERFLOW,
                   "reference, field %d = %lld", which, (long long)*f);
        }
    /* T = 0 with a huge head count and no outputs: nothing to do */
    sgla_forward_desc d;
    base(&d, 1, 0, (int64_t)1 << 40, 1, 1);
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "T=0 H=2^40 cpu");
    expect(sgla_forward(&d, SGLA_BACKEND_REF_B), SGLA_OK, "T=0 H=2^40 ref-b");
    expect(sgla_reference(&d, SGLA_BACKEND_REF_C, NULL, NULL), SGLA_OK, "T=0 H=2^40 reference");
}

/* refs B-D at T = 0 with a final state and K = 2^53, chunk 1024: their scratch (C*K*2) overflowed int64;
 * refused by size (no allocation is tried), ht64 untouched */
static void t_ref_scratch_overflow(void)
{
    static double fake[8];
    for (int kind = SGLA_BACKEND_REF_B; kind <= SGLA_BACKEND_REF_D; kind++) {
        sgla_forward_desc d;
        base(&d, 1, 0, 1, (int64_t)1 << 53, 1);
        d.chunk = 1024;
        const int s = sgla_reference(&d, (sgla_backend)kind, NULL, fake);
        TU_CHECK(s != SGLA_OK, "%s: kind %d, K=2^53, T=0 with ht64: OK (2^53 doubles written)", ctx, kind);
        int clean = 1;
        for (int i = 0; i < 8; i++) clean &= fake[i] == 0.0;
        TU_CHECK(clean, "%s: kind %d, K=2^53, T=0: ht64 written (%s)", ctx, kind, sgla_status_string((sgla_status)s));
    }
}

/* An overlap sgla_validate must refuse, then sgla_forward on ref-a and the CPU.  The calls run only where
 * sgla_validate refused it: where it does not, the kernel would write over its own inputs (memory corruption, a
 * crash), so the defect is reported, not run into. */
static void expect_overlap(const sgla_forward_desc *d, const char *what)
{
    const int sv = sgla_validate(d, 1);
    expect(sv, SGLA_ERR_OVERLAP, "%s (sgla_validate)", what);
    if (sv != SGLA_ERR_OVERLAP) return;
    expect(sgla_forward(d, SGLA_BACKEND_REF_A), SGLA_ERR_OVERLAP, "%s (ref-a)", what);
    expect(sgla_forward(d, SGLA_BACKEND_CPU), SGLA_ERR_OVERLAP, "%s (cpu)", what);
}

/* the pool written in place is an output: o over its indices, q, g or cu_seqlens inside it, o over it */
static void t_pool_overlaps(void)
{
    {   /* speculative path: indices [1][1] inside o (the CPU wrote o, then read a slot from it) */
        float *o = fbuf(4, 0), q[1] = {1.0f}, k[1] = {1.0f}, v[4] = {1, 2, 3, 4}, *pool = fbuf(2 * 4, 0.5f);
        int32_t *idx = (int32_t *)(void *)o;
        idx[0] = 0;
        sgla_state_pool p;
        memset(&p, 0, sizeof p);
        p.slots = 2, p.indices = idx, p.index_bits = 32, p.t_max = 1, p.flags = SGLA_POOL_INPLACE;
        sgla_forward_desc d;
        base(&d, 1, 1, 1, 1, 4);
        d.q = q, d.k = k, d.v = v, d.o = o, d.h0 = pool, d.pool = &p;
        expect_overlap(&d, "pool: o over the indices");
        TU_CHECK(idx[0] == 0, "%s: pool: o over the indices: o written", ctx);
        free(o), free(pool);
    }
    /* q, k, v [1, T=2, H=1, K=1], V=1; two slots of one float */
    float *qbuf = fbuf(2, 1.0f), k[2] = {1, 1}, v[2] = {1, 1}, o[2];
    int32_t idx[2] = {0, 1};
    int64_t cu[3] = {0, 1, 2};
    sgla_state_pool p;
    memset(&p, 0, sizeof p);
    p.slots = 2, p.indices = idx, p.index_bits = 32, p.flags = SGLA_POOL_INPLACE;
    sgla_forward_desc d;
    base(&d, 1, 2, 1, 1, 1);
    d.q = qbuf, d.k = k, d.v = v, d.o = o, d.h0 = qbuf, d.pool = &p, d.cu_seqlens = cu, d.num_seqs = 2;
    expect_overlap(&d, "INPLACE pool == q");
    TU_CHECK(qbuf[0] == 1.0f && qbuf[1] == 1.0f, "%s: INPLACE pool == q: the pool was written", ctx);
    float g[2] = {-0.5f, -0.5f}, *q2 = fbuf(2, 1.0f), *pool = fbuf(2, 0);
    d.q = q2, d.g = g, d.h0 = g;
    expect_overlap(&d, "INPLACE pool == g");
    d.g = NULL, d.h0 = pool, d.o = pool;
    expect_overlap(&d, "o == pool");
    /* cu_seqlens[2] inside the slots of an INPLACE pool: the CPU wrote a state, then read it as an offset */
    int64_t *cub = malloc(3 * sizeof *cub);
    cub[0] = 0, cub[1] = 1, cub[2] = 2;
    int32_t idx2[2] = {0, -1};
    p.indices = idx2;
    d.o = o, d.h0 = (float *)(void *)&cub[2], d.cu_seqlens = cub, d.threads = 1;
    expect_overlap(&d, "INPLACE pool over cu_seqlens");
    TU_CHECK(cub[2] == 2, "%s: INPLACE pool over cu_seqlens: cu_seqlens written", ctx);
    /* without SGLA_POOL_INPLACE the pool is only read: q inside it is fine */
    p.flags = 0, p.indices = idx;
    d.q = qbuf, d.h0 = qbuf, d.cu_seqlens = cu;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "a pool read only, == q");
    free(qbuf), free(q2), free(pool), free(cub);
}

/* a pool's t_max = 2^62 under SGLA_FLAG_SKIP_VALUE_CHECK: N*t_max indices overflow; refused, nothing written */
static void t_pool_tmax_overflow(void)
{
    float q[1] = {1}, k[1] = {1}, v[4] = {1, 1, 1, 1}, o[4] = {7, 7, 7, 7}, *pool = fbuf(4, 0);
    int32_t idx[4] = {0, -1, -1, -1};
    sgla_state_pool p;
    memset(&p, 0, sizeof p);
    p.slots = 1, p.indices = idx, p.index_bits = 32, p.t_max = (int64_t)1 << 62, p.flags = SGLA_POOL_INPLACE;
    sgla_forward_desc d;
    base(&d, 1, 1, 1, 1, 4);
    d.q = q, d.k = k, d.v = v, d.o = o, d.h0 = pool, d.pool = &p;
    d.flags = SGLA_FLAG_SKIP_VALUE_CHECK;
    for (int64_t tm = (int64_t)1 << 62; tm > 0; tm = tm == (int64_t)1 << 62 ? INT64_MAX : 0) {
        p.t_max = tm;
        size_t ws = 3;
        const int sw = sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws);
        TU_CHECK(sw != SGLA_OK, "%s: t_max = %lld (SKIP_VALUE_CHECK): workspace_size OK", ctx, (long long)tm);
        for (int be = SGLA_BACKEND_REF_A; be <= SGLA_BACKEND_CPU; be += SGLA_BACKEND_CPU - SGLA_BACKEND_REF_A) {
            const int s = sgla_forward(&d, (sgla_backend)be);
            TU_CHECK(s != SGLA_OK, "%s: t_max = %lld (SKIP_VALUE_CHECK): backend %d OK", ctx, (long long)tm, be);
        }
        int clean = o[0] == 7 && o[3] == 7;
        for (int i = 0; i < 4; i++) clean &= pool[i] == 0;
        TU_CHECK(clean, "%s: t_max = %lld refused but o or the pool written", ctx, (long long)tm);
    }
    free(pool);
}

/* T = 0 in place: the state is left as it is */
static void t_inplace_T0(void)
{
    float *h = fbuf(2 * 3 * 4, 0.25f);
    sgla_forward_desc d;
    base(&d, 2, 0, 3, 2, 2);
    d.h0 = h, d.ht = h;
    for (int be = SGLA_BACKEND_REF_A; be <= SGLA_BACKEND_CPU; be++) {
        expect(sgla_forward(&d, (sgla_backend)be), SGLA_OK, "T=0 in place, backend %d", be);
        int same = 1;
        for (int i = 0; i < 24; i++) same &= h[i] == 0.25f;
        TU_CHECK(same, "%s: T=0 in place changed the state (backend %d)", ctx, be);
    }
    free(h);
}

/* gates at their limits: -1e30, -FLT_MAX, denormals, -0 accepted and equal to ref-a in fp64; -inf, a positive
 * denormal refused */
static void t_gates(void)
{
    const int64_t T = 40, K = 4, V = 3;
    float *q = fbuf(T * K, 0), *k = fbuf(T * K, 0), *v = fbuf(T * V, 0), *o = fbuf(T * V, 0), *g = fbuf(T, 0);
    for (int i = 0; i < T * K; i++) q[i] = (float)((i * 37 % 11) - 5) / 7, k[i] = (float)((i * 13 % 7) - 3) / 5;
    for (int i = 0; i < T * V; i++) v[i] = (float)((i * 29 % 13) - 6) / 3;
    const float vals[] = {-1e30f, -FLT_MAX, -FLT_MIN / 8, -0.0f, -200.0f, -127.9f, -128.1f, -88.0f};
    for (size_t vi = 0; vi < sizeof vals / sizeof vals[0]; vi++) {
        for (int t = 0; t < T; t++) g[t] = t % 3 == 0 ? vals[vi] : -0.1f;
        sgla_forward_desc d;
        base(&d, 1, T, 1, K, V);
        d.q = q, d.k = k, d.v = v, d.o = o, d.g = g;
        double o64[40 * 3];
        expect(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, NULL), SGLA_OK, "gate %g, reference", (double)vals[vi]);
        double mx = 0;
        for (int i = 0; i < T * V; i++) mx = fmax(mx, fabs(o64[i]));
        for (int be = SGLA_BACKEND_REF_A; be <= SGLA_BACKEND_CPU; be++) {
            if (be == SGLA_BACKEND_REF_D) continue;
            for (int64_t ch = 1; ch <= 64; ch *= 4) {
                d.chunk = ch;
                memset(o, 0xff, (size_t)(T * V) * 4);
                expect(sgla_forward(&d, (sgla_backend)be), SGLA_OK, "gate %g, backend %d", (double)vals[vi], be);
                double e = 0;
                for (int i = 0; i < T * V; i++) e = isnan(o[i]) ? INFINITY : fmax(e, fabs(o[i] - o64[i]));
                TU_CHECK(e <= 1e-5 * mx + 1e-30, "%s: gate %g, backend %d, chunk %lld: max err %g (of %g)", ctx,
                         (double)vals[vi], be, (long long)ch, e, mx);
            }
        }
    }
    float gg[1] = {-INFINITY};
    sgla_forward_desc d;
    base(&d, 1, T, 1, K, V);
    d.q = q, d.k = k, d.v = v, d.o = o, d.g_gamma = gg;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_NONFINITE_GATE, "g_gamma -inf");
    gg[0] = NAN;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_NONFINITE_GATE, "g_gamma NaN");
    gg[0] = INFINITY;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_NONFINITE_GATE, "g_gamma +inf");
    gg[0] = 1e-40f;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_POSITIVE_GATE, "g_gamma a positive denormal");
    gg[0] = -0.0f;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "g_gamma -0");
    free(q), free(k), free(v), free(o), free(g);
}

/* cu_seqlens: empty sequences, offsets past T, negative, huge, a wrong end, T = 0, o over cu_seqlens */
static void t_cu(void)
{
    float q[8] = {1, 2, 3, 4, 5, 6, 7, 8}, o[8];
    sgla_forward_desc d;
    base(&d, 1, 8, 1, 1, 1);
    d.q = q, d.k = q, d.v = q, d.o = o;
    int64_t cu1[2] = {0, 8}, cu2[5] = {0, 0, 8, 8, 8}, cu3[3] = {0, 9, 8}, cu4[3] = {0, -3, 8};
    int64_t cu5[3] = {0, INT64_MAX, 8}, cu6[3] = {0, 4, 7}, cu7[3] = {0, 0, 0};
    d.cu_seqlens = cu1, d.num_seqs = 1;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "cu one sequence");
    d.cu_seqlens = cu2, d.num_seqs = 4;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "cu with empty sequences");
    d.num_seqs = 2;
    d.cu_seqlens = cu3;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_CU_SEQLENS_DECREASING, "cu past T");
    d.cu_seqlens = cu4;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_CU_SEQLENS_DECREASING, "cu negative");
    d.cu_seqlens = cu5;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_CU_SEQLENS_DECREASING, "cu INT64_MAX");
    d.cu_seqlens = cu6;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_CU_SEQLENS_END, "cu end != T");
    d.T = 0, d.cu_seqlens = cu7;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "cu T=0");
    int64_t *cu8 = malloc(3 * 8);
    cu8[0] = 0, cu8[1] = 1, cu8[2] = 2;
    d.T = 2, d.cu_seqlens = cu8, d.o = cu8;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_OVERLAP, "o over cu_seqlens");
    free(cu8);
}

/* SGLA_FLAG_CHECK_FINITE: a NaN h0 given in place, an f16 inf */
static void t_finite(void)
{
    float q[4] = {1, 1, 1, 1}, o[4], h[1] = {NAN};
    sgla_forward_desc d;
    base(&d, 1, 4, 1, 1, 1);
    d.q = q, d.k = q, d.v = q, d.o = o, d.h0 = h, d.ht = h, d.flags = SGLA_FLAG_CHECK_FINITE;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_NONFINITE_INPUT, "h0 NaN, in place");
    double o64[4];
    expect(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, NULL), SGLA_ERR_NONFINITE_INPUT, "reference, h0 NaN");
    uint16_t hv[4] = {0x3c00, 0x7c00, 0, 0}, ho[4];
    sgla_forward_desc e;
    base(&e, 1, 4, 1, 1, 1);
    e.dtype = SGLA_F16, e.q = hv, e.k = hv, e.v = hv, e.o = ho, e.flags = SGLA_FLAG_CHECK_FINITE;
    expect(sgla_forward(&e, SGLA_BACKEND_CPU), SGLA_ERR_NONFINITE_INPUT, "f16 inf");
}

/* the backward at T = 0: dh0 = dht, dg_gamma zero; in place; fields it does not read */
static void t_bwd_edges(void)
{
    float gg[2] = {-0.1f, -0.2f}, h0[8], dht[8], dh0[8], dgg[2];
    for (int i = 0; i < 8; i++) h0[i] = 1, dht[i] = 0.5f;
    sgla_forward_desc f;
    base(&f, 1, 0, 2, 2, 2);
    f.g_gamma = gg, f.h0 = h0;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f, b.dht = dht, b.dh0 = dh0, b.dg_gamma = dgg;
    static const int bes[] = {SGLA_BACKEND_AUTO, SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B, SGLA_BACKEND_CPU};
    for (int j = 0; j < 4; j++) {
        dgg[0] = dgg[1] = 7;
        memset(dh0, 0xff, sizeof dh0);
        expect(sgla_backward(&b, (sgla_backend)bes[j]), SGLA_OK, "T=0 backward, backend %d", bes[j]);
        TU_CHECK(dgg[0] == 0 && dgg[1] == 0, "%s: T=0 dg_gamma not zero (backend %d): %g %g", ctx, bes[j],
                 (double)dgg[0], (double)dgg[1]);
        int same = 1;
        for (int i = 0; i < 8; i++) same &= dh0[i] == 0.5f;
        TU_CHECK(same, "%s: T=0 dh0 != dht (backend %d)", ctx, bes[j]);
    }
    b.dh0 = dht;
    expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_OK, "T=0 backward, dh0 == dht");
    float ws[4];
    f.workspace = ws, f.workspace_bytes = sizeof ws;
    expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_OK, "the forward's workspace set (not the backward's)");
    f.workspace = NULL, f.workspace_bytes = 0;
    f.ht = dgg;
    expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_OK, "the forward's ht over dg_gamma (ht is not read)");
}

/* threads INT_MAX runs, -1 is refused; a workspace over q is an overlap, SIZE_MAX bytes no crash */
static void t_threads_workspace(void)
{
    float q[64], o[64];
    for (int i = 0; i < 64; i++) q[i] = (float)i / 64;
    sgla_forward_desc d;
    base(&d, 1, 64, 1, 1, 1);
    d.q = q, d.k = q, d.v = q, d.o = o, d.chunk = 1;
    d.threads = 2147483647;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_OK, "threads INT_MAX");
    d.threads = -1;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_INVALID_ARGUMENT, "threads -1");
    d.threads = 0;
    d.workspace = q, d.workspace_bytes = 4;
    expect(sgla_forward(&d, SGLA_BACKEND_CPU), SGLA_ERR_OVERLAP, "workspace over q");
    static char w[16];
    d.workspace = w, d.workspace_bytes = SIZE_MAX;
    const int s = sgla_forward(&d, SGLA_BACKEND_CPU);
    TU_CHECK(s == SGLA_OK || sgla_last_error()[0], "%s: workspace_bytes SIZE_MAX: %s without a detail", ctx,
             sgla_status_string((sgla_status)s));
}

/* causality: a NaN / inf / 1e38 in token t0's q, k or v (no CHECK_FINITE) reaches no earlier o */
static void t_causal(void)
{
    const int64_t T = 70, K = 8, V = 8;
    float *q = fbuf(T * K, 0), *k = fbuf(T * K, 0), *v = fbuf(T * V, 0), *o = fbuf(T * V, 0), *g = fbuf(T, 0);
    float *oc = fbuf(T * V, 0);
    for (int i = 0; i < T * K; i++) q[i] = (float)((i * 37 % 11) - 5) / 7, k[i] = (float)((i * 13 % 7) - 3) / 5;
    for (int i = 0; i < T * V; i++) v[i] = (float)((i * 29 % 13) - 6) / 3;
    for (int t = 0; t < T; t++) g[t] = -0.05f * (float)(t % 4);
    const float bads[] = {NAN, INFINITY, 1e38f};
    const int64_t t0s[] = {1, 47};
    static const int cfg[][2] = {{SGLA_BACKEND_REF_A, 1}, {SGLA_BACKEND_REF_B, 1}, {SGLA_BACKEND_REF_C, 1},
                                 {SGLA_BACKEND_CPU, 1},   {SGLA_BACKEND_CPU, 2}};
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (int64_t ch = 1; ch <= 64; ch *= 8) {
            const int be = cfg[ci][0], th = cfg[ci][1];
            sgla_forward_desc d;
            base(&d, 1, T, 1, K, V);
            d.q = q, d.k = k, d.v = v, d.o = oc, d.g = g, d.chunk = ch, d.threads = th;
            expect(sgla_forward(&d, (sgla_backend)be), SGLA_OK, "causal clean, backend %d", be);
            d.o = o;
            for (int which = 0; which < 3; which++)
                for (size_t bi = 0; bi < sizeof bads / sizeof bads[0]; bi++)
                    for (size_t ti = 0; ti < 2; ti++) {
                        const int64_t t0 = t0s[ti];
                        float *x = which == 0 ? q : which == 1 ? k : v;
                        const int64_t D = which == 2 ? V : K;
                        const float save = x[t0 * D + 1];
                        x[t0 * D + 1] = bads[bi];
                        expect(sgla_forward(&d, (sgla_backend)be), SGLA_OK, "causal dirty, backend %d", be);
                        x[t0 * D + 1] = save;
                        int64_t bad = -1;
                        for (int64_t i = 0; i < t0 * V && bad < 0; i++)
                            if (!(o[i] == oc[i])) bad = i;
                        TU_CHECK(bad < 0, "%s: backend %d threads %d chunk %lld: %s[token %lld] = %g changed o[%lld]", ctx,
                                 be, th, (long long)ch, which == 0 ? "q" : which == 1 ? "k" : "v", (long long)t0,
                                 (double)bads[bi], (long long)bad);
                    }
        }
    free(q), free(k), free(v), free(o), free(g), free(oc);
}

/* the CPU's largest head sizes (65536; 65537 refused), forward and backward against ref-a */
static void t_bigdims(void)
{
    const int64_t dims[][2] = {{65536, 1}, {1, 65536}, {65537, 1}, {1, 65537}, {300, 200}};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (int64_t T = 1; T <= 3; T += 2) {
            const int64_t K = dims[di][0], V = dims[di][1];
            float *q = fbuf((size_t)(T * K), 0), *k = fbuf((size_t)(T * K), 0), *v = fbuf((size_t)(T * V), 0);
            float *o = fbuf((size_t)(T * V), 0), *h0 = fbuf((size_t)(K * V), 0.001f), *ht = fbuf((size_t)(K * V), 0);
            float *g = fbuf((size_t)T, -0.3f);
            for (int64_t i = 0; i < T * K; i++)
                q[i] = (float)((i * 37 % 11) - 5) / 7, k[i] = (float)((i * 13 % 7) - 3) / 5;
            for (int64_t i = 0; i < T * V; i++) v[i] = (float)((i * 29 % 13) - 6) / 3;
            sgla_forward_desc d;
            base(&d, 1, T, 1, K, V);
            d.q = q, d.k = k, d.v = v, d.o = o, d.h0 = h0, d.ht = ht, d.g = g, d.chunk = 2, d.threads = 2;
            const int s = sgla_forward(&d, SGLA_BACKEND_CPU);
            if (K > 65536 || V > 65536) {
                expect(s, SGLA_ERR_UNSUPPORTED_SHAPE, "cpu K=%lld V=%lld", (long long)K, (long long)V);
            } else {
                expect(s, SGLA_OK, "cpu K=%lld V=%lld T=%lld", (long long)K, (long long)V, (long long)T);
                double *o64 = malloc((size_t)(T * V) * 8), *h64 = malloc((size_t)(K * V) * 8);
                expect(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, h64), SGLA_OK, "reference K=%lld V=%lld",
                       (long long)K, (long long)V);
                double mo = 0, eo = 0, mh = 0, eh = 0;
                for (int64_t i = 0; i < T * V; i++) mo = fmax(mo, fabs(o64[i])), eo = fmax(eo, fabs(o[i] - o64[i]));
                for (int64_t i = 0; i < K * V; i++) mh = fmax(mh, fabs(h64[i])), eh = fmax(eh, fabs(ht[i] - h64[i]));
                TU_CHECK(eo <= 1e-3 * mo && eh <= 1e-5 * mh, "%s: K=%lld V=%lld T=%lld: o err %g of %g, ht err %g of %g",
                         ctx, (long long)K, (long long)V, (long long)T, eo, mo, eh, mh);
                float *dout = fbuf((size_t)(T * V), 0.5f), *gr[5], *rr[5];
                const int64_t n[5] = {T * K, T * K, T * V, T, K * V};
                for (int j = 0; j < 5; j++) gr[j] = fbuf((size_t)n[j], 0), rr[j] = fbuf((size_t)n[j], 0);
                sgla_forward_desc f = d;
                f.o = NULL, f.ht = NULL;
                sgla_backward_desc b;
                sgla_backward_desc_init(&b);
                b.fwd = &f, b.dout = dout, b.dq = gr[0], b.dk = gr[1], b.dv = gr[2], b.dg = gr[3], b.dh0 = gr[4];
                expect(sgla_backward(&b, SGLA_BACKEND_CPU), SGLA_OK, "backward K=%lld V=%lld", (long long)K,
                       (long long)V);
                b.dq = rr[0], b.dk = rr[1], b.dv = rr[2], b.dg = rr[3], b.dh0 = rr[4];
                expect(sgla_backward(&b, SGLA_BACKEND_REF_A), SGLA_OK, "backward ref-a K=%lld V=%lld", (long long)K,
                       (long long)V);
                for (int j = 0; j < 5; j++) {
                    double m = 0, e = 0;
                    for (int64_t i = 0; i < n[j]; i++)
                        m = fmax(m, fabs(rr[j][i])), e = fmax(e, fabs(gr[j][i] - rr[j][i]));
                    /* fp32 sums over up to 65536 terms */
                    TU_CHECK(e <= 2e-3 * m + 1e-30, "%s: backward K=%lld V=%lld T=%lld gradient %d: err %g of %g", ctx,
                             (long long)K, (long long)V, (long long)T, j, e, m);
                }
                for (int j = 0; j < 5; j++) free(gr[j]), free(rr[j]);
                free(dout), free(o64), free(h64);
            }
            free(q), free(k), free(v), free(o), free(h0), free(ht), free(g);
        }
}

int main(void)
{
    const uint64_t seed = tu_seed("test_api_fuzz");
    fflush(stdout); /* the seed is seen even if a defect crashes the run */
    have_cuda = sgla_backend_available(SGLA_BACKEND_CUDA);
    long n = DEFAULT_CASES, one = -1;
    const char *e = getenv("SGLA_FUZZ_CASES");
    if (e && *e) n = strtol(e, NULL, 10);
    e = getenv("SGLA_FUZZ_CASE");
    if (e && *e) one = strtol(e, NULL, 10);

    if (one < 0) {
        static const struct {
            const char *name;
            void (*fn)(void);
        } targeted[] = {{"misc", t_misc},
                        {"sizes", t_sizes},
                        {"huge", t_huge},
                        {"ref_scratch_overflow", t_ref_scratch_overflow},
                        {"pool_overlaps", t_pool_overlaps},
                        {"pool_tmax_overflow", t_pool_tmax_overflow},
                        {"inplace_T0", t_inplace_T0},
                        {"gates", t_gates},
                        {"cu", t_cu},
                        {"finite", t_finite},
                        {"bwd_edges", t_bwd_edges},
                        {"threads_workspace", t_threads_workspace},
                        {"causal", t_causal},
                        {"bigdims", t_bigdims}};
        for (size_t i = 0; i < sizeof targeted / sizeof targeted[0]; i++) {
            snprintf(ctx, sizeof ctx, "targeted %s", targeted[i].name);
            targeted[i].fn();
        }
    }

    static const struct {
        const char *name;
        void (*fn)(void);
    } kinds[] = {{"fwd", run_fwd_case}, {"bwd", run_bwd_case}, {"pool", run_pool_case}, {"ref", run_ref_case}};
    for (long i = one >= 0 ? one : 0; i < (one >= 0 ? one + 1 : n); i++)
        for (int j = 0; j < 4; j++) {
            /* each case its own stream: SGLA_SEED=S SGLA_FUZZ_CASE=I replays it alone */
            tu_rng_init(&R, seed * 1000003u + (uint64_t)i * 4u + (uint64_t)j);
            snprintf(ctx, sizeof ctx, "%s case %ld (SGLA_SEED=%llu SGLA_FUZZ_CASE=%ld)", kinds[j].name, i,
                     (unsigned long long)seed, i);
            kinds[j].fn();
        }
    printf("test_api_fuzz: targeted cases%s, %ld random case(s) of each kind (SGLA_FUZZ_CASES=N for more)\n",
           one >= 0 ? " skipped" : "", one >= 0 ? 1 : n);
    return tu_finish("test_api_fuzz");
}
