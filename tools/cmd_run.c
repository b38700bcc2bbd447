/*
 * sgla run: one forward pass from .npy files.
 *
 *   sgla run --q q.npy --k k.npy --v v.npy [--g g.npy | --g-gamma gg.npy | --alpha A]
 *            [--h0 h0.npy] [--cu-seqlens cu.npy] [--scale S] [--chunk C]
 *            [--backend auto|ref-a|ref-b|ref-c|ref-d|cpu|cuda] [--threads N]
 *            --o o.npy [--ht ht.npy]
 *
 * Exit 0 on success, 2 on any usage, input or library error (one line on
 * stderr naming what is wrong).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch.h"
#include "npy.h"

#ifdef SGLA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define CMD "run"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sgla run --q Q.npy --k K.npy --v V.npy [--g G.npy | --g-gamma GG.npy | --alpha A]\n"
            "                [--h0 H0.npy] [--cu-seqlens CU.npy] [--scale S] [--chunk C]\n"
            "                [--backend auto|ref-a|ref-b|ref-c|ref-d|cpu|cuda] [--threads N]\n"
            "                --o O.npy [--ht HT.npy]\n"
            "\n"
            "Compute o_t = scale * q_t^T S_t with S_t = alpha_t S_{t-1} + k_t v_t^T and write o (and the\n"
            "final state ht) as .npy files.\n"
            "\n"
            "inputs (.npy, little-endian, C order):\n"
            "  --q, --k        [B,T,H,K]  f2 or f4 (f8 is accepted and computed in f32); same dtype\n"
            "  --v             [B,T,H,V]  same dtype as q\n"
            "  --g             [B,T,H]    f4 (or f8) natural-log gates <= 0, per token and head\n"
            "  --g-gamma       [H]        f4 (or f8) per-head constant log-decay <= 0\n"
            "  --alpha A       constant decay A in (0, 1] for every head (g_gamma = ln A)\n"
            "                  (at most one of --g, --g-gamma, --alpha; none means no decay)\n"
            "  --h0            [N,H,K,V]  f4 (or f8) initial state; N = B, or the number of sequences\n"
            "  --cu-seqlens    [N+1]      i8 (or i4) sequence offsets into T; needs B = 1\n"
            "options:\n"
            "  --scale S       multiplies q^T S (default 1)\n"
            "  --chunk C       chunk length (default 64)\n"
            "  --backend B     auto (default: cuda when available, else cpu), ref-a..ref-d (fp64\n"
            "                  references), cpu, cuda\n"
            "  --threads N     CPU threads (0 = all cores, the default)\n"
            "outputs:\n"
            "  --o             [B,T,H,V]  dtype of q\n"
            "  --ht            [N,H,K,V]  f4 final state\n"
            "\n"
            "Prints the wall time of the compute call (and for cuda the device time by CUDA events).\n"
            "Exit status: 0 success, 2 bad arguments, unreadable or inconsistent input, or a library error.\n");
}

static int err_out(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int err_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sgla " CMD ": ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

typedef struct run_args {
    const char *q, *k, *v, *g, *gg, *h0, *cu, *o, *ht;
    int have_alpha;
    double alpha;
    double scale;
    int64_t chunk;
    int64_t threads;
    sgla_backend backend;
} run_args;

/* Read one file and check its rank. */
static int load(const char *flag, const char *path, int ndim, npy_array *a)
{
    char err[512];
    if (npy_read(path, a, err, sizeof err)) return err_out("%s: %s", flag, err);
    if (a->ndim != ndim) {
        char sh[256];
        npy_shape_str(a->ndim, a->shape, sh, sizeof sh);
        int got = a->ndim;
        npy_free(a);
        return err_out("%s: %s: shape %s has %d dimensions, expected %d", flag, path, sh, got, ndim);
    }
    return 0;
}

/* Convert an f8 array to f4 in place (the library's gates and states are
 * fp32); f4 passes through; anything else is an error. */
static int want_f32(const char *flag, const char *path, npy_array *a)
{
    if (a->dtype == NPY_F32) return 0;
    if (a->dtype != NPY_F64)
        return err_out("%s: %s: dtype %s, expected <f4 (or <f8)", flag, path, npy_dtype_descr(a->dtype));
    float *f = malloc((size_t)(a->count ? a->count : 1) * sizeof(float));
    if (!f) return err_out("%s: %s: out of memory", flag, path);
    const double *d = a->data;
    for (int64_t i = 0; i < a->count; i++) f[i] = (float)d[i];
    free(a->data);
    a->data = f;
    a->dtype = NPY_F32;
    return 0;
}

static int shape_eq(const npy_array *a, const int64_t *want, int n)
{
    for (int i = 0; i < n; i++)
        if (a->shape[i] != want[i]) return 0;
    return 1;
}

static int shape_err(const char *flag, const char *path, const npy_array *a, int n, const int64_t *want,
                     const char *why)
{
    char got[256], exp[256];
    npy_shape_str(a->ndim, a->shape, got, sizeof got);
    npy_shape_str(n, want, exp, sizeof exp);
    return err_out("%s: %s: shape %s, expected %s (%s)", flag, path, got, exp, why);
}

static int parse_args(int argc, char **argv, run_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    a->scale = 1.0;
    a->chunk = 64;
    a->backend = SGLA_BACKEND_AUTO;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        const char **slot = NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            *help = 1;
            return 0;
        }
        if (!strcmp(f, "--q")) slot = &a->q;
        else if (!strcmp(f, "--k")) slot = &a->k;
        else if (!strcmp(f, "--v")) slot = &a->v;
        else if (!strcmp(f, "--g")) slot = &a->g;
        else if (!strcmp(f, "--g-gamma")) slot = &a->gg;
        else if (!strcmp(f, "--h0")) slot = &a->h0;
        else if (!strcmp(f, "--cu-seqlens")) slot = &a->cu;
        else if (!strcmp(f, "--o")) slot = &a->o;
        else if (!strcmp(f, "--ht")) slot = &a->ht;
        if (slot) {
            if (*slot) return err_out("%s given twice", f);
            if (!(v = cli_value(CMD, argc, argv, &i))) return 2;
            if (!*v) return err_out("%s: empty file name", f);
            *slot = v;
            continue;
        }
        if (!strcmp(f, "--alpha")) {
            if (a->have_alpha) return err_out("--alpha given twice");
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, "--alpha", v, &a->alpha)) return 2;
            if (!(a->alpha > 0.0 && a->alpha <= 1.0)) return err_out("--alpha: %s is not in (0, 1]", v);
            a->have_alpha = 1;
        } else if (!strcmp(f, "--scale")) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, "--scale", v, &a->scale)) return 2;
            if (!isfinite(a->scale) || fabs(a->scale) > 3.4e38) return err_out("--scale: %s is not a finite float", v);
        } else if (!strcmp(f, "--chunk")) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_i64(CMD, "--chunk", v, &a->chunk)) return 2;
        } else if (!strcmp(f, "--threads")) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_i64(CMD, "--threads", v, &a->threads)) return 2;
            if (a->threads < 0 || a->threads > 65536) return err_out("--threads: %s is not in [0, 65536]", v);
        } else if (!strcmp(f, "--backend")) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_backend(CMD, v, &a->backend)) return 2;
        } else {
            return err_out("unknown option '%s' (try `sgla run --help`)", f);
        }
    }
    if (!a->q || !a->k || !a->v)
        return err_out("--q, --k and --v are required (try `sgla run --help`)");
    if (!a->o) return err_out("--o is required (try `sgla run --help`)");
    if (a->ht && !strcmp(a->ht, a->o)) return err_out("--o and --ht name the same file '%s'", a->o);
    if ((a->g != NULL) + (a->gg != NULL) + a->have_alpha > 1)
        return err_out("give at most one of --g, --g-gamma and --alpha");
    return 0;
}

/* The inputs, owned. */
typedef struct run_data {
    npy_array q, k, v, g, gg, h0, cu;
    float *alpha_gg;
} run_data;

static void free_data(run_data *r)
{
    npy_free(&r->q);
    npy_free(&r->k);
    npy_free(&r->v);
    npy_free(&r->g);
    npy_free(&r->gg);
    npy_free(&r->h0);
    npy_free(&r->cu);
    free(r->alpha_gg);
}

static int lib_err(const char *what, sgla_status st)
{
    const char *detail = sgla_last_error();
    if (detail && detail[0]) return err_out("%s: %s (%s)", what, sgla_status_string(st), detail);
    return err_out("%s: %s", what, sgla_status_string(st));
}

#ifdef SGLA_HAVE_CUDA
/* Copy the host descriptor's buffers to the device, run, copy o/ht back.
 * Returns 0, 2 after printing a CUDA runtime error, or 3 when the library
 * refused the call (status in *lib_st, not printed: the caller may fall
 * back).  *dev_ms gets the CUDA-event time of the call alone. */
static int run_cuda(const sgla_forward_desc *h, size_t bq, size_t bv, size_t bg, size_t bgg, size_t bs,
                    size_t bcu, float *dev_ms, sgla_status *lib_st)
{
    sgla_forward_desc d = *h;
    void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL, *dg = NULL, *dgg = NULL, *dh0 = NULL, *dht = NULL,
         *dcu = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = 2;
    cudaError_t ce = cudaSuccess;
#define CK(x)                                                                                     \
    do {                                                                                          \
        if ((ce = (x)) != cudaSuccess) {                                                          \
            err_out("backend cuda: %s: %s", #x, cudaGetErrorString(ce));                          \
            goto done;                                                                            \
        }                                                                                         \
    } while (0)
#define UP(dst, src, n)                                                                           \
    do {                                                                                          \
        if ((src) && (n)) {                                                                       \
            CK(cudaMalloc(&(dst), (n)));                                                          \
            CK(cudaMemcpy((dst), (src), (n), cudaMemcpyHostToDevice));                            \
        }                                                                                         \
    } while (0)
    UP(dq, h->q, bq);
    UP(dk, h->k, bq);
    UP(dv, h->v, bv);
    UP(dg, h->g, bg);
    UP(dgg, h->g_gamma, bgg);
    UP(dh0, h->h0, bs);
    UP(dcu, h->cu_seqlens, bcu);
    if (bv) CK(cudaMalloc(&dout, bv));
    if (h->ht && bs) CK(cudaMalloc(&dht, bs));
    d.q = dq;
    d.k = dk;
    d.v = dv;
    d.o = dout;
    d.g = dg;
    d.g_gamma = dgg;
    d.h0 = dh0;
    d.ht = dht;
    d.cu_seqlens = dcu;
    d.stream = NULL;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    if (st != SGLA_OK) {
        *lib_st = st;
        rc = 3;
        goto done;
    }
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(dev_ms, e0, e1));
    if (bv) CK(cudaMemcpy(h->o, dout, bv, cudaMemcpyDeviceToHost));
    if (h->ht && bs) CK(cudaMemcpy(h->ht, dht, bs, cudaMemcpyDeviceToHost));
    rc = 0;
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaFree(dg);
    cudaFree(dgg);
    cudaFree(dh0);
    cudaFree(dht);
    cudaFree(dcu);
    return rc;
#undef UP
#undef CK
}
#endif

int sgla_cmd_run(int argc, char **argv)
{
    run_args a;
    int help;
    int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        usage(stdout);
        return 0;
    }
    if (rc) return rc;

    run_data r;
    memset(&r, 0, sizeof r);
    void *o = NULL, *o_file = NULL;
    float *ht = NULL;
    double *o64 = NULL, *ht64 = NULL;
    rc = 2;

    /* ---- q, k, v ---- */
    if (load("--q", a.q, 4, &r.q) || load("--k", a.k, 4, &r.k) || load("--v", a.v, 4, &r.v)) goto out;
    npy_dtype in_dt = r.q.dtype;
    if (in_dt != NPY_F16 && in_dt != NPY_F32 && in_dt != NPY_F64) {
        err_out("--q: %s: dtype %s, expected <f2 or <f4 (or <f8)", a.q, npy_dtype_descr(in_dt));
        goto out;
    }
    if (r.k.dtype != in_dt || r.v.dtype != in_dt) {
        err_out("q, k and v must share a dtype: q is %s, k is %s, v is %s", npy_dtype_descr(in_dt),
                npy_dtype_descr(r.k.dtype), npy_dtype_descr(r.v.dtype));
        goto out;
    }
    const int64_t B = r.q.shape[0], T = r.q.shape[1], H = r.q.shape[2], K = r.q.shape[3], V = r.v.shape[3];
    if (!shape_eq(&r.k, r.q.shape, 4)) {
        shape_err("--k", a.k, &r.k, 4, r.q.shape, "must equal q's [B,T,H,K]");
        goto out;
    }
    {
        int64_t want[4] = {B, T, H, V};
        if (!shape_eq(&r.v, want, 3)) {
            shape_err("--v", a.v, &r.v, 4, want, "must be [B,T,H,V] with q's B, T, H");
            goto out;
        }
    }
    if (B < 1 || H < 1 || K < 1 || V < 1) {
        err_out("--q/--v: B = %lld, H = %lld, K = %lld, V = %lld: each must be >= 1", (long long)B, (long long)H,
                (long long)K, (long long)V);
        goto out;
    }
    /* The library computes in f16 or f32; f8 inputs are rounded to f32. */
    sgla_dtype dt = in_dt == NPY_F16 ? SGLA_F16 : SGLA_F32;
    if (in_dt == NPY_F64) {
        if (want_f32("--q", a.q, &r.q) || want_f32("--k", a.k, &r.k) || want_f32("--v", a.v, &r.v)) goto out;
        fprintf(stderr, "sgla run: note: q, k, v are f8; computing with f32 inputs, o is written as f8\n");
    }

    /* ---- varlen ---- */
    int64_t N = B;
    if (a.cu) {
        if (load("--cu-seqlens", a.cu, 1, &r.cu)) goto out;
        if (r.cu.dtype == NPY_I32) {
            int64_t *w = malloc((size_t)(r.cu.count ? r.cu.count : 1) * sizeof(int64_t));
            if (!w) {
                err_out("--cu-seqlens: out of memory");
                goto out;
            }
            for (int64_t i = 0; i < r.cu.count; i++) w[i] = ((const int32_t *)r.cu.data)[i];
            free(r.cu.data);
            r.cu.data = w;
            r.cu.dtype = NPY_I64;
        } else if (r.cu.dtype != NPY_I64) {
            err_out("--cu-seqlens: %s: dtype %s, expected <i8 (or <i4)", a.cu, npy_dtype_descr(r.cu.dtype));
            goto out;
        }
        if (r.cu.count < 2) {
            err_out("--cu-seqlens: %s: %lld entries; needs N+1 >= 2 offsets", a.cu, (long long)r.cu.count);
            goto out;
        }
        if (B != 1) {
            err_out("--cu-seqlens needs B = 1, but q has B = %lld", (long long)B);
            goto out;
        }
        N = r.cu.count - 1;
    }

    /* ---- gates ---- */
    if (a.g) {
        int64_t want[3] = {B, T, H};
        if (load("--g", a.g, 3, &r.g) || want_f32("--g", a.g, &r.g)) goto out;
        if (!shape_eq(&r.g, want, 3)) {
            shape_err("--g", a.g, &r.g, 3, want, "must be [B,T,H] of q");
            goto out;
        }
    } else if (a.gg) {
        if (load("--g-gamma", a.gg, 1, &r.gg) || want_f32("--g-gamma", a.gg, &r.gg)) goto out;
        if (r.gg.shape[0] != H) {
            shape_err("--g-gamma", a.gg, &r.gg, 1, &H, "must be [H] of q");
            goto out;
        }
    } else if (a.have_alpha) {
        r.alpha_gg = malloc((size_t)H * sizeof(float));
        if (!r.alpha_gg) {
            err_out("--alpha: out of memory");
            goto out;
        }
        float lg = (float)log(a.alpha);
        for (int64_t h = 0; h < H; h++) r.alpha_gg[h] = lg;
    }
    if (a.h0) {
        int64_t want[4] = {N, H, K, V};
        if (load("--h0", a.h0, 4, &r.h0) || want_f32("--h0", a.h0, &r.h0)) goto out;
        if (!shape_eq(&r.h0, want, 4)) {
            shape_err("--h0", a.h0, &r.h0, 4, want, a.cu ? "must be [N,H,K,V], N = len(cu_seqlens) - 1" : "must be [B,H,K,V]");
            goto out;
        }
    }

    /* ---- descriptor and validation ---- */
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.dtype = dt;
    d.B = B;
    d.T = T;
    d.H = H;
    d.K = K;
    d.V = V;
    d.q = r.q.data;
    d.k = r.k.data;
    d.v = r.v.data;
    d.g = r.g.data;
    d.g_gamma = r.gg.data ? r.gg.data : r.alpha_gg;
    d.scale = (float)a.scale;
    d.h0 = r.h0.data;
    d.cu_seqlens = r.cu.data;
    d.num_seqs = a.cu ? N : 0;
    d.chunk = a.chunk;
    d.threads = (int)a.threads;

    /* Outputs before validation, so the library also checks them for
     * overlap; their sizes come from v's element count (already known to
     * fit) and a checked N*H*K*V. */
    const int64_t nv = r.v.count;
    int64_t ns = 0;
    {
        int64_t st_shape[4] = {N, H, K, V};
        if (!npy_shape_count(4, st_shape, &ns) || (uint64_t)ns > SIZE_MAX / sizeof(double)) {
            err_out("state [N,H,K,V] = [%lld,%lld,%lld,%lld] is too large", (long long)N, (long long)H,
                    (long long)K, (long long)V);
            goto out;
        }
    }
    const size_t es = sgla_dtype_size(dt);
    o = malloc((size_t)(nv ? nv : 1) * es);
    ht = a.ht ? malloc((size_t)(ns ? ns : 1) * sizeof(float)) : NULL;
    if (!o || (a.ht && !ht)) {
        err_out("out of memory for the outputs");
        goto out;
    }
    d.o = o;
    d.ht = ht;
    {
        sgla_status st = sgla_validate(&d, 1);
        if (st != SGLA_OK) {
            lib_err("invalid input", st);
            goto out;
        }
    }

    sgla_backend be = a.backend;
    if (be == SGLA_BACKEND_AUTO) be = sgla_backend_available(SGLA_BACKEND_CUDA) ? SGLA_BACKEND_CUDA : SGLA_BACKEND_CPU;
    int is_ref = be >= SGLA_BACKEND_REF_A && be <= SGLA_BACKEND_REF_D;

    /* ---- compute ---- */
    double t0 = cli_now(), wall;
    float dev_ms = -1.0f;
    if (is_ref) {
        /* fp64 outputs, rounded once to the output dtype below. */
        o64 = malloc((size_t)(nv ? nv : 1) * sizeof(double));
        ht64 = a.ht ? malloc((size_t)(ns ? ns : 1) * sizeof(double)) : NULL;
        if (!o64 || (a.ht && !ht64)) {
            err_out("out of memory for the fp64 reference outputs");
            goto out;
        }
        t0 = cli_now();
        sgla_status st = sgla_reference(&d, be, o64, ht64);
        wall = cli_now() - t0;
        if (st != SGLA_OK) {
            char what[64];
            snprintf(what, sizeof what, "backend %s", sgla_backend_name(be));
            lib_err(what, st);
            goto out;
        }
    } else if (be == SGLA_BACKEND_CUDA) {
        char why[256];
        if (!sgla_backend_probe(SGLA_BACKEND_CUDA, why, sizeof why)) {
            err_out("backend cuda: %s (%s)", sgla_status_string(SGLA_ERR_BACKEND_UNAVAILABLE), why);
            goto out;
        }
#ifdef SGLA_HAVE_CUDA
        size_t bq = (size_t)(B * T * H * K) * es, bv = (size_t)nv * es;
        size_t bg = d.g ? (size_t)(B * T * H) * sizeof(float) : 0;
        size_t bgg = d.g_gamma ? (size_t)H * sizeof(float) : 0;
        size_t bs = (size_t)ns * sizeof(float);
        size_t bcu = d.cu_seqlens ? (size_t)(N + 1) * sizeof(int64_t) : 0;
        sgla_status lst = SGLA_OK;
        t0 = cli_now();
        int crc = run_cuda(&d, bq, bv, bg, bgg, d.h0 || d.ht ? bs : 0, bcu, &dev_ms, &lst);
        wall = cli_now() - t0;
        if (crc == 3 && a.backend == SGLA_BACKEND_AUTO &&
            (lst == SGLA_ERR_UNSUPPORTED_SHAPE || lst == SGLA_ERR_UNSUPPORTED_DTYPE || lst == SGLA_ERR_UNSUPPORTED_CHUNK)) {
            /* auto: the GPU kernel covers fewer shapes than the CPU path. */
            fprintf(stderr, "sgla run: note: cuda declined (%s); using cpu\n", sgla_last_error());
            be = SGLA_BACKEND_CPU;
            dev_ms = -1.0f;
            t0 = cli_now();
            sgla_status st = sgla_forward(&d, be);
            wall = cli_now() - t0;
            if (st != SGLA_OK) {
                lib_err("backend cpu", st);
                goto out;
            }
        } else if (crc == 3) {
            lib_err("backend cuda", lst);
            goto out;
        } else if (crc) {
            goto out;
        }
#else
        lib_err("backend cuda", SGLA_ERR_BACKEND_UNAVAILABLE);
        goto out;
#endif
    } else {
        t0 = cli_now();
        sgla_status st = sgla_forward(&d, be);
        wall = cli_now() - t0;
        if (st != SGLA_OK) {
            char what[64];
            snprintf(what, sizeof what, "backend %s", sgla_backend_name(be));
            lib_err(what, st);
            goto out;
        }
    }

    /* ---- outputs: o in q's file dtype, ht in f4 ---- */
    const void *o_data = o;
    npy_dtype o_dt = in_dt;
    if (in_dt == NPY_F64) {
        double *w = malloc((size_t)(nv ? nv : 1) * sizeof(double));
        if (!w) {
            err_out("out of memory for o");
            goto out;
        }
        for (int64_t i = 0; i < nv; i++) w[i] = is_ref ? o64[i] : (double)((const float *)o)[i];
        o_file = w;
        o_data = w;
    } else if (is_ref) {
        for (int64_t i = 0; i < nv; i++) {
            if (dt == SGLA_F16) ((uint16_t *)o)[i] = sgla_f64_to_f16(o64[i]);
            else ((float *)o)[i] = (float)o64[i];
        }
    }
    if (is_ref && ht)
        for (int64_t i = 0; i < ns; i++) ht[i] = (float)ht64[i];

    char err[512];
    int64_t oshape[4] = {B, T, H, V}, hshape[4] = {N, H, K, V};
    if (npy_write(a.o, o_dt, 4, oshape, o_data, err, sizeof err)) {
        err_out("--o: %s", err);
        goto out;
    }
    if (a.ht && npy_write(a.ht, NPY_F32, 4, hshape, ht, err, sizeof err)) {
        err_out("--ht: %s", err);
        goto out;
    }
    printf("sgla run: backend %s, %s, B=%lld T=%lld H=%lld K=%lld V=%lld%s, chunk %lld: %.6f s wall",
           sgla_backend_name(be), sgla_dtype_name(dt), (long long)B, (long long)T, (long long)H, (long long)K,
           (long long)V, a.cu ? " (varlen)" : "", (long long)d.chunk, wall);
    if (dev_ms >= 0.0f) printf(" (incl. transfers), %.6f s device", (double)dev_ms * 1e-3);
    printf("\n");
    rc = 0;
out:
    free_data(&r);
    free(o);
    free(o_file);
    free(ht);
    free(o64);
    free(ht64);
    return rc;
}
