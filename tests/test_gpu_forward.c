/* The CUDA forward against the fp64 reference through the conformance
 * harness (tools/conform.h: fresh inputs from the printed seed, poisoned
 * outputs checked written, rel L2 and max-abs bars, NaN never passes).
 *
 * Every case runs the plan a plain call picks, then every other
 * configuration row that can serve its K and V, and a forced three-segment
 * sequence split (T >= 256, no cu_seqlens): each path of the one kernel family
 * is checked, not only the default.  T >= 1024 with few heads splits by itself.
 * Then the contract's edges: refusals that write nothing, T = 0, the
 * workspace (queried, passed in, too small), CUDA-graph capture and replay,
 * bit-identical repeats (gate g at K = 64 and 256 too: repeat_bits_g).
 *
 * SGLA_GPU_SMALL=1 runs a few small cases with their default plan only (for
 * compute-sanitizer). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "conform.h"
#include "gpu_check.h"
#include "testutil.h"

static int n_run = 0;
/* this build runs the Hopper kernels on this device (gpu_hopper_kernels, read once in main, before any
 * emulated GPU) */
static int hopper_kernels = 0;

/* a plan on the mma.sync path (either stage count): a GPU before Hopper's, or forced */
static int mma_plan(int config)
{
    return config == SGLA_CUDA_CONFIG_PORTABLE || config == SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE;
}

static void run_plan(const conform_data *x, const sgla_cuda_plan *force)
{
    conform_result res;
    conform_check(x, SGLA_BACKEND_CUDA, force, &res);
    conform_print(stdout, &res);
    TU_CHECK(res.pass, "%s", res.label);
    n_run++;
}

/* fp32: the usual plan is the chunked TF32 kernel wherever it serves (K up to 128 after padding, a
 * device whose blocks hold its shared memory), on wgmma on a Hopper device; then the mma.sync kernel
 * (there) and the token recurrence forced on the same inputs, and TF32 alone (SGLA_FLAG_ALLOW_TF32) on
 * the usual plan and the mma.sync one, judged at its own bar and required to differ from 3xTF32 (else
 * the flag did nothing) */
static void f32_plans(const conform_data *x, int all_plans)
{
    sgla_forward_desc d = x->d;
    d.o = x->o64;
    sgla_cuda_plan usual = {-1, 1};
    sgla_status st = sgla_cuda_plan_of(&d, &usual);
    TU_CHECK(st == SGLA_OK, "sgla_cuda_plan_of: %s (%s)", sgla_status_string(st), sgla_last_error());
    if (st != SGLA_OK) return;
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    const int hopper = usual.config == SGLA_CUDA_CONFIG_F32_HOPPER;
    const int chunked = hopper || usual.config == SGLA_CUDA_CONFIG_F32_CHUNKED;
    /* (only Hopper's blocks hold 210 KB; a build of sm_80 PTX alone runs the mma.sync kernel there) */
    if (x->c.K <= 128 && x->c.T > 0 && optin >= 210 * 1024 && hopper_kernels)
        TU_CHECK(hopper, "fp32 K=%lld V=%lld: plan %d, not the chunked TF32 kernel on wgmma", (long long)x->c.K,
                 (long long)x->c.V, usual.config);
    if (!all_plans || !chunked) return;
    const sgla_cuda_plan rec = {SGLA_CUDA_CONFIG_F32_RECURRENT, 1}, mma = {SGLA_CUDA_CONFIG_F32_CHUNKED, 1};
    run_plan(x, &rec);
    if (hopper) run_plan(x, &mma);
    conform_data y = *x;
    y.d.flags |= SGLA_FLAG_ALLOW_TF32; /* judged at TF32's bar (tools/conform.c) */
    for (int i = 0; i < (hopper ? 2 : 1); i++) { /* the usual plan, and on Hopper the mma.sync kernel too */
        conform_result res;
        conform_check(&y, SGLA_BACKEND_CUDA, i ? &mma : NULL, &res);
        conform_print(stdout, &res);
        TU_CHECK(res.pass, "%s", res.label);
        TU_CHECK(res.o_rel > 1e-6 || x->nv == 0,
                 "%s: o rel %.2e, as exact as 3xTF32 (the flag did not reach the kernel?)", res.label, res.o_rel);
        n_run++;
    }
}

static void run_case(const conform_case *c, tu_rng *r, int all_plans)
{
    conform_data x;
    sgla_status st = conform_draw(&x, c, r, SGLA_BACKEND_REF_A);
    TU_CHECK(st == SGLA_OK, "reference: %s (%s)", sgla_status_string(st), sgla_last_error());
    if (st != SGLA_OK) return;
    {   /* a GPU before Hopper (or a build with only the sm_80 PTX) has the mma.sync path alone: K = 256 needs
         * blocks of 114 KB */
        sgla_forward_desc d = x.d;
        d.o = x.o64;
        sgla_cuda_plan usual;
        if (c->dtype != SGLA_F32 && c->K > 128 &&
            sgla_cuda_plan_of(&d, &usual) == SGLA_ERR_UNSUPPORTED_SHAPE) {
            printf("skip K=%lld V=%lld: %s\n", (long long)c->K, (long long)c->V, sgla_last_error());
            conform_free(&x);
            return;
        }
    }
    run_plan(&x, NULL);
    if (c->dtype == SGLA_F32) f32_plans(&x, all_plans);
    if (all_plans && c->dtype != SGLA_F32) {
        sgla_forward_desc d = x.d;
        d.o = x.o64; /* the plan reads no data: any o that overlaps no input will do */
        sgla_cuda_plan usual = {-1, 1};
        st = sgla_cuda_plan_of(&d, &usual);
        TU_CHECK(st == SGLA_OK, "sgla_cuda_plan_of: %s (%s)", sgla_status_string(st), sgla_last_error());
        if (st != SGLA_OK || mma_plan(usual.config)) { /* no Hopper rows to force here */
            conform_free(&x);
            return;
        }
        for (int row = 0; row < sgla_cuda_num_configs(); row++) {
            sgla_cuda_config_info info;
            sgla_cuda_config(row, &info);
            if (row == usual.config || info.K != c->K || c->V % info.bv) continue;
            const sgla_cuda_plan p = {row, 0};
            run_plan(&x, &p);
        }
        if (c->T >= 256 && !c->nseq && usual.nseg == 1) {
            /* a split: its first pass in the usual pieces (few pairs: more than one a segment), in none, and
             * in pieces of a chunk */
            const int64_t seg_chunks = ((c->T + 2) / 3 + 63) / 64;
            const sgla_cuda_plan p = {-1, 3}, whole = {-1, 3, 0, 1}, fine = {-1, 3, 0, (int)seg_chunks};
            run_plan(&x, &p);
            run_plan(&x, &whole);
            run_plan(&x, &fine);
        }
        if (usual.nseg > 1 && usual.sub > 1) { /* the usual split without its pieces */
            const sgla_cuda_plan p = {-1, usual.nseg, 0, 1};
            run_plan(&x, &p);
        }
        sgla_cuda_config_info ui;
        if (usual.config >= 0 && sgla_cuda_config(usual.config, &ui) && ui.persists && !c->nseq) {
            /* the persistent grid: one block and three walk every pair */
            const sgla_cuda_plan p1 = {-1, 1, 1}, p3 = {-1, 1, 3}, each = {-1, 0, -1};
            run_plan(&x, &p1);
            run_plan(&x, &p3);
            if (usual.blocks > 0) run_plan(&x, &each); /* and a block a pair where it is the usual plan */
        }
        if (c->T > 64 * 16 && c->T <= 4096 && !c->nseq) { /* a segment a chunk: more than the 8 the scan loads at once */
            const sgla_cuda_plan p = {-1, (int)((c->T + 63) / 64)};
            run_plan(&x, &p);
        }
        /* the mma.sync path of GPUs before Hopper, forced (padded head sizes reach it too, K above 256 as
         * two halves of 256): its blocks on 64 columns of V and, where K <= 128 and the padded V takes them,
         * on 128; its one-stage form (blocks of 99 KB) on the usual columns; its split along time, both */
        {
            const int64_t kp = c->K <= 64 ? 64 : c->K <= 128 ? 128 : 256, vp = c->V <= 64 ? 64 : c->V <= 128 ? 128
                                                                                   : c->V <= 256 ? 256
                                                                                                 : 512;
            const int wide = kp <= 128 && vp % 128 == 0;
            const sgla_cuda_plan p64 = {SGLA_CUDA_CONFIG_PORTABLE, 1, 0, 0, 64},
                                 p128 = {SGLA_CUDA_CONFIG_PORTABLE, 1, 0, 0, 128},
                                 p1 = {SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE, 1};
            run_plan(&x, &p64);
            if (wide) run_plan(&x, &p128);
            run_plan(&x, &p1);
            if (c->T >= 256 && !c->nseq) {
                const sgla_cuda_plan ps = {SGLA_CUDA_CONFIG_PORTABLE, 3, 0, 0, wide ? 128 : 64},
                                     ps1 = {SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE, 3, 0, 0, 64};
                run_plan(&x, &ps);
                run_plan(&x, &ps1);
            }
        }
    }
    conform_free(&x);
}

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}
/* n fresh values (tu_fill, N(0, sd)) of dtype dt on the device; the caller synchronises the device before a
 * non-blocking stream reads them (a pageable copy may return before it lands) */
static void *dupload(tu_rng *r, sgla_dtype dt, int64_t n, double sd)
{
    const size_t bytes = (size_t)n * (dt == SGLA_F32 ? 4 : 2);
    void *h = malloc(bytes ? bytes : 1), *p = dalloc(bytes);
    tu_fill(r, h, dt, n, sd);
    CK(cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice));
    free(h);
    return p;
}

/* a forced plan refused before anything runs: SGLA_ERR_INVALID_ARGUMENT, its message holding `why` (NULL:
 * any message) */
static void forced_refused(const sgla_forward_desc *d, sgla_cuda_plan plan, const char *why, const char *what)
{
    const sgla_status st = sgla_cuda_forward_forced(d, &plan);
    TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT && (!why || strstr(sgla_last_error(), why)), "%s: got %s (%s)", what,
             sgla_status_string(st), sgla_last_error());
}

/* Error paths: nothing written, clear statuses; T = 0; the backend's query
 * leaves the last error alone. */
static void error_paths(cudaStream_t stream)
{
    const int64_t B = 1, T = 70, H = 2, K = 64, V = 64;
    size_t n = (size_t)(B * T * H * K);
    /* room for the K = 576, V = 576 probes so that validation sees no overlap */
    uint16_t *dq = dalloc(n * 2 * 12), *dout = dalloc(n * 2 * 12);
    float *dg = dalloc((size_t)(B * T * H) * 4);
    CK(cudaMemset(dq, 0, n * 2));
    CK(cudaMemset(dout, 0xff, n * 2 * 12)); /* NaN pattern */
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
    d.K = 576; /* K up to 512 runs (above 256 as two halves) */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE, "K=576: got %s", sgla_status_string(st));
    d.K = 64; d.V = 576; /* V up to 512 runs (above 256 on padded copies or natively at 512) */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE, "V=576: got %s", sgla_status_string(st));
    d.V = 64; d.chunk = 128;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_CHUNK, "chunk=128: got %s", sgla_status_string(st));
    {   /* chunk 16 and 32 are taken and computed in chunks of 64: the same bits */
        uint16_t *o64 = malloc(n * 2), *o16 = malloc(n * 2), *hq = malloc(n * 2 * 2);
        for (size_t i = 0; i < 2 * n; i++) hq[i] = sgla_f32_to_bf16((float)((int)(i * 2654435761u % 2001u) - 1000) * 1e-3f);
        CK(cudaMemcpy(dq, hq, n * 2 * 2, cudaMemcpyHostToDevice)); /* q = k and v: values, not zeros */
        /* a pageable copy may still be in flight when cudaMemcpy returns, and the stream is non-blocking:
         * without this the first call read part of the old q (a failure on the device, session 14) */
        CK(cudaDeviceSynchronize());
        for (int c = 0; c < 3; c++) {
            d.chunk = c == 0 ? 64 : c == 1 ? 32 : 16;
            st = sgla_forward(&d, SGLA_BACKEND_CUDA);
            TU_CHECK(st == SGLA_OK, "chunk=%lld: got %s (%s)", (long long)d.chunk, sgla_status_string(st), sgla_last_error());
            CK(cudaStreamSynchronize(stream));
            CK(cudaMemcpy(c ? o16 : o64, dout, n * 2, cudaMemcpyDeviceToHost));
            if (c) TU_CHECK(!memcmp(o16, o64, n * 2), "chunk=%lld: other bits than chunk 64", (long long)d.chunk);
        }
        int nonzero = 0;
        for (size_t i = 0; i < n; i++) nonzero += (o64[i] & 0x7fff) != 0;
        TU_CHECK(nonzero > (int)(n / 2), "chunk test: o is mostly zero (%d of %zu)", nonzero, n);
        free(o64), free(o16), free(hq);
        CK(cudaMemset(dq, 0, n * 2 * 2));
        CK(cudaMemset(dout, 0xff, n * 2 * 12));
        CK(cudaDeviceSynchronize());
    }
    d.chunk = 64; d.g = dg; d.flags = SGLA_FLAG_CHECK_DEVICE_VALUES;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_POSITIVE_GATE, "positive g with CHECK_DEVICE_VALUES: got %s (%s)", sgla_status_string(st),
             sgla_last_error());
    hg[17] = NAN;
    CK(cudaMemcpy(dg, hg, (size_t)(B * T * H) * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_NONFINITE_GATE, "NaN g with CHECK_DEVICE_VALUES: got %s", sgla_status_string(st));
    d.g = NULL;
    int64_t hcu[3] = {0, 50, 60}; /* ends at 60 != T */
    int64_t *dcu = dalloc(sizeof hcu);
    CK(cudaMemcpy(dcu, hcu, sizeof hcu, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    d.cu_seqlens = dcu; d.num_seqs = 2;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_CU_SEQLENS_END, "cu_seqlens end: got %s", sgla_status_string(st));
    {   /* a valid packed batch: no persistent grid for it */
        const int64_t hcu2[3] = {0, 50, 70};
        CK(cudaMemcpy(dcu, hcu2, sizeof hcu2, cudaMemcpyHostToDevice));
        CK(cudaDeviceSynchronize());
        forced_refused(&d, (sgla_cuda_plan){-1, 1, 1}, "persistent", "a persistent grid with cu_seqlens");
    }
    d.cu_seqlens = NULL; d.num_seqs = 0; d.flags = 0;
    d.o = (char *)dout + 2; /* misaligned */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "misaligned o: got %s", sgla_status_string(st));
    d.o = dout;
    /* a plan that cannot serve the shape */
    /* K = 128; and on a GPU before Hopper no row runs at all */
    forced_refused(&d, (sgla_cuda_plan){2, 0}, NULL, "row 2 forced on K = 64");
    {   /* plans that cannot apply: the mma.sync path split, a row below the named ones, fp32 on the mma.sync
         * path, bf16 on an fp32 path, the fp32 chunked path on a shape it does not take */
        forced_refused(&d, (sgla_cuda_plan){-7, 0}, NULL, "row -7 forced");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_F32_RECURRENT, 1}, "not one for 16-bit",
                       "bf16 forced onto the fp32 recurrence");
        d.dtype = SGLA_F32; /* refused before anything is read: the bf16 buffers serve */
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_F32_CHUNKED, 2}, "no sequence split",
                       "the fp32 path forced with a split");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_PORTABLE, 1}, "not one for fp32",
                       "fp32 forced onto the mma.sync path");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_F32_CHUNKED, 1, 0, 0, 64}, "columns",
                       "fp32 with the mma.sync path's columns forced");
        d.K = 256, d.V = 64; /* in the buffers' room (K = 576 probes above) */
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_F32_CHUNKED, 1}, "fp32 chunked path takes",
                       "fp32 K = 256 forced onto the chunked path");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_F32_HOPPER, 1}, "fp32 Hopper path takes",
                       "fp32 K = 256 forced onto the Hopper path");
        d.K = 64;
        d.dtype = SGLA_BF16;
        /* the mma.sync path's columns: 64 or 128, 64 alone at K = 256, V a multiple of them */
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_PORTABLE, 1, 0, 0, 96}, "columns", "96 columns a block");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_PORTABLE, 1, 0, 0, 128}, "columns",
                       "128 columns a block at V = 64");
        d.K = 256;
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE, 1, 0, 0, 128}, "columns",
                       "128 columns a block at K = 256");
        d.K = 64;
    }
    {   /* a split's first pass in pieces: fewer than 0, without a split, not dividing a segment's chunks */
        forced_refused(&d, (sgla_cuda_plan){-1, 0, 0, -1}, "pieces", "-1 pieces a segment forced");
        forced_refused(&d, (sgla_cuda_plan){-1, 1, 0, 2}, "no split", "pieces without a split");
        forced_refused(&d, (sgla_cuda_plan){-1, 2, 0, 2}, "pieces", "2 pieces of a one-chunk segment"); /* (or the mma.sync path's split) */
    }
    {   /* the persistent grid: a count below -1, a split, the mma.sync path, a row without one */
        forced_refused(&d, (sgla_cuda_plan){-1, 0, -2}, NULL, "-2 blocks forced");
        forced_refused(&d, (sgla_cuda_plan){-1, 2, 1}, "persistent", "a persistent grid with a split");
        forced_refused(&d, (sgla_cuda_plan){SGLA_CUDA_CONFIG_PORTABLE, 1, 1}, "persistent",
                       "a persistent grid on the mma.sync path");
        int rows_without = 0;
        for (int row = 0; row < sgla_cuda_num_configs(); row++) {
            sgla_cuda_config_info info;
            if (!sgla_cuda_config(row, &info) || info.persists || info.v_min > 64) continue;
            d.K = info.K; /* V = 64: in the buffers' room (K = 576 probes above) */
            forced_refused(&d, (sgla_cuda_plan){-1, 1, 1}, "persistent", "a persistent grid on a row without one");
            rows_without++;
        }
        TU_CHECK(rows_without > 0, "no row without a persistent grid was tried");
        d.K = 64;
    }
    {   /* ... chosen for many short pairs (plans only: addresses made up, far apart) */
        sgla_forward_desc m = d;
        m.g = NULL, m.g_gamma = NULL, m.h0 = NULL, m.ht = NULL;
        m.q = (void *)(uintptr_t)(1ull << 40), m.k = (void *)(uintptr_t)(2ull << 40);
        m.v = (void *)(uintptr_t)(3ull << 40), m.o = (void *)(uintptr_t)(4ull << 40);
        m.B = 64, m.T = 256, m.H = 8;
        sgla_cuda_plan pl = {0, 0, 0};
        st = sgla_cuda_plan_of(&m, &pl);
        TU_CHECK(st == SGLA_OK, "plan of 64x256x8x64: %s (%s)", sgla_status_string(st), sgla_last_error());
        if (pl.config == 0) { /* Hopper */
            TU_CHECK(pl.blocks > 0 && pl.blocks < 512, "64x256x8x64: %d blocks a column, not a persistent grid",
                     pl.blocks);
            m.T = 4096;
            st = sgla_cuda_plan_of(&m, &pl);
            TU_CHECK(st == SGLA_OK && pl.blocks == 0, "64x4096x8x64: %d blocks a column (%s)", pl.blocks,
                     sgla_status_string(st));
            m.T = 256, m.B = 2;
            st = sgla_cuda_plan_of(&m, &pl);
            TU_CHECK(st == SGLA_OK && pl.blocks == 0, "2x256x8x64: %d blocks a column (%s)", pl.blocks,
                     sgla_status_string(st));
            m.T = 1024, m.B = 16, m.K = m.V = 256; /* K = 256: a block a pair */
            st = sgla_cuda_plan_of(&m, &pl);
            TU_CHECK(st == SGLA_OK && pl.blocks == 0, "16x1024x8x256: %d blocks a column (%s)", pl.blocks,
                     sgla_status_string(st));
            int sms = 0;
            CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
            m.T = 16384, m.B = 2; /* 64 blocks a segment: two segments, the first pass in two pieces each */
            st = sgla_cuda_plan_of(&m, &pl);
            if (sms >= 128 && sms < 192)
                TU_CHECK(st == SGLA_OK && pl.nseg == 2 && pl.sub == 2, "2x16384x8x256 on %d SMs: %d segments, %d "
                         "pieces a segment (%s)", sms, pl.nseg, pl.sub, sgla_status_string(st));
        }
    }
    sgla_cuda_plan usual;
    if (sgla_cuda_plan_of(&d, &usual) == SGLA_OK && mma_plan(usual.config)) {
        /* K = 64: serves the shape, but is a Hopper kernel */
        forced_refused(&d, (sgla_cuda_plan){0, 0}, "sm_90a", "row 0 forced without Hopper kernels");
    } else { /* a width is the mma.sync path's alone: not with a Hopper row, the usual one or row 0 */
        forced_refused(&d, (sgla_cuda_plan){-1, 1, 0, 0, 64}, "columns", "64 columns a block on the Hopper plan");
        forced_refused(&d, (sgla_cuda_plan){0, 1, 0, 0, 64}, "columns", "64 columns a block on row 0");
    }
    /* T >= 2^31: refused before anything is read (addresses made up, far apart) */
    {
        sgla_forward_desc big = d;
        big.T = (int64_t)1 << 31, big.H = 1;
        big.q = big.k = (void *)(uintptr_t)0x10000000u;
        big.v = (void *)(uintptr_t)(1ull << 44);
        big.o = (void *)(uintptr_t)(1ull << 45);
        st = sgla_forward(&big, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE, "T = 2^31: got %s (%s)", sgla_status_string(st), sgla_last_error());
    }
    /* head sizes past the CUDA limits (K, V <= 512): refused before anything is read */
    {
        sgla_forward_desc wide = d;
        wide.T = 1, wide.H = 1, wide.V = 513;
        st = sgla_forward(&wide, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE && strstr(sgla_last_error(), "at most 512"),
                 "V = 513: got %s (%s)", sgla_status_string(st), sgla_last_error());
        wide.V = 64, wide.K = 528;
        st = sgla_forward(&wide, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE && strstr(sgla_last_error(), "at most 512"),
                 "K = 528: got %s (%s)", sgla_status_string(st), sgla_last_error());
    }
    /* an uninitialised descriptor size */
    d.size = 3;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "descriptor size 3: got %s", sgla_status_string(st));
    d.size = sizeof d;
    uint16_t *back = malloc(n * 2);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(back, dout, n * 2, cudaMemcpyDeviceToHost));
    int64_t untouched = 0;
    for (size_t i = 0; i < n; i++) untouched += back[i] == 0xffff;
    TU_CHECK(untouched == (int64_t)n, "an error path wrote o (%lld of %zu untouched)", (long long)untouched, n);
    /* the availability query keeps the last error */
    TU_CHECK(sgla_backend_available(SGLA_BACKEND_CUDA) && strstr(sgla_last_error(), "sgla_forward_desc size = 3"),
             "sgla_backend_available changed the last error to '%s'", sgla_last_error());

    /* T = 0: ht = h0, or zero without h0 */
    float hh[64 * 64 * 2], hb[64 * 64 * 2];
    for (int i = 0; i < 64 * 64 * 2; i++) hh[i] = (float)i * 0.25f;
    float *dh0 = dalloc(sizeof hh), *dht = dalloc(sizeof hh);
    CK(cudaMemcpy(dh0, hh, sizeof hh, cudaMemcpyHostToDevice));
    CK(cudaMemset(dht, 0xff, sizeof hh));
    CK(cudaDeviceSynchronize());
    sgla_forward_desc_init(&d);
    d.dtype = SGLA_BF16; d.B = 1; d.T = 0; d.H = 2; d.K = 64; d.V = 64; d.h0 = dh0; d.ht = dht; d.stream = stream;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_OK, "T=0: %s (%s)", sgla_status_string(st), sgla_last_error());
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(hb, dht, sizeof hb, cudaMemcpyDeviceToHost));
    TU_CHECK(memcmp(hb, hh, sizeof hh) == 0, "T=0: ht != h0");
    d.h0 = NULL;
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_OK, "T=0 without h0: %s (%s)", sgla_status_string(st), sgla_last_error());
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(hb, dht, sizeof hb, cudaMemcpyDeviceToHost));
    int zeros = 1;
    for (int i = 0; i < 64 * 64 * 2; i++) zeros &= hb[i] == 0.0f;
    TU_CHECK(zeros, "T=0 without h0: ht is not zero");
    printf("error paths: done\n");
    cudaFree(dq); cudaFree(dout); cudaFree(dg); cudaFree(dcu); cudaFree(dh0); cudaFree(dht);
    free(hg); free(back);
}

/* The sequence split's workspace: the size query, a workspace passed in (bits
 * equal to the library's own allocation), one too small, and a CUDA graph of
 * the call replayed; a second plain run gives the same bits (no atomics). */
/* A call from a thread that has made no CUDA call of its own (as torch's autograd workers): the
 * library makes the device's context current there when the tensor-map encoder finds none */
typedef struct fresh_arg {
    sgla_forward_desc d;
    sgla_status st;
    char err[256]; /* sgla_last_error() is the thread's own */
} fresh_arg;
static void *fresh_thread(void *p)
{
    fresh_arg *a = p;
    a->st = sgla_forward(&a->d, SGLA_BACKEND_CUDA);
    snprintf(a->err, sizeof a->err, "%s", sgla_last_error());
    return NULL;
}
static void fresh_thread_call(void)
{
    const int64_t B = 1, T = 200, H = 2, K = 64, V = 64;
    const size_t n = (size_t)(B * T * H * K);
    uint16_t *dq = dalloc(n * 2 * 4);
    CK(cudaMemset(dq, 0, n * 2 * 4));
    CK(cudaDeviceSynchronize());
    fresh_arg a;
    sgla_forward_desc_init(&a.d);
    a.d.q = dq; a.d.k = dq + n; a.d.v = dq + 2 * n; a.d.o = dq + 3 * n; a.d.dtype = SGLA_BF16;
    a.d.B = B; a.d.T = T; a.d.H = H; a.d.K = K; a.d.V = V;
    pthread_t th;
    TU_CHECK(pthread_create(&th, NULL, fresh_thread, &a) == 0, "pthread_create");
    pthread_join(th, NULL);
    TU_CHECK(a.st == SGLA_OK, "a call from a fresh thread: %s (%s)", sgla_status_string(a.st), a.err);
    CK(cudaDeviceSynchronize());
    cudaFree(dq);
}

static void workspace_and_graphs(cudaStream_t stream, tu_rng *r)
{
    const int64_t B = 1, T = 4096, H = 2, K = 128, V = 128, nqk = B * T * H * K, ns = B * H * K * V;
    const size_t bytes = (size_t)nqk * 2;
    uint16_t *dq = dupload(r, SGLA_BF16, nqk, 1.0), *dk = dupload(r, SGLA_BF16, nqk, 1.0),
             *dv = dupload(r, SGLA_BF16, nqk, 1.0), *dout = dalloc(bytes);
    float *dht = dalloc((size_t)ns * 4), gg[2] = {-0.01f, -0.2f}, *dgg = dalloc(sizeof gg);
    CK(cudaMemcpy(dgg, gg, sizeof gg, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = dq; d.k = dk; d.v = dv; d.o = dout; d.ht = dht; d.g_gamma = dgg; d.dtype = SGLA_BF16;
    d.B = B; d.T = T; d.H = H; d.K = K; d.V = V; d.scale = 0.088f; d.stream = stream;
    size_t need = 0;
    sgla_status st = sgla_workspace_size(&d, SGLA_BACKEND_CUDA, &need);
    sgla_cuda_plan plan;
    sgla_cuda_plan_of(&d, &plan);
    TU_CHECK(st == SGLA_OK && (plan.nseg > 1) == (need > 0), "workspace size %zu for %d segments (%s)", need,
             plan.nseg, sgla_status_string(st));
    printf("workspace: %zu bytes for %d segments at 1x4096x2x128\n", need, plan.nseg);
    uint16_t *o1 = malloc(bytes), *o2 = malloc(bytes);
    float *h1 = malloc((size_t)ns * 4), *h2 = malloc((size_t)ns * 4);
    /* the library's own stream-ordered allocation */
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    TU_CHECK(st == SGLA_OK, "no workspace: %s (%s)", sgla_status_string(st), sgla_last_error());
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(o1, dout, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h1, dht, (size_t)ns * 4, cudaMemcpyDeviceToHost));
    /* the same again: bit-identical */
    CK(cudaMemset(dout, 0xff, bytes));
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(o2, dout, bytes, cudaMemcpyDeviceToHost));
    TU_CHECK(st == SGLA_OK && !memcmp(o1, o2, bytes), "a repeated call gave other bits");
    /* a workspace passed in */
    void *ws = need ? dalloc(need) : NULL;
    d.workspace = ws;
    d.workspace_bytes = need;
    CK(cudaMemset(dout, 0xff, bytes));
    CK(cudaMemset(dht, 0xff, (size_t)ns * 4));
    CK(cudaDeviceSynchronize());
    st = sgla_forward(&d, SGLA_BACKEND_CUDA);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(o2, dout, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2, dht, (size_t)ns * 4, cudaMemcpyDeviceToHost));
    TU_CHECK(st == SGLA_OK && !memcmp(o1, o2, bytes) && !memcmp(h1, h2, (size_t)ns * 4),
             "workspace passed in: status %s, bits %s", sgla_status_string(st), memcmp(o1, o2, bytes) ? "differ" : "same");
    if (need) {
        d.workspace_bytes = need - 1;
        st = sgla_forward(&d, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "workspace one byte short: got %s", sgla_status_string(st));
        d.workspace_bytes = need;
    }
    /* captured into a graph and replayed twice */
    CK(cudaMemset(dout, 0xff, bytes));
    CK(cudaDeviceSynchronize());
    cudaGraphExec_t exec = gpu_capture(stream, gpu_cuda_forward, &d);
    if (exec) {
        for (int rep = 0; rep < 2; rep++) {
            CK(cudaMemset(dout, 0xff, bytes));
            CK(cudaDeviceSynchronize());
            CK(cudaGraphLaunch(exec, stream));
            CK(cudaStreamSynchronize(stream));
            CK(cudaMemcpy(o2, dout, bytes, cudaMemcpyDeviceToHost));
            TU_CHECK(!memcmp(o1, o2, bytes), "graph replay %d gave other bits", rep);
        }
        cudaGraphExecDestroy(exec);
    }
    {   /* a head size run on padded copies (h0 is copied), a workspace 4 bytes off: refused by its name before
         * anything is enqueued (the padded path planned with its own NULL workspace and named h0) */
        const int64_t K2 = 96, T2 = 256, nq2 = T2 * H * K2, nv2 = T2 * H * V, ns2 = H * K2 * V;
        void *q2 = dupload(r, SGLA_BF16, nq2, 1.0), *k2 = dupload(r, SGLA_BF16, nq2, 1.0);
        void *v2 = dupload(r, SGLA_BF16, nv2, 1.0), *h02 = dupload(r, SGLA_F32, ns2, 1.0), *o2d = dalloc((size_t)nv2 * 2);
        CK(cudaMemset(o2d, 0xff, (size_t)nv2 * 2));
        CK(cudaDeviceSynchronize());
        sgla_forward_desc e;
        sgla_forward_desc_init(&e);
        e.q = q2, e.k = k2, e.v = v2, e.o = o2d, e.h0 = h02, e.dtype = SGLA_BF16, e.stream = stream;
        e.B = 1, e.T = T2, e.H = H, e.K = K2, e.V = V, e.scale = 0.1f;
        size_t need2 = 0;
        st = sgla_workspace_size(&e, SGLA_BACKEND_CUDA, &need2);
        char *ws2 = dalloc(need2 + 64);
        e.workspace = ws2 + 4, e.workspace_bytes = need2 + 32;
        st = sgla_forward(&e, SGLA_BACKEND_CUDA);
        CK(cudaStreamSynchronize(stream));
        uint16_t *oh = malloc((size_t)nv2 * 2);
        CK(cudaMemcpy(oh, o2d, (size_t)nv2 * 2, cudaMemcpyDeviceToHost));
        int untouched = 1;
        for (int64_t i = 0; i < nv2; i++) untouched &= oh[i] == 0xffff;
        TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT && strstr(sgla_last_error(), "workspace") && untouched,
                 "a misaligned workspace (K = 96, h0 copied): %s (%s), o %s", sgla_status_string(st), sgla_last_error(),
                 untouched ? "untouched" : "written");
        free(oh);
        cudaFree(q2), cudaFree(k2), cudaFree(v2), cudaFree(h02), cudaFree(o2d), cudaFree(ws2);
    }
    printf("workspace and graphs: done\n");
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(dht); cudaFree(dgg); cudaFree(ws);
    free(o1); free(o2); free(h1); free(h2);
}

/* Gate g at K = 64 and K = 256 (the rows whose consumer warps scan the gates themselves) and a split
 * at K = 256: repeated calls give the same bits.  Repeats 2 and 3 take the same gates 4 bytes off (g not
 * 16-byte aligned): at K = 64 with H % 4 == 0, unsplit, that is b from gate_b.cu where the aligned g goes
 * by TMA (kparams.gtma), and o must keep its bits (b of every row a sequence has is the same scan of the
 * same values), ht within fp32 rounding (past a partial chunk's end the TMA path scans zeros where gate_b
 * repeats the last b); elsewhere both are gate_b's. */
static void repeat_bits_g(cudaStream_t stream, tu_rng *r)
{
    static const int64_t shapes[][5] = {
        {2, 2048, 4, 64, 64}, {1, 1000, 2, 256, 64}, {1, 4096, 1, 256, 256}, {2, 1000, 4, 64, 64}};
    for (int si = 0; si < 4; si++) {
        const int64_t B = shapes[si][0], T = shapes[si][1], H = shapes[si][2], K = shapes[si][3], V = shapes[si][4];
        const int64_t nk = B * T * H * K, nv = B * T * H * V, ng = B * T * H, ns = B * H * K * V;
        uint16_t *o1 = malloc((size_t)nv * 2), *o2 = malloc((size_t)nv * 2), *o3 = malloc((size_t)nv * 2);
        float *hg = malloc((size_t)ng * 4), *h1 = malloc((size_t)ns * 4), *h2 = malloc((size_t)ns * 4),
              *h3 = malloc((size_t)ns * 4);
        uint16_t *dq = dupload(r, SGLA_BF16, nk, 1.0), *dk = dupload(r, SGLA_BF16, nk, 1.0),
                 *dv = dupload(r, SGLA_BF16, nv, 1.0), *dout = dalloc((size_t)nv * 2);
        float *gbuf = dalloc((size_t)(ng + 4) * 4), *dht = dalloc((size_t)ns * 4);
        tu_fill(r, hg, SGLA_F32, ng, 1.0);
        for (int64_t i = 0; i < ng; i++) hg[i] = -0.2f * fabsf(hg[i]);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = dq; d.k = dk; d.v = dv; d.o = dout; d.ht = dht; d.dtype = SGLA_BF16;
        d.B = B; d.T = T; d.H = H; d.K = K; d.V = V; d.stream = stream;
        for (int rep = 0; rep < 4; rep++) {
            if (rep == 0 || rep == 2) { /* g at gbuf, then at gbuf + 1 */
                d.g = gbuf + rep / 2;
                CK(cudaMemcpy((void *)d.g, hg, (size_t)ng * 4, cudaMemcpyHostToDevice));
            }
            CK(cudaMemset(dout, 0xff, (size_t)nv * 2));
            CK(cudaMemset(dht, 0xff, (size_t)ns * 4));
            CK(cudaDeviceSynchronize()); /* pageable uploads land before the non-blocking stream reads them */
            const sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
            CK(cudaStreamSynchronize(stream));
            TU_CHECK(st == SGLA_OK, "%lldx%lldx%lldx%lldx%lld g%s: %s (%s)", (long long)B, (long long)T, (long long)H,
                     (long long)K, (long long)V, rep < 2 ? "" : " misaligned", sgla_status_string(st), sgla_last_error());
            if (st != SGLA_OK) break;
            uint16_t *o = rep == 0 ? o1 : rep == 2 ? o3 : o2;
            float *h = rep == 0 ? h1 : rep == 2 ? h3 : h2;
            CK(cudaMemcpy(o, dout, (size_t)nv * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h, dht, (size_t)ns * 4, cudaMemcpyDeviceToHost));
            if (rep == 1 || rep == 3) {
                const uint16_t *oa = rep == 1 ? o1 : o3;
                const float *ha = rep == 1 ? h1 : h3;
                TU_CHECK(!memcmp(oa, o2, (size_t)nv * 2) && !memcmp(ha, h2, (size_t)ns * 4),
                         "%lldx%lldx%lldx%lldx%lld g: repeat %d gave other bits (o %s, ht %s)", (long long)B, (long long)T,
                         (long long)H, (long long)K, (long long)V, rep, memcmp(oa, o2, (size_t)nv * 2) ? "differ" : "same",
                         memcmp(ha, h2, (size_t)ns * 4) ? "differ" : "same");
            }
        }
        double num = 0, den = 0;
        int finite = 1;
        for (int64_t i = 0; i < ns; i++) {
            finite &= isfinite(h1[i]) && isfinite(h3[i]);
            num += ((double)h1[i] - h3[i]) * ((double)h1[i] - h3[i]);
            den += (double)h1[i] * h1[i];
        }
        const double rel = den > 0 ? sqrt(num / den) : (num > 0 ? 1.0 : 0.0);
        TU_CHECK(!memcmp(o1, o3, (size_t)nv * 2), "%lldx%lldx%lldx%lld: o with g aligned and 4 bytes off: bits differ",
                 (long long)B, (long long)T, (long long)H, (long long)K);
        TU_CHECK(finite && rel <= 1e-6, "%lldx%lldx%lldx%lld: ht with g aligned and 4 bytes off: rel %.3g%s", (long long)B,
                 (long long)T, (long long)H, (long long)K, rel, finite ? "" : " (not finite)");
        printf("gate g at %lldx%lldx%lldx%lldx%lld: repeats the same bits; g 4 bytes off: o same bits, ht rel %.3g\n",
               (long long)B, (long long)T, (long long)H, (long long)K, (long long)V, rel);
        cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(gbuf); cudaFree(dht);
        free(o1); free(o2); free(o3); free(hg); free(h1); free(h2); free(h3);
    }
    printf("repeats with gate g at K = 64 and 256: done\n");
}

/* Gate g at K = 64 and 256 takes b from gate_b.cu in the workspace: its size is counted (none with
 * g_gamma), a workspace passed in full of NaN gives the bits of the library's own, one a byte short is
 * refused, and the call captured in a CUDA graph gives them again.  At K = 64 with H % 4 == 0 the kernel
 * loads g by TMA instead: the size is counted all the same, and the workspace is left untouched */
static void workspace_gate_b(cudaStream_t stream, tu_rng *r)
{
    if (!hopper_kernels) { /* (the mma.sync path scans g itself: no workspace to check) */
        printf("skipped: gate g's b in a workspace, the Hopper rows' (no sm_90a kernels in this build for this device)\n");
        return;
    }
    /* (the third: K = 64 with H % 4 == 0 reads g by TMA, b's rows sized but not used) */
    static const int64_t shapes[][5] = {{2, 1000, 3, 64, 64}, {1, 700, 40, 256, 64}, {2, 1000, 4, 64, 64}};
    for (int si = 0; si < 3; si++) {
        const int64_t B = shapes[si][0], T = shapes[si][1], H = shapes[si][2], K = shapes[si][3], V = shapes[si][4];
        const int64_t nk = B * T * H * K, nv = B * T * H * V, ng = B * T * H;
        uint16_t *o1 = malloc((size_t)nv * 2), *o2 = malloc((size_t)nv * 2);
        float *hg = malloc((size_t)ng * 4);
        uint16_t *dq = dupload(r, SGLA_BF16, nk, 1.0), *dk = dupload(r, SGLA_BF16, nk, 1.0),
                 *dv = dupload(r, SGLA_BF16, nv, 1.0), *dout = dalloc((size_t)nv * 2);
        float *dg = dalloc((size_t)ng * 4), gam[64];
        tu_fill(r, hg, SGLA_F32, ng, 1.0);
        for (int64_t i = 0; i < ng; i++) hg[i] = -0.2f * fabsf(hg[i]);
        CK(cudaMemcpy(dg, hg, (size_t)ng * 4, cudaMemcpyHostToDevice));
        CK(cudaDeviceSynchronize());
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = dq; d.k = dk; d.v = dv; d.o = dout; d.g = dg; d.dtype = SGLA_BF16;
        d.B = B; d.T = T; d.H = H; d.K = K; d.V = V; d.stream = stream;
        size_t need = 0, need_gamma = 1;
        sgla_status st = sgla_workspace_size(&d, SGLA_BACKEND_CUDA, &need);
        TU_CHECK(st == SGLA_OK && need >= (size_t)(H * B * T) * 4, "%lldx%lldx%lldx%lld g: workspace %zu bytes (%s)",
                 (long long)B, (long long)T, (long long)H, (long long)K, need, sgla_status_string(st));
        for (int h = 0; h < 64; h++) gam[h] = -0.1f;
        sgla_forward_desc dgm = d;
        dgm.g = NULL, dgm.g_gamma = gam; /* only the size is asked: host memory will do */
        st = sgla_workspace_size(&dgm, SGLA_BACKEND_CUDA, &need_gamma);
        TU_CHECK(st == SGLA_OK && need_gamma == 0, "g_gamma: workspace %zu bytes (%s)", need_gamma, sgla_status_string(st));
        CK(cudaMemset(dout, 0xff, (size_t)nv * 2));
        CK(cudaDeviceSynchronize()); /* the stream does not wait for the legacy stream's memset */
        st = sgla_forward(&d, SGLA_BACKEND_CUDA);
        CK(cudaStreamSynchronize(stream));
        TU_CHECK(st == SGLA_OK, "no workspace: %s (%s)", sgla_status_string(st), sgla_last_error());
        CK(cudaMemcpy(o1, dout, (size_t)nv * 2, cudaMemcpyDeviceToHost));
        void *ws = dalloc(need);
        CK(cudaMemset(ws, 0xff, need)); /* NaN: b is written before it is read */
        CK(cudaMemset(dout, 0xff, (size_t)nv * 2));
        CK(cudaDeviceSynchronize());
        d.workspace = ws, d.workspace_bytes = need;
        st = sgla_forward(&d, SGLA_BACKEND_CUDA);
        CK(cudaStreamSynchronize(stream));
        CK(cudaMemcpy(o2, dout, (size_t)nv * 2, cudaMemcpyDeviceToHost));
        TU_CHECK(st == SGLA_OK && !memcmp(o1, o2, (size_t)nv * 2), "workspace passed in: %s, bits %s",
                 sgla_status_string(st), memcmp(o1, o2, (size_t)nv * 2) ? "differ" : "same");
        { /* b's rows written by gate_b, or (K = 64, H % 4 == 0: g by TMA) the workspace not touched */
            unsigned char *hw = malloc(need);
            CK(cudaMemcpy(hw, ws, need, cudaMemcpyDeviceToHost));
            size_t kept = 0;
            for (size_t i = 0; i < need; i++) kept += hw[i] == 0xff;
            const int tma = K == 64 && H % 4 == 0;
            TU_CHECK(tma ? kept == need : kept < need, "%lldx%lldx%lldx%lld g: %zu of the workspace's %zu bytes untouched (%s)",
                     (long long)B, (long long)T, (long long)H, (long long)K, kept, need,
                     tma ? "g by TMA: all expected" : "gate_b's b: written expected");
            free(hw);
        }
        d.workspace_bytes = need - 1;
        st = sgla_forward(&d, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "workspace one byte short: got %s", sgla_status_string(st));
        /* captured in a graph (gate_b, then the chunked kernel as its programmatic dependent), replayed */
        d.workspace_bytes = need;
        CK(cudaMemset(ws, 0xff, need));
        CK(cudaMemset(dout, 0xff, (size_t)nv * 2));
        CK(cudaDeviceSynchronize());
        cudaGraphExec_t exec = gpu_capture(stream, gpu_cuda_forward, &d);
        if (exec) {
            CK(cudaGraphLaunch(exec, stream));
            CK(cudaStreamSynchronize(stream));
            CK(cudaMemcpy(o2, dout, (size_t)nv * 2, cudaMemcpyDeviceToHost));
            TU_CHECK(!memcmp(o1, o2, (size_t)nv * 2), "graph replay: other bits than the plain call");
            cudaGraphExecDestroy(exec);
        }
        cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(dg); cudaFree(ws);
        free(o1); free(o2); free(hg);
        printf("gate b at %lldx%lldx%lldx%lld: workspace %zu bytes\n", (long long)B, (long long)T, (long long)H,
               (long long)K, need);
    }
}

/* The plain call on the GPUs users own, emulated on this one (sgla_cuda_dev_emulate): compute
 * capability 8.9 with 99 KB a block (RTX 4090, L40S; sm_86 alike), 8.0 with 163 KB (A100).  The
 * mma.sync path takes 16-bit inputs, with one stage of q, k, v at K = 128 where two do not fit;
 * fp32 the TF32 kernel where its shared memory fits, else the recurrence; K = 256 in 16 bits runs
 * where a block holds its one stage and is refused with its reason elsewhere. */
static void emulated_gpus(tu_rng *r, int small)
{
    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    static const conform_case cases[] = {
        {BF, CONFORM_GATE_G, CONFORM_MILD, 1, 300, 2, 128, 128, 1, 1, 0, 0},
        {HF, CONFORM_GATE_GAMMA, CONFORM_MIX30, 1, 260, 2, 128, 64, 1, 1, 0, 3},
        {BF, CONFORM_GATE_G, CONFORM_MILD, 2, 130, 2, 64, 128, 1, 1, 1, 0},
        {BF, CONFORM_GATE_NONE, CONFORM_MILD, 1, 100, 2, 96, 80, 1, 1, 0, 0},
        {F32, CONFORM_GATE_G, CONFORM_MILD, 1, 150, 2, 128, 128, 1, 1, 0, 0},
        {F32, CONFORM_GATE_GAMMA, CONFORM_MILD, 1, 70, 2, 64, 64, 1, 1, 0, 0},
        {BF, CONFORM_GATE_G, CONFORM_MILD, 1, 200, 2, 128, 256, 1, 1, 0, 0},   /* two column blocks a head */
        {BF, CONFORM_GATE_G, CONFORM_MIX30, 1, 4100, 1, 128, 128, 1, 1, 0, 0}, /* few blocks: the split by itself */
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int gi = 0; gi < GPU_NUM_EMULATED; gi++) {
        const gpu_emulated *gpu = &GPU_EMULATED[gi];
        gpu_emulate(gpu);
        for (int i = 0; i < ncases; i++) {
            /* the sanitizers: both stage counts of the mma.sync and TF32 kernels, and the split */
            if (small && i >= 2 && i < ncases - 1 && cases[i].dtype != F32) continue;
            const conform_case *c = &cases[i];
            conform_data x;
            sgla_status st = conform_draw(&x, c, r, SGLA_BACKEND_REF_A);
            TU_CHECK(st == SGLA_OK, "reference: %s (%s)", sgla_status_string(st), sgla_last_error());
            if (st != SGLA_OK) continue;
            sgla_forward_desc d = x.d;
            d.o = x.o64;
            sgla_cuda_plan usual = {0, 0};
            st = sgla_cuda_plan_of(&d, &usual);
            TU_CHECK(st == SGLA_OK, "sgla_cuda_plan_of: %s (%s)", sgla_status_string(st), sgla_last_error());
            const int kp = c->K <= 64 ? 64 : 128;
            /* the TF32 kernel's block with one stage: 87 KB at K = 64, 137 KB at K = 128; the mma.sync one at
             * K = 128: 137 KB with two stages */
            const int want = c->dtype == F32 ? (kp == 64 || gpu->optin >= 140 * 1024 ? SGLA_CUDA_CONFIG_F32_CHUNKED
                                                                                     : SGLA_CUDA_CONFIG_F32_RECURRENT)
                             : kp == 128 && gpu->optin < 140 * 1024 ? SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE
                                                                       : SGLA_CUDA_CONFIG_PORTABLE;
            TU_CHECK(c->T < 4096 || usual.nseg > 1, "cc %d, T = %lld on one head: %d segment(s)", gpu->cc,
                     (long long)c->T, usual.nseg);
            TU_CHECK(c->dtype == F32 || usual.cols == (c->V <= 64 ? 64 : 128), "cc %d, K=%lld V=%lld: %d columns a block",
                     gpu->cc, (long long)c->K, (long long)c->V, usual.cols);
            TU_CHECK(usual.config == want, "cc %d, K=%lld V=%lld %s: plan %d, expected %d", gpu->cc, (long long)c->K,
                     (long long)c->V, sgla_dtype_name(c->dtype), usual.config, want);
            run_plan(&x, NULL);
            conform_free(&x);
        }
        if (!small) { /* 16-bit K = 256 before Hopper: one stage of 112 KB on 64 columns of V (two column
                       * blocks here) where a block holds it (sm_80), else refused with the bytes it needs */
            const conform_case big = {BF, CONFORM_GATE_G, CONFORM_MILD, 1, 200, 2, 256, 128, 1, 1, 0, 0};
            conform_data x;
            if (conform_draw(&x, &big, r, SGLA_BACKEND_REF_A) == SGLA_OK) {
                sgla_forward_desc d = x.d;
                d.o = x.o64; /* the plan reads no data */
                sgla_cuda_plan pl;
                const sgla_status st = sgla_cuda_plan_of(&d, &pl);
                if (gpu->optin >= 114432) { /* sizeof(FwdMmaSmem<MmaShape<256, 64>, 1>), chunk_fwd_mma.cu */
                    TU_CHECK(st == SGLA_OK && pl.config == SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE && pl.cols == 64,
                             "cc %d, K = 256: %s, plan %d on %d columns (%s)", gpu->cc, sgla_status_string(st),
                             pl.config, pl.cols, sgla_last_error());
                    run_plan(&x, NULL);
                } else {
                    TU_CHECK(st == SGLA_ERR_UNSUPPORTED_SHAPE && strstr(sgla_last_error(), "mma.sync"),
                             "cc %d, K = 256: got %s (%s)", gpu->cc, sgla_status_string(st), sgla_last_error());
                }
                conform_free(&x);
            }
        }
    }
    gpu_emulate(NULL);
}

int main(void)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        printf("test_gpu_forward: no CUDA device; skipped\n");
        return 77;
    }
    uint64_t seed = tu_seed("test_gpu_forward");
    tu_rng r;
    tu_rng_init(&r, seed);
    const int small = getenv("SGLA_GPU_SMALL") != NULL;
    hopper_kernels = gpu_hopper_kernels_checked("test_gpu_forward");

    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, ALPHA = CONFORM_GATE_ALPHA, G = CONFORM_GATE_G };
    enum { MILD = CONFORM_MILD, NEAR0 = CONFORM_NEAR0, NEG30 = CONFORM_NEG30, MIX30 = CONFORM_MIX30 };
    static const conform_case all[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht, inplace, nseq */
        {BF, G, MILD, 2, 1, 2, 64, 64, 1, 1, 0, 0},
        {BF, G, MILD, 2, 63, 2, 128, 128, 0, 1, 0, 0},
        {BF, G, MILD, 2, 64, 2, 128, 128, 1, 1, 0, 0},
        {BF, G, MILD, 2, 65, 2, 256, 256, 1, 1, 0, 0},
        {BF, G, MILD, 1, 1000, 3, 128, 64, 1, 1, 0, 0},
        {BF, G, MILD, 1, 4096, 2, 64, 128, 0, 1, 0, 0},
        /* more heads than gate_b's tile takes at once (32) */
        {BF, G, MILD, 1, 200, 40, 64, 64, 1, 1, 0, 0},
        /* H a multiple of 4: K = 64 takes g by TMA (kparams.gtma), tiles of 4 heads: partial chunks, packed (a
         * tile reaches into the next sequence), the persistent grid; a split, K = 256 (V column blocks, K
         * halves) b from gate_b as before */
        {BF, G, MILD, 2, 130, 4, 64, 64, 1, 1, 0, 0},
        {HF, G, MIX30, 1, 1000, 8, 64, 64, 1, 1, 0, 5},
        {BF, G, NEG30, 1, 4096, 4, 64, 64, 0, 1, 0, 0},
        {BF, G, MILD, 2, 300, 4, 256, 256, 1, 1, 0, 0},
        {HF, G, MIX30, 1, 2000, 4, 256, 512, 1, 1, 1, 3},
        {BF, G, MILD, 1, 4096, 4, 256, 64, 1, 1, 0, 0},
        {BF, G, MILD, 64, 200, 8, 64, 64, 1, 1, 1, 0},
        {BF, G, MIX30, 1, 300, 4, 512, 64, 1, 1, 0, 0},
        {BF, G, MILD, 1, 256, 4, 64, 64, 1, 1, 0, 8, 0, 0, conform_cuts256},
        /* more than 65535 pairs: the grid's z slices (one token each, no states) */
        {BF, G, MILD, 4100, 1, 16, 128, 128, 0, 0, 0, 0},
        /* pairs enough for the persistent grid to be the usual plan (K = 64, on an H200); K = 256 with as many
         * pairs takes a block a pair */
        {BF, G, MILD, 64, 130, 8, 64, 64, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 10, 130, 8, 256, 256, 0, 1, 0, 0},
        {HF, G, MIX30, 1, 500, 33, 256, 64, 0, 1, 0, 3},
        {BF, G, NEAR0, 2, 1000, 2, 128, 128, 1, 1, 0, 0},
        {BF, G, NEG30, 1, 1000, 2, 128, 256, 0, 1, 0, 0},
        {BF, G, MIX30, 1, 1000, 2, 256, 128, 1, 1, 0, 0},
        {BF, G, CONFORM_RESET, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        /* a decay within 1e-7 of 1 over 1e5 tokens (ht's rel error is printed: docs/numerics.md) */
        {BF, G, CONFORM_NEAR1, 1, 100000, 1, 128, 128, 0, 1, 0, 0},
        {F32, G, CONFORM_NEAR1, 1, 100000, 1, 64, 64, 0, 1, 0, 0},
        {BF, GAMMA, CONFORM_NEAR1, 1, 100000, 1, 64, 64, 0, 1, 0, 0},
        /* head sizes on zero-padded copies (K, V not 64, 128, 256): h0, ht, in place, varlen, a split */
        {BF, G, MILD, 2, 130, 2, 32, 32, 1, 1, 0, 0},
        {BF, G, MILD, 1, 700, 2, 96, 64, 1, 1, 1, 0},
        {BF, GAMMA, MILD, 2, 65, 3, 64, 96, 1, 1, 0, 0},
        {BF, G, MILD, 1, 1000, 2, 16, 48, 0, 1, 0, 4},
        {BF, G, MILD, 1, 300, 2, 200, 256, 1, 1, 0, 0},
        {HF, G, MILD, 1, 129, 2, 80, 112, 1, 1, 0, 0},
        {BF, NONE, MILD, 2, 1, 2, 96, 96, 1, 1, 1, 0},
        {F32, G, MILD, 1, 200, 2, 96, 48, 1, 1, 0, 0},
        /* ... without copies where TMA pads (dense 16-bit batches): a split, K below V */
        {BF, G, MILD, 1, 4096, 1, 96, 96, 1, 1, 0, 0},
        {HF, GAMMA, MIX30, 2, 300, 2, 32, 160, 1, 1, 0, 0},
        {HF, G, MILD, 1, 3000, 2, 80, 112, 0, 0, 0, 100}, /* packed, longest first: the row copies' kt, vt */
        {BF, GAMMA, MILD, 1, 2000, 3, 48, 200, 1, 1, 0, 7},
        /* ... and over 1e6 (docs/numerics.md §7) */
        {BF, G, CONFORM_NEAR1, 1, 1000000, 1, 64, 64, 0, 1, 0, 0},
        {F32, G, CONFORM_NEAR1, 1, 1000000, 1, 64, 64, 0, 1, 0, 0},
        {BF, GAMMA, CONFORM_RESET, 1, 300, 2, 64, 64, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 2, 65, 2, 128, 128, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 1, 4096, 2, 128, 128, 0, 1, 0, 0},
        {BF, GAMMA, NEAR0, 2, 1000, 2, 64, 64, 0, 0, 0, 0},
        {BF, GAMMA, NEG30, 1, 1000, 2, 256, 64, 1, 1, 0, 0},
        {BF, ALPHA, MILD, 2, 1000, 2, 64, 256, 1, 1, 1, 0},
        {BF, NONE, MILD, 2, 63, 2, 128, 128, 1, 1, 0, 0},
        {BF, NONE, MILD, 1, 4096, 2, 64, 64, 0, 1, 0, 0},
        {BF, NONE, MILD, 2, 1000, 2, 256, 256, 0, 0, 0, 0},
        {BF, G, MILD, 1, 1000, 2, 128, 128, 1, 1, 0, 5},
        {BF, GAMMA, MILD, 1, 700, 2, 64, 128, 1, 1, 1, 4},
        {BF, NONE, MILD, 1, 300, 2, 256, 64, 0, 1, 0, 3},
        {BF, G, MIX30, 1, 4096, 2, 128, 128, 1, 1, 1, 0},
        {BF, GAMMA, NEAR0, 1, 2048, 1, 256, 256, 1, 1, 0, 0},
        {HF, G, MILD, 2, 1, 2, 128, 128, 1, 1, 1, 0},
        {HF, G, MILD, 2, 63, 2, 64, 64, 1, 1, 0, 0},
        {HF, G, MILD, 2, 64, 2, 256, 256, 0, 1, 0, 0},
        {HF, G, MILD, 2, 65, 2, 128, 64, 1, 1, 0, 0},
        {HF, G, MILD, 1, 1000, 2, 64, 256, 1, 1, 0, 0},
        {HF, G, MILD, 1, 4096, 2, 128, 128, 0, 1, 0, 0},
        {HF, G, NEAR0, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        {HF, G, NEG30, 1, 1000, 2, 64, 64, 1, 1, 0, 0},
        {HF, G, MIX30, 1, 1000, 2, 128, 256, 0, 1, 0, 0},
        {HF, GAMMA, MILD, 2, 64, 2, 256, 128, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 1, 4096, 2, 64, 64, 1, 1, 0, 0},
        {HF, GAMMA, NEAR0, 2, 1000, 2, 128, 128, 0, 1, 0, 0},
        {HF, GAMMA, NEG30, 1, 65, 2, 128, 64, 1, 1, 0, 0},
        {HF, ALPHA, MILD, 2, 1000, 2, 256, 256, 1, 1, 0, 0},
        {HF, NONE, MILD, 2, 65, 2, 64, 128, 1, 1, 0, 0},
        {HF, NONE, MILD, 1, 1000, 2, 128, 128, 0, 0, 0, 0},
        {HF, G, MILD, 1, 900, 2, 64, 64, 1, 1, 0, 6},
        {HF, NONE, MILD, 1, 500, 2, 128, 256, 1, 1, 1, 3},
        {F32, G, MILD, 2, 65, 2, 64, 64, 1, 1, 0, 0},
        {F32, GAMMA, MILD, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        {F32, NONE, MILD, 1, 63, 2, 256, 128, 0, 1, 0, 0},
        {F32, G, NEG30, 1, 300, 2, 128, 64, 1, 1, 1, 3},
        {F32, ALPHA, NEAR0, 1, 1, 2, 64, 256, 1, 1, 0, 0},
        /* V = 512 natively (more column blocks: the rows serve V up to 512), V in (256, 512) padded */
        {BF, G, MILD, 1, 300, 2, 64, 512, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 1, 700, 2, 128, 512, 1, 1, 0, 3},
        {HF, G, MIX30, 1, 1000, 2, 256, 512, 1, 1, 1, 0},
        {BF, G, MILD, 1, 2048, 1, 256, 512, 0, 1, 0, 0},
        {BF, G, MILD, 1, 200, 2, 128, 384, 1, 1, 1, 0},
        {HF, NONE, MILD, 2, 65, 2, 96, 320, 1, 1, 0, 0},
        {F32, G, MILD, 1, 100, 2, 64, 512, 1, 1, 0, 0},
        {F32, GAMMA, NEAR0, 1, 130, 2, 128, 400, 1, 1, 0, 0},
        /* K above 256: two calls on the halves of K (in place, varlen, V padded, split, every dtype) */
        {BF, G, MILD, 1, 300, 2, 512, 64, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 2, 130, 2, 384, 128, 1, 1, 1, 0},
        {BF, G, MIX30, 1, 1000, 2, 320, 96, 1, 1, 0, 3},
        {BF, NONE, MILD, 1, 2048, 1, 512, 512, 0, 1, 0, 0},
        {F32, G, MILD, 1, 100, 2, 272, 64, 1, 1, 1, 0},
        /* fp32 on the TF32 kernel: K = 128 with V = 64, varlen with states, head sizes padded, T = 1 */
        {F32, G, MILD, 2, 1000, 2, 128, 64, 1, 1, 0, 0},
        {F32, G, MIX30, 1, 900, 2, 128, 128, 1, 1, 1, 5},
        {F32, GAMMA, MILD, 1, 300, 3, 32, 80, 1, 1, 0, 0},
        {F32, G, MILD, 3, 1, 2, 128, 256, 1, 1, 0, 0},
        {F32, NONE, MILD, 1, 4096, 1, 64, 128, 0, 1, 0, 0},
        /* packed batches without states: more blocks than the SMs hold take the sequences longest
         * first (the first two), fewer run in order */
        {BF, G, MILD, 1, 8000, 2, 128, 128, 0, 0, 0, 150},
        {HF, GAMMA, MIX30, 1, 6000, 3, 64, 64, 0, 0, 0, 200},
        {BF, NONE, MILD, 1, 700, 2, 64, 128, 0, 0, 0, 2},
        {BF, G, NEG30, 1, 300, 2, 96, 48, 0, 0, 0, 5},
        /* the same with gate g's b (gate_b.cu reads the offsets as given, the kernel the ordered pairs), and
         * with g by TMA (H % 4 == 0: the kernel's tiles at the ordered pairs' tokens) */
        {BF, G, MIX30, 1, 9000, 2, 64, 64, 0, 0, 0, 160},
        {BF, G, MIX30, 1, 9000, 4, 64, 64, 0, 0, 0, 160},
        {HF, G, MILD, 1, 5000, 2, 256, 64, 0, 0, 0, 150},
        /* fixed cuts (conform_cuts256): empty first and last sequences, lengths 1, 63, 65, starts on and
         * off chunk boundaries, with states and without, every row */
        {BF, G, MILD, 1, 256, 3, 64, 64, 1, 1, 0, 8, 0, 0, conform_cuts256},
        {BF, GAMMA, MIX30, 1, 256, 2, 128, 128, 1, 1, 1, 8, 0, 0, conform_cuts256},
        {HF, G, MILD, 1, 256, 2, 256, 64, 0, 1, 0, 8, 0, 0, conform_cuts256},
        {BF, NONE, MILD, 1, 256, 2, 128, 256, 0, 0, 0, 8, 0, 0, conform_cuts256},
        {F32, G, MILD, 1, 256, 2, 128, 64, 1, 1, 0, 8, 0, 0, conform_cuts256},
    };
    static const conform_case smalls[] = {
        {BF, G, MILD, 1, 130, 2, 64, 64, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 1, 70, 1, 128, 128, 1, 1, 1, 0},
        {BF, NONE, MILD, 1, 65, 1, 256, 64, 0, 1, 0, 0},
        {BF, G, MILD, 1, 150, 1, 128, 64, 1, 1, 0, 3},
        {BF, G, MILD, 1, 200, 1, 64, 128, 1, 1, 0, 4}, /* two output warpgroups, sequence tails */
        {F32, G, MILD, 1, 20, 1, 64, 64, 1, 1, 0, 0},
        {F32, GAMMA, MILD, 1, 150, 1, 128, 128, 1, 1, 1, 2}, /* the TF32 kernel, in place, varlen */
        {BF, G, MILD, 1, 1024, 1, 64, 64, 1, 1, 1, 0}, /* sequence split (2 segments) */
        {BF, G, MILD, 1, 100, 2, 96, 48, 1, 1, 1, 2},  /* padded head sizes, in place, varlen */
        {BF, G, MILD, 1, 1200, 2, 64, 64, 0, 0, 0, 100}, /* varlen without states, 200 blocks: longest first */
        {BF, G, MILD, 2, 300, 4, 64, 64, 1, 1, 0, 0},    /* H % 4 == 0 at K = 64: g by TMA (kparams.gtma) */
        {BF, G, MIX30, 1, 300, 4, 64, 64, 1, 1, 0, 3},   /* ... packed (a tile reaches into the next sequence) */
        {BF, G, MILD, 128, 130, 4, 64, 64, 1, 1, 0, 0},  /* ... the persistent grid (512 pairs): the ring across items */
        {BF, G, MILD, 1, 1024, 4, 64, 64, 1, 1, 0, 0},   /* ... a split: b from gate_b */
        {BF, G, MIX30, 1, 300, 4, 256, 64, 1, 1, 0, 3},  /* K = 256, packed: b from gate_b */
    };
    const conform_case *list = small ? smalls : all;
    int nlist = small ? (int)(sizeof smalls / sizeof smalls[0]) : (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < nlist; i++) run_case(&list[i], &r, !small);
    emulated_gpus(&r, small);
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    error_paths(stream);
    fresh_thread_call();
    if (!small) {
        workspace_and_graphs(stream, &r);
        repeat_bits_g(stream, &r);
        workspace_gate_b(stream, &r);
    }
    CK(cudaStreamDestroy(stream));
    printf("%d runs\n", n_run);
    return tu_finish("test_gpu_forward");
}
