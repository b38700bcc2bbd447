/*
 * sgla grad: the gradients of one forward from .npy files (sgla_backward).
 *
 *   sgla grad <the inputs of sgla run> --do DO.npy [--dht DHT.npy]
 *             --dq DQ.npy --dk DK.npy --dv DV.npy [--dg DG.npy] [--dg-gamma DGG.npy] [--dh0 DH0.npy]
 *
 * Exit 0 on success, 2 on a usage error, 1 on an input, library or output
 * error (one line on stderr naming what is wrong; no output file written).
 */
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

#define CMD "grad"
#define err_out(...) cli_err(CMD, __VA_ARGS__)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sgla grad --q Q.npy --k K.npy --v V.npy [--g G.npy | --g-gamma GG.npy | --alpha A]\n"
            "                 [--h0 H0.npy] [--cu-seqlens CU.npy] [--scale S] [--chunk C]\n"
            "                 [--backend auto|ref-a|ref-b|cpu|cuda] [--threads N] [--check-finite] [--tf32]\n"
            "                 --do DO.npy [--dht DHT.npy]\n"
            "                 --dq DQ.npy --dk DK.npy --dv DV.npy [--dg DG.npy] [--dg-gamma DGG.npy] [--dh0 DH0.npy]\n"
            "\n"
            "The gradients of L = <o, do> + <ht, dht> with respect to the inputs of `sgla run` (same\n"
            "flags, same files), written as .npy files.\n"
            "\n"
            "inputs besides sgla run's:\n"
            "  --do            [B,T,H,V]  dtype of q: the gradient of o\n"
            "  --dht           [N,H,K,V]  f4 (or f8): the gradient of the final state (default 0)\n"
            "outputs:\n"
            "  --dq, --dk      [B,T,H,K]  dtype of q (f4 for f8 inputs, which are computed in f32)\n"
            "  --dv            [B,T,H,V]  dtype of q\n"
            "  --dg            [B,T,H]    f4; needs --g\n"
            "  --dg-gamma      [H]        f4; needs --g-gamma or --alpha (the gradient of ln alpha per head)\n"
            "  --dh0           [N,H,K,V]  f4; needs --h0\n"
            "--tf32: as in sgla run, cuda with f4 inputs: the backward's products in TF32 alone\n"
            "(~4e-4 against fp64; fla's TF32 1.5e-3; faster) instead of 3xTF32 (~5e-7)\n"
            "\n"
            "Backends with a backward: ref-a (reverse-time recurrence, fp64), ref-b (chunked, fp64), cpu,\n"
            "cuda; auto is cuda when available, else cpu.\n"
            "Exit status: 0 success; 1 an input unreadable or inconsistent, the call refused, a\n"
            "backend or file error (no output is left half written); 2 a usage error.\n");
}

enum { O_DQ, O_DK, O_DV, O_DG, O_DGG, O_DH0, NOUT };
static const char *const out_flag[NOUT] = {"--dq", "--dk", "--dv", "--dg", "--dg-gamma", "--dh0"};

typedef struct grad_args {
    cli_input_args in;
    const char *dout, *dht;
    const char *out[NOUT];
} grad_args;

static int parse_args(int argc, char **argv, grad_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    const char *const flags[NOUT + 2] = {"--do", "--dht", out_flag[0], out_flag[1], out_flag[2],
                                         out_flag[3], out_flag[4], out_flag[5]};
    const char **const slots[NOUT + 2] = {&a->dout, &a->dht, &a->out[0], &a->out[1], &a->out[2],
                                          &a->out[3], &a->out[4], &a->out[5]};
    if (cli_parse_files(CMD, argc, argv, &a->in, NOUT + 2, flags, slots, help) || *help) return *help ? 0 : 2;
    if (!a->dout) return err_out("--do is required (try `sgla grad --help`)");
    if (!a->out[O_DQ] || !a->out[O_DK] || !a->out[O_DV]) return err_out("--dq, --dk and --dv are required");
    if (a->out[O_DG] && !a->in.g) return err_out("--dg needs --g (the gate it is the gradient of)");
    if (a->out[O_DGG] && !a->in.gg && !a->in.have_alpha) return err_out("--dg-gamma needs --g-gamma or --alpha");
    if (a->out[O_DH0] && !a->in.h0) return err_out("--dh0 needs --h0");
    if (a->in.backend == SGLA_BACKEND_REF_C || a->in.backend == SGLA_BACKEND_REF_D)
        return err_out("--backend %s: it has no backward (ref-a, ref-b, cpu and cuda have)",
                       sgla_backend_name(a->in.backend));
    const char *const xflags[2] = {"--do", "--dht"}, *const xpaths[2] = {a->dout, a->dht};
    if (cli_outputs_check(CMD, &a->in, NOUT, out_flag, (const char *const *)a->out, 2, xflags, xpaths)) return 2;
    return 0;
}


#ifdef SGLA_HAVE_CUDA
/* Every buffer of b (host) to the device, the backward there, the gradients
 * back.  Returns 0, 2 after printing a CUDA runtime error, or 3 with the
 * library's status in *lib_st (not printed). */
static int run_cuda(const sgla_backward_desc *hb, const size_t in_bytes[9], const size_t out_bytes[NOUT],
                    sgla_status *lib_st)
{
    const sgla_forward_desc *h = hb->fwd;
    const void *hin[9] = {h->q, h->k, h->v, h->g, h->g_gamma, h->h0, h->cu_seqlens, hb->dout, hb->dht};
    void *const hout[NOUT] = {hb->dq, hb->dk, hb->dv, hb->dg, hb->dg_gamma, hb->dh0};
    size_t ob[NOUT];
    for (int o = 0; o < NOUT; o++) ob[o] = hout[o] ? out_bytes[o] : 0;
    void *din[9], *dout[NOUT] = {0};
    int rc = 1;
    const char *ce = cli_cuda_upload(9, hin, in_bytes, din);
    if (!ce) ce = cli_cuda_upload(NOUT, NULL, ob, dout);
    if (ce) {
        err_out("backend cuda: %s", ce);
        goto done;
    }
    sgla_forward_desc d = *h;
    d.q = din[0], d.k = din[1], d.v = din[2], d.g = din[3], d.g_gamma = din[4], d.h0 = din[5];
    d.cu_seqlens = din[6];
    d.stream = NULL;
    sgla_backward_desc b = *hb;
    b.fwd = &d;
    b.dout = din[7], b.dht = din[8];
    b.dq = dout[O_DQ], b.dk = dout[O_DK], b.dv = dout[O_DV], b.dg = dout[O_DG], b.dg_gamma = dout[O_DGG];
    b.dh0 = dout[O_DH0];
    sgla_status st = sgla_backward(&b, SGLA_BACKEND_CUDA);
    if (st != SGLA_OK) {
        *lib_st = st;
        rc = 3;
        goto done;
    }
    if ((ce = cli_cuda_download(NOUT, hout, dout, ob))) {
        err_out("backend cuda: %s", ce);
        goto done;
    }
    rc = 0;
done:
    cli_cuda_free(9, din);
    cli_cuda_free(NOUT, dout);
    return rc;
}
#endif

int sgla_cmd_grad(int argc, char **argv)
{
    grad_args a;
    int help;
    int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        usage(stdout);
        return 0;
    }
    if (rc) return rc;
    cli_inputs r;
    sgla_forward_desc d;
    npy_array dout, dht;
    memset(&dout, 0, sizeof dout);
    memset(&dht, 0, sizeof dht);
    void *out[NOUT] = {0};
    if (cli_inputs_load(CMD, &a.in, &r, &d)) return 1;
    rc = 1; /* from here on a failure is a runtime one */
    const int64_t B = r.B, T = r.T, H = r.H, K = r.K, V = r.V, N = r.N;
    {
        const int64_t want[4] = {B, T, H, V};
        if (cli_npy_load(CMD, "--do", a.dout, 4, &dout)) goto out;
        if (r.in_dt == NPY_F64 && cli_npy_f32(CMD, "--do", a.dout, &dout, 0)) goto out;
        /* q's file dtype (f8 q and f8 or f4 do are f4 by now; f8 q with f2 do was refused above) */
        if (dout.dtype != (r.dt == SGLA_F16 ? NPY_F16 : NPY_F32)) {
            err_out("--do: %s: dtype %s, expected q's %s", a.dout, npy_dtype_descr(dout.dtype),
                    npy_dtype_descr(r.in_dt));
            goto out;
        }
        if (!cli_shape_eq(&dout, want, 4)) {
            cli_shape_err(CMD, "--do", a.dout, &dout, 4, want, "must be [B,T,H,V] of q and v");
            goto out;
        }
    }
    if (a.dht) {
        const int64_t want[4] = {N, H, K, V};
        if (cli_npy_load(CMD, "--dht", a.dht, 4, &dht) || cli_npy_f32(CMD, "--dht", a.dht, &dht, 0)) goto out;
        if (!cli_shape_eq(&dht, want, 4)) {
            cli_shape_err(CMD, "--dht", a.dht, &dht, 4, want, "must be [N,H,K,V]");
            goto out;
        }
    }
    const size_t es = sgla_dtype_size(r.dt);
    const int64_t shapes[NOUT][4] = {{B, T, H, K}, {B, T, H, K}, {B, T, H, V}, {B, T, H}, {H}, {N, H, K, V}};
    const int ndims[NOUT] = {4, 4, 4, 3, 1, 4};
    const size_t esz[NOUT] = {es, es, es, 4, 4, 4};
    int64_t count[NOUT];
    for (int o = 0; o < NOUT; o++)
        if (!npy_shape_count(ndims[o], shapes[o], &count[o]) || (uint64_t)count[o] > SIZE_MAX / esz[o]) {
            err_out("the gradients' element counts overflow (B = %lld, T = %lld, H = %lld, K = %lld, V = %lld, "
                    "N = %lld)", (long long)B, (long long)T, (long long)H, (long long)K, (long long)V, (long long)N);
            goto out;
        }
    for (int o = 0; o < NOUT; o++)
        if (a.out[o] && !(out[o] = malloc((size_t)(count[o] ? count[o] : 1) * esz[o]))) {
            err_out("out of memory for %s: %.4g bytes", out_flag[o], (double)(count[o] ? count[o] : 1) * esz[o]);
            goto out;
        }
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &d;
    b.dout = dout.data, b.dht = dht.data;
    b.dq = out[O_DQ], b.dk = out[O_DK], b.dv = out[O_DV], b.dg = out[O_DG], b.dg_gamma = out[O_DGG];
    b.dh0 = out[O_DH0];

    sgla_backend be = a.in.backend;
    if (be == SGLA_BACKEND_AUTO) be = sgla_backend_available(SGLA_BACKEND_CUDA) ? SGLA_BACKEND_CUDA : SGLA_BACKEND_CPU;
    double t0 = cli_now(), wall = 0;
    if (be == SGLA_BACKEND_CUDA) {
        char why[256];
        if (!sgla_backend_probe(SGLA_BACKEND_CUDA, why, sizeof why)) {
            err_out("backend cuda: %s (%s)", sgla_status_string(SGLA_ERR_BACKEND_UNAVAILABLE), why);
            goto out;
        }
#ifdef SGLA_HAVE_CUDA
        {   /* the host copies checked first: the CUDA backend reads no values, so --check-finite's NaN /
             * inf would go unseen there (the host backends check inside sgla_backward) */
            sgla_status st = sgla_validate_backward(&b, 1);
            if (st != SGLA_OK) {
                cli_lib_err(CMD, "invalid input", st);
                goto out;
            }
        }
        d.flags |= SGLA_FLAG_CHECK_DEVICE_VALUES; /* the gates and offsets checked where they are */
        const size_t in_bytes[9] = {(size_t)count[O_DQ] * es, (size_t)count[O_DK] * es, (size_t)count[O_DV] * es,
                                    d.g ? (size_t)count[O_DG] * 4 : 0, d.g_gamma ? (size_t)H * 4 : 0,
                                    d.h0 ? (size_t)count[O_DH0] * 4 : 0, d.cu_seqlens ? (size_t)(N + 1) * 8 : 0,
                                    (size_t)count[O_DV] * es, dht.data ? (size_t)count[O_DH0] * 4 : 0};
        size_t out_bytes[NOUT];
        for (int o = 0; o < NOUT; o++) out_bytes[o] = out[o] ? (size_t)count[o] * esz[o] : 0;
        sgla_status lst = SGLA_OK;
        t0 = cli_now();
        int crc = run_cuda(&b, in_bytes, out_bytes, &lst);
        wall = cli_now() - t0;
        if (crc == 3 && a.in.backend == SGLA_BACKEND_AUTO &&
            (lst == SGLA_ERR_UNSUPPORTED_SHAPE || lst == SGLA_ERR_UNSUPPORTED_DTYPE ||
             lst == SGLA_ERR_UNSUPPORTED_CHUNK || lst == SGLA_ERR_BACKEND_UNAVAILABLE)) {
            fprintf(stderr, "sgla grad: note: cuda declined (%s); using cpu\n", sgla_last_error());
            be = SGLA_BACKEND_CPU;
        } else if (crc == 3) {
            cli_lib_err(CMD, "backend cuda", lst);
            goto out;
        } else if (crc) {
            goto out;
        }
#endif
    }
    if (be != SGLA_BACKEND_CUDA) {
        t0 = cli_now();
        sgla_status st = sgla_backward(&b, be);
        wall = cli_now() - t0;
        if (st != SGLA_OK) {
            char what[64];
            snprintf(what, sizeof what, "backend %s", sgla_backend_name(be));
            cli_lib_err(CMD, what, st);
            goto out;
        }
    }
    {
        const npy_dtype fdt = r.dt == SGLA_F16 ? NPY_F16 : NPY_F32;
        const npy_dtype dts[NOUT] = {fdt, fdt, fdt, NPY_F32, NPY_F32, NPY_F32};
        char err[512];
        npy_outputs files;
        memset(&files, 0, sizeof files);
        for (int o = 0; o < NOUT; o++)
            if (a.out[o] && npy_outputs_add(&files, a.out[o], dts[o], ndims[o], shapes[o], out[o], err, sizeof err)) {
                err_out("%s: %s", out_flag[o], err);
                npy_outputs_abort(&files);
                goto out;
            }
        if (npy_outputs_commit(&files, err, sizeof err)) {
            err_out("%s", err);
            goto out;
        }
    }
    fprintf(stderr, "sgla grad: backend %s, %s, B=%lld T=%lld H=%lld K=%lld V=%lld%s, chunk %lld: %.6f s wall\n",
           sgla_backend_name(be), sgla_dtype_name(r.dt), (long long)B, (long long)T, (long long)H, (long long)K,
           (long long)V, a.in.cu ? " (varlen)" : "", (long long)d.chunk, wall);
    rc = 0;
out:
    cli_inputs_free(&r);
    npy_free(&dout);
    npy_free(&dht);
    for (int o = 0; o < NOUT; o++) free(out[o]);
    return rc;
}
