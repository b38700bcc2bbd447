/*
 * sgla run: one forward pass from .npy files.
 *
 *   sgla run --q q.npy --k k.npy --v v.npy [--g g.npy | --g-gamma gg.npy | --alpha A]
 *            [--h0 h0.npy] [--cu-seqlens cu.npy] [--scale S] [--chunk C]
 *            [--backend auto|ref-a|ref-b|ref-c|ref-d|cpu|cuda] [--threads N]
 *            --o o.npy [--ht ht.npy]
 *
 * Exit 0 on success, 2 on a usage error, 1 on an input, library or output
 * error (one line on stderr naming what is wrong; no output file written).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_inputs.h"
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
            "                [--backend auto|ref-a|ref-b|ref-c|ref-d|cpu|cuda] [--threads N] [--check-finite]\n"
            "                [--tf32] --o O.npy [--ht HT.npy]\n"
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
            "  --scale S       multiplies q^T S (default K^-0.5, as in Python and fla)\n"
            "  --chunk C       chunk length (default 64)\n"
            "  --backend B     auto (default: cuda when available, else cpu), ref-a..ref-d (fp64\n"
            "                  references), cpu, cuda\n"
            "  --threads N     CPU threads (0 = all cores, the default)\n"
            "  --check-finite  refuse NaN or inf in q, k, v, h0 (SGLA_FLAG_CHECK_FINITE)\n"
            "  --tf32          cuda, f4 inputs: products in TF32 alone (~4e-4 against fp64; faster) instead\n"
            "                  of 3xTF32 (~1e-6) (SGLA_FLAG_ALLOW_TF32)\n"
            "outputs:\n"
            "  --o             [B,T,H,V]  dtype of q\n"
            "  --ht            [N,H,K,V]  f4 final state\n"
            "\n"
            "Prints the wall time of the compute call (and for cuda the device time by CUDA events).\n"
            "Exit status: 0 success; 1 an input unreadable or inconsistent, the call refused, a\n"
            "backend or file error (no output is left half written); 2 a usage error.\n");
}

#define err_out(...) cli_err(CMD, __VA_ARGS__)

typedef struct run_args {
    cli_input_args in;
    const char *o, *ht;
} run_args;

static int parse_args(int argc, char **argv, run_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    const char *const flags[2] = {"--o", "--ht"};
    const char **const slots[2] = {&a->o, &a->ht};
    if (cli_parse_files(CMD, argc, argv, &a->in, 2, flags, slots, help) || *help) return *help ? 0 : 2;
    if (!a->o) return err_out("--o is required (try `sgla run --help`)");
    const char *const oflags[2] = {"--o", "--ht"}, *const opaths[2] = {a->o, a->ht};
    if (cli_outputs_check(CMD, &a->in, 2, oflags, opaths, 0, NULL, NULL)) return 2;
    return 0;
}


#ifdef SGLA_HAVE_CUDA
/* Copy the host descriptor's buffers to the device, run, copy o/ht back.
 * Returns 0, 2 after printing a CUDA runtime error, or 3 when the library
 * refused the call (status in *lib_st, not printed: the caller may fall
 * back).  *dev_ms gets the CUDA-event time of the call alone. */
static int run_cuda(const sgla_forward_desc *h, const size_t in_bytes[7], size_t bo, size_t bht, float *dev_ms,
                    sgla_status *lib_st)
{
    const void *hin[7] = {h->q, h->k, h->v, h->g, h->g_gamma, h->h0, h->cu_seqlens};
    void *const hout[2] = {h->o, h->ht};
    const size_t ob[2] = {bo, h->ht ? bht : 0};
    void *din[7], *dout[2] = {0};
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = 1;
    const char *ce = cli_cuda_upload(7, hin, in_bytes, din);
    if (!ce) ce = cli_cuda_upload(2, NULL, ob, dout);
    cudaError_t e = cudaSuccess;
    if (!ce && (e = cudaEventCreate(&e0)) == cudaSuccess && (e = cudaEventCreate(&e1)) == cudaSuccess)
        e = cudaEventRecord(e0, 0);
    if (!ce && e != cudaSuccess) ce = cudaGetErrorString(e);
    if (ce) {
        err_out("backend cuda: %s", ce);
        goto done;
    }
    sgla_forward_desc d = *h;
    d.q = din[0], d.k = din[1], d.v = din[2], d.g = din[3], d.g_gamma = din[4], d.h0 = din[5];
    d.cu_seqlens = din[6], d.o = dout[0], d.ht = dout[1];
    d.stream = NULL;
    sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    if (st != SGLA_OK) {
        *lib_st = st;
        rc = 3;
        goto done;
    }
    if ((e = cudaEventRecord(e1, 0)) != cudaSuccess || (e = cudaEventSynchronize(e1)) != cudaSuccess ||
        (e = cudaEventElapsedTime(dev_ms, e0, e1)) != cudaSuccess) {
        err_out("backend cuda: %s", cudaGetErrorString(e));
        goto done;
    }
    if ((ce = cli_cuda_download(2, hout, dout, ob))) {
        err_out("backend cuda: %s", ce);
        goto done;
    }
    rc = 0;
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cli_cuda_free(7, din);
    cli_cuda_free(2, dout);
    return rc;
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

    cli_inputs r;
    sgla_forward_desc d;
    void *o = NULL, *o_file = NULL;
    float *ht = NULL;
    double *o64 = NULL, *ht64 = NULL;
    if (cli_inputs_load(CMD, &a.in, &r, &d)) return 1;
    rc = 1; /* from here on a failure is a runtime one */
    const int64_t B = r.B, T = r.T, H = r.H, K = r.K, V = r.V, N = r.N;
    const npy_dtype in_dt = r.in_dt;
    const sgla_dtype dt = r.dt;

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
        err_out("out of memory for the outputs: o %.4g bytes, ht %.4g bytes", (double)(nv ? nv : 1) * (double)es,
                a.ht ? (double)(ns ? ns : 1) * sizeof(float) : 0.0);
        goto out;
    }
    d.o = o;
    d.ht = ht;
    {
        sgla_status st = sgla_validate(&d, 1);
        if (st != SGLA_OK) {
            cli_lib_err(CMD, "invalid input", st);
            goto out;
        }
    }

    sgla_backend be = a.in.backend;
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
            err_out("out of memory for the fp64 reference outputs: o %.4g bytes, ht %.4g bytes",
                    (double)(nv ? nv : 1) * sizeof(double), a.ht ? (double)(ns ? ns : 1) * sizeof(double) : 0.0);
            goto out;
        }
        t0 = cli_now();
        sgla_status st = sgla_reference(&d, be, o64, ht64);
        wall = cli_now() - t0;
        if (st != SGLA_OK) {
            char what[64];
            snprintf(what, sizeof what, "backend %s", sgla_backend_name(be));
            cli_lib_err(CMD, what, st);
            goto out;
        }
    } else if (be == SGLA_BACKEND_CUDA) {
        char why[256];
        if (!sgla_backend_probe(SGLA_BACKEND_CUDA, why, sizeof why)) {
            err_out("backend cuda: %s (%s)", sgla_status_string(SGLA_ERR_BACKEND_UNAVAILABLE), why);
            goto out;
        }
#ifdef SGLA_HAVE_CUDA
        const size_t bq = (size_t)(B * T * H * K) * es, bv = (size_t)nv * es, bs = (size_t)ns * sizeof(float);
        const size_t in_bytes[7] = {bq, bq, bv, (size_t)(B * T * H) * sizeof(float), (size_t)H * sizeof(float), bs,
                                    (size_t)(N + 1) * sizeof(int64_t)};
        sgla_status lst = SGLA_OK;
        t0 = cli_now();
        int crc = run_cuda(&d, in_bytes, bv, bs, &dev_ms, &lst);
        wall = cli_now() - t0;
        if (crc == 3 && a.in.backend == SGLA_BACKEND_AUTO &&
            (lst == SGLA_ERR_UNSUPPORTED_SHAPE || lst == SGLA_ERR_UNSUPPORTED_DTYPE || lst == SGLA_ERR_UNSUPPORTED_CHUNK)) {
            /* auto: the GPU kernel covers fewer shapes than the CPU path. */
            fprintf(stderr, "sgla run: note: cuda declined (%s); using cpu\n", sgla_last_error());
            be = SGLA_BACKEND_CPU;
            dev_ms = -1.0f;
            t0 = cli_now();
            sgla_status st = sgla_forward(&d, be);
            wall = cli_now() - t0;
            if (st != SGLA_OK) {
                cli_lib_err(CMD, "backend cpu", st);
                goto out;
            }
        } else if (crc == 3) {
            cli_lib_err(CMD, "backend cuda", lst);
            goto out;
        } else if (crc) {
            goto out;
        }
#else
        cli_lib_err(CMD, "backend cuda", SGLA_ERR_BACKEND_UNAVAILABLE);
        goto out;
#endif
    } else {
        t0 = cli_now();
        sgla_status st = sgla_forward(&d, be);
        wall = cli_now() - t0;
        if (st != SGLA_OK) {
            char what[64];
            snprintf(what, sizeof what, "backend %s", sgla_backend_name(be));
            cli_lib_err(CMD, what, st);
            goto out;
        }
    }

    /* ---- outputs: o in q's file dtype, ht in f4 ---- */
    const void *o_data = o;
    npy_dtype o_dt = in_dt;
    if (in_dt == NPY_F64) {
        double *w = malloc((size_t)(nv ? nv : 1) * sizeof(double));
        if (!w) {
            err_out("out of memory for o: %.4g bytes", (double)(nv ? nv : 1) * sizeof(double));
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
    npy_outputs files;
    memset(&files, 0, sizeof files);
    if (npy_outputs_add(&files, a.o, o_dt, 4, oshape, o_data, err, sizeof err)) {
        err_out("--o: %s", err);
        npy_outputs_abort(&files);
        goto out;
    }
    if (a.ht && npy_outputs_add(&files, a.ht, NPY_F32, 4, hshape, ht, err, sizeof err)) {
        err_out("--ht: %s", err);
        npy_outputs_abort(&files);
        goto out;
    }
    if (npy_outputs_commit(&files, err, sizeof err)) {
        err_out("%s", err);
        goto out;
    }
    fprintf(stderr, "sgla run: backend %s, %s, B=%lld T=%lld H=%lld K=%lld V=%lld%s, chunk %lld: %.6f s wall",
           sgla_backend_name(be), sgla_dtype_name(dt), (long long)B, (long long)T, (long long)H, (long long)K,
           (long long)V, a.in.cu ? " (varlen)" : "", (long long)d.chunk, wall);
    if (dev_ms >= 0.0f) fprintf(stderr, " (incl. transfers), %.6f s device", (double)dev_ms * 1e-3);
    fprintf(stderr, "\n");
    rc = 0;
out:
    cli_inputs_free(&r);
    free(o);
    free(o_file);
    free(ht);
    free(o64);
    free(ht64);
    return rc;
}
