/* The CUDA forward against the fp64 reference (sgla_reference, kind A: the
 * token recurrence of the definition) on fresh random inputs.
 *
 * Every configuration: inputs drawn anew (seed printed; SGLA_SEED replays),
 * o and ht poisoned with NaN on the device before the run, every element
 * checked written, rel L2 and max-abs against fp64, NaN never passes.
 * Thresholds: rel L2 <= 1e-3 (fp16), 8e-3 (bf16), 1e-5 (fp32); max abs error
 * <= 4 x that times max |ref|.
 *
 * T >= 1024 with few heads takes the sequence-split path (local states, scan,
 * outputs).  SGLA_GPU_SMALL=1 runs a few small configurations only (for the sanitizers).
 * SGLA_CUDA_VERSION=n checks kernel version n (0 = default, the default when unset);
 * SGLA_CUDA_VERSION=all
 * checks every version. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda/sgla_cuda.h"
#include "testutil.h"

enum { G_NONE, G_GAMMA, G_ALPHA, G_G };
enum { R_MILD, R_NEAR0, R_NEG30, R_MIX30 };

typedef struct cfg {
    sgla_dtype dt;
    int gate, range;
    int64_t B, T, H, K, V;
    int h0, ht, inplace;
    int nseq; /* > 0: varlen with nseq sequences (lengths drawn, some 0), B = 1 */
} cfg;

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(e_));                                                  \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static cudaStream_t stream;
static int n_run = 0;

static const char *gname(int g)
{
    static const char *n[] = {"none", "g_gamma", "alpha", "g"};
    return n[g];
}
static const char *rname(int r)
{
    static const char *n[] = {"mild", "near0", "-30", "mix0/-30"};
    return n[r];
}

static float draw_gate(tu_rng *r, int range)
{
    switch (range) {
    case R_NEAR0: return tu_uniform(r) < 0.2 ? 0.0f : (float)-tu_uniform_range(r, 0, 1e-3);
    case R_NEG30: return -30.0f;
    case R_MIX30: return tu_uniform(r) < 0.5 ? 0.0f : -30.0f;
    default: return (float)-tu_uniform_range(r, 0.0, 0.3);
    }
}

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}

static int run_cfg(const cfg *c, tu_rng *r, int version)
{
    const int64_t B = c->B, T = c->T, H = c->H, K = c->K, V = c->V;
    size_t es = sgla_dtype_size(c->dt);
    int64_t *cu = NULL;
    int64_t N = B;
    if (c->nseq > 0) {
        N = c->nseq;
        cu = malloc((size_t)(N + 1) * sizeof *cu);
        /* random cut points, sorted, some repeated (empty sequences) */
        cu[0] = 0;
        cu[N] = T;
        for (int64_t i = 1; i < N; i++) cu[i] = tu_int(r, 0, T);
        for (int64_t i = 1; i < N; i++)
            for (int64_t j = i + 1; j < N; j++)
                if (cu[j] < cu[i]) { int64_t t = cu[i]; cu[i] = cu[j]; cu[j] = t; }
        if (N > 2) cu[2] = cu[1]; /* one empty sequence */
    }
    int64_t nqk = B * T * H * K, nv = B * T * H * V, ns = N * H * K * V, ng = B * T * H;
    void *q = malloc((size_t)(nqk ? nqk : 1) * es), *k = malloc((size_t)(nqk ? nqk : 1) * es);
    void *v = malloc((size_t)(nv ? nv : 1) * es), *o = malloc((size_t)(nv ? nv : 1) * es);
    float *g = NULL, *gg = NULL, *h0 = NULL, *ht = malloc((size_t)ns * 4);
    tu_fill(r, q, c->dt, nqk, 1.0);
    tu_fill(r, k, c->dt, nqk, 1.0);
    tu_fill(r, v, c->dt, nv, 1.0);
    if (c->gate == G_G) {
        g = malloc((size_t)(ng ? ng : 1) * 4);
        for (int64_t i = 0; i < ng; i++) g[i] = draw_gate(r, c->range);
    } else if (c->gate == G_GAMMA || c->gate == G_ALPHA) {
        gg = malloc((size_t)H * 4);
        float a = draw_gate(r, c->range);
        for (int64_t h = 0; h < H; h++) gg[h] = c->gate == G_ALPHA ? a : draw_gate(r, c->range);
    }
    if (c->h0) {
        h0 = malloc((size_t)ns * 4);
        for (int64_t i = 0; i < ns; i++) h0[i] = (float)(tu_normal(r) * 0.5);
    }
    float scale = (float)(tu_uniform_range(r, 0.5, 1.5) / sqrt((double)K));

    /* fp64 reference on the host copies */
    sgla_forward_desc hd;
    sgla_forward_desc_init(&hd);
    hd.q = q; hd.k = k; hd.v = v; hd.o = o; hd.dtype = c->dt;
    hd.B = B; hd.T = T; hd.H = H; hd.K = K; hd.V = V;
    hd.g = g; hd.g_gamma = gg; hd.scale = scale; hd.h0 = h0; hd.ht = NULL;
    hd.cu_seqlens = cu; hd.num_seqs = c->nseq > 0 ? N : 0;
    double *o64 = malloc((size_t)(nv ? nv : 1) * 8), *ht64 = malloc((size_t)ns * 8);
    sgla_status rs = sgla_reference(&hd, SGLA_BACKEND_REF_A, o64, ht64);
    TU_CHECK(rs == SGLA_OK, "reference failed: %s (%s)", sgla_status_string(rs), sgla_last_error());

    /* device copies; o and ht poisoned */
    void *dq = dalloc((size_t)nqk * es), *dk = dalloc((size_t)nqk * es), *dv = dalloc((size_t)nv * es);
    void *dout = dalloc((size_t)nv * es);
    float *dg = NULL, *dgg = NULL, *dh0 = NULL, *dht = NULL;
    int64_t *dcu = NULL;
    CK(cudaMemcpy(dq, q, (size_t)nqk * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, k, (size_t)nqk * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, v, (size_t)nv * es, cudaMemcpyHostToDevice));
    tu_poison(o, c->dt, nv);
    CK(cudaMemcpy(dout, o, (size_t)nv * es, cudaMemcpyHostToDevice));
    if (g) { dg = dalloc((size_t)ng * 4); CK(cudaMemcpy(dg, g, (size_t)ng * 4, cudaMemcpyHostToDevice)); }
    if (gg) { dgg = dalloc((size_t)H * 4); CK(cudaMemcpy(dgg, gg, (size_t)H * 4, cudaMemcpyHostToDevice)); }
    if (cu) { dcu = dalloc((size_t)(N + 1) * 8); CK(cudaMemcpy(dcu, cu, (size_t)(N + 1) * 8, cudaMemcpyHostToDevice)); }
    if (h0) { dh0 = dalloc((size_t)ns * 4); CK(cudaMemcpy(dh0, h0, (size_t)ns * 4, cudaMemcpyHostToDevice)); }
    if (c->ht) {
        if (c->inplace && dh0) dht = dh0;
        else {
            dht = dalloc((size_t)ns * 4);
            tu_poison(ht, SGLA_F32, ns);
            CK(cudaMemcpy(dht, ht, (size_t)ns * 4, cudaMemcpyHostToDevice));
        }
    }
    /* pageable H2D copies may still be in flight when cudaMemcpy returns, and
     * `stream` is non-blocking: finish the setup before the kernel reads it */
    CK(cudaDeviceSynchronize());
    sgla_forward_desc d = hd;
    d.q = dq; d.k = dk; d.v = dv; d.o = dout; d.g = dg; d.g_gamma = dgg; d.h0 = dh0; d.ht = dht;
    d.cu_seqlens = dcu; d.stream = stream;
    d.flags = SGLA_FLAG_CHECK_DEVICE_VALUES;
    sgla_status st = version ? sgla_cuda_forward_version(&d, version) : sgla_forward(&d, SGLA_BACKEND_CUDA);
    CK(cudaStreamSynchronize(stream));
    int fails0 = tu_failures;
    char name[200];
    snprintf(name, sizeof name, "v%d %s gate=%s/%s B=%lld T=%lld H=%lld K=%lld V=%lld h0=%d ht=%d%s nseq=%d",
             version, sgla_dtype_name(c->dt), gname(c->gate), rname(c->range), (long long)B, (long long)T,
             (long long)H, (long long)K, (long long)V, c->h0, c->ht, c->inplace ? "(in place)" : "", c->nseq);
    TU_CHECK(st == SGLA_OK, "%s: status %s (%s)", name, sgla_status_string(st), sgla_last_error());
    double thr = c->dt == SGLA_F16 ? 1e-3 : c->dt == SGLA_BF16 ? 8e-3 : 1e-5;
    double rel = 0, mabs = 0, hrel = 0;
    if (st == SGLA_OK) {
        CK(cudaMemcpy(o, dout, (size_t)nv * es, cudaMemcpyDeviceToHost));
        int64_t left = tu_count_poison(o, c->dt, nv);
        TU_CHECK(left == 0, "%s: %lld output elements not written", name, (long long)left);
        double *o2 = malloc((size_t)(nv ? nv : 1) * 8);
        tu_to_double(o, c->dt, nv, o2);
        rel = nv ? tu_rel_l2(o2, o64, nv) : 0;
        mabs = nv ? tu_max_abs(o2, o64, nv) : 0;
        double mref = 0;
        for (int64_t i = 0; i < nv; i++) mref = fmax(mref, fabs(o64[i]));
        TU_CHECK(rel <= thr, "%s: o rel L2 %.3e > %.1e", name, rel, thr);
        TU_CHECK(mabs <= 4 * thr * mref, "%s: o max abs err %.3e > 4*%.1e*max|ref| (%.3e)", name, mabs, thr, mref);
        free(o2);
        if (dht) {
            CK(cudaMemcpy(ht, dht, (size_t)ns * 4, cudaMemcpyDeviceToHost));
            int64_t hl = tu_count_poison(ht, SGLA_F32, ns);
            TU_CHECK(hl == 0, "%s: %lld ht elements not written", name, (long long)hl);
            double *h2 = malloc((size_t)ns * 8);
            for (int64_t i = 0; i < ns; i++) h2[i] = ht[i];
            hrel = tu_rel_l2(h2, ht64, ns);
            TU_CHECK(hrel <= thr, "%s: ht rel L2 %.3e > %.1e", name, hrel, thr);
            free(h2);
        }
    }
    printf("%-4s %s: o rel %.2e maxabs %.2e  ht rel %.2e\n", tu_failures == fails0 ? "ok" : "FAIL", name, rel,
           mabs, hrel);
    n_run++;
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout);
    cudaFree(dg); cudaFree(dgg); cudaFree(dcu); cudaFree(dh0);
    if (dht && dht != dh0) cudaFree(dht);
    free(q); free(k); free(v); free(o); free(g); free(gg); free(h0); free(ht); free(cu); free(o64); free(ht64);
    return 0;
}

/* Error paths: nothing written, clear statuses. */
static void error_paths(void)
{
    const int64_t B = 1, T = 70, H = 2, K = 64, V = 64;
    size_t n = (size_t)(B * T * H * K);
    /* room for the V = 96 probe so that validation sees no overlap */
    uint16_t *dq = dalloc(n * 2 * 3), *dout = dalloc(n * 2 * 3);
    float *dg = dalloc((size_t)(B * T * H) * 4);
    CK(cudaMemset(dq, 0, n * 2));
    CK(cudaMemset(dout, 0xff, n * 2 * 3)); /* NaN pattern */
    float *hg = malloc((size_t)(B * T * H) * 4);
    for (int64_t i = 0; i < B * T * H; i++) hg[i] = -0.1f;
    hg[17] = 0.5f; /* positive: invalid */
    CK(cudaMemcpy(dg, hg, (size_t)(B * T * H) * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); /* setup done before the non-blocking stream reads it */
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = dq; d.k = dq; d.v = dq + n; d.o = dout; d.dtype = SGLA_BF16;
    d.B = B; d.T = T; d.H = H; d.K = K; d.V = V; d.stream = stream;
    sgla_status st;
    d.K = 32;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE, "K=32: got %s", sgla_status_string(st));
    d.K = 64; d.V = 96;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE, "V=96: got %s", sgla_status_string(st));
    d.V = 64; d.chunk = 32;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_CHUNK, "chunk=32: got %s", sgla_status_string(st));
    d.chunk = 64; d.g = dg; d.flags = SGLA_FLAG_CHECK_DEVICE_VALUES;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_POSITIVE_GATE, "positive g with CHECK_DEVICE_VALUES: got %s (%s)", sgla_status_string(st),
             sgla_last_error());
    hg[17] = NAN;
    CK(cudaMemcpy(dg, hg, (size_t)(B * T * H) * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); /* setup done before the non-blocking stream reads it */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_NONFINITE_GATE, "NaN g with CHECK_DEVICE_VALUES: got %s", sgla_status_string(st));
    d.g = NULL;
    int64_t hcu[3] = {0, 50, 60}; /* ends at 60 != T */
    int64_t *dcu = dalloc(sizeof hcu);
    CK(cudaMemcpy(dcu, hcu, sizeof hcu, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); /* setup done before the non-blocking stream reads it */
    d.cu_seqlens = dcu; d.num_seqs = 2;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_CU_SEQLENS_END, "cu_seqlens end: got %s", sgla_status_string(st));
    d.cu_seqlens = NULL; d.num_seqs = 0; d.flags = 0;
    d.o = (char *)dout + 2; /* misaligned */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st != SGLA_OK, "misaligned o accepted");
    uint16_t *back = malloc(n * 2);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(back, dout, n * 2, cudaMemcpyDeviceToHost));
    int64_t untouched = 0;
    for (size_t i = 0; i < n; i++) untouched += back[i] == 0xffff;
    TU_CHECK(untouched == (int64_t)n, "an error path wrote o (%lld of %zu untouched)", (long long)untouched, n);
    /* T = 0: ht = h0 */
    float hh[64 * 64 * 2], hb[64 * 64 * 2];
    for (int i = 0; i < 64 * 64 * 2; i++) hh[i] = (float)i * 0.25f;
    float *dh0 = dalloc(sizeof hh), *dht = dalloc(sizeof hh);
    CK(cudaMemcpy(dh0, hh, sizeof hh, cudaMemcpyHostToDevice));
    CK(cudaMemset(dht, 0xff, sizeof hh));
    CK(cudaDeviceSynchronize()); /* setup done before the non-blocking stream reads it */
    sgla_forward_desc_init(&d);
    d.dtype = SGLA_BF16; d.B = 1; d.T = 0; d.H = 2; d.K = 64; d.V = 64; d.h0 = dh0; d.ht = dht; d.stream = stream;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_OK, "T=0: %s (%s)", sgla_status_string(st), sgla_last_error());
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(hb, dht, sizeof hb, cudaMemcpyDeviceToHost));
    TU_CHECK(memcmp(hb, hh, sizeof hh) == 0, "T=0: ht != h0");
    printf("error paths: done\n");
    cudaFree(dq); cudaFree(dout); cudaFree(dg); cudaFree(dcu); cudaFree(dh0); cudaFree(dht);
    free(hg); free(back);
}

int main(void)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        printf("test_gpu_forward: no CUDA device (%s); skipped\n", sgla_last_error());
        return 77;
    }
    uint64_t seed = tu_seed("test_gpu_forward");
    tu_rng r;
    tu_rng_init(&r, seed);
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const char *small = getenv("SGLA_GPU_SMALL");
    const char *ver = getenv("SGLA_CUDA_VERSION");
    int v_lo = 0, v_hi = 0;
    if (ver && strcmp(ver, "all") == 0) { v_lo = 1; v_hi = sgla_cuda_num_versions(); }
    else if (ver && *ver) v_lo = v_hi = atoi(ver);

    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    static const cfg all[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq */
        {BF, G_G, R_MILD, 2, 1, 2, 64, 64, 1, 1, 0, 0},
        {BF, G_G, R_MILD, 2, 63, 2, 128, 128, 0, 1, 0, 0},
        {BF, G_G, R_MILD, 2, 64, 2, 128, 128, 1, 1, 0, 0},
        {BF, G_G, R_MILD, 2, 65, 2, 256, 256, 1, 1, 0, 0},
        {BF, G_G, R_MILD, 1, 1000, 3, 128, 64, 1, 1, 0, 0},
        {BF, G_G, R_MILD, 1, 4096, 2, 64, 128, 0, 1, 0, 0},
        {BF, G_G, R_NEAR0, 2, 1000, 2, 128, 128, 1, 1, 0, 0},
        {BF, G_G, R_NEG30, 1, 1000, 2, 128, 256, 0, 1, 0, 0},
        {BF, G_G, R_MIX30, 1, 1000, 2, 256, 128, 1, 1, 0, 0},
        {BF, G_GAMMA, R_MILD, 2, 65, 2, 128, 128, 1, 1, 0, 0},
        {BF, G_GAMMA, R_MILD, 1, 4096, 2, 128, 128, 0, 1, 0, 0},
        {BF, G_GAMMA, R_NEAR0, 2, 1000, 2, 64, 64, 0, 0, 0, 0},
        {BF, G_GAMMA, R_NEG30, 1, 1000, 2, 256, 64, 1, 1, 0, 0},
        {BF, G_ALPHA, R_MILD, 2, 1000, 2, 64, 256, 1, 1, 1, 0},
        {BF, G_NONE, R_MILD, 2, 63, 2, 128, 128, 1, 1, 0, 0},
        {BF, G_NONE, R_MILD, 1, 4096, 2, 64, 64, 0, 1, 0, 0},
        {BF, G_NONE, R_MILD, 2, 1000, 2, 256, 256, 0, 0, 0, 0},
        {BF, G_G, R_MILD, 1, 1000, 2, 128, 128, 1, 1, 0, 5},
        {BF, G_GAMMA, R_MILD, 1, 700, 2, 64, 128, 1, 1, 1, 4},
        {BF, G_NONE, R_MILD, 1, 300, 2, 256, 64, 0, 1, 0, 3},
        {BF, G_G, R_MIX30, 1, 4096, 2, 128, 128, 1, 1, 1, 0},
        {BF, G_GAMMA, R_NEAR0, 1, 2048, 1, 256, 256, 1, 1, 0, 0},
        {HF, G_G, R_MILD, 2, 1, 2, 128, 128, 1, 1, 1, 0},
        {HF, G_G, R_MILD, 2, 63, 2, 64, 64, 1, 1, 0, 0},
        {HF, G_G, R_MILD, 2, 64, 2, 256, 256, 0, 1, 0, 0},
        {HF, G_G, R_MILD, 2, 65, 2, 128, 64, 1, 1, 0, 0},
        {HF, G_G, R_MILD, 1, 1000, 2, 64, 256, 1, 1, 0, 0},
        {HF, G_G, R_MILD, 1, 4096, 2, 128, 128, 0, 1, 0, 0},
        {HF, G_G, R_NEAR0, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        {HF, G_G, R_NEG30, 1, 1000, 2, 64, 64, 1, 1, 0, 0},
        {HF, G_G, R_MIX30, 1, 1000, 2, 128, 256, 0, 1, 0, 0},
        {HF, G_GAMMA, R_MILD, 2, 64, 2, 256, 128, 1, 1, 0, 0},
        {HF, G_GAMMA, R_MILD, 1, 4096, 2, 64, 64, 1, 1, 0, 0},
        {HF, G_GAMMA, R_NEAR0, 2, 1000, 2, 128, 128, 0, 1, 0, 0},
        {HF, G_GAMMA, R_NEG30, 1, 65, 2, 128, 64, 1, 1, 0, 0},
        {HF, G_ALPHA, R_MILD, 2, 1000, 2, 256, 256, 1, 1, 0, 0},
        {HF, G_NONE, R_MILD, 2, 65, 2, 64, 128, 1, 1, 0, 0},
        {HF, G_NONE, R_MILD, 1, 1000, 2, 128, 128, 0, 0, 0, 0},
        {HF, G_G, R_MILD, 1, 900, 2, 64, 64, 1, 1, 0, 6},
        {HF, G_NONE, R_MILD, 1, 500, 2, 128, 256, 1, 1, 1, 3},
        {F32, G_G, R_MILD, 2, 65, 2, 64, 64, 1, 1, 0, 0},
        {F32, G_GAMMA, R_MILD, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        {F32, G_NONE, R_MILD, 1, 63, 2, 256, 128, 0, 1, 0, 0},
        {F32, G_G, R_NEG30, 1, 300, 2, 128, 64, 1, 1, 1, 3},
        {F32, G_ALPHA, R_NEAR0, 1, 1, 2, 64, 256, 1, 1, 0, 0},
    };
    static const cfg smalls[] = {
        {BF, G_G, R_MILD, 1, 130, 2, 64, 64, 1, 1, 0, 0},
        {HF, G_GAMMA, R_MILD, 1, 70, 1, 128, 128, 1, 1, 1, 0},
        {BF, G_NONE, R_MILD, 1, 65, 1, 256, 64, 0, 1, 0, 0},
        {BF, G_G, R_MILD, 1, 150, 1, 128, 64, 1, 1, 0, 3},
        {F32, G_G, R_MILD, 1, 20, 1, 64, 64, 1, 1, 0, 0},
        {BF, G_G, R_MILD, 1, 1024, 1, 64, 64, 1, 1, 1, 0}, /* sequence split (2 segments) */
    };
    const cfg *list = small ? smalls : all;
    int nlist = small ? (int)(sizeof smalls / sizeof smalls[0]) : (int)(sizeof all / sizeof all[0]);
    for (int v = v_lo; v <= v_hi; v++)
        for (int i = 0; i < nlist; i++) run_cfg(&list[i], &r, v);
    error_paths();
    printf("%d configurations run\n", n_run);
    CK(cudaStreamDestroy(stream));
    return tu_finish("test_gpu_forward");
}
