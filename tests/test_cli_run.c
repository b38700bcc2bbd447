/* `sgla run` and `sgla grad` end to end: run the CLI on .npy files, read o and ht back and
 * compare them with the fp64 reference computed here from the same files,
 * for every backend, f32/f16/f8 inputs, every gate form, varlen, T = 0, and
 * the error exits.  SGLA_CLI (the sgla executable) and SGLA_TEST_DATA_DIR
 * come from tests/cli.cmake. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "testutil.h"

#ifndef SGLA_CLI
#error "SGLA_CLI must name the sgla executable"
#endif

static const char *dp(const char *name)
{
    /* a ring, so one run_case initializer can hold several at once */
    static char buf[16][1024];
    static int k;
    k = (k + 1) % 16;
    snprintf(buf[k], sizeof buf[k], "%s/%s", SGLA_TEST_DATA_DIR, name);
    return buf[k];
}

/* a command in front of the CLI (e.g. "timeout 30 ") for a case that might hang */
static const char *run_prefix = "";

/* Run `sgla <sub> <args>`, stderr to a file; returns the exit status. */
static int run_sub(const char *sub, const char *args, char *errbuf, size_t errcap)
{
    char cmd[8192];
    const char *errfile = "test_cli_run.stderr";
    snprintf(cmd, sizeof cmd, "%s'%s' %s %s > /dev/null 2> %s", run_prefix, SGLA_CLI, sub, args, errfile);
    int st = system(cmd);
    errbuf[0] = '\0';
    FILE *f = fopen(errfile, "r");
    if (f) {
        size_t n = fread(errbuf, 1, errcap - 1, f);
        errbuf[n] = '\0';
        fclose(f);
    }
    remove(errfile);
    return st == -1 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) : 128);
}

static int run_cli(const char *args, char *errbuf, size_t errcap) { return run_sub("run", args, errbuf, errcap); }

static npy_array must_read(const char *path)
{
    npy_array a;
    char err[512];
    if (npy_read(path, &a, err, sizeof err)) {
        fprintf(stderr, "FAIL reading %s: %s\n", path, err);
        memset(&a, 0, sizeof a);
    }
    return a;
}

static void to_f64(const npy_array *a, double *out)
{
    for (int64_t i = 0; i < a->count; i++) {
        switch (a->dtype) {
        case NPY_F16: out[i] = sgla_f16_to_f32(((const uint16_t *)a->data)[i]); break;
        case NPY_F32: out[i] = ((const float *)a->data)[i]; break;
        case NPY_F64: out[i] = ((const double *)a->data)[i]; break;
        default: out[i] = NAN;
        }
    }
}

typedef struct run_case {
    const char *name;
    const char *q, *k, *v, *g, *gg, *h0, *cu; /* data file names (NULL: absent) */
    double alpha;                             /* > 0: --alpha */
    double scale;
    int chunk;
    const char *backend;
    double tol;       /* rel L2 bound for o against fp64 */
    npy_dtype o_dtype; /* expected dtype of o */
} run_case;

/* fp64 reference of the case from the same files (f8 inputs rounded to f32
 * as the CLI documents). */
static int reference(const run_case *c, double **o64, double **ht64, int64_t *nv, int64_t *ns)
{
    npy_array q = must_read(c->q), k = must_read(c->k), v = must_read(c->v);
    npy_array g = {0}, gg = {0}, h0 = {0}, cu = {0};
    if (c->g) g = must_read(c->g);
    if (c->gg) gg = must_read(c->gg);
    if (c->h0) h0 = must_read(c->h0);
    if (c->cu) cu = must_read(c->cu);
    int ok = q.data && k.data && v.data;
    float *fq = NULL, *fk = NULL, *fv = NULL;
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    if (ok && q.dtype == NPY_F64) {
        fq = malloc((size_t)q.count * 4 + 4);
        fk = malloc((size_t)k.count * 4 + 4);
        fv = malloc((size_t)v.count * 4 + 4);
        for (int64_t i = 0; i < q.count; i++) fq[i] = (float)((double *)q.data)[i];
        for (int64_t i = 0; i < k.count; i++) fk[i] = (float)((double *)k.data)[i];
        for (int64_t i = 0; i < v.count; i++) fv[i] = (float)((double *)v.data)[i];
        d.q = fq, d.k = fk, d.v = fv, d.dtype = SGLA_F32;
    } else {
        d.q = q.data, d.k = k.data, d.v = v.data, d.dtype = q.dtype == NPY_F16 ? SGLA_F16 : SGLA_F32;
    }
    d.B = q.shape[0], d.T = q.shape[1], d.H = q.shape[2], d.K = q.shape[3], d.V = v.shape[3];
    float ag[16];
    if (c->alpha > 0) {
        for (int h = 0; h < 16; h++) ag[h] = (float)log(c->alpha);
        d.g_gamma = ag;
    }
    if (gg.data) d.g_gamma = gg.data;
    d.g = g.data;
    d.h0 = h0.data;
    d.cu_seqlens = cu.data;
    d.num_seqs = cu.data ? cu.count - 1 : 0;
    d.scale = (float)c->scale;
    d.chunk = c->chunk;
    *nv = d.B * d.T * d.H * d.V;
    *ns = sgla_num_sequences(&d) * d.H * d.K * d.V;
    *o64 = malloc((size_t)*nv * 8 + 8);
    /* sgla_reference ignores o but validation still wants a non-NULL one */
    void *o_scratch = malloc((size_t)*nv * 4 + 4);
    d.o = o_scratch;
    *ht64 = malloc((size_t)*ns * 8 + 8);
    sgla_status st = ok ? sgla_reference(&d, SGLA_BACKEND_REF_A, *o64, *ht64) : SGLA_ERR_INTERNAL;
    TU_CHECK(st == SGLA_OK, "%s: in-process reference: %s (%s)", c->name, sgla_status_string(st), sgla_last_error());
    npy_free(&q), npy_free(&k), npy_free(&v), npy_free(&g), npy_free(&gg), npy_free(&h0), npy_free(&cu);
    free(fq), free(fk), free(fv), free(o_scratch);
    return st == SGLA_OK;
}

static void check_case(const run_case *c)
{
    char args[6000], err[4096];
    int n = snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --scale %.17g --chunk %d --backend %s --o o_%s.npy --ht ht_%s.npy",
                     c->q, c->k, c->v, c->scale, c->chunk, c->backend, c->name, c->name);
    if (c->g) n += snprintf(args + n, sizeof args - n, " --g '%s'", c->g);
    if (c->gg) n += snprintf(args + n, sizeof args - n, " --g-gamma '%s'", c->gg);
    if (c->alpha > 0) n += snprintf(args + n, sizeof args - n, " --alpha %.17g", c->alpha);
    if (c->h0) n += snprintf(args + n, sizeof args - n, " --h0 '%s'", c->h0);
    if (c->cu) n += snprintf(args + n, sizeof args - n, " --cu-seqlens '%s'", c->cu);
    char path[256], hpath[256];
    snprintf(path, sizeof path, "o_%s.npy", c->name);
    snprintf(hpath, sizeof hpath, "ht_%s.npy", c->name);
    remove(path), remove(hpath); /* a previous run's files must not stand in for this run's */
    int rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "%s: sgla run exited %d: %s", c->name, rc, err);
    if (rc) return;

    double *r_o = NULL, *r_ht = NULL;
    int64_t nv, ns;
    if (!reference(c, &r_o, &r_ht, &nv, &ns)) goto done;
    npy_array o = must_read(path);
    npy_array ht = must_read(hpath);
    TU_CHECK(o.dtype == c->o_dtype, "%s: o has dtype %s, expected %s", c->name, npy_dtype_descr(o.dtype),
             npy_dtype_descr(c->o_dtype));
    TU_CHECK(ht.dtype == NPY_F32 && ht.ndim == 4, "%s: ht must be 4-d <f4", c->name);
    TU_CHECK(o.count == nv && ht.count == ns, "%s: o has %lld elements (want %lld), ht %lld (want %lld)", c->name,
             (long long)o.count, (long long)nv, (long long)ht.count, (long long)ns);
    if (o.count == nv && ht.count == ns && o.data && ht.data) {
        double *x = malloc((size_t)(nv + ns) * 8 + 8);
        to_f64(&o, x);
        to_f64(&ht, x + nv);
        double eo = nv ? tu_rel_l2(x, r_o, nv) : 0, eh = ns ? tu_rel_l2(x + nv, r_ht, ns) : 0;
        /* the state is fp32 out of every backend */
        TU_CHECK(eo <= c->tol, "%s: o rel L2 %.3g > %.1g", c->name, eo, c->tol);
        TU_CHECK(eh <= fmax(c->tol, 1e-5), "%s: ht rel L2 %.3g", c->name, eh);
        printf("%-14s %-6s o rel L2 %.2e  ht rel L2 %.2e\n", c->name, c->backend, eo, eh);
        free(x);
    }
    npy_free(&o);
    npy_free(&ht);
done:
    remove(path), remove(hpath);
    free(r_o);
    free(r_ht);
}

/* Write an f8 copy and a T = 0 copy of the f32 fixtures. */
static void make_derived(void)
{
    const char *names[3] = {"run_q.npy", "run_k.npy", "run_v.npy"};
    const char *f8[3] = {"f8_q.npy", "f8_k.npy", "f8_v.npy"};
    const char *t0[3] = {"t0_q.npy", "t0_k.npy", "t0_v.npy"};
    char err[512];
    for (int i = 0; i < 3; i++) {
        npy_array a = must_read(dp(names[i]));
        if (!a.data) continue;
        double *d = malloc((size_t)a.count * 8);
        for (int64_t j = 0; j < a.count; j++) d[j] = ((float *)a.data)[j];
        TU_CHECK(!npy_write(f8[i], NPY_F64, a.ndim, a.shape, d, err, sizeof err), "%s", err);
        int64_t sh[4] = {a.shape[0], 0, a.shape[2], a.shape[3]};
        TU_CHECK(!npy_write(t0[i], NPY_F32, 4, sh, NULL, err, sizeof err), "%s", err);
        free(d);
        npy_free(&a);
    }
}

/* B = 0 (a batch of no sequence): `sgla run` writes o [0,T,H,V] and ht [0,H,K,V], `sgla grad` empty
 * gradients and dg_gamma [H] of zeros (a sum over no token), on ref-a and cpu */
static void empty_batch(void)
{
    npy_array q = must_read(dp("run_q.npy")), v = must_read(dp("run_v.npy"));
    if (!q.data || !v.data) return;
    const int64_t T = q.shape[1], H = q.shape[2], K = q.shape[3], V = v.shape[3];
    const int64_t sq[4] = {0, T, H, K}, sv[4] = {0, T, H, V};
    char err[4096], args[4096];
    TU_CHECK(!npy_write("b0_q.npy", NPY_F32, 4, sq, NULL, err, sizeof err), "%s", err);
    TU_CHECK(!npy_write("b0_v.npy", NPY_F32, 4, sv, NULL, err, sizeof err), "%s", err);
    for (int be = 0; be < 2; be++) {
        const char *bn = be ? "cpu" : "ref-a";
        remove("b0_o.npy"), remove("b0_ht.npy"), remove("b0_dgg.npy");
        snprintf(args, sizeof args, "--backend %s --q b0_q.npy --k b0_q.npy --v b0_v.npy --g-gamma '%s' --o b0_o.npy "
                 "--ht b0_ht.npy", bn, dp("run_gg.npy"));
        int rc = run_cli(args, err, sizeof err);
        npy_array o = must_read("b0_o.npy"), ht = must_read("b0_ht.npy");
        TU_CHECK(rc == 0 && o.ndim == 4 && o.shape[0] == 0 && o.shape[1] == T && o.shape[3] == V && ht.ndim == 4 &&
                     ht.shape[0] == 0 && ht.shape[1] == H,
                 "B = 0, sgla run on %s: rc %d, '%s'", bn, rc, err);
        npy_free(&o), npy_free(&ht);
        snprintf(args, sizeof args, "--backend %s --q b0_q.npy --k b0_q.npy --v b0_v.npy --g-gamma '%s' --do b0_v.npy "
                 "--dq b0_dq.npy --dk b0_dk.npy --dv b0_dv.npy --dg-gamma b0_dgg.npy", bn, dp("run_gg.npy"));
        rc = run_sub("grad", args, err, sizeof err);
        npy_array dgg = must_read("b0_dgg.npy");
        int zeros = dgg.data && dgg.ndim == 1 && dgg.shape[0] == H;
        for (int64_t h = 0; zeros && h < H; h++) zeros &= ((const float *)dgg.data)[h] == 0.0f;
        TU_CHECK(rc == 0 && zeros, "B = 0, sgla grad on %s: rc %d, dg_gamma %s, '%s'", bn, rc,
                 zeros ? "zeros" : "not zeros", err);
        npy_free(&dgg);
    }
    npy_free(&q), npy_free(&v);
}

/* `sgla grad` with ref-a, ref-b and cpu on the run fixtures (do = v's file, dht = h0's
 * file): every gradient file against the fp64 backward computed here from the same
 * files (SGLA_F64 through ref-a). */
static void check_grad(void)
{
    npy_array q = must_read(dp("run_q.npy")), k = must_read(dp("run_k.npy")), v = must_read(dp("run_v.npy"));
    npy_array g = must_read(dp("run_g.npy")), h0 = must_read(dp("run_h0.npy"));
    if (!q.data || !k.data || !v.data || !g.data || !h0.data) {
        TU_CHECK(0, "grad: fixtures unreadable");
        return;
    }
    const int64_t B = q.shape[0], T = q.shape[1], H = q.shape[2], K = q.shape[3], V = v.shape[3];
    double *q64 = malloc((size_t)q.count * 8), *k64 = malloc((size_t)k.count * 8), *v64 = malloc((size_t)v.count * 8);
    double *g64 = malloc((size_t)g.count * 8), *h064 = malloc((size_t)h0.count * 8);
    to_f64(&q, q64), to_f64(&k, k64), to_f64(&v, v64), to_f64(&g, g64), to_f64(&h0, h064);
    double *ref[5] = {malloc((size_t)q.count * 8), malloc((size_t)k.count * 8), malloc((size_t)v.count * 8),
                      malloc((size_t)g.count * 8), malloc((size_t)h0.count * 8)};
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q64, d.k = k64, d.v = v64, d.g = g64, d.h0 = h064, d.dtype = SGLA_F64, d.scale = 0.5f, d.chunk = 3;
    d.B = B, d.T = T, d.H = H, d.K = K, d.V = V;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &d, b.dout = v64, b.dht = h064;
    b.dq = ref[0], b.dk = ref[1], b.dv = ref[2], b.dg = ref[3], b.dh0 = ref[4];
    sgla_status st = sgla_backward(&b, SGLA_BACKEND_REF_A);
    TU_CHECK(st == SGLA_OK, "grad reference: %s", sgla_last_error());
    static const char *names[5] = {"dq", "dk", "dv", "dg", "dh0"};
    static const char *backends[3] = {"ref-a", "ref-b", "cpu"};
    for (int bi = 0; bi < 3 && st == SGLA_OK; bi++) {
        char args[8192], err[4096];
        snprintf(args, sizeof args,
                 "--q '%s' --k '%s' --v '%s' --g '%s' --h0 '%s' --scale 0.5 --chunk 3 --backend %s --do '%s' --dht '%s' "
                 "--dq g_dq.npy --dk g_dk.npy --dv g_dv.npy --dg g_dg.npy --dh0 g_dh0.npy",
                 dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), dp("run_g.npy"), dp("run_h0.npy"), backends[bi],
                 dp("run_v.npy"), dp("run_h0.npy"));
        int rc = run_sub("grad", args, err, sizeof err);
        TU_CHECK(rc == 0, "sgla grad --backend %s: rc %d, '%s'", backends[bi], rc, err);
        if (rc) continue;
        for (int i = 0; i < 5; i++) {
            char path[64];
            snprintf(path, sizeof path, "g_%s.npy", names[i]);
            npy_array o = must_read(path);
            const int64_t n = i < 2 ? q.count : i == 2 ? v.count : i == 3 ? g.count : h0.count;
            double *x = malloc((size_t)(n ? n : 1) * 8), num = 0, den = 0;
            if (o.data && o.count == n) {
                to_f64(&o, x);
                for (int64_t j = 0; j < n; j++) num += (x[j] - ref[i][j]) * (x[j] - ref[i][j]), den += ref[i][j] * ref[i][j];
            }
            const double rel = o.data && o.count == n ? sqrt(num / den) : NAN;
            const double bar = backends[bi][0] == 'r' ? 1e-6 : 1e-5; /* f4 files: the rounding */
            TU_CHECK(rel <= bar, "sgla grad --backend %s: %s rel L2 %.3e > %.0e", backends[bi], names[i], rel, bar);
            printf("grad %-5s %-4s rel L2 %.2e\n", backends[bi], names[i], rel);
            free(x);
            npy_free(&o);
            remove(path);
        }
    }
    /* its errors: status 2 and a line naming the problem */
    char args[4096], err[4096];
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --do '%s' --dq a.npy --dk b.npy --dv c.npy --dg d.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), dp("run_v.npy"));
    int rc = run_sub("grad", args, err, sizeof err);
    TU_CHECK(rc == 2 && strstr(err, "--dg needs --g"), "grad --dg without --g: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --do '%s' --dq a.npy --dk a.npy --dv c.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), dp("run_v.npy"));
    rc = run_sub("grad", args, err, sizeof err);
    TU_CHECK(rc == 2 && strstr(err, "same file"), "grad with --dq == --dk: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --do '%s' --dq a.npy --dk b.npy --dv c.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), dp("run_q.npy"));
    rc = run_sub("grad", args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "--do"), "grad with do of q's shape: rc %d, '%s'", rc, err);
    {   /* T = 0 with H K V past int64: refused by a count that cannot overflow (UBSan's build checks) */
        const int64_t big[4] = {1, 0, (int64_t)1 << 21, (int64_t)1 << 21};
        char e2[256];
        TU_CHECK(!npy_write("big_t0.npy", NPY_F32, 4, big, NULL, e2, sizeof e2), "%s", e2);
        snprintf(args, sizeof args, "--q big_t0.npy --k big_t0.npy --v big_t0.npy --do big_t0.npy --dq a.npy "
                 "--dk b.npy --dv c.npy");
        rc = run_sub("grad", args, err, sizeof err);
        TU_CHECK(rc == 1 && strstr(err, "element counts overflow"), "grad with H K V past int64: rc %d, '%s'", rc, err);
        remove("big_t0.npy");
    }
    {   /* T = 0 with 2^40 heads (a header-only file): nothing to compute, done at once (the CPU
         * backend used to clear a state per head: hours) */
        const int64_t many[4] = {1, 0, (int64_t)1 << 40, 4};
        char e2[256];
        TU_CHECK(!npy_write("many_t0.npy", NPY_F32, 4, many, NULL, e2, sizeof e2), "%s", e2);
        static const char *const bes[] = {"cpu", "ref-a", "ref-b"};
        for (int i = 0; i < 3; i++) {
            char args[256];
            snprintf(args, sizeof args, "--backend %s --q many_t0.npy --k many_t0.npy --v many_t0.npy --o a.npy",
                     bes[i]);
            rc = run_sub("run", args, err, sizeof err);
            TU_CHECK(rc == 0, "run --backend %s with T = 0, H = 2^40: rc %d, '%s'", bes[i], rc, err);
            snprintf(args, sizeof args, "--backend %s --q many_t0.npy --k many_t0.npy --v many_t0.npy "
                     "--do many_t0.npy --dq a.npy --dk b.npy --dv c.npy", bes[i]);
            rc = run_sub("grad", args, err, sizeof err);
            TU_CHECK(rc == 0, "grad --backend %s with T = 0, H = 2^40: rc %d, '%s'", bes[i], rc, err);
        }
        remove("many_t0.npy"), remove("a.npy"), remove("b.npy"), remove("c.npy");
    }
    for (int i = 0; i < 5; i++) free(ref[i]);
    free(q64), free(k64), free(v64), free(g64), free(h064);
    npy_free(&q), npy_free(&k), npy_free(&v), npy_free(&g), npy_free(&h0);
}

/* A file's bytes (NULL when it cannot be read), for "unchanged" checks. */
static char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) free(b), b = NULL;
    fclose(f);
    return b;
}

static int same_bytes(const char *path, const char *want, long wn)
{
    long n = -1;
    char *b = slurp(path, &n);
    const int same = b && n == wn && memcmp(b, want, (size_t)n) == 0;
    free(b);
    return same;
}

/* Outputs are never lost: a name spelled differently is still the same file;
 * an output naming an input is refused; a failed second output leaves the
 * first target as it was (nothing renamed before every file is complete);
 * a FIFO as input is refused at once instead of waiting for a writer. */
/* --scale defaults to K^-0.5 (as Python and fla): the same bytes as the explicit value */
static void default_scale(void)
{
    char args[4096], err[4096];
    const npy_array q = must_read(dp("run_q.npy"));
    const double K = (double)q.shape[3];
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --backend cpu --o sc_default.npy", dp("run_q.npy"),
             dp("run_k.npy"), dp("run_v.npy"));
    int rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "default scale run: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --backend cpu --scale %.17g --o sc_explicit.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), (double)(float)(1.0 / sqrt(K)));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "explicit scale run: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --backend cpu --scale 1 --o sc_one.npy", dp("run_q.npy"),
             dp("run_k.npy"), dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    long n1 = 0, n2 = 0, n3 = 0;
    char *a = slurp("sc_default.npy", &n1), *b = slurp("sc_explicit.npy", &n2), *c = slurp("sc_one.npy", &n3);
    TU_CHECK(a && b && n1 == n2 && !memcmp(a, b, (size_t)n1), "--scale's default is not K^-0.5 (K = %g)", K);
    TU_CHECK(a && c && !(n1 == n3 && !memcmp(a, c, (size_t)n1)), "--scale's default gave scale 1's output");
    free(a), free(b), free(c);
    npy_free((npy_array *)&q);
    remove("sc_default.npy"), remove("sc_explicit.npy"), remove("sc_one.npy");
}

/* values checked where the user gave them: --check-finite; f8 gates before they are
 * rounded (+1e-50 is a positive gate; -1e300 erases the state like -FLT_MAX); --scale
 * FLT_MAX is a finite float */
static void value_checks(void)
{
    char args[4096], err[4096], e2[512];
    npy_array q = must_read(dp("run_q.npy"));
    if (q.data) {
        ((float *)q.data)[5] = NAN;
        TU_CHECK(!npy_write("vc_nan_q.npy", NPY_F32, q.ndim, q.shape, q.data, e2, sizeof e2), "%s", e2);
        npy_free(&q);
    }
    snprintf(args, sizeof args, "--q vc_nan_q.npy --k '%s' --v '%s' --backend cpu --check-finite --o vc_o.npy",
             dp("run_k.npy"), dp("run_v.npy"));
    int rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "holds a NaN") && strstr(err, "q[5] = nan"),
             "--check-finite with a NaN in q: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q vc_nan_q.npy --k '%s' --v '%s' --backend cpu --o vc_o.npy", dp("run_k.npy"),
             dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "a NaN in q without --check-finite: rc %d, '%s'", rc, err);
    /* the backward's own inputs: the message names dht, not "q, k, v or h0" */
    npy_array h0 = must_read(dp("run_h0.npy"));
    if (h0.data) {
        ((float *)h0.data)[0] = NAN;
        TU_CHECK(!npy_write("vc_nan_dht.npy", NPY_F32, h0.ndim, h0.shape, h0.data, e2, sizeof e2), "%s", e2);
        npy_free(&h0);
    }
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --h0 '%s' --do '%s' --dht vc_nan_dht.npy --backend cpu "
             "--check-finite --dq vc_dq.npy --dk vc_dk.npy --dv vc_dv.npy", dp("run_q.npy"), dp("run_k.npy"),
             dp("run_v.npy"), dp("run_h0.npy"), dp("run_v.npy"));
    rc = run_sub("grad", args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "dht[0] = nan") && !strstr(err, "q, k, v or h0"),
             "--check-finite with a NaN in dht: rc %d, '%s'", rc, err);
    npy_array g = must_read(dp("run_g.npy"));
    if (g.data) {
        double *d = malloc((size_t)g.count * 8);
        for (int64_t j = 0; j < g.count; j++) d[j] = ((float *)g.data)[j];
        d[3] = 1e-50;
        TU_CHECK(!npy_write("vc_gpos.npy", NPY_F64, g.ndim, g.shape, d, e2, sizeof e2), "%s", e2);
        d[3] = -1e300;
        TU_CHECK(!npy_write("vc_ghuge.npy", NPY_F64, g.ndim, g.shape, d, e2, sizeof e2), "%s", e2);
        free(d);
        npy_free(&g);
    }
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --g vc_gpos.npy --backend cpu --o vc_o.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "1e-50") && strstr(err, "<= 0"),
             "an f8 gate of +1e-50: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --g vc_ghuge.npy --backend cpu --o vc_o.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "an f8 gate of -1e300 (erase the state): rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --scale 3.4028234663852886e38 --backend ref-a --o vc_o.npy",
             dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 0, "--scale FLT_MAX: rc %d, '%s'", rc, err);
    remove("vc_nan_q.npy"), remove("vc_nan_dht.npy"), remove("vc_gpos.npy"), remove("vc_ghuge.npy"), remove("vc_o.npy");
}

/* a count of 1 is singular in the messages ("1 entry", "1 byte", "1 dimension") */
static void singular_counts(void)
{
    char args[4096], err[4096], e2[512];
    const int64_t one = 0, n1 = 1;
    TU_CHECK(!npy_write("sg_cu1.npy", NPY_I64, 1, &n1, &one, e2, sizeof e2), "%s", e2);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --cu-seqlens sg_cu1.npy --o sg_o.npy", dp("var_q.npy"),
             dp("var_k.npy"), dp("var_v.npy"));
    int rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "sg_cu1.npy: 1 entry;"), "one cu_seqlens entry: rc %d, '%s'", rc, err);
    /* run_q.npy and one byte more */
    FILE *in = fopen(dp("run_q.npy"), "rb"), *out = fopen("sg_q1.npy", "wb");
    TU_CHECK(in && out, "cannot copy run_q.npy");
    if (in && out) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
        fputc(0, out);
    }
    if (in) fclose(in);
    if (out) fclose(out);
    snprintf(args, sizeof args, "--q sg_q1.npy --k '%s' --v '%s' --o sg_o.npy", dp("run_k.npy"), dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, ": 1 byte of extra data"), "one byte of extra data: rc %d, '%s'", rc, err);
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --o sg_o.npy", dp("np_f4_r1.npy"), dp("run_k.npy"),
             dp("run_v.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "has 1 dimension, expected 4"), "a 1-d q: rc %d, '%s'", rc, err);
    remove("sg_cu1.npy"), remove("sg_q1.npy"), remove("sg_o.npy");
}

static void file_safety(void)
{
    char err[4096], args[4096];
    const char *qkv_fmt = "--q fs_q.npy --k '%s' --v '%s'";
    /* a private copy of q, so that a failing check cannot destroy the fixture */
    npy_array q = must_read(dp("run_q.npy"));
    char e2[512];
    TU_CHECK(q.data && !npy_write("fs_q.npy", NPY_F32, q.ndim, q.shape, q.data, e2, sizeof e2), "fs_q.npy: %s", e2);
    npy_free(&q);
    long qn = -1;
    char *qbytes = slurp("fs_q.npy", &qn);
    FILE *f;
    char qkv[2048];
    snprintf(qkv, sizeof qkv, qkv_fmt, dp("run_k.npy"), dp("run_v.npy"));

    snprintf(args, sizeof args, "%s --o fs_same.npy --ht ./fs_same.npy", qkv);
    int rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 2 && strstr(err, "name the same file"), "--o x --ht ./x: rc %d, '%s'", rc, err);

    snprintf(args, sizeof args, "%s --o ./fs_q.npy", qkv);
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 2 && strstr(err, "input file of --q"), "--o naming --q's file: rc %d, '%s'", rc, err);
    TU_CHECK(qbytes && same_bytes("fs_q.npy", qbytes, qn), "--o naming the input changed it");
    f = fopen("fs_q.npy", "wb"); /* put it back if it was lost, for the cases below */
    if (f) fwrite(qbytes, 1, (size_t)(qbytes ? qn : 0), f), fclose(f);

    /* o's target holds other bytes; --ht goes into a missing directory: o must be untouched */
    f = fopen("fs_o.npy", "wb");
    if (f) fputs("precious", f), fclose(f);
    snprintf(args, sizeof args, "%s --o fs_o.npy --ht fs_no_such_dir/ht.npy", qkv);
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "--ht"), "--ht into a missing directory: rc %d, '%s'", rc, err);
    TU_CHECK(same_bytes("fs_o.npy", "precious", 8), "a failed --ht changed --o's existing file");
    /* and a successful run replaces it */
    snprintf(args, sizeof args, "%s --o fs_o.npy --ht fs_ht.npy", qkv);
    rc = run_cli(args, err, sizeof err);
    npy_array o = must_read("fs_o.npy");
    TU_CHECK(rc == 0 && o.data && o.ndim == 4, "the run after it: rc %d, '%s'", rc, err);
    npy_free(&o);

    /* a rename refused at the commit (SGLA_NPY_FAIL_RENAME: a sticky directory's or an immutable file's
     * refusal): the targets already replaced come back, a new one goes, no .old- or .tmp- file stays */
    for (int k = 0; k < 2; k++) {
        f = fopen("fs_o.npy", "wb");
        if (f) fputs("precious o", f), fclose(f);
        f = fopen("fs_ht.npy", "wb");
        if (f) fputs("precious ht", f), fclose(f);
        remove("fs_new.npy");
        snprintf(args, sizeof args, "%s --do '%s' --dq fs_o.npy --dk fs_new.npy --dv fs_ht.npy", qkv, dp("run_v.npy"));
        run_prefix = k ? "SGLA_NPY_FAIL_RENAME=2 " : "SGLA_NPY_FAIL_RENAME=1 ";
        rc = run_sub("grad", args, err, sizeof err);
        run_prefix = "";
        TU_CHECK(rc == 1 && strstr(err, "cannot rename the finished file into place"), "refused rename %d: rc %d, '%s'",
                 k + 1, rc, err);
        TU_CHECK(same_bytes("fs_o.npy", "precious o", 10) && same_bytes("fs_ht.npy", "precious ht", 11),
                 "refused rename %d: a target kept other bytes", k + 1);
        TU_CHECK(access("fs_new.npy", F_OK) != 0, "refused rename %d: a new target was left", k + 1);
        TU_CHECK(system("ls -a | grep -q '\\.old-\\|\\.tmp-'") != 0, "refused rename %d: a file was left beside", k + 1);
    }
    remove("fs_new.npy");

    /* grad: an output naming --do's file */
    snprintf(args, sizeof args, "%s --do fs_q.npy --dq fs_dq.npy --dk fs_dk.npy --dv fs_q.npy", qkv);
    rc = run_sub("grad", args, err, sizeof err);
    TU_CHECK(rc == 2 && strstr(err, "input file of"), "grad --dv naming an input: rc %d, '%s'", rc, err);
    TU_CHECK(qbytes && same_bytes("fs_q.npy", qbytes, qn), "grad changed its input");

    /* a FIFO: refused, not a hang (the CLI runs under the test's timeout) */
    remove("fs_fifo.npy");
    if (mkfifo("fs_fifo.npy", 0600) == 0) {
        snprintf(args, sizeof args, "--q fs_fifo.npy --k '%s' --v '%s' --o fs_x.npy", dp("run_k.npy"), dp("run_v.npy"));
        if (system("command -v timeout > /dev/null 2>&1") == 0) run_prefix = "timeout 30 ";
        rc = run_cli(args, err, sizeof err);
        run_prefix = "";
        TU_CHECK(rc == 1 && strstr(err, "not a regular file"), "FIFO input: rc %d, '%s'", rc, err);
        remove("fs_fifo.npy");
    }
    /* no temporary file is left behind by any of the above */
    rc = system("ls -a | grep -q '\\.tmp-'");
    TU_CHECK(rc != 0, "a temporary output file was left behind");
    free(qbytes);
    const char *made[] = {"fs_q.npy", "fs_o.npy", "fs_ht.npy", "fs_dq.npy", "fs_dk.npy", "fs_same.npy", "fs_x.npy"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) remove(made[i]);
    printf("file safety: done\n");
}

int main(void)
{
    make_derived();
    static const char *backends[] = {"ref-a", "ref-b", "ref-c", "ref-d", "cpu", "auto"};
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        int is_ref = backends[b][0] == 'r';
        char name[32];
        snprintf(name, sizeof name, "g_%s", backends[b]);
        run_case c = {name, dp("run_q.npy"), dp("run_k.npy"), dp("run_v.npy"), dp("run_g.npy"), NULL,
                      dp("run_h0.npy"), NULL, 0, 0.5, 3, backends[b], is_ref ? 1e-6 : 1e-5, NPY_F32};
        check_case(&c);
        snprintf(name, sizeof name, "var_%s", backends[b]);
        run_case v = {name, dp("var_q.npy"), dp("var_k.npy"), dp("var_v.npy"), NULL, dp("run_gg.npy"),
                      dp("var_h0.npy"), dp("var_cu.npy"), 0, 1.0, 2, backends[b], is_ref ? 1e-6 : 1e-5, NPY_F32};
        check_case(&v);
        snprintf(name, sizeof name, "f16_%s", backends[b]);
        run_case h = {name, dp("run_q16.npy"), dp("run_k16.npy"), dp("run_v16.npy"), NULL, NULL, NULL, NULL,
                      0.9, 1.0, 4, backends[b], 1e-3, NPY_F16};
        check_case(&h);
    }
    run_case f8 = {"f8_ref", "f8_q.npy", "f8_k.npy", "f8_v.npy", dp("run_g.npy"), NULL, NULL, NULL,
                   0, 1.0, 64, "ref-b", 1e-12, NPY_F64};
    check_case(&f8);
    run_case f8c = {"f8_cpu", "f8_q.npy", "f8_k.npy", "f8_v.npy", NULL, NULL, dp("run_h0.npy"), NULL,
                    1.0, 1.0, 64, "cpu", 1e-5, NPY_F64};
    check_case(&f8c);
    run_case t0 = {"t0", "t0_q.npy", "t0_k.npy", "t0_v.npy", NULL, NULL, dp("run_h0.npy"), NULL,
                   0.5, 1.0, 64, "ref-a", 1e-6, NPY_F32};
    check_case(&t0);

    /* runtime failures: status 1 and a line naming the problem (2 is for usage errors) */
    char err[4096];
    int rc = run_cli("--q missing.npy --k missing.npy --v missing.npy --o o_x.npy", err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "missing.npy") && strstr(err, "cannot open"), "missing file: rc %d, '%s'", rc, err);
    char args[4096];
    snprintf(args, sizeof args, "--q '%s' --k '%s' --v '%s' --g '%s' --o o_x.npy", dp("run_q.npy"), dp("run_k.npy"),
             dp("run_v.npy"), dp("run_gg.npy"));
    rc = run_cli(args, err, sizeof err);
    TU_CHECK(rc == 1 && strstr(err, "--g") && strstr(err, "run_gg.npy"), "wrong gate rank: rc %d, '%s'", rc, err);
    check_grad();
    empty_batch();
    file_safety();
    default_scale();
    value_checks();
    singular_counts();
    FILE *f = fopen("o_x.npy", "rb");
    TU_CHECK(f == NULL, "o was written although the run failed");
    if (f) fclose(f);
    return tu_finish("test_cli_run");
}
