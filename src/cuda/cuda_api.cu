/* The CUDA backend's front: device query, shape/dtype/chunk checks, the
 * optional device-value check, and dispatch to a kernel version.
 * Version list (each file's top comment says what it tries):
 *   1  fwd_tc_v1.cu  article's serial-in-block kernel, mma.sync, BV up to 128
 *   2  fwd_tc_v2.cu  BV halved: two 4-warp blocks per SM, Q in registers
 *   3  fwd_tc_v2.cu  as 2, BV = 16 at K = 64
 *   4  fwd_tc_v2.cu  as 3, K = 256 single-stage (two blocks per SM)
 *   5  fwd_tc_v5.cu  v1 with Q.K^T split across the column-group pair (no
 *                    duplicate), fused into the Q.S k-loop, balanced
 *                    sub-partitions, double-buffered S_s (one barrier a chunk)
 *   6  fwd_tc_v6.cu  EXPERIMENTAL: wgmma (sm_90a) for all four products, two
 *                    warpgroups each owning half of the V columns
 *   7  fwd_tc_v7.cu  v5's body with 16 warps (latency-bound at 8: twice the
 *                    warps per scheduler, same work per chunk)
 *   8  fwd_tc_v8.cu  wgmma, warpgroups specialised: WG 0 the outputs, WG 1 the
 *                    state, concurrently on one chunk; 3 cp.async stages
 *   9  fwd_tc_v9.cu  v8 with a producer warpgroup issuing every copy (mbarrier
 *                    stages), the compute warps never stall on the LSU
 *  10  fwd_tc_v9.cu  v9 with two producer warpgroups (twice the copies in flight)
 *  11  fwd_tc_v11.cu v9 with TMA copies (one producer thread, 128-byte swizzled tiles),
 *                    more stages where shared memory allows
 *  12  fwd_tc_v11.cu v11 with o stored by TMA from its own tile (stages released earlier)
 *  13  fwd_tc_v11.cu v12 with two output warpgroups taking alternate chunks at K = 64;
 *                    other K: v12 (default)
 * fp32 inputs always go to fwd_f32.cu (CUDA cores, exact-ish). */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "sgla_dev.cuh"
#include "sgla_cuda.h"

extern "C" sgla_status sgla_cuda_launch_tc_v1(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v2(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v3(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v4(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v5(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v6(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v7(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v8(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v9(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v10(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v11(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v12(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);
extern "C" sgla_status sgla_cuda_launch_tc_v13(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);

typedef sgla_status (*tc_launcher)(const sgla_kparams *, sgla_dtype, cudaStream_t);
typedef struct version_entry {
    tc_launcher fn;
    const char *desc;
} version_entry;

static const version_entry versions[] = {
    {sgla_cuda_launch_tc_v1, "v1: serial-in-block, mma.sync m16n8k16, BV=128@K128 (8 warps), 2-stage cp.async"},
    {sgla_cuda_launch_tc_v2, "v2: as v1 with BV halved (4 warps, 2 blocks/SM), Q fragments in registers, o staged in Q"},
    {sgla_cuda_launch_tc_v3, "v3: as v2 but BV=16 at K=64 (4 blocks/SM at D=64)"},
    {sgla_cuda_launch_tc_v4, "v4: as v3 but K=256 single-stage BV=32 (2 blocks/SM, split doubles the grid)"},
    {sgla_cuda_launch_tc_v5, "v5: as v1 with Q.K^T split over the warp pair (no duplicate), fused with Q.S, 8 warps, S_s double-buffered"},
    {sgla_cuda_launch_tc_v6, "v6 (experimental): wgmma m64nNk16 for Q.S, Q.K^T, A.V, K^T.V; 2 warpgroups, each half of BV"},
    {sgla_cuda_launch_tc_v7, "v7: v5 with 16 warps (4 row blocks x 4 column groups, 128 regs max)"},
    {sgla_cuda_launch_tc_v8, "v8: wgmma, WG 0 outputs / WG 1 state on the same chunk, 3 cp.async stages, S_s double-buffered"},
    {sgla_cuda_launch_tc_v9, "v9: v8 with a producer warpgroup (all cp.async, mbarrier stages, setmaxnreg 40 / 232); WG 0 / WG 1 hand S over by named barriers"},
    {sgla_cuda_launch_tc_v10, "v10: v9 with two producer warpgroups (16 warps, setmaxnreg 32 / 224)"},
    {sgla_cuda_launch_tc_v11, "v11: v9 with TMA loads (one producer thread, 128-byte swizzle), 6/4/3/2 stages; T=0: v9"},
    {sgla_cuda_launch_tc_v12, "v12: v11 with o stored by TMA from its own tile, stages released after A.V; T=0: v9"},
    {sgla_cuda_launch_tc_v13, "v13: v12 with two output warpgroups on alternate chunks at K=64 (16 warps); other K: v12"},
};
#define NVERSIONS ((int)(sizeof versions / sizeof versions[0]))
/* The version a plain call runs.  Measured on the H200 (docs/perf.md,
 * 2026-11-29, bf16, ms, g_gamma / g): v13 (= v12 but at K = 64) 0.137 / 0.134
 * at 8x4096x16x128 (v9 0.221 / 0.224), 0.134 / 0.158 at 4x8192x32x64 (v12 0.181
 * / 0.196, v9 0.228 / 0.244), 0.459 / 0.498 at 2x16384x8x256 (v9 0.801 /
 * 0.806), v12 0.269 / 0.277 at 64x1024x16x128 (v9 0.436 / 0.441).  With
 * T = 0 it runs v9. */
static int default_version_for(int64_t K)
{
    (void)K;
    return 13;
}

extern "C" int sgla_cuda_num_versions(void) { return NVERSIONS; }
extern "C" const char *sgla_cuda_version_desc(int v)
{
    if (v == 0) return "default: v13";
    return v >= 1 && v <= NVERSIONS ? versions[v - 1].desc : "no such version";
}

extern "C" int sgla_cuda_available(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return 0;
    }
    if (n < 1) {
        sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "no CUDA device present");
        return 0;
    }
    return 1;
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

/* SGLA_FLAG_CHECK_DEVICE_VALUES: copy g, g_gamma, cu_seqlens to the host and run
 * the library's own value checks on the copies (synchronises the stream). */
static sgla_status check_device_values(const sgla_forward_desc *d, cudaStream_t st)
{
    sgla_status rc = SGLA_OK;
    float *hg = NULL, *hgg = NULL;
    int64_t *hcu = NULL;
    size_t ng = (size_t)(d->B * d->T * d->H);
    cudaError_t e = cudaSuccess;
    if (d->g && ng) {
        hg = (float *)malloc(ng * sizeof(float));
        if (!hg) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "host copy of g (%zu floats)", ng);
        e = cudaMemcpyAsync(hg, d->g, ng * sizeof(float), cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess) { rc = sgla_fail(SGLA_ERR_CUDA, "cudaMemcpyAsync(g to host): %s", cudaGetErrorString(e)); goto done; }
    }
    if (d->g_gamma) {
        hgg = (float *)malloc((size_t)d->H * sizeof(float));
        if (!hgg) { rc = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "host copy of g_gamma"); goto done; }
        e = cudaMemcpyAsync(hgg, d->g_gamma, (size_t)d->H * sizeof(float), cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess) { rc = sgla_fail(SGLA_ERR_CUDA, "cudaMemcpyAsync(g_gamma to host): %s", cudaGetErrorString(e)); goto done; }
    }
    if (d->cu_seqlens) {
        hcu = (int64_t *)malloc((size_t)(d->num_seqs + 1) * sizeof(int64_t));
        if (!hcu) { rc = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "host copy of cu_seqlens"); goto done; }
        e = cudaMemcpyAsync(hcu, d->cu_seqlens, (size_t)(d->num_seqs + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess) { rc = sgla_fail(SGLA_ERR_CUDA, "cudaMemcpyAsync(cu_seqlens to host): %s", cudaGetErrorString(e)); goto done; }
    }
    e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) { rc = sgla_fail(SGLA_ERR_CUDA, "cudaStreamSynchronize (device value check): %s", cudaGetErrorString(e)); goto done; }
    {
        sgla_forward_desc hd = *d;
        hd.g = d->g ? (hg ? hg : d->g) : NULL;
        hd.g_gamma = hgg;
        hd.cu_seqlens = hcu;
        hd.flags &= ~(SGLA_FLAG_CHECK_FINITE | SGLA_FLAG_SKIP_VALUE_CHECK);
        rc = sgla_validate(&hd, 1);
    }
done:
    free(hg);
    free(hgg);
    free(hcu);
    return rc;
}

static sgla_status run_version(const sgla_forward_desc *d, int version)
{
    if (version == 0) version = default_version_for(d->K);
    if (version < 1 || version > NVERSIONS)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA kernel version %d does not exist (1..%d)", version, NVERSIONS);
    if (!((d->K == 64 || d->K == 128 || d->K == 256) && (d->V == 64 || d->V == 128 || d->V == 256)))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: K = %lld, V = %lld; each must be 64, 128 or 256",
                         (long long)d->K, (long long)d->V);
    if (d->chunk != 64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_CHUNK, "CUDA backend: chunk = %lld, only 64 is supported", (long long)d->chunk);
    if (d->dtype != SGLA_F32 && d->dtype != SGLA_F16 && d->dtype != SGLA_BF16)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CUDA backend: dtype %d", (int)d->dtype);
    if (d->T > 0 && !(is_aligned(d->q, 16) && is_aligned(d->k, 16) && is_aligned(d->v, 16) && is_aligned(d->o, 16)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: q, k, v and o must be 16-byte aligned");
    if ((d->h0 && !is_aligned(d->h0, 8)) || (d->ht && !is_aligned(d->ht, 8)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: h0 and ht must be 8-byte aligned");
    int64_t N = sgla_num_sequences(d);
    if (N * d->H > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: N*H = %lld exceeds the grid", (long long)(N * d->H));
    cudaStream_t st = (cudaStream_t)d->stream;
    if ((d->flags & SGLA_FLAG_CHECK_DEVICE_VALUES) && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK)) {
        sgla_status rc = check_device_values(d, st);
        if (rc != SGLA_OK) return rc;
    }
    if (N * d->H == 0 || (d->T == 0 && !d->ht)) return SGLA_OK; /* nothing to write */

    sgla_kparams p;
    memset(&p, 0, sizeof p);
    p.q = d->q;
    p.k = d->k;
    p.v = d->v;
    p.o = d->o;
    p.g = d->g;
    p.g_gamma = d->g_gamma;
    p.h0 = d->h0;
    p.ht = d->ht;
    p.cu = d->cu_seqlens;
    p.T = d->T;
    p.H = d->H;
    p.K = d->K;
    p.V = d->V;
    p.N = N;
    p.scale = d->scale;
    p.nseg = 1;
    p.gmode = d->g ? SGLA_GATE_G : (d->g_gamma ? SGLA_GATE_GAMMA : SGLA_GATE_NONE);
    if (d->dtype == SGLA_F32) return sgla_cuda_launch_f32(&p, st);
    return versions[version - 1].fn(&p, d->dtype, st);
}

/* SGLA_CUDA_VERSION=<n> picks a kernel version for benchmarking and tests
 * (read on every call, so a script can switch versions in one process;
 * anything that is not a number means the default). */
extern "C" sgla_status sgla_cuda_forward(const sgla_forward_desc *d)
{
    const char *e = getenv("SGLA_CUDA_VERSION");
    int v = e ? atoi(e) : 0;
    return run_version(d, v > 0 ? v : 0);
}

extern "C" sgla_status sgla_cuda_forward_version(const sgla_forward_desc *d, int version)
{
    sgla_status st = sgla_validate(d, 0);
    if (st != SGLA_OK) return st;
    if (!sgla_cuda_available()) return SGLA_ERR_BACKEND_UNAVAILABLE;
    return run_version(d, version);
}
