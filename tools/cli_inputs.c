/* The inputs `sgla run` and `sgla grad` share (cli_inputs.h). */
#include "cli_inputs.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef SGLA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

int cli_err(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sgla %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

/* Read one file and check its rank. */
int cli_npy_load(const char *cmd, const char *flag, const char *path, int ndim, npy_array *a)
{
    char err[512];
    if (npy_read(path, a, err, sizeof err)) return cli_err(cmd, "%s: %s", flag, err);
    if (a->ndim != ndim) {
        char sh[256];
        npy_shape_str(a->ndim, a->shape, sh, sizeof sh);
        int got = a->ndim;
        npy_free(a);
        return cli_err(cmd, "%s: %s: shape %s has %d dimension%s, expected %d", flag, path, sh, got,
                       got == 1 ? "" : "s", ndim);
    }
    return 0;
}

/* Convert an f8 array to f4 in place (the library's gates and states are
 * fp32); f4 passes through; anything else is an error.  The f8 values are
 * checked before they are rounded, so that a message names the value given:
 * beyond the fp32 range is refused (a log gate below -FLT_MAX is taken as
 * -FLT_MAX instead: every gate under -104 already erases the state), and a
 * gate file (gate != 0) refuses a positive log gate however small (+1e-50
 * would round to 0). */
int cli_npy_f32(const char *cmd, const char *flag, const char *path, npy_array *a, int gate)
{
    if (a->dtype == NPY_F32) return 0;
    if (a->dtype != NPY_F64)
        return cli_err(cmd, "%s: %s: dtype %s, expected <f4 (or <f8)", flag, path, npy_dtype_descr(a->dtype));
    const double *d = a->data;
    for (int64_t i = 0; i < a->count; i++) {
        const double x = d[i];
        if (isnan(x) || (isinf(x) && !(gate && x < 0)))
            return cli_err(cmd, "%s: %s: element %lld is %g", flag, path, (long long)i, x);
        if (gate && x > 0)
            return cli_err(cmd, "%s: %s: element %lld is %.17g: log gates must be <= 0", flag, path, (long long)i, x);
        if (gate && isinf(x))
            return cli_err(cmd, "%s: %s: element %lld is -inf: write a large finite value (e.g. -1e30) to erase "
                                "the state", flag, path, (long long)i);
        if (!gate && fabs(x) > FLT_MAX)
            return cli_err(cmd, "%s: %s: element %lld is %.17g, beyond the fp32 range", flag, path, (long long)i, x);
    }
    float *f = malloc((size_t)(a->count ? a->count : 1) * sizeof(float));
    if (!f) return cli_err(cmd, "%s: %s: out of memory for %lld floats", flag, path, (long long)a->count);
    for (int64_t i = 0; i < a->count; i++) f[i] = d[i] < -FLT_MAX ? -FLT_MAX : (float)d[i];
    free(a->data);
    a->data = f;
    a->dtype = NPY_F32;
    return 0;
}

int cli_shape_eq(const npy_array *a, const int64_t *want, int n)
{
    for (int i = 0; i < n; i++)
        if (a->shape[i] != want[i]) return 0;
    return 1;
}

int cli_shape_err(const char *cmd, const char *flag, const char *path, const npy_array *a, int n,
                  const int64_t *want, const char *why)
{
    char got[256], exp[256];
    npy_shape_str(a->ndim, a->shape, got, sizeof got);
    npy_shape_str(n, want, exp, sizeof exp);
    return cli_err(cmd, "%s: %s: shape %s, expected %s (%s)", flag, path, got, exp, why);
}

static void cli_input_defaults(cli_input_args *a)
{
    memset(a, 0, sizeof *a);
    a->scale = NAN; /* unset: K^-0.5 once K is known, as in Python and flash-linear-attention */
    a->chunk = 64;
    a->backend = SGLA_BACKEND_AUTO;
}

static int cli_input_flag(const char *cmd, int argc, char **argv, int *i, cli_input_args *a, cli_seen *seen)
{
    const char *f = argv[*i], *v;
    const char **slot = NULL;
    if (!strcmp(f, "--q")) slot = &a->q;
    else if (!strcmp(f, "--k")) slot = &a->k;
    else if (!strcmp(f, "--v")) slot = &a->v;
    else if (!strcmp(f, "--g")) slot = &a->g;
    else if (!strcmp(f, "--g-gamma")) slot = &a->gg;
    else if (!strcmp(f, "--h0")) slot = &a->h0;
    else if (!strcmp(f, "--cu-seqlens")) slot = &a->cu;
    if (slot) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i))) return 2;
        if (!*v) return cli_err(cmd, "%s: empty file name", f);
        *slot = v;
        return 1;
    }
    if (!strcmp(f, "--alpha")) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i)) ||
            !cli_parse_double(cmd, "--alpha", v, &a->alpha))
            return 2;
        if (!(a->alpha > 0.0 && a->alpha <= 1.0)) return cli_err(cmd, "--alpha: %s is not in (0, 1]", v);
        a->have_alpha = 1;
    } else if (!strcmp(f, "--scale")) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i)) ||
            !cli_parse_double(cmd, "--scale", v, &a->scale))
            return 2;
        if (!isfinite(a->scale)) return cli_err(cmd, "--scale: %s is not a finite float", v);
        /* finite as a double yet not as the library's fp32 scale */
        if (fabs(a->scale) > FLT_MAX)
            return cli_err(cmd, "--scale: %s is beyond the fp32 range (|scale| <= %.9g)", v, (double)FLT_MAX);
    } else if (!strcmp(f, "--chunk")) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i)) ||
            !cli_parse_i64(cmd, "--chunk", v, &a->chunk))
            return 2;
    } else if (!strcmp(f, "--threads")) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i)) ||
            !cli_parse_i64(cmd, "--threads", v, &a->threads))
            return 2;
        if (a->threads < 0 || a->threads > 65536) return cli_err(cmd, "--threads: %s is not in [0, 65536]", v);
    } else if (!strcmp(f, "--check-finite")) {
        a->flags |= SGLA_FLAG_CHECK_FINITE;
    } else if (!strcmp(f, "--tf32")) {
        a->flags |= SGLA_FLAG_ALLOW_TF32;
    } else if (!strcmp(f, "--backend")) {
        if (!cli_once(cmd, seen, f) || !(v = cli_value(cmd, argc, argv, i)) || !cli_parse_backend(cmd, v, &a->backend))
            return 2;
    } else {
        return 0;
    }
    return 1;
}

static int cli_input_check(const char *cmd, const cli_input_args *a)
{
    if (!a->q || !a->k || !a->v) return cli_err(cmd, "--q, --k and --v are required (try `sgla %s --help`)", cmd);
    if ((a->g != NULL) + (a->gg != NULL) + a->have_alpha > 1)
        return cli_err(cmd, "give at most one of --g, --g-gamma and --alpha");
    return 0;
}

#ifdef SGLA_HAVE_CUDA
const char *cli_cuda_upload(int n, const void *const *host, const size_t *bytes, void **dev)
{
    for (int i = 0; i < n; i++) {
        dev[i] = NULL;
        if ((host && !host[i]) || !bytes[i]) continue;
        cudaError_t e = cudaMalloc(&dev[i], bytes[i]);
        if (e == cudaSuccess && host) e = cudaMemcpy(dev[i], host[i], bytes[i], cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            for (int j = i + 1; j < n; j++) dev[j] = NULL;
            return cudaGetErrorString(e);
        }
    }
    return NULL;
}

const char *cli_cuda_download(int n, void *const *host, void *const *dev, const size_t *bytes)
{
    for (int i = 0; i < n; i++) {
        if (!host[i] || !dev[i]) continue;
        cudaError_t e = cudaMemcpy(host[i], dev[i], bytes[i], cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) return cudaGetErrorString(e);
    }
    return NULL;
}

void cli_cuda_free(int n, void **dev)
{
    for (int i = 0; i < n; i++) cudaFree(dev[i]);
}
#endif

int cli_lib_err(const char *cmd, const char *what, sgla_status st)
{
    const char *detail = sgla_last_error();
    if (detail && detail[0]) return cli_err(cmd, "%s: %s (%s)", what, sgla_status_string(st), detail);
    return cli_err(cmd, "%s: %s", what, sgla_status_string(st));
}

static int cli_path_flag(const char *cmd, int argc, char **argv, int *i, int n, const char *const *flags,
                         const char **const *slots, cli_seen *seen)
{
    const char *f = argv[*i];
    for (int k = 0; k < n; k++) {
        if (strcmp(f, flags[k])) continue;
        if (!cli_once(cmd, seen, f)) return 2;
        const char *v = cli_value(cmd, argc, argv, i);
        if (!v) return 2;
        if (!*v) return cli_err(cmd, "%s: empty file name", f);
        *slots[k] = v;
        return 1;
    }
    return 0;
}

int cli_parse_files(const char *cmd, int argc, char **argv, cli_input_args *in, int n, const char *const *flags,
                    const char **const *slots, int *help)
{
    cli_input_defaults(in);
    *help = 0;
    cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            *help = 1;
            return 0;
        }
        int r = cli_input_flag(cmd, argc, argv, &i, in, &seen);
        if (r == 0) r = cli_path_flag(cmd, argc, argv, &i, n, flags, slots, &seen);
        if (r == 2) return 2;
        if (r == 0) return cli_err(cmd, "unknown option '%s' (try `sgla %s --help`)", f, cmd);
    }
    return cli_input_check(cmd, in);
}

int cli_outputs_check(const char *cmd, const cli_input_args *a, int n, const char *const *flags,
                      const char *const *paths, int nextra, const char *const *extra_flags,
                      const char *const *extra_paths)
{
    const char *in_flag[] = {"--q", "--k", "--v", "--g", "--g-gamma", "--h0", "--cu-seqlens"};
    const char *in_path[] = {a->q, a->k, a->v, a->g, a->gg, a->h0, a->cu};
    for (int o = 0; o < n; o++) {
        if (!paths[o]) continue;
        for (int p = 0; p < o; p++)
            if (paths[p] && npy_same_file(paths[o], paths[p]))
                return cli_err(cmd, "%s and %s name the same file '%s'", flags[p], flags[o], paths[o]);
        for (int i = 0; i < (int)(sizeof in_path / sizeof in_path[0]); i++)
            if (in_path[i] && npy_same_file(paths[o], in_path[i]))
                return cli_err(cmd, "%s '%s' is the input file of %s: refusing to overwrite an input", flags[o],
                               paths[o], in_flag[i]);
        for (int i = 0; i < nextra; i++)
            if (extra_paths[i] && npy_same_file(paths[o], extra_paths[i]))
                return cli_err(cmd, "%s '%s' is the input file of %s: refusing to overwrite an input", flags[o],
                               paths[o], extra_flags[i]);
    }
    return 0;
}

void cli_inputs_free(cli_inputs *r)
{
    npy_free(&r->q);
    npy_free(&r->k);
    npy_free(&r->v);
    npy_free(&r->g);
    npy_free(&r->gg);
    npy_free(&r->h0);
    npy_free(&r->cu);
    free(r->alpha_gg);
    r->alpha_gg = NULL;
}

int cli_inputs_load(const char *cmd, const cli_input_args *a, cli_inputs *r, sgla_forward_desc *d)
{
    memset(r, 0, sizeof *r);
    /* ---- q, k, v ---- */
    if (cli_npy_load(cmd, "--q", a->q, 4, &r->q) || cli_npy_load(cmd, "--k", a->k, 4, &r->k) || cli_npy_load(cmd, "--v", a->v, 4, &r->v)) goto fail;
    npy_dtype in_dt = r->q.dtype;
    if (in_dt != NPY_F16 && in_dt != NPY_F32 && in_dt != NPY_F64) {
        cli_err(cmd, "--q: %s: dtype %s, expected <f2 or <f4 (or <f8)", a->q, npy_dtype_descr(in_dt));
        goto fail;
    }
    if (r->k.dtype != in_dt || r->v.dtype != in_dt) {
        cli_err(cmd, "q, k and v must share a dtype: q is %s, k is %s, v is %s", npy_dtype_descr(in_dt),
                npy_dtype_descr(r->k.dtype), npy_dtype_descr(r->v.dtype));
        goto fail;
    }
    const int64_t B = r->q.shape[0], T = r->q.shape[1], H = r->q.shape[2], K = r->q.shape[3], V = r->v.shape[3];
    if (!cli_shape_eq(&r->k, r->q.shape, 4)) {
        cli_shape_err(cmd, "--k", a->k, &r->k, 4, r->q.shape, "must equal q's [B,T,H,K]");
        goto fail;
    }
    {
        int64_t want[4] = {B, T, H, V};
        if (!cli_shape_eq(&r->v, want, 3)) {
            cli_shape_err(cmd, "--v", a->v, &r->v, 4, want, "must be [B,T,H,V] with q's B, T, H");
            goto fail;
        }
    }
    if (K < 1 || V < 1) { /* (B = 0 or H = 0: an empty call, valid; sgla.h) */
        cli_err(cmd, "--q/--v: K = %lld, V = %lld: each must be >= 1", (long long)K, (long long)V);
        goto fail;
    }
    /* The library computes in f16 or f32; f8 inputs are rounded to f32. */
    sgla_dtype dt = in_dt == NPY_F16 ? SGLA_F16 : SGLA_F32;
    if (in_dt == NPY_F64) {
        if (cli_npy_f32(cmd, "--q", a->q, &r->q, 0) || cli_npy_f32(cmd, "--k", a->k, &r->k, 0) || cli_npy_f32(cmd, "--v", a->v, &r->v, 0)) goto fail;
        fprintf(stderr, "sgla %s: note: q, k, v are f8; computing with f32 inputs, %s\n", cmd,
                strcmp(cmd, "grad") == 0 ? "the gradients are written as f4" : "o is written as f8");
    }

    /* ---- varlen ---- */
    int64_t N = B;
    if (a->cu) {
        if (cli_npy_load(cmd, "--cu-seqlens", a->cu, 1, &r->cu)) goto fail;
        if (r->cu.dtype == NPY_I32) {
            int64_t *w = malloc((size_t)(r->cu.count ? r->cu.count : 1) * sizeof(int64_t));
            if (!w) {
                cli_err(cmd, "--cu-seqlens: out of memory for %lld offsets", (long long)r->cu.count);
                goto fail;
            }
            for (int64_t i = 0; i < r->cu.count; i++) w[i] = ((const int32_t *)r->cu.data)[i];
            free(r->cu.data);
            r->cu.data = w;
            r->cu.dtype = NPY_I64;
        } else if (r->cu.dtype != NPY_I64) {
            cli_err(cmd, "--cu-seqlens: %s: dtype %s, expected <i8 (or <i4)", a->cu, npy_dtype_descr(r->cu.dtype));
            goto fail;
        }
        if (r->cu.count < 2) {
            cli_err(cmd, "--cu-seqlens: %s: %lld %s; needs N+1 >= 2 offsets", a->cu, (long long)r->cu.count,
                    r->cu.count == 1 ? "entry" : "entries");
            goto fail;
        }
        if (B != 1) {
            cli_err(cmd, "--cu-seqlens needs B = 1, but q has B = %lld", (long long)B);
            goto fail;
        }
        N = r->cu.count - 1;
    }

    /* ---- gates ---- */
    if (a->g) {
        int64_t want[3] = {B, T, H};
        if (cli_npy_load(cmd, "--g", a->g, 3, &r->g) || cli_npy_f32(cmd, "--g", a->g, &r->g, 1)) goto fail;
        if (!cli_shape_eq(&r->g, want, 3)) {
            cli_shape_err(cmd, "--g", a->g, &r->g, 3, want, "must be [B,T,H] of q");
            goto fail;
        }
    } else if (a->gg) {
        if (cli_npy_load(cmd, "--g-gamma", a->gg, 1, &r->gg) || cli_npy_f32(cmd, "--g-gamma", a->gg, &r->gg, 1)) goto fail;
        if (r->gg.shape[0] != H) {
            cli_shape_err(cmd, "--g-gamma", a->gg, &r->gg, 1, &H, "must be [H] of q");
            goto fail;
        }
    } else if (a->have_alpha) {
        r->alpha_gg = malloc((size_t)H * sizeof(float));
        if (!r->alpha_gg) {
            cli_err(cmd, "--alpha: out of memory for H = %lld gates", (long long)H);
            goto fail;
        }
        float lg = (float)log(a->alpha);
        for (int64_t h = 0; h < H; h++) r->alpha_gg[h] = lg;
    }
    if (a->h0) {
        int64_t want[4] = {N, H, K, V};
        if (cli_npy_load(cmd, "--h0", a->h0, 4, &r->h0) || cli_npy_f32(cmd, "--h0", a->h0, &r->h0, 0)) goto fail;
        if (!cli_shape_eq(&r->h0, want, 4)) {
            cli_shape_err(cmd, "--h0", a->h0, &r->h0, 4, want, a->cu ? "must be [N,H,K,V], N = len(cu_seqlens) - 1" : "must be [B,H,K,V]");
            goto fail;
        }
    }

    /* ---- descriptor and validation ---- */
    sgla_forward_desc_init(d);
    d->dtype = dt;
    d->B = B;
    d->T = T;
    d->H = H;
    d->K = K;
    d->V = V;
    d->q = r->q.data;
    d->k = r->k.data;
    d->v = r->v.data;
    d->g = r->g.data;
    d->g_gamma = r->gg.data ? r->gg.data : r->alpha_gg;
    d->flags |= a->flags;
    d->scale = isnan(a->scale) ? (float)(1.0 / sqrt((double)K)) : (float)a->scale;
    d->h0 = r->h0.data;
    d->cu_seqlens = r->cu.data;
    d->num_seqs = a->cu ? N : 0;
    d->chunk = a->chunk;
    d->threads = (int)a->threads;
    r->in_dt = in_dt;
    r->dt = dt;
    r->B = B, r->T = T, r->H = H, r->K = K, r->V = V, r->N = N;
    return 0;
fail:
    cli_inputs_free(r);
    return 2;
}
