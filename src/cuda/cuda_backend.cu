/* The CUDA backend's host side: device facts cached per device, the checks of
 * the CUDA contract (sgla.h), the plan of a call (configuration row, sequence
 * split, workspace), the launches, and the backend's entry in the dispatch
 * table.  Kernels: chunk_fwd.cuh (bf16 / fp16), chunk_fwd_tf32.cu and
 * recurrent_fwd_f32.cu (fp32). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_fwd.cuh"
#include "core/backend.h"
#include "cuda/cuda_dev.h"
#include "cuda_backend.cuh"

/* ---- device facts, found once per device ------------------------------------------ */

enum { MAX_DEVICES = 64 };

typedef struct device_facts {
    int state;          /* 0 not looked at, 1 usable, -1 not usable (why says why) */
    char why[192];
    int sms, cc;        /* cc: compute capability, 10 major + minor */
    int hopper;         /* the sm_90a kernels run here (an H100 / H200 and a build with them) */
    int mma_fwd;        /* the mma.sync forward (chunk_fwd_mma.cu) runs here */
    int tf32_fwd;       /* the fp32 forward on TF32 tensor cores (chunk_fwd_tf32.cu) runs here ... */
    int optin;          /* ... where its block's shared memory fits this (bytes a block) */
    int bwd_tc, bwd_cc; /* the tensor-core / CUDA-core backward fit its shared memory */
    int pool_wide;      /* the pool's whole-row decode blocks (pool_fwd.cu) run here */
    int blocks_per_sm[2][SGLA_NUM_CHUNK_CONFIGS]; /* [f16, bf16][row], Hopper only */
} device_facts;

static device_facts devices[MAX_DEVICES];
static pthread_mutex_t devices_mutex = PTHREAD_MUTEX_INITIALIZER;
static int emulate_cc, emulate_optin; /* sgla_cuda_dev_emulate (0: the device's own) */

static const sgla_chunk_kernel *chunk_kernels(sgla_dtype dt)
{
    return dt == SGLA_BF16 ? sgla_chunk_fwd_bf16 : sgla_chunk_fwd_f16;
}

/* Attributes, the shared-memory opt-in of every instance and its occupancy (find_facts). */
static void find_facts_of(int dev, device_facts *f)
{
    int major = 0, minor = 0, optin = 0;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&f->sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess) {
        snprintf(f->why, sizeof f->why, "device %d: cudaDeviceGetAttribute: %s", dev, cudaGetErrorString(e));
        f->state = -1;
        return;
    }
    if (major < 8) {
        snprintf(f->why, sizeof f->why,
                 "device %d has compute capability %d.%d; the kernels need 8.0 or newer (Ampere, Ada, Hopper)", dev,
                 major, minor);
        f->state = -1;
        return;
    }
    if (emulate_cc) { /* a smaller GPU, for the tests (sgla_cuda_dev_emulate) */
        major = emulate_cc / 10, minor = emulate_cc % 10;
        if (optin > emulate_optin) optin = emulate_optin;
    }
    f->cc = 10 * major + minor;
    {   /* the Hopper kernels: on sm_90 with their sm_90a code in this build.  A build may carry only the PTX
         * of sm_80, which the driver compiles for sm_90 too, but where the Hopper kernels are stubs: the
         * target the function was compiled for (ptxVersion) tells them apart */
        cudaFuncAttributes at;
        f->hopper = major == 9 && minor == 0 &&
                    cudaFuncGetAttributes(&at, (const void *)chunk_kernels(SGLA_BF16)[0].fn) == cudaSuccess &&
                    at.ptxVersion >= 90;
        (void)cudaGetLastError(); /* a missing image is not an error of the caller's */
    }
    for (int t = 0; f->hopper && t < 2; t++)
        for (int r = 0; r < SGLA_NUM_CHUNK_CONFIGS; r++) {
            const sgla_chunk_kernel *k = &chunk_kernels(t ? SGLA_BF16 : SGLA_F16)[r];
            const void *fn = (const void *)k->fn;
            if ((int)k->smem > optin) {
                snprintf(f->why, sizeof f->why, "device %d allows %d bytes of shared memory a block; row %d needs %u",
                         dev, optin, r, k->smem);
                f->state = -1;
                return;
            }
            if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k->smem)) !=
                    cudaSuccess ||
                (e = cudaFuncSetAttribute((const void *)k->fn_packed, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)k->smem)) != cudaSuccess ||
                (k->fn_local && /* (at most 227 KB, as every Hopper block holds: ChunkSmemChecks) */
                 (e = cudaFuncSetAttribute((const void *)k->fn_local, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)k->smem_local)) != cudaSuccess) ||
                (k->fn_persist && (e = cudaFuncSetAttribute((const void *)k->fn_persist,
                                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                            (int)k->smem)) != cudaSuccess) ||
                (k->fn_scan && /* the pool's instances where the row reads b (chunk_fwd.cuh: GS) */
                 ((e = cudaFuncSetAttribute((const void *)k->fn_scan, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)k->smem)) != cudaSuccess ||
                  (e = cudaFuncSetAttribute((const void *)k->fn_packed_scan,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k->smem)) != cudaSuccess)) ||
                (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f->blocks_per_sm[t][r], fn, k->threads,
                                                                   k->smem)) != cudaSuccess) {
                snprintf(f->why, sizeof f->why, "device %d, configuration row %d: %s", dev, r, cudaGetErrorString(e));
                f->state = -1;
                return;
            }
            for (int m = 0; m < 5; m++) { /* the backward's passes */
                const sgla_chunk_kernel *kb = &(t ? sgla_chunk_bwd3_bf16 : sgla_chunk_bwd3_f16)[m][r];
                if (!kb->fn) continue; /* no merged pass, or no q tile, on this row */
                if ((e = cudaFuncSetAttribute((const void *)kb->fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)kb->smem)) != cudaSuccess ||
                    (e = cudaFuncSetAttribute((const void *)kb->fn_packed, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)kb->smem)) != cudaSuccess) {
                    snprintf(f->why, sizeof f->why, "device %d, backward pass %d of row %d: %s", dev, m, r,
                             cudaGetErrorString(e));
                    f->state = -1;
                    return;
                }
            }
        }
    /* the other kernels where their shared memory fits (an sm_86 / sm_89 block has 99 KB) */
    f->mma_fwd = (int)sgla_fwd_mma_smem(SGLA_BF16, 64, 64, 1) <= optin && sgla_fwd_mma_setup(optin) == cudaSuccess;
    f->optin = optin;
    f->tf32_fwd = sgla_fwd_tf32_setup(optin) == cudaSuccess;
    (void)sgla_pool_setup(optin, &f->pool_wide); /* the carveout is a preference: the pool runs without it */
    /* the backward's kernels where some shape fits; each call checks its own (bwd_plan_of) */
    f->bwd_tc = (int)sgla_bwd_tc_smem(SGLA_BF16, 64, 64, 1) <= optin && sgla_bwd_tc_setup(optin) == cudaSuccess;
    f->bwd_cc = (int)sgla_bwd_grads_smem(64, 64, 0) <= optin && sgla_bwd_grads_setup(optin) == cudaSuccess;
    if (!f->hopper && !f->mma_fwd) {
        snprintf(f->why, sizeof f->why, "device %d (compute capability %d.%d, %d bytes of shared memory a block): "
                 "no forward kernel of this build runs on it", dev, major, minor, optin);
        f->state = -1;
        return;
    }
    f->state = 1;
}

/* The facts of device dev; whichever way find_facts_of ends (a refused attribute is a fact about the
 * device, not an error of the caller's), the runtime's last error is left clean. */
static void find_facts(int dev, device_facts *f)
{
    find_facts_of(dev, f);
    (void)cudaGetLastError();
}

/* The facts of the calling thread's current device (state 1 or -1), or NULL
 * with why filled when there is no device at all. */
static const device_facts *current_device(char *why, size_t n)
{
    int count = 0, dev = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        /* no driver reads as "driver version is insufficient": say what it means */
        if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || e == cudaSuccess)
            snprintf(why, n, "no NVIDIA GPU or driver on this machine (cudaGetDeviceCount: %s)",
                     e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
        else
            snprintf(why, n, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return NULL;
    }
    if ((e = cudaGetDevice(&dev)) != cudaSuccess) {
        snprintf(why, n, "cudaGetDevice: %s", cudaGetErrorString(e));
        return NULL;
    }
    if (dev < 0 || dev >= MAX_DEVICES) {
        snprintf(why, n, "device %d: only devices 0..%d are served", dev, MAX_DEVICES - 1);
        return NULL;
    }
    device_facts *f = &devices[dev];
    if (__atomic_load_n(&f->state, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&devices_mutex);
        if (f->state == 0) {
            device_facts tmp;
            memset(&tmp, 0, sizeof tmp);
            find_facts(dev, &tmp);
            const int state = tmp.state;
            tmp.state = 0;
            *f = tmp; /* still 0 for the readers that do not hold the lock */
            __atomic_store_n(&f->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&devices_mutex);
    }
    if (f->state < 0) snprintf(why, n, "%s", f->why);
    return f;
}

extern "C" void sgla_cuda_dev_emulate(int cc, int optin)
{
    pthread_mutex_lock(&devices_mutex);
    emulate_cc = cc > 0 ? cc : 0;
    emulate_optin = cc > 0 ? optin : 0;
    for (int i = 0; i < MAX_DEVICES; i++) __atomic_store_n(&devices[i].state, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&devices_mutex);
}

static int cuda_probe(char *why, size_t n)
{
    const device_facts *f = current_device(why, n);
    return f && f->state == 1;
}

/* cuTensorMapEncodeTiled and cuCtxGetCurrent, fetched once from the driver (the library does not link libcuda) */
typedef CUresult (*tma_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                  const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static tma_encode_fn tma_encode;
typedef CUresult (*ctx_current_fn)(CUcontext *);
static ctx_current_fn ctx_current;
static pthread_once_t tma_once = PTHREAD_ONCE_INIT;
static void find_tma_encoder(void)
{
    void *f = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        tma_encode = (tma_encode_fn)f;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f, 4000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        ctx_current = (ctx_current_fn)f;
}

/* ---- the plan of a call ------------------------------------------------------------- */

static size_t align256(size_t x) { return (x + 255) / 256 * 256; }
/* gate g's b (gate_b.cu): token rows a head, and its bytes in a workspace */
static int64_t gate_b_ld(const sgla_forward_desc *d) { return (d->cu_seqlens ? 1 : d->B) * d->T; }
static size_t gate_b_bytes(const sgla_forward_desc *d) { return (size_t)(d->H * gate_b_ld(d)) * sizeof(float); }

typedef struct plan {
    int row;            /* configuration row (-1: none, fp32) */
    int f32;            /* fp32: its SGLA_CUDA_CONFIG_F32_* row (the chunked TF32 kernel on wgmma or mma.sync, or
                           the token recurrence); 0 for 16-bit inputs */
    int f32_nst;        /* the TF32 kernel's stages of q, k, v (2, or 1 where a block cannot hold two) */
    int nseg;           /* time segments (1: no split) */
    int64_t seg_len;    /* tokens per segment, a multiple of 64 */
    size_t ws_bytes;    /* workspace of the split, or of the sequence order; in the forward's plan
                         * (plan_call) also gate g's b after them */
    size_t gb_off;      /* b's offset in the workspace (gb_ld > 0) */
    int64_t gb_ld;      /* gate g, a row that reads b: token rows a head (0: none) */
    int sms;            /* the device's SMs (plan_call: gate_b's grid) */
    int portable;       /* the mma.sync path (GPUs before Hopper, or forced): its stages of q, k, v (2 or 1) */
    int mcols;          /* ... and its columns of V a block (64 or 128) */
    int order;          /* cu_seqlens: the blocks take the sequences longest first */
    int persist;        /* blocks along x of a persistent grid (the row's fn_persist; 0: a block a pair) */
    int seg_sub;        /* a split's first pass on pieces seg_sub times shorter than its segments (1: none) */
} plan;

/* The mma.sync path's columns of V a block: 64 at K = 256 (the state's registers) and where V is 64;
 * else 128 */
static int mma_cols(const sgla_forward_desc *d)
{
    return d->K == 256 || d->V % 128 ? 64 : 128;
}

static int row_serves(int r, const sgla_forward_desc *d)
{
    const sgla_chunk_config *c = &sgla_chunk_configs[r];
    return c->K == d->K && d->V % c->bv == 0;
}

/* Segments for a sequence split: enough to fill the SMs when the `base` blocks a segment has (bps of
 * them an SM) alone leave them idle, each at least 512 tokens, at most 64.  1 = no split. */
static int fill_segments(const sgla_forward_desc *d, const device_facts *f, int64_t base, int bps)
{
    if (d->cu_seqlens || d->T < 1024) return 1;
    int64_t nseg = (int64_t)f->sms * (bps > 0 ? bps : 1) / base;
    if (nseg > d->T / 512) nseg = d->T / 512;
    if (nseg > 64) nseg = 64;
    return nseg >= 2 ? (int)nseg : 1;
}
/* a Hopper row's blocks a segment (N*H*(V/BV)) and the blocks an SM holds */
static int64_t row_blocks(const sgla_forward_desc *d, int row)
{
    return sgla_num_sequences(d) * d->H * (d->V / sgla_chunk_configs[row].bv);
}
static int row_bps(const sgla_forward_desc *d, const device_facts *f, int row)
{
    return f->blocks_per_sm[d->dtype == SGLA_BF16][row];
}
/* ... for a Hopper row */
static int auto_segments(const sgla_forward_desc *d, const device_facts *f, int row)
{
    return fill_segments(d, f, row_blocks(d, row), row_bps(d, f, row));
}

/* The row a call with head sizes K, V takes (-1: none) */
static int row_for(int64_t K, int64_t V)
{
    for (int r = 0; r < SGLA_NUM_CHUNK_CONFIGS; r++) {
        const sgla_chunk_config *c = &sgla_chunk_configs[r];
        if (c->K == K && V >= c->v_min && V <= c->v_max) return r;
    }
    return -1;
}

static int qkvo_aligned16(const sgla_forward_desc *d);

/* a split's workspace: a state and a total decay a (segment, sequence x head) */
static size_t split_ws(int64_t nseg, int64_t nhc, int64_t kv) { return (size_t)(nseg * nhc * kv + nseg * nhc) * sizeof(float); }

/* The split: the segments forced, else auto_nseg; whole chunks each (fewer where T is short), and
 * their workspace (split_sub may cut the first pass's segments in pieces and take more) */
static sgla_status split_plan(const sgla_forward_desc *d, const sgla_cuda_plan *force, int auto_nseg, plan *pl)
{
    int nseg = auto_nseg;
    if (force && force->nseg > 0) {
        if (force->nseg > 1 && d->cu_seqlens)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: no sequence split with cu_seqlens");
        nseg = force->nseg;
    }
    if (nseg <= 1) return SGLA_OK;
    int64_t seg_len = (d->T + nseg - 1) / nseg;
    seg_len = (seg_len + 63) / 64 * 64;
    pl->nseg = (int)((d->T + seg_len - 1) / seg_len);
    pl->seg_len = seg_len;
    if (pl->nseg == 1) return SGLA_OK;
    const int64_t nhc = sgla_num_sequences(d) * d->H;
    if ((int64_t)pl->nseg * nhc > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: %d segments x N*H = %lld exceed the grid", pl->nseg,
                         (long long)nhc);
    pl->ws_bytes = split_ws(pl->nseg, nhc, d->K * d->V);
    return SGLA_OK;
}

/* A split's first pass makes the local states of the segments before the last alone: N*H*(V/BV) x
 * (nseg - 1) blocks, which leave SMs idle where there are few pairs (2x16384x8x256: 64 of 132 while
 * the outputs' pass has 128).  Its segments are then cut in seg_sub pieces, as many as fill the SMs
 * once (a divisor of a segment's chunks, so that the pieces meet the segments' starts); the scan
 * runs over the pieces and the outputs' pass reads every seg_sub-th (split_steps).  The Hopper rows,
 * the forward and the backward's passes (the mma.sync kernels read slot s). */
static sgla_status split_sub(const sgla_forward_desc *d, const device_facts *f, const sgla_cuda_plan *force, plan *pl)
{
    const int want = force ? force->sub : 0;
    if (want < 0) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: %d pieces a segment forced", want);
    const int64_t chunks = pl->seg_len / 64;
    if (pl->nseg < 2 || pl->row < 0 || pl->portable) {
        if (want > 1)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: %d pieces a segment forced where %s", want,
                             pl->nseg < 2 ? "there is no split" : "the mma.sync path splits");
        return SGLA_OK;
    }
    int64_t r = want;
    if (want > 1 && chunks % want)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: %d pieces a segment do not divide its %lld chunks",
                         want, (long long)chunks);
    if (want == 0) {
        const int bps = row_bps(d, f, pl->row);
        r = (int64_t)f->sms * (bps > 0 ? bps : 1) / (row_blocks(d, pl->row) * (pl->nseg - 1));
        if (r > chunks) r = chunks;
        while (r > 1 && chunks % r) r--;
    }
    if (r > 1 && ((pl->nseg - 1) * r + 1) * sgla_num_sequences(d) * d->H > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: %lld pieces x N*H exceed the grid",
                         (long long)((pl->nseg - 1) * r + 1));
    if (r > 1) {
        pl->seg_sub = (int)r;
        pl->ws_bytes = split_ws((pl->nseg - 1) * r + 1, sgla_num_sequences(d) * d->H, d->K * d->V);
    }
    return SGLA_OK;
}

/* A persistent grid for a Hopper row that has one: each block's set-up and drain (barriers, the first
 * TMA loads, the last o stores) is paid once an SM instead of once a (sequence, head) pair.  Taken where
 * there are more than two pairs a block slot and the sequences are no longer than the row's
 * sgla_persist_tokens (its measurements there).  Dense batches without a split only: the grid walks
 * pairs in a fixed order, which suits pairs of one length (packed batches of mixed lengths ran 19 %
 * slower). */
static sgla_status persist_plan(const sgla_forward_desc *d, const device_facts *f, const sgla_cuda_plan *force, int bps,
                                plan *pl)
{
    const int want = force ? force->blocks : 0;
    const int can = sgla_row_persists(sgla_chunk_configs[pl->row].K) && !d->cu_seqlens && pl->nseg == 1;
    if (want > 0 && !can)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: no persistent grid here (K = %lld, %s, %d "
                         "segments)", (long long)d->K, d->cu_seqlens ? "cu_seqlens" : "dense", pl->nseg);
    const int64_t pairs = sgla_num_sequences(d) * d->H;
    const int64_t cols = d->V / sgla_chunk_configs[pl->row].bv;
    int64_t n = (int64_t)f->sms * (bps > 0 ? bps : 1) / cols; /* the block slots of a column */
    if (n < 1) n = 1;
    if (want > 0) n = want;
    else if (want < 0 || !can || d->T > sgla_persist_tokens(sgla_chunk_configs[pl->row].K) || pairs <= 2 * n)
        return SGLA_OK;
    pl->persist = (int)(n < pairs ? n : pairs);
    return SGLA_OK;
}

static sgla_status make_plan(const sgla_forward_desc *d, const device_facts *f, const sgla_cuda_plan *force, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->row = -1;
    pl->nseg = 1;
    pl->seg_sub = 1;
    if (force && (force->config < SGLA_CUDA_CONFIG_F32_HOPPER || force->nseg < 0))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: no plan (row %d, %d segments)", force->config,
                         force->nseg);
    const int f32_plan = force && (force->config == SGLA_CUDA_CONFIG_F32_CHUNKED ||
                                   force->config == SGLA_CUDA_CONFIG_F32_HOPPER ||
                                   force->config == SGLA_CUDA_CONFIG_F32_RECURRENT);
    if (force && force->config != -1 && (d->dtype == SGLA_F32) != f32_plan)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: plan %d is not one for %s inputs", force->config,
                         d->dtype == SGLA_F32 ? "fp32" : "16-bit");
    const int force_portable = force && (force->config == SGLA_CUDA_CONFIG_PORTABLE ||
                                         force->config == SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE);
    if (force && d->dtype == SGLA_F32 && force->nseg > 1)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: the fp32 path has no sequence split");
    /* (which widths serve: the mma.sync plan below) */
    if (force && force->cols && ((f->hopper && !force_portable) || d->dtype == SGLA_F32))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: %d columns a block forced: a width of the mma.sync "
                         "path alone (16-bit inputs)", force->cols);
    if (force && (force->blocks < -1 || (force->blocks > 0 && (d->dtype == SGLA_F32 || force_portable || !f->hopper))))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: no plan with %d blocks a column here (a persistent "
                         "grid runs the Hopper rows that have one)", force->blocks);
    if (d->T == 0) return SGLA_OK;
    if (d->dtype == SGLA_F32) {
        /* the tensor cores where the kernel serves the shape; the token recurrence for the rest */
        const int nst = (int)sgla_fwd_tf32_smem(d->K, 2) <= f->optin ? 2 : 1;
        const int shape_ok = f->tf32_fwd && sgla_fwd_tf32_supported(d->K, d->V) && qkvo_aligned16(d);
        const int chunked = shape_ok && (int)sgla_fwd_tf32_smem(d->K, nst) <= f->optin;
        const int wg = shape_ok && f->hopper && (int)sgla_fwd_wgtf32_smem(d->K) <= f->optin;
        const int want = force && force->config != -1 ? force->config
                         : wg                         ? SGLA_CUDA_CONFIG_F32_HOPPER
                         : chunked                    ? SGLA_CUDA_CONFIG_F32_CHUNKED
                                                      : SGLA_CUDA_CONFIG_F32_RECURRENT;
        if (want == SGLA_CUDA_CONFIG_F32_HOPPER && !wg)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: the fp32 Hopper path takes K in {64, 128}, V a "
                             "multiple of 64, 16-byte aligned tensors and an sm_90a device (K = %lld, V = %lld)",
                             (long long)d->K, (long long)d->V);
        if (want == SGLA_CUDA_CONFIG_F32_CHUNKED && !chunked)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: the fp32 chunked path takes K in {64, 128}, V a "
                             "multiple of 64, 16-byte aligned tensors and a GPU whose blocks hold %zu bytes of shared "
                             "memory (K = %lld, V = %lld; %d bytes here)",
                             sgla_fwd_tf32_smem(d->K, 1), (long long)d->K, (long long)d->V, f->optin);
        pl->f32 = want;
        pl->f32_nst = nst;
        return SGLA_OK;
    }
    if (force && force->config >= 0 && !f->hopper)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: configuration row %d is a Hopper (sm_90a) kernel; "
                         "this device runs the mma.sync path", force->config);
    if (force_portable || !f->hopper) {
        if (!f->mma_fwd)
            return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: the mma.sync forward does not fit this "
                             "device's shared memory (compute capability %d.%d)", f->cc / 10, f->cc % 10);
        const int cols = force && force->cols ? force->cols : mma_cols(d);
        if (!sgla_fwd_mma_supported(d->dtype, d->K, cols) || d->V % cols)
            return sgla_fail(f->hopper || (force && force->cols) ? SGLA_ERR_INVALID_ARGUMENT : SGLA_ERR_UNSUPPORTED_SHAPE,
                             "CUDA backend: the mma.sync path (GPUs before Hopper) takes K in {64, 128, 256} and V a "
                             "multiple of its blocks' 64 or 128 columns, 64 at K = 256 (K = %lld, V = %lld after "
                             "padding, %d columns)", (long long)d->K, (long long)d->V, cols);
        /* two stages where a block holds them; one on smaller blocks (sm_86 / sm_89 at K = 128, sm_80 at
         * K = 256) */
        const int nst = force && force->config == SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE                  ? 1
                        : (int)sgla_fwd_mma_smem(d->dtype, d->K, cols, 2) <= f->optin ? 2
                                                                                      : 1;
        if ((int)sgla_fwd_mma_smem(d->dtype, d->K, cols, nst) > f->optin)
            return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: the mma.sync forward at K = %lld, V = %lld "
                             "(%d columns a block) needs %zu bytes of shared memory a block; this device's blocks hold "
                             "%d", (long long)d->K, (long long)d->V, cols, sgla_fwd_mma_smem(d->dtype, d->K, cols, nst),
                             f->optin);
        pl->portable = nst;
        pl->mcols = cols;
        /* a long sequence with few (sequence, head) pairs splits as the Hopper rows do: one block a
         * (sequence, head), column block and segment, as many as the SMs hold once (one each: every
         * instance takes over 128 registers a thread) */
        return split_plan(d, force, fill_segments(d, f, sgla_num_sequences(d) * d->H * (d->V / cols), 1), pl);
    }
    if (force && force->config >= 0) {
        if (force->config >= SGLA_NUM_CHUNK_CONFIGS || !row_serves(force->config, d))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: configuration row %d cannot serve K = %lld, V = %lld",
                             force->config, (long long)d->K, (long long)d->V);
        pl->row = force->config;
    } else {
        pl->row = row_for(d->K, d->V);
        if (pl->row < 0) return sgla_fail(SGLA_ERR_INTERNAL, "CUDA backend: no configuration row for K = %lld, V = %lld",
                                          (long long)d->K, (long long)d->V);
    }
    const int bps = row_bps(d, f, pl->row);
    if (d->cu_seqlens && !d->h0 && !d->ht && d->num_seqs >= 2 && d->num_seqs <= SGLA_ORDER_MAX_SEQS &&
        row_blocks(d, pl->row) > (int64_t)f->sms * (bps > 0 ? bps : 1)) {
        /* blocks start in grid order: the longest sequences first, the short ones fill the tail
         * (one block per sequence and head, so a long sequence started late sets the time); a
         * grid the SMs hold at once has no tail and takes no sort.  The blocks see a sorted list
         * of token ranges; without states nothing else names a sequence */
        pl->order = 1;
        pl->ws_bytes = (size_t)d->num_seqs * 2 * sizeof(int64_t);
    }
    /* a persistent grid forced: no split unless one is forced too (then refused) */
    sgla_status rc = split_plan(d, force, force && force->blocks > 0 ? 1 : auto_segments(d, f, pl->row), pl);
    if (rc != SGLA_OK) return rc;
    return persist_plan(d, f, force, bps, pl);
}

/* ---- checks of the CUDA contract ------------------------------------------------------ */

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

/* what the chunked kernels take as they are: head sizes, chunk lengths (all computed in 64), TMA's alignment */
static int native_dim(int64_t x) { return x == 64 || x == 128 || x == 256; }
/* V also 512: a block's state is K x (its columns of V), so V only sets how many blocks */
static int native_v(int64_t x) { return native_dim(x) || x == 512; }
static int chunk_taken(int64_t c) { return c == 16 || c == 32 || c == 64; }
static int qkvo_aligned16(const sgla_forward_desc *d)
{
    return is_aligned(d->q, 16) && is_aligned(d->k, 16) && is_aligned(d->v, 16) && is_aligned(d->o, 16);
}

static sgla_status check_shape(const sgla_forward_desc *d)
{
    if (d->dtype == SGLA_F64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CUDA backend: f64 inputs are for the reference backends");
    if (!native_dim(d->K) || !native_v(d->V))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: K = %lld, V = %lld; K and V must be at most 512 "
                         "(64, 128, 256 and V = 512 run natively, other sizes on zero-padded copies, K above 256 as "
                         "two halves)", (long long)d->K, (long long)d->V);
    if (!chunk_taken(d->chunk))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_CHUNK, "CUDA backend: chunk = %lld; it takes 16, 32 and 64 (all computed "
                         "in chunks of 64)", (long long)d->chunk);
    if (d->T > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: T = %lld; the kernels take T < 2^31",
                         (long long)d->T);
    if (d->T > 0 && !qkvo_aligned16(d))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: q, k, v and o must be 16-byte aligned");
    if ((d->h0 && !is_aligned(d->h0, 8)) || (d->ht && !is_aligned(d->ht, 8)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: h0 and ht must be 8-byte aligned");
    if (d->workspace && !is_aligned(d->workspace, 16))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: the workspace must be 16-byte aligned");
    if (sgla_num_sequences(d) * d->H > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backend: N*H = %lld exceeds the grid",
                         (long long)(sgla_num_sequences(d) * d->H));
    return SGLA_OK;
}

/* SGLA_FLAG_CHECK_DEVICE_VALUES: copy g, g_gamma, cu_seqlens and a pool's index arrays to the
 * host and run the library's own value checks on the copies (synchronises the stream). */
static sgla_status check_device_values(const sgla_forward_desc *d, cudaStream_t st)
{
    sgla_status rc = SGLA_OK;
    float *hg = NULL, *hgg = NULL;
    int64_t *hcu = NULL;
    void *hidx = NULL, *hacc = NULL;
    unsigned char *hhis = NULL;
    sgla_state_pool hp;
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
    if (d->pool) { /* its indices, accepted counts and flags live on the device too */
        const sgla_state_pool *p = d->pool;
        const size_t n = (size_t)sgla_num_sequences(d), ib = (size_t)p->index_bits / 8;
        const size_t ni = n * (size_t)(p->t_max ? p->t_max : 1);
        hp = *p;
        const struct {
            const void *src;
            void **dst;
            size_t bytes;
            const char *what;
        } arrays[3] = {{p->indices, &hidx, ni * ib, "pool indices"},
                       {p->num_accepted, &hacc, n * ib, "pool num_accepted"},
                       {p->has_initial_state, (void **)&hhis, n, "pool has_initial_state"}};
        for (int i = 0; i < 3; i++) {
            if (!arrays[i].src) continue;
            if (!(*arrays[i].dst = malloc(arrays[i].bytes ? arrays[i].bytes : 1))) {
                rc = sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "host copy of the %s", arrays[i].what);
                goto done;
            }
            e = cudaMemcpyAsync(*arrays[i].dst, arrays[i].src, arrays[i].bytes, cudaMemcpyDeviceToHost, st);
            if (e != cudaSuccess) {
                rc = sgla_fail(SGLA_ERR_CUDA, "cudaMemcpyAsync(%s to host): %s", arrays[i].what, cudaGetErrorString(e));
                goto done;
            }
        }
        hp.indices = hidx, hp.num_accepted = hacc, hp.has_initial_state = hhis;
    }
    e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) { rc = sgla_fail(SGLA_ERR_CUDA, "cudaStreamSynchronize (device value check): %s", cudaGetErrorString(e)); goto done; }
    {
        sgla_forward_desc hd = *d;
        hd.g = d->g ? (hg ? (const void *)hg : d->g) : NULL;
        hd.g_gamma = hgg;
        hd.cu_seqlens = hcu;
        hd.pool = d->pool ? &hp : NULL;
        hd.flags &= ~(SGLA_FLAG_CHECK_FINITE | SGLA_FLAG_SKIP_VALUE_CHECK);
        rc = sgla_check_host_values(&hd);
    }
done:
    free(hg);
    free(hgg);
    free(hcu);
    free(hidx);
    free(hacc);
    free(hhis);
    return rc;
}

/* ---- launches ----------------------------------------------------------------------------- */

/* q, k, v, o as 4-D (feature, head, token, batch) tensors, boxes of 128 bytes (64 16-bit or 32 fp32
 * features) x 1 x 64 x 1 with the 128-byte swizzle; tokens past T read as zero and are not written.
 * With cu_seqlens the batch is one packed row (the kernels copy a sequence's last chunk without
 * TMA).  T >= 1.
 * kt, vt: the feature sizes of the tensors in memory, at most the kernel's p->K, p->V: a box's
 * features past them read as zero and are not written (a head size the kernels round up, with no
 * padded copy: cuda_run_padded). */
static sgla_status tma_maps_dims(const sgla_kparams *p, sgla_dtype dt, sgla_tmaps *m, int64_t kt, int64_t vt)
{
    pthread_once(&tma_once, find_tma_encoder);
    if (!tma_encode) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "the CUDA driver has no cuTensorMapEncodeTiled (TMA)");
    /* a thread that has made no runtime call of its own (torch's autograd worker running the op's
     * backward first) has no current context, which the encoder needs and a launch would have made
     * current: make the device's primary context current there first (asking the driver is a
     * thread-local read; encoding without one is an API error that compute-sanitizer reports) */
    CUcontext ctx = NULL;
    int dev;
    if (!ctx_current || ctx_current(&ctx) != CUDA_SUCCESS || !ctx) {
        cudaError_t e = cudaGetDevice(&dev);
        if (e == cudaSuccess) e = cudaSetDevice(dev);
        if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "making the device's context current: %s", cudaGetErrorString(e));
    }
    const CUtensorMapDataType ty = dt == SGLA_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : dt == SGLA_F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                    : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const int64_t es = dt == SGLA_F32 ? 4 : 2; /* a box's rows are 128 bytes either way */
    struct {
        CUtensorMap *map;
        const void *ptr;
        int64_t d;
        const char *name;
    } t[6] = {{&m->q, p->q, kt, "q"}, {&m->k, p->k, kt, "k"}, {&m->v, p->v, vt, "v"},
              {&m->o, p->o, vt, "o"}, {&m->w, p->kw, vt, "k (merged pass)"}, {&m->o2, p->o2, kt, "dv (merged pass)"}};
    memset(&m->w, 0, sizeof m->w);
    memset(&m->g, 0, sizeof m->g);
    memset(&m->o2, 0, sizeof m->o2);
    for (int i = 0; i < 6; i++) {
        if (i >= 4 && !t[i].ptr) continue;
        const int64_t nb = p->cu ? 1 : p->N; /* cu_seqlens: one packed batch row */
        const cuuint64_t dim[4] = {(cuuint64_t)t[i].d, (cuuint64_t)p->H, (cuuint64_t)p->T, (cuuint64_t)nb};
        const cuuint64_t str[3] = {(cuuint64_t)(t[i].d * es), (cuuint64_t)(p->H * t[i].d * es),
                                   (cuuint64_t)(p->T * p->H * t[i].d * es)};
        const cuuint32_t box[4] = {(cuuint32_t)(128 / es), 1, 64, 1}, one[4] = {1, 1, 1, 1};
        const CUresult r = tma_encode(t[i].map, ty, 4, (void *)t[i].ptr, dim, str, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return sgla_fail(SGLA_ERR_CUDA, "cuTensorMapEncodeTiled(%s: %lld x %lld x %lld x %lld): CUresult %d",
                             t[i].name, (long long)t[i].d, (long long)p->H, (long long)p->T, (long long)nb, (int)r);
    }
    return SGLA_OK;
}
/* Gate g as a (head, token, batch) fp32 tensor, boxes of 4 heads x 64 tokens (16 bytes x 64 rows, no
 * swizzle; tokens past T read as zero), for the forward's row that loads g itself (sgla_row_gate_tma,
 * kparams.gtma): 0 where the tensor cannot be a TMA source (H not a multiple of 4, g not 16-byte aligned:
 * gate_b then makes b) */
static int tma_gate_map(const sgla_kparams *p, sgla_tmaps *m)
{
    if (!tma_encode || !p->g || p->H % 4 || ((uintptr_t)p->g & 15)) return 0;
    const int64_t nb = p->cu ? 1 : p->N;
    const cuuint64_t dim[3] = {(cuuint64_t)p->H, (cuuint64_t)p->T, (cuuint64_t)nb};
    const cuuint64_t str[2] = {(cuuint64_t)(p->H * 4), (cuuint64_t)(p->T * p->H * 4)};
    const cuuint32_t box[3] = {4, 64, 1}, one[3] = {1, 1, 1};
    return tma_encode(&m->g, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)p->g, dim, str, box, one,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
/* Gate g by TMA (kparams.gtma) on the row that loads it itself (sgla_row_gate_tma), where g can be a TMA
 * source and the call does not split (a split's short blocks ran 7 % slower on it: docs/perf.md, session
 * 35): the forward and a state pool's prefills alike.  Makes m->g where it says yes. */
static int gate_by_tma(const sgla_kparams *p, int row, int nseg, sgla_tmaps *m)
{
    return p->gmode == SGLA_GATE_G && p->T > 0 && nseg == 1 && sgla_row_gate_tma(sgla_chunk_configs[row].K) &&
           tma_gate_map(p, m);
}
static sgla_status tma_maps(const sgla_kparams *p, sgla_dtype dt, sgla_tmaps *m)
{
    return tma_maps_dims(p, dt, m, p->K, p->V);
}

/* The split's scan, one thread per state element: buf[s] holds segment s's local state (from
 * zero) on entry; on exit, forward, the state entering segment s (from init = h0), or, reverse,
 * the gradient of the state leaving it (from init = dht; the backward, chunk_bwd_tc.cu).  ld[s]
 * is segment s's total log2 decay, what carries a state across it either way.  The loads of SCAN_G
 * segments are issued before any of their stores: one at a time, each waited for the store before
 * it (the compiler cannot tell the slots apart), the scan was a chain of nseg memory latencies
 * (48 us of 1x65536x8x128's 363 us under Nsight Compute).  8 at a time fit 40 registers, six blocks
 * an SM; 16 took 150, a block an SM, and D = 256 ran 5 % slower (docs/perf.md, session 14). */
constexpr int SCAN_G = 8;
static __global__ void __launch_bounds__(256, 6) seg_scan(float *buf, const float *ld, const float *init, int nseg, int64_t nh_count,
                                int64_t kv, int reverse)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = nh_count * kv;
    if (i >= stride) return;
    float *const col = buf + i;             /* segment s's element: col[s stride] */
    const float *const lcol = ld + i / kv;  /* its decay: lcol[s nh_count] */
    float carry = init ? init[i] : 0.f;
    for (int j0 = 0; j0 < nseg; j0 += SCAN_G) {
        float loc[SCAN_G], dec[SCAN_G];
#pragma unroll
        for (int u = 0; u < SCAN_G; u++) {
            const int j = j0 + u, s = reverse ? nseg - 1 - j : j;
            loc[u] = dec[u] = 0.f;
            if (j < nseg - 1) { /* the last segment's slot is only written */
                loc[u] = col[s * stride];
                dec[u] = lcol[s * nh_count];
            }
        }
#pragma unroll
        for (int u = 0; u < SCAN_G; u++) {
            const int j = j0 + u, s = reverse ? nseg - 1 - j : j;
            if (j < nseg) {
                col[s * stride] = carry;
                carry = sgla_exp2(dec[u]) * carry + loc[u];
            }
        }
    }
}

sgla_status sgla_seg_scan(float *buf, const float *ld, const float *init, int nseg, int64_t nh_count, int64_t kv,
                          int reverse, cudaStream_t st)
{
    const int64_t n = nh_count * kv;
    seg_scan<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(buf, ld, init, nseg, nh_count, kv, reverse);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the split's scan: %s", cudaGetErrorString(e));
}

/* The sequences' token ranges [start, end) by length, longest first (ties: the lower index
 * first), by a bitonic sort of (length, index) keys in shared memory.  The ranges are copied as
 * they are (sgla_seq_range clamps them where they are read); a length for the key is clamped
 * alike. */
static __global__ void __launch_bounds__(1024) varlen_order(const int64_t *cu, int64_t N, int64_t T, int64_t *pairs)
{
    __shared__ unsigned long long key[SGLA_ORDER_MAX_SEQS];
    int P = 1;
    while (P < N) P <<= 1;
    for (int i = threadIdx.x; i < P; i += blockDim.x) {
        unsigned long long x = 0;
        if (i < N) {
            int64_t a = cu[i], e = cu[i + 1];
            a = a < 0 ? 0 : (a > T ? T : a);
            e = e < a ? a : (e > T ? T : e);
            x = ((unsigned long long)(e - a) << 32) | (0xffffffffu - (unsigned)i);
        }
        key[i] = x;
    }
    __syncthreads();
    for (int k = 2; k <= P; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < P; i += blockDim.x) {
                const int l = i ^ j;
                if (l > i) {
                    const unsigned long long a = key[i], b = key[l];
                    if ((i & k) == 0 ? a < b : a > b) key[i] = b, key[l] = a; /* descending */
                }
            }
            __syncthreads();
        }
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const unsigned n = 0xffffffffu - (unsigned)(key[i] & 0xffffffffu);
        pairs[2 * i] = cu[n], pairs[2 * i + 1] = cu[n + 1];
    }
}

#ifdef SGLA_TRACE
/* a diagnostic build's timeline buffer (chunk_trace in chunk_fwd.cuh), for the chunked kernels of pass bw
 * (0 the forward, 1 the backward's dq pass, 4 its merged dv + dk pass, 8 the fp32 forward on wgmma:
 * wg_trace in chunk_fwd_tf32.cu); not API: no header declares it */
static unsigned long long *trace_buf;
static int trace_bw;
extern "C" SGLA_API void sgla_trace_set(void *buf, int bw)
{
    trace_buf = (unsigned long long *)buf;
    trace_bw = bw;
}
#endif

/* gate g's b where the kernel takes it made: gate_b's rows (gb), or its own loads of g by TMA (gtma); else a
 * pool's prefills scan g in every consumer warp (the GS instances) */
static int gate_b_given(const sgla_kparams *p) { return p->gmode != SGLA_GATE_G || p->gb || p->gtma; }

/* after_gb: launched as a programmatic dependent of gate_b, just launched on st (its producer waits for b);
 * persist: blocks along x of a persistent grid (plan.persist; 0: a block a pair) */
static sgla_status launch_chunk(const sgla_chunk_kernel *k, int row, const sgla_kparams *p, const sgla_tmaps *tm,
                                cudaStream_t st, int after_gb = 0, int persist = 0)
{
    /* V column blocks in x, pairs x segments in y and z (chunk_fwd.cuh: block_item; < 2^31, plan checks) */
    const int64_t items = p->N * p->H * p->nseg, cols = p->V / sgla_chunk_configs[row].bv;
    if (items <= 0) return SGLA_OK;
    const int64_t gy = items < 65535 ? items : 65535;
    dim3 grid((unsigned)cols, (unsigned)gy, (unsigned)((items + gy - 1) / gy));
    sgla_kparams pp;
    void *args[2] = {(void *)p, (void *)tm};
    if (persist) { /* gx x cols blocks; each (x, column) walks pairs x, x + gx, ... */
        if (!k->fn_persist || p->nseg != 1 || p->mode != 0 || p->cu || p->pidx || !gate_b_given(p))
            return sgla_fail(SGLA_ERR_INTERNAL, "chunked forward, row %d: no persistent grid for this call", row);
        pp = *p;
        pp.items = items;
        grid = dim3((unsigned)(persist < items ? persist : items), (unsigned)cols);
        args[0] = (void *)&pp;
    }
    const int scan = !gate_b_given(p) && k->fn_scan; /* a pool's prefills (no workspace) */
    if (scan && p->mode != 0)
        return sgla_fail(SGLA_ERR_INTERNAL, "chunked forward, row %d: a split with gate g needs b (gate_b)", row);
    /* a split's first pass on its own instance where the row has one (no outputs: more stages, and the output
     * warpgroup on half the state) */
    const int local = p->mode == 1 && !p->cu && k->fn_local;
    const unsigned smem = local ? k->smem_local : k->smem;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid, cfg.blockDim = dim3(k->threads), cfg.dynamicSmemBytes = smem, cfg.stream = st;
    cudaLaunchAttribute la[1];
    la[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    la[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = la, cfg.numAttrs = after_gb ? 1 : 0;
    const sgla_chunk_fn fn = persist ? k->fn_persist
                             : local ? k->fn_local
                             : p->cu ? (scan ? k->fn_packed_scan : k->fn_packed)
                                     : (scan ? k->fn_scan : k->fn);
#ifdef SGLA_TRACE
    sgla_kparams tp = *(const sgla_kparams *)args[0];
    tp.trace = trace_buf, tp.trace_bw = trace_bw;
    args[0] = (void *)&tp;
#endif
    cudaError_t e = cudaLaunchKernelExC(&cfg, (const void *)fn, args);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the chunked forward (row %d, grid %u x %u x %u, %u bytes of shared memory, mode %d): %s",
                         row, grid.x, grid.y, grid.z, smem, p->mode, cudaGetErrorString(e));
    return SGLA_OK;
}

/* A split's three steps in the workspace: local states (mode 1), the scan, outputs (mode 2); launch
 * runs one pass of the path's kernel on the parameters it is given. */
template <class Launch>
static sgla_status split_steps(const plan *pl, sgla_kparams q, void *ws, int reverse, cudaStream_t st, Launch launch)
{
    const int64_t nhc = q.N * q.H, kv = q.K * q.V;
    const int sub = pl->seg_sub;
    const int64_t base = q.seg_off; /* the segments from this token (a backward's time window), else 0 */
    if (sub > 1 && pl->portable)
        return sgla_fail(SGLA_ERR_INTERNAL, "a split's first pass in pieces (%d a segment) on the mma.sync path", sub);
    /* the first pass: the pieces of every segment but the one whose local state is not needed (the last;
     * reverse, the first), and one piece more, which it skips: forward, the last segment's first piece;
     * reverse, segment 0's last one (seg_off) */
    q.nseg = (pl->nseg - 1) * sub + 1;
    q.seg_len = pl->seg_len / sub;
    q.seg_off = base + (reverse ? pl->seg_len - q.seg_len : 0);
    q.seg_sub = 0;
    q.seg_buf = (float *)ws;
    q.seg_ld = q.seg_buf + q.nseg * nhc * kv;
    q.mode = 1;
    sgla_status rc = launch(&q);
    if (rc == SGLA_OK) rc = sgla_seg_scan(q.seg_buf, q.seg_ld, q.h0, q.nseg, nhc, kv, reverse, st);
    q.nseg = pl->nseg;
    q.seg_len = pl->seg_len;
    q.seg_off = base;
    q.seg_sub = sub;
    q.mode = 2;
    return rc == SGLA_OK ? launch(&q) : rc;
}

/* The split of the Hopper rows (reverse: the backward's reverse passes) */
static sgla_status run_split(const sgla_chunk_kernel *k, int row, const plan *pl, sgla_kparams q, const sgla_tmaps *tm,
                             void *ws, cudaStream_t st, int reverse = 0, int after_gb = 0)
{
    return split_steps(pl, q, ws, reverse, st, [&](const sgla_kparams *x) {
        return launch_chunk(k, row, x, tm, st, after_gb && x->mode == 1); /* the first pass follows gate_b */
    });
}

/* The mma.sync path's split */
static sgla_status run_split_mma(const plan *pl, sgla_kparams q, sgla_dtype dt, void *ws, cudaStream_t st)
{
    return split_steps(pl, q, ws, 0, st,
                       [&](const sgla_kparams *x) { return sgla_fwd_mma_launch(x, dt, pl->mcols, pl->portable, st); });
}

/* T = 0: nothing to compute; ht = h0 (or zero) on the stream. */
static sgla_status empty_sequences(const sgla_forward_desc *d, cudaStream_t st)
{
    if (!d->ht || d->ht == d->h0) return SGLA_OK;
    const size_t bytes = (size_t)(sgla_num_sequences(d) * d->H * d->K * d->V) * sizeof(float);
    cudaError_t e = d->h0 ? cudaMemcpyAsync(d->ht, d->h0, bytes, cudaMemcpyDeviceToDevice, st)
                          : cudaMemsetAsync(d->ht, 0, bytes, st);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "%s of ht (T = 0): %s", d->h0 ? "cudaMemcpyAsync" : "cudaMemsetAsync",
                         cudaGetErrorString(e));
    return SGLA_OK;
}

/* The CUDA contract's checks and the plan of a validated descriptor on the current device. */
static sgla_status plan_call(const sgla_forward_desc *d, const sgla_cuda_plan *force, plan *pl)
{
    sgla_status rc = check_shape(d);
    if (rc != SGLA_OK) return rc;
    char why[192];
    const device_facts *f = current_device(why, sizeof why);
    if (!f || f->state != 1) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
    if ((rc = make_plan(d, f, force, pl)) != SGLA_OK || (rc = split_sub(d, f, force, pl)) != SGLA_OK) return rc;
    pl->sms = f->sms;
    /* the forward's gate g on a row that reads b: b's rows after the other workspace (the backward's
     * passes plan theirs in bwd3_plan_of; a state pool's prefills plan by make_plan alone and scan g
     * in the kernel) */
    if (d->g && d->T > 0 && pl->row >= 0 && !pl->portable && sgla_row_reads_b(sgla_chunk_configs[pl->row].K, false)) {
        pl->gb_ld = gate_b_ld(d);
        pl->gb_off = align256(pl->ws_bytes);
        pl->ws_bytes = pl->gb_off + gate_b_bytes(d);
    }
    return SGLA_OK;
}

/* What the forward and the backward check before any launch: a given
 * workspace's size, and (when asked) the gates and offsets on the device. */
static sgla_status check_call(const sgla_forward_desc *d, const void *ws, size_t ws_bytes, size_t need,
                              const char *who)
{
    if (ws && ws_bytes < need)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "%s: workspace_bytes = %zu, this call needs %zu", who, ws_bytes,
                         need);
    if ((d->flags & SGLA_FLAG_CHECK_DEVICE_VALUES) && !(d->flags & SGLA_FLAG_SKIP_VALUE_CHECK))
        return check_device_values(d, (cudaStream_t)d->stream);
    return SGLA_OK;
}

/* The caller's workspace, or (none given) a stream-ordered one of `bytes`
 * that ws_release frees after the last launch: no host synchronisation. */
static sgla_status ws_acquire(void *given, size_t bytes, cudaStream_t st, const char *what, void **ws)
{
    *ws = given;
    if (given || !bytes) return SGLA_OK;
    const cudaError_t e = cudaMallocAsync(ws, bytes, st);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* the refusal is reported here, not left for the caller's next check */
        return sgla_fail(e == cudaErrorMemoryAllocation ? SGLA_ERR_OUT_OF_MEMORY : SGLA_ERR_CUDA,
                         "cudaMallocAsync(%zu bytes of %s workspace): %s", bytes, what, cudaGetErrorString(e));
    }
    return SGLA_OK;
}

static sgla_status ws_release(const void *given, void *ws, cudaStream_t st, sgla_status rc, const char *what)
{
    if (given || !ws) return rc;
    const cudaError_t e = cudaFreeAsync(ws, st);
    if (rc == SGLA_OK && e != cudaSuccess)
        rc = sgla_fail(SGLA_ERR_CUDA, "cudaFreeAsync(%s workspace): %s", what, cudaGetErrorString(e));
    return rc;
}

/* A validated descriptor (values on the device, K and V native) on the current device.  kt, vt: q / k
 * and v / o's feature sizes in memory where the kernels run on larger ones (d->K, d->V) in place
 * (cuda_run_padded); d->K, d->V otherwise */
static sgla_status run_native_dims(const sgla_forward_desc *d, const sgla_cuda_plan *force, int64_t kt, int64_t vt)
{
    plan pl;
    sgla_status rc = plan_call(d, force, &pl);
    if (rc != SGLA_OK) return rc;
    if ((rc = check_call(d, d->workspace, d->workspace_bytes, pl.ws_bytes, "CUDA backend")) != SGLA_OK) return rc;
    cudaStream_t st = (cudaStream_t)d->stream;
    if (d->T == 0) return empty_sequences(d, st);

    sgla_kparams p;
    memset(&p, 0, sizeof p);
    p.q = d->q;
    p.k = d->k;
    p.v = d->v;
    p.o = d->o;
    p.g = (const float *)d->g;
    p.g_gamma = (const float *)d->g_gamma;
    p.h0 = (const float *)d->h0;
    p.ht = (float *)d->ht;
    p.cu = d->cu_seqlens;
    p.T = d->T;
    p.H = d->H;
    p.K = d->K;
    p.V = d->V;
    p.kt = kt, p.vt = vt;
    p.N = sgla_num_sequences(d);
    p.scale = d->scale;
    p.nseg = 1;
    p.gmode = d->g ? SGLA_GATE_G : (d->g_gamma ? SGLA_GATE_GAMMA : SGLA_GATE_NONE);
    if (d->dtype == SGLA_F32) {
#ifdef SGLA_TRACE
        p.trace = trace_buf, p.trace_bw = trace_bw; /* (the wgmma kernel's marks, bw 8) */
#endif
        if (pl.f32 == SGLA_CUDA_CONFIG_F32_RECURRENT) return sgla_recurrent_fwd_f32(&p, st);
        sgla_tmaps tm;
        const int wg = pl.f32 == SGLA_CUDA_CONFIG_F32_HOPPER;
        if (wg && (rc = tma_maps_dims(&p, d->dtype, &tm, kt, vt)) != SGLA_OK) return rc;
        return sgla_fwd_tf32_launch(&p, wg ? &tm : NULL, !(d->flags & SGLA_FLAG_ALLOW_TF32), pl.f32_nst, st);
    }
    if (pl.portable && pl.nseg == 1) return sgla_fwd_mma_launch(&p, d->dtype, pl.mcols, pl.portable, st);
    if (pl.portable) {
        void *ws;
        if ((rc = ws_acquire(d->workspace, pl.ws_bytes, st, "split", &ws)) != SGLA_OK) return rc;
        return ws_release(d->workspace, ws, st, run_split_mma(&pl, p, d->dtype, ws, st), "split");
    }

    sgla_tmaps tm;
    if ((rc = tma_maps_dims(&p, d->dtype, &tm, kt, vt)) != SGLA_OK) return rc;
    const sgla_chunk_kernel *k = &chunk_kernels(d->dtype)[pl.row];
    /* gate g by TMA (gate_by_tma), else b from gate_b.  Without b the call needs no b rows: none are allocated
     * (a caller's workspace is sized by the query, which cannot know g's address, with them) */
    p.gtma = pl.gb_ld && gate_by_tma(&p, pl.row, pl.nseg, &tm); /* (gb_ld: b planned, gb_off the workspace before it) */
    void *ws;
    if ((rc = ws_acquire(d->workspace, p.gtma ? pl.gb_off : pl.ws_bytes, st, "forward", &ws)) != SGLA_OK) return rc;
    if (pl.gb_ld && !p.gtma) { /* before the sequence order: gate_b reads the offsets as given */
        p.gb = (const float *)((char *)ws + pl.gb_off);
        p.gb_ld = pl.gb_ld;
        rc = sgla_gate_b_launch(&p, pl.sms, st);
    }
    if (rc == SGLA_OK && pl.order) {
        p.cu = (const int64_t *)ws;
        p.cu_pairs = 1;
        varlen_order<<<1, 1024, 0, st>>>(d->cu_seqlens, p.N, p.T, (int64_t *)ws);
        const cudaError_t e = cudaGetLastError();
        rc = e != cudaSuccess ? sgla_fail(SGLA_ERR_CUDA, "launch of the sequence order: %s", cudaGetErrorString(e))
                              : launch_chunk(k, pl.row, &p, &tm, st);
    } else if (rc == SGLA_OK) {
        const int after_gb = pl.gb_ld != 0 && !p.gtma;
        rc = pl.nseg == 1 ? launch_chunk(k, pl.row, &p, &tm, st, after_gb, pl.persist)
                          : run_split(k, pl.row, &pl, p, &tm, ws, st, 0, after_gb);
    }
    return ws_release(d->workspace, ws, st, rc, "forward");
}
static sgla_status run_native(const sgla_forward_desc *d, const sgla_cuda_plan *force)
{
    return run_native_dims(d, force, d->K, d->V);
}

/* ---- head sizes the kernels do not take natively ------------------------------------------------
 * K and V up to 256 other than 64, 128, 256 run on copies zero-padded to the next of those: zero
 * features of q and k add nothing to q.k, zero columns of v give zero columns of o and of the
 * state, so the padded call computes the same function; o and ht are cropped back.  Where the
 * chunked kernels run on TMA (16-bit inputs, Hopper) and the rows are whole 16-byte units, q, k, v
 * and o need no copy: the tensor maps take their own sizes and the boxes' features past them read
 * as zero and are not written (a packed batch's row copies take them from kparams' kt, vt).
 * Otherwise the copies live in the workspace and cost their bytes, read and written once more;
 * sgla_workspace_size counts them unless the descriptor it sees runs in place (pad_in_place: a
 * query without q, k, v, o counts them, and a call on other tensors than the query's may need
 * more and is refused with its own message). */

static int64_t pad_dim(int64_t x) { return x <= 64 ? 64 : x <= 128 ? 128 : x <= 256 ? 256 : 512; }
static int needs_padding(const sgla_forward_desc *d)
{
    return d->dtype != SGLA_F64 && d->K >= 1 && d->V >= 1 && d->K <= 256 && d->V <= 512 &&
           (!native_dim(d->K) || !native_v(d->V));
}

typedef struct pad_layout {
    sgla_forward_desc in; /* the call on the padded sizes */
    size_t off_q, off_k, off_v, off_o, off_h0, off_ht, off_inner, bytes;
    int pq, pv;           /* q, k copied; v, o copied (neither where the call runs in place) */
} pad_layout;

/* 1 where the call runs in place, q, k, v, o read and written through TMA's zero fill (no copies):
 * the chunked Hopper kernel, rows of whole 16-byte units, the four tensors given and aligned (a size
 * query without them counts the copies) */
static int pad_in_place(const sgla_forward_desc *d, const plan *pl)
{
    const int64_t es = (int64_t)sgla_dtype_size(d->dtype);
    return pl->row >= 0 && !pl->f32 && !pl->portable && (d->K * es) % 16 == 0 && (d->V * es) % 16 == 0 && d->q &&
           d->k && d->v && d->o && qkvo_aligned16(d);
}

static sgla_status pad_plan(const sgla_forward_desc *d, const sgla_cuda_plan *force, pad_layout *L, plan *pl)
{
    memset(L, 0, sizeof *L);
    L->in = *d;
    L->in.K = pad_dim(d->K), L->in.V = pad_dim(d->V);
    L->in.workspace = NULL, L->in.workspace_bytes = 0;
    L->in.flags &= ~(unsigned)SGLA_FLAG_CHECK_DEVICE_VALUES; /* checked once, on the caller's call */
    /* planned as the call it stands for (whether it has states decides the packed batch's order),
     * the tensors of a rounded-up size not yet placed; then in place, or on copies */
    if (L->in.K != d->K) L->in.q = L->in.k = NULL;
    if (L->in.V != d->V) L->in.v = L->in.o = NULL;
    const sgla_status rc = plan_call(&L->in, force, pl);
    if (rc != SGLA_OK) return rc;
    const int direct = pad_in_place(d, pl);
    if (direct) L->in.q = d->q, L->in.k = d->k, L->in.v = d->v, L->in.o = d->o;
    L->pq = !direct && L->in.K != d->K, L->pv = !direct && L->in.V != d->V;
    const size_t es = sgla_dtype_size(d->dtype), rows = (size_t)(d->B * d->T * d->H);
    const size_t st = (size_t)(sgla_num_sequences(d) * d->H * L->in.K * L->in.V) * sizeof(float);
    size_t off = 0;
    if (L->pq) {
        L->off_q = off, off += align256(rows * (size_t)L->in.K * es);
        L->off_k = off, off += align256(rows * (size_t)L->in.K * es);
    }
    if (L->pv) {
        L->off_v = off, off += align256(rows * (size_t)L->in.V * es);
        L->off_o = off, off += align256(rows * (size_t)L->in.V * es);
    }
    if (d->h0) L->off_h0 = off, off += align256(st);
    if (d->ht) L->off_ht = off, off += align256(st);
    L->off_inner = off;
    L->bytes = off + pl->ws_bytes;
    return SGLA_OK;
}

/* dst [M][dr][dc] from src [M][sr][sc]: the common part copied, the rest of dst zero.  A warp
 * per row (dc <= 256 elements): one division per row, coalesced accesses along it. */
template <class T>
static __global__ void resize3(T *dst, int dr, int dc, const T *src, int sr, int sc, int64_t rows)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; row < rows;
         row += ((int64_t)gridDim.x * blockDim.x) >> 5) {
        const int64_t m = row / dr;
        const int r = (int)(row - m * dr);
        T *d = dst + row * dc;
        const T *s = src + (m * sr + r) * sc;
        for (int c = lane; c < dc; c += 32) d[c] = r < sr && c < sc ? s[c] : (T)0;
    }
}

/* the same when every row is whole 16-byte units (K, V multiples of 8 in 16 bits, of 4 in fp32):
 * a thread per unit */
static __global__ void resize3_u4(uint4 *dst, int dr, int du, const uint4 *src, int sr, int su, int64_t rows)
{
    const int64_t n = rows * du;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / du, m = row / dr;
        const int u = (int)(i - row * du), r = (int)(row - m * dr);
        dst[i] = r < sr && u < su ? src[(m * sr + r) * su + u] : make_uint4(0u, 0u, 0u, 0u);
    }
}

static sgla_status resize(void *dst, int64_t dr, int64_t dc, const void *src, int64_t sr, int64_t sc, int64_t M,
                          size_t es, cudaStream_t st)
{
    const int64_t rows = M * dr;
    if (rows == 0) return SGLA_OK;
    if ((dc * (int64_t)es) % 16 == 0 && (sc * (int64_t)es) % 16 == 0 && is_aligned(dst, 16) && is_aligned(src, 16)) {
        const int du = (int)(dc * (int64_t)es / 16), su = (int)(sc * (int64_t)es / 16);
        const int64_t want = (rows * du + 255) / 256;
        resize3_u4<<<(unsigned)(want < 1048576 ? want : 1048576), 256, 0, st>>>((uint4 *)dst, (int)dr, du,
                                                                               (const uint4 *)src, (int)sr, su, rows);
        const cudaError_t e = cudaGetLastError();
        return e == cudaSuccess ? SGLA_OK
                                : sgla_fail(SGLA_ERR_CUDA, "launch of the head-size padding: %s", cudaGetErrorString(e));
    }
    const int64_t want = (rows + 7) / 8; /* 8 warps a block, a row each */
    const unsigned blocks = (unsigned)(want < 1048576 ? want : 1048576);
    if (es == 2)
        resize3<uint16_t><<<blocks, 256, 0, st>>>((uint16_t *)dst, (int)dr, (int)dc, (const uint16_t *)src, (int)sr,
                                                  (int)sc, rows);
    else
        resize3<float><<<blocks, 256, 0, st>>>((float *)dst, (int)dr, (int)dc, (const float *)src, (int)sr, (int)sc, rows);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK : sgla_fail(SGLA_ERR_CUDA, "launch of the head-size padding: %s", cudaGetErrorString(e));
}

static sgla_status cuda_run_padded(const sgla_forward_desc *d, const sgla_cuda_plan *force)
{
    pad_layout L;
    plan pl;
    sgla_status rc = pad_plan(d, force, &L, &pl);
    if (rc != SGLA_OK) return rc;
    if ((rc = check_call(d, d->workspace, d->workspace_bytes, L.bytes, "CUDA backend")) != SGLA_OK) return rc;
    cudaStream_t st = (cudaStream_t)d->stream;
    if (d->T == 0) return empty_sequences(d, st);
    sgla_forward_desc in = L.in;
    const int64_t K = d->K, V = d->V, Kp = in.K, Vp = in.V, rows = d->B * d->T * d->H, nh = sgla_num_sequences(d) * d->H;
    const size_t es = sgla_dtype_size(d->dtype);
    void *wsv;
    if ((rc = ws_acquire(d->workspace, L.bytes, st, "head-size padding", &wsv)) != SGLA_OK) return rc;
    char *w = (char *)wsv;
    if (L.pq) in.q = w + L.off_q, in.k = w + L.off_k;
    if (L.pv) in.v = w + L.off_v, in.o = w + L.off_o;
    if (d->h0) in.h0 = w + L.off_h0;
    if (d->ht) in.ht = (float *)(w + L.off_ht);
    in.workspace = pl.ws_bytes ? w + L.off_inner : NULL, in.workspace_bytes = pl.ws_bytes;
    if (L.pq && rc == SGLA_OK) rc = resize((void *)in.q, 1, Kp, d->q, 1, K, rows, es, st);
    if (L.pq && rc == SGLA_OK) rc = resize((void *)in.k, 1, Kp, d->k, 1, K, rows, es, st);
    if (L.pv && rc == SGLA_OK) rc = resize((void *)in.v, 1, Vp, d->v, 1, V, rows, es, st);
    if (d->h0 && rc == SGLA_OK) rc = resize((void *)in.h0, Kp, Vp, d->h0, K, V, nh, sizeof(float), st);
    /* the kernels' tensors' own feature sizes: the caller's in place, the rounded-up ones on copies */
    if (rc == SGLA_OK) rc = run_native_dims(&in, force, L.pq ? Kp : K, L.pv ? Vp : V);
    if (L.pv && rc == SGLA_OK) rc = resize(d->o, 1, V, in.o, 1, Vp, rows, es, st);
    if (d->ht && rc == SGLA_OK) rc = resize(d->ht, K, V, in.ht, Kp, Vp, nh, sizeof(float), st);
    return ws_release(d->workspace, wsv, st, rc, "head-size padding");
}

/* ---- K from 257 to 512: two calls on the halves of K ---------------------------------------------
 * q.k sums over K and the state's rows are K: with q = [q1 q2], k = [k1 k2] (256 columns each, the
 * second half zero-padded), o = o(q1, k1, v) + o(q2, k2, v) under the same gates, and the state is
 * the two calls' states one above the other.  The halves are copies in the workspace; each runs as a
 * call at K = 256 (V padded as there); o is their sum, taken in fp32.  Correct at every K up to 512,
 * at about twice the time of K = 256 and the copies' bytes. */

static int needs_ksplit(const sgla_forward_desc *d)
{
    return d->dtype != SGLA_F64 && d->K > 256 && d->K <= 512 && d->V >= 1 && d->V <= 512;
}

typedef struct ksplit_layout {
    sgla_forward_desc in; /* a half's call: K = 256, V native */
    size_t off_q[2], off_k[2], off_v, off_o[2], off_h0[2], off_ht[2], off_inner, bytes;
    int pv;               /* v, o padded */
} ksplit_layout;

static sgla_status ksplit_plan(const sgla_forward_desc *d, const sgla_cuda_plan *force, ksplit_layout *L, plan *pl)
{
    memset(L, 0, sizeof *L);
    L->in = *d;
    L->in.K = 256, L->in.V = native_v(d->V) ? d->V : pad_dim(d->V);
    L->in.workspace = NULL, L->in.workspace_bytes = 0;
    L->in.flags &= ~(unsigned)SGLA_FLAG_CHECK_DEVICE_VALUES; /* checked once, on the caller's call */
    L->pv = L->in.V != d->V;
    const size_t es = sgla_dtype_size(d->dtype), rows = (size_t)(d->B * d->T * d->H);
    const size_t st = (size_t)(sgla_num_sequences(d) * d->H * 256 * L->in.V) * sizeof(float);
    size_t off = 0;
    for (int i = 0; i < 2; i++) {
        L->off_q[i] = off, off += align256(rows * 256 * es);
        L->off_k[i] = off, off += align256(rows * 256 * es);
        L->off_o[i] = off, off += align256(rows * (size_t)L->in.V * es);
        if (d->h0) L->off_h0[i] = off, off += align256(st);
        if (d->ht) L->off_ht[i] = off, off += align256(st);
    }
    if (L->pv) L->off_v = off, off += align256(rows * (size_t)L->in.V * es);
    L->in.q = L->in.k = L->in.v = L->in.o = NULL, L->in.h0 = NULL, L->in.ht = NULL;
    sgla_forward_desc as_called = L->in; /* states present or not decide the packed batch's order */
    as_called.h0 = d->h0, as_called.ht = d->ht;
    sgla_status rc = plan_call(&as_called, force, pl);
    L->off_inner = off;
    L->bytes = off + pl->ws_bytes;
    return rc;
}

/* dst[m][r][c] (strides dsm, dsr; dr x dc) = src[m][r][c] (strides ssm, ssr) where r < sr and c < sc, else 0:
 * a warp a row */
template <class T>
static __global__ void copy3s(T *dst, int64_t dsm, int64_t dsr, int dr, int dc, const T *src, int64_t ssm, int64_t ssr,
                              int sr, int sc, int64_t M)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; row < M * dr;
         row += ((int64_t)gridDim.x * blockDim.x) >> 5) {
        const int64_t m = row / dr;
        const int r = (int)(row - m * dr);
        T *dp = dst + m * dsm + r * dsr;
        const T *sp = src + m * ssm + r * ssr;
        for (int c = lane; c < dc; c += 32) dp[c] = r < sr && c < sc ? sp[c] : (T)0;
    }
}

static sgla_status copy3(void *dst, int64_t dsm, int64_t dsr, int64_t dr, int64_t dc, const void *src, int64_t ssm,
                         int64_t ssr, int64_t sr, int64_t sc, int64_t M, size_t es, cudaStream_t st)
{
    const int64_t want = (M * dr + 7) / 8; /* 8 warps a block, a row each */
    if (want == 0) return SGLA_OK;
    const unsigned blocks = (unsigned)(want < 1048576 ? want : 1048576);
    if (es == 2)
        copy3s<uint16_t><<<blocks, 256, 0, st>>>((uint16_t *)dst, dsm, dsr, (int)dr, (int)dc, (const uint16_t *)src, ssm,
                                                 ssr, (int)sr, (int)sc, M);
    else
        copy3s<float><<<blocks, 256, 0, st>>>((float *)dst, dsm, dsr, (int)dr, (int)dc, (const float *)src, ssm, ssr,
                                              (int)sr, (int)sc, M);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK : sgla_fail(SGLA_ERR_CUDA, "launch of the K halves' copy: %s", cudaGetErrorString(e));
}

static __device__ __forceinline__ float elem_f(float x) { return x; }
static __device__ __forceinline__ float elem_f(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ __forceinline__ float elem_f(__half x) { return __half2float(x); }
static __device__ __forceinline__ void elem_set(float &y, float x) { y = x; }
static __device__ __forceinline__ void elem_set(__nv_bfloat16 &y, float x) { y = __float2bfloat16_rn(x); }
static __device__ __forceinline__ void elem_set(__half &y, float x) { y = __float2half_rn(x); }

/* o[r][c] = a[r][c] + b[r][c] (a, b with row stride lds), c < cols, the sum in fp32 */
template <class T>
static __global__ void add_halves(T *o, int64_t ldo, const T *a, const T *b, int64_t lds, int cols, int64_t rows)
{
    const int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols;
        const int c = (int)(i - r * cols);
        elem_set(o[r * ldo + c], elem_f(a[r * lds + c]) + elem_f(b[r * lds + c]));
    }
}

static sgla_status cuda_run_ksplit(const sgla_forward_desc *d, const sgla_cuda_plan *force)
{
    ksplit_layout L;
    plan pl;
    sgla_status rc = ksplit_plan(d, force, &L, &pl);
    if (rc != SGLA_OK) return rc;
    if ((rc = check_call(d, d->workspace, d->workspace_bytes, L.bytes, "CUDA backend")) != SGLA_OK) return rc;
    cudaStream_t st = (cudaStream_t)d->stream;
    if (d->T == 0) return empty_sequences(d, st);
    void *wsv;
    if ((rc = ws_acquire(d->workspace, L.bytes, st, "K halves", &wsv)) != SGLA_OK) return rc;
    char *w = (char *)wsv;
    const int64_t K = d->K, V = d->V, Vp = L.in.V, rows = d->B * d->T * d->H, nh = sgla_num_sequences(d) * d->H;
    const size_t es = sgla_dtype_size(d->dtype);
    if (L.pv && rc == SGLA_OK) rc = resize(w + L.off_v, 1, Vp, d->v, 1, V, rows, es, st);
    for (int i = 0; i < 2 && rc == SGLA_OK; i++) {
        const int64_t c0 = 256 * i, cw = K - c0 < 256 ? K - c0 : 256;
        sgla_forward_desc in = L.in;
        in.q = w + L.off_q[i], in.k = w + L.off_k[i], in.o = w + L.off_o[i];
        in.v = L.pv ? (const void *)(w + L.off_v) : d->v;
        /* q, k: columns [c0, c0 + cw) of each row; h0: rows [c0, c0 + cw) of each state */
        rc = copy3((void *)in.q, 256, 0, 1, 256, (const char *)d->q + c0 * es, K, 0, 1, cw, rows, es, st);
        if (rc == SGLA_OK)
            rc = copy3((void *)in.k, 256, 0, 1, 256, (const char *)d->k + c0 * es, K, 0, 1, cw, rows, es, st);
        if (d->h0 && rc == SGLA_OK) {
            in.h0 = w + L.off_h0[i];
            rc = copy3((void *)in.h0, 256 * Vp, Vp, 256, Vp, (const float *)d->h0 + c0 * V, K * V, V, cw, V, nh,
                       sizeof(float), st);
        }
        if (d->ht) in.ht = (float *)(w + L.off_ht[i]);
        in.workspace = pl.ws_bytes ? w + L.off_inner : NULL, in.workspace_bytes = pl.ws_bytes;
        if (rc == SGLA_OK) rc = run_native(&in, force);
        if (d->ht && rc == SGLA_OK)
            rc = copy3((float *)d->ht + c0 * V, K * V, V, cw, V, in.ht, 256 * Vp, Vp, cw, V, nh, sizeof(float), st);
    }
    if (rc == SGLA_OK && rows > 0) {
        const int64_t want = (rows * V + 255) / 256;
        const unsigned blocks = (unsigned)(want < 1048576 ? want : 1048576);
        const void *a = w + L.off_o[0], *b = w + L.off_o[1];
        if (d->dtype == SGLA_BF16)
            add_halves<<<blocks, 256, 0, st>>>((__nv_bfloat16 *)d->o, V, (const __nv_bfloat16 *)a,
                                               (const __nv_bfloat16 *)b, Vp, (int)V, rows);
        else if (d->dtype == SGLA_F16)
            add_halves<<<blocks, 256, 0, st>>>((__half *)d->o, V, (const __half *)a, (const __half *)b, Vp, (int)V, rows);
        else
            add_halves<<<blocks, 256, 0, st>>>((float *)d->o, V, (const float *)a, (const float *)b, Vp, (int)V, rows);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) rc = sgla_fail(SGLA_ERR_CUDA, "launch of the K halves' sum: %s", cudaGetErrorString(e));
    }
    return ws_release(d->workspace, wsv, st, rc, "K halves");
}

/* Any validated descriptor without a pool: padded when its head sizes are not native, in two halves
 * when K is above 256. */
static sgla_status cuda_run(const sgla_forward_desc *d, const sgla_cuda_plan *force)
{
    /* here, before the padded and K-split paths plan on their own descriptors (workspace NULL) and
     * launch their copies: a misaligned workspace is named as such, and nothing is enqueued */
    if (d->workspace && !is_aligned(d->workspace, 16))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backend: the workspace must be 16-byte aligned");
    if (needs_ksplit(d)) return cuda_run_ksplit(d, force);
    return needs_padding(d) ? cuda_run_padded(d, force) : run_native(d, force);
}

/* The plan of cuda_run and the workspace it needs. */
static sgla_status plan_sized(const sgla_forward_desc *d, plan *pl, size_t *bytes)
{
    if (needs_ksplit(d)) {
        ksplit_layout L;
        const sgla_status rc = ksplit_plan(d, NULL, &L, pl);
        if (rc == SGLA_OK) *bytes = L.bytes;
        return rc;
    }
    if (!needs_padding(d)) {
        const sgla_status rc = plan_call(d, NULL, pl);
        if (rc == SGLA_OK) *bytes = pl->ws_bytes;
        return rc;
    }
    pad_layout L;
    const sgla_status rc = pad_plan(d, NULL, &L, pl);
    if (rc == SGLA_OK) *bytes = L.bytes;
    return rc;
}

/* ---- the backward ------------------------------------------------------------------------------ */

/* The backward's checks beyond the forward's, its path and its workspace.
 * On Hopper the three passes of the chunked kernel serve most calls (bwd3_plan_of, below);
 * elsewhere, and for what they do not take:
 * Tensor cores (bf16 / fp16, K and V in {64, 128}, 16-byte aligned tensors):
 * with dg or dg_gamma, the 16-bit state of every chunk of 64 tokens.  CUDA cores (everything else): [N + 1] block
 * table (cu_seqlens) and two fp32 states per block of tokens and head.  Both:
 * dg when only dg_gamma is asked for. */
typedef struct bwd_plan {
    int tc, nseg;
    int64_t blocks, seg_len;
    size_t off_states, off_dstates, off_S, off_dg, off_seg, bytes;
} bwd_plan;

static int aligned16(const void *p) { return p == NULL || ((uintptr_t)p & 15) == 0; }

/* force: 0 the usual path, 1 CUDA cores, 2 tensor cores, 4 tensor cores with one stage (refused where it cannot serve);
 * force_nseg: 0 the usual split, 1 none, n segments (tensor cores, no cu_seqlens) */
static sgla_status bwd_plan_of(const sgla_backward_desc *b, int force, int force_nseg, bwd_plan *pl)
{
    const sgla_forward_desc *d = b->fwd;
    if (d->dtype == SGLA_F64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CUDA backend: f64 inputs are for the reference backends");
    if (d->K > 256 || d->V > 256)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: K = %lld, V = %lld; it takes K, V <= 256 (the "
                         "forward takes K and V up to 512)", (long long)d->K, (long long)d->V);
    if (d->T > 0x7fffffffLL || d->H > 65535 || (d->V + 31) / 32 > 65535 || sgla_num_sequences(d) * d->H > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: T = %lld, H = %lld, V = %lld exceed its grid",
                         (long long)d->T, (long long)d->H, (long long)d->V);
    const size_t es = sgla_dtype_size(d->dtype);
    if (d->T > 0 && !(is_aligned(d->q, es) && is_aligned(b->dout, es)))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backward: misaligned inputs");
    if (b->workspace && !is_aligned(b->workspace, 256))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backward: the workspace must be 256-byte aligned");
    const int64_t N = sgla_num_sequences(d);
    char why[192];
    const device_facts *f = current_device(why, sizeof why);
    if (!f || f->state != 1) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
    /* the tensor cores' stages: two where a block holds them, else one (forced: path 4) */
    const int nst = force == 4 || (int)sgla_bwd_tc_smem(d->dtype, d->K, d->V, 2) > f->optin ? 1 : 2;
    const int tc_ok = f->bwd_tc && sgla_bwd_tc_supported(d->dtype, d->K, d->V) &&
                      (int)sgla_bwd_tc_smem(d->dtype, d->K, d->V, nst) <= f->optin && aligned16(d->q) && aligned16(d->k) &&
                      aligned16(d->v) && aligned16(b->dout) && aligned16(b->dq) && aligned16(b->dk) &&
                      aligned16(b->dv) && is_aligned(d->h0, 8) && is_aligned(b->dht, 8) && is_aligned(b->dh0, 8);
    if ((force == 2 || force == 4) && !tc_ok)
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "the tensor-core backward cannot serve this call");
    pl->tc = force == 1 || !tc_ok ? 0 : nst;
    if (!pl->tc && !(f->bwd_cc && (int)sgla_bwd_grads_smem(d->K, d->V, 0) <= f->optin))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: neither path fits this device's shared memory "
                         "(compute capability %d.%d, %d bytes a block) for K = %lld, V = %lld", f->cc / 10, f->cc % 10,
                         f->optin, (long long)d->K, (long long)d->V);
    size_t off = 0;
    const int need_dg = (d->g && b->dg) || (d->g_gamma && b->dg_gamma);
    pl->nseg = 1;
    pl->seg_len = 0;
    pl->off_seg = 0;
    if (force_nseg > 1 && (!pl->tc || d->cu_seqlens))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA backward: a sequence split is for the tensor-core path "
                         "without cu_seqlens");
    if (pl->tc) {
        pl->blocks = 0;
        pl->off_states = pl->off_dstates = 0;
        pl->off_S = off;
        if (need_dg && d->T > 0)
            off += align256((size_t)sgla_bwd_tc_slots(d->B, d->T, N) * (size_t)(d->H * d->K * d->V) * 2);
        /* one block per (sequence, head) and sweep: SMs idle where N*H is small */
        const int nseg = force_nseg > 0 ? force_nseg : fill_segments(d, f, sgla_num_sequences(d) * d->H, 1);
        if (nseg > 1 && d->T > 0) {
            int64_t seg_len = (d->T + nseg - 1) / nseg;
            seg_len = (seg_len + 63) / 64 * 64; /* whole chunks: the stored states' slots stay those of the sequence */
            pl->nseg = (int)((d->T + seg_len - 1) / seg_len);
            pl->seg_len = seg_len;
        }
        if (pl->nseg > 1) {
            const int64_t nhc = N * d->H;
            if ((int64_t)pl->nseg * nhc > 0x7fffffffLL)
                return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: %d segments x N*H = %lld exceed the grid",
                                 pl->nseg, (long long)nhc);
            pl->off_seg = off;
            off += align256((size_t)(2 * pl->nseg * nhc * d->K * d->V + pl->nseg * nhc) * sizeof(float));
        }
    } else {
        pl->blocks = d->T > 0 ? sgla_bwd_blocks(d->B, d->T, N, d->cu_seqlens != NULL) : 0;
        const size_t st = (size_t)pl->blocks * (size_t)(d->H * d->K * d->V) * sizeof(float);
        off = d->cu_seqlens ? align256((size_t)(N + 1) * sizeof(int64_t)) : 0;
        pl->off_states = off;
        off += align256(st);
        pl->off_dstates = off;
        off += align256(st);
        pl->off_S = 0;
    }
    pl->off_dg = off;
    if (d->g_gamma && b->dg_gamma) off += align256((size_t)(d->B * d->T * d->H) * sizeof(float));
    pl->bytes = d->T > 0 || d->cu_seqlens ? off : 0;
    return SGLA_OK;
}


/* ---- the backward as three passes of the chunked forward kernel (chunk_bwd3.cu) ----------------
 * On Hopper with 16-bit inputs and K, V up to 256 (multiples of 8): dq in time order, dv and dk in
 * reverse, each pass the forward's TMA / wgmma kernel with its row and sequence split chosen as a
 * forward of that pass's head sizes would (K, V rounded up to 64, 128 or 256 as the forward rounds
 * them: the tensors in place, their missing features zeros; the states through padded copies); dg
 * assembled per chunk (chunk_bwd3.cu) from the dq and dk passes' fp32 side outputs and X_c, which
 * needs the dq pass's 16-bit state of every chunk.  Where K = V and one block holds the state, dv is
 * made in the dk pass (plan.merged, BW = 4). */

enum { B3_DQ, B3_DV, B3_DK, B3_PASSES };

typedef struct bwd3_plan {
    int row[B3_PASSES];
    plan fp[B3_PASSES];   /* each pass's split */
    int64_t rows;         /* token rows B T H: the side outputs' stride */
    int64_t Kp, Vp;       /* the kernels' head sizes (K, V rounded up) */
    int nyq, nyk;         /* column blocks of the dq and dk passes */
    size_t off_dot, off_blob, off_xc, off_h0T, off_dht, off_dhtT, off_dh0p, off_dotw, off_seg, off_dg, bytes;
    /* time windows (tseg > 1): the blob holds one window's chunk states (tlen tokens); the dq pass's
     * entering state of every window from a state-only first pass and the scan (off_tst), the reverse
     * pass's carried from one window to the one before it (off_chain) */
    int tseg, tsplit;  /* windows, and the segments each is split in (the passes' split, 1: none) */
    /* batch groups (groups > 1): the passes run on gB batch rows at a time (the last group fewer), each
     * group's plan in the workspace's first gbytes, dg_gamma's chunk sums of all groups after them */
    int groups;
    int64_t gB;
    size_t gbytes;
    int64_t tlen;
    size_t off_tst, off_chain;
    int need_dg;
    /* the dq pass keeps every other chunk's 16-bit state (chunk_fwd.cuh: blob_kept), else every chunk's:
     * half the blob's bytes and ~10 % of the backward's time, but dg's error 1.5-1.9x (an odd chunk's X_c
     * cancels the chunk's own u terms, docs/numerics.md section 8).  A workspace cap's first saving, and
     * the memory-lean calls' (windows, batch groups); plain calls keep every chunk's */
    int half;
    int merged; /* dv in the dk pass (BW = 4): K = V, one column block holds the whole state */
    int qtile;  /* the dq pass takes q by TMA for q . dq (instance [4]) */
    size_t off_gb; /* gate g: b (gate_b.cu) for the three passes, gb_ld token rows a head */
    int64_t gb_ld;
    int sms;       /* gate_b's grid */
    size_t seg_ws; /* the passes' splits' workspace (the largest) */
} bwd3_plan;

/* A forward descriptor of pass i's head sizes (for its row and split). */
static sgla_forward_desc bwd3_pass_desc(const sgla_forward_desc *d, int i)
{
    sgla_forward_desc x = *d;
    if (i != B3_DV) x.K = d->V, x.V = d->K;
    x.h0 = x.ht = NULL;
    return x;
}

/* The workspace of the three passes, in tseg time windows (1: none) */
static void bwd3_layout(const sgla_backward_desc *b, bwd3_plan *pl, int tseg)
{
    const sgla_forward_desc *d = b->fwd;
    const int64_t N = sgla_num_sequences(d), nhc = N * d->H, kv = pl->Kp * pl->Vp;
    size_t off = 0;
    const size_t sb = align256((size_t)(nhc * kv) * sizeof(float));
    const int64_t slots = sgla_bwd_tc_slots(d->B, d->T, N);
    /* the blob's slots (chunk_fwd.cuh: state_blob): sequence n's from F = its first chunk's sgla_chunk_slot
     * (rows of T tokens, or of a window's tlen), one a chunk, F + chunks <= tokens / 64 + N + 1; with half,
     * from F / 2 + n, one a kept chunk, so every slot is below (tokens / 64 + N + 1) / 2 + N + 1 */
    const int half = pl->half;
    const auto blob_slots = [N, half](int64_t tokens) {
        return half ? (tokens / 64 + N + 1) / 2 + N + 1 : tokens / 64 + N + 1;
    };
    pl->tseg = 1, pl->tlen = 0;
    int64_t bslots = blob_slots(d->B * d->T);
    size_t seg_ws = pl->seg_ws;
    if (tseg > 1) { /* windows of whole segments of whole chunks: the passes' split (tsplit) inside each */
        const int64_t unit = 64 * pl->tsplit;
        int64_t tlen = (d->T + tseg - 1) / tseg;
        tlen = (tlen + unit - 1) / unit * unit;
        pl->tseg = (int)((d->T + tlen - 1) / tlen);
        pl->tlen = tlen;
        bslots = blob_slots(N * tlen); /* a window's: rows of tlen tokens */
        if (pl->tsplit > 1 && split_ws(pl->tsplit, nhc, kv) > seg_ws) seg_ws = split_ws(pl->tsplit, nhc, kv);
    }
    pl->off_dot = off; /* e, ei [nyq][rows]; u, ui [nyk][rows] */
    if (pl->need_dg) off += align256((size_t)(2 * (pl->nyq + pl->nyk) * pl->rows) * sizeof(float));
    pl->off_blob = off; /* the dq pass's 16-bit state of every chunk, or of every other one (half) */
    if (pl->need_dg) off += align256((size_t)(bslots * d->H * kv) * 2);
    pl->off_xc = off;
    if (pl->need_dg) off += align256((size_t)(slots * d->H * pl->nyk * SGLA_XC_STRIDE) * sizeof(float));
    pl->off_h0T = off;
    if (d->h0) off += sb;
    pl->off_dht = off;
    if (b->dht && !pl->merged) off += sb;
    pl->off_dhtT = off;
    if (b->dht) off += sb;
    pl->off_dh0p = off; /* dh0 on the kernels' sizes, cropped into the caller's */
    if (b->dh0 && (pl->Kp != d->K || pl->Vp != d->V)) off += sb;
    /* the side outputs' rows (q, then k) as a copy of Kp features, zeros past K: the kernels read them
     * at the pass's V (the native instances keep their code; the copy is this path's cost alone).  The
     * merged pass reads k from its stage */
    pl->off_dotw = off;
    if (pl->need_dg && pl->Kp != d->K) off += align256((size_t)(pl->rows * pl->Kp) * sgla_dtype_size(d->dtype));
    pl->off_seg = off;
    off += align256(seg_ws);
    pl->off_dg = off; /* g_gamma: dg summed per chunk (dg3), then over the chunks */
    if (d->g_gamma && b->dg_gamma) off += align256((size_t)(slots * d->H) * sizeof(float));
    pl->off_gb = off; /* every backward row reads b (sgla_row_reads_b; GateB keeps one instance on its scan) */
    if (d->g) {
        pl->gb_ld = gate_b_ld(d);
        off += align256(gate_b_bytes(d));
    }
    pl->off_tst = off; /* the dq pass's entering state of every window's segments, and their total decays */
    if (pl->tseg > 1) off += align256(split_ws(pl->tseg * pl->tsplit, nhc, kv));
    pl->off_chain = off; /* the reverse pass's state between windows */
    if (pl->tseg > 1) off += sb;
    pl->bytes = d->T > 0 ? off : 0;
}

/* 1 and *pl filled where the three passes serve b (force_nseg as for the tensor-core path), else 0
 * (the caller falls back to bwd_plan_of's path, or refuses a forced path 3) */
static int bwd3_plan_of(const sgla_backward_desc *b, const device_facts *f, int force_nseg, bwd3_plan *pl, int half = 0)
{
    const sgla_forward_desc *d = b->fwd;
    memset(pl, 0, sizeof *pl);
    if (!f->hopper || (d->dtype != SGLA_BF16 && d->dtype != SGLA_F16) || d->K > 256 || d->V > 256 || d->K % 8 ||
        d->V % 8)
        return 0;
    if (!(aligned16(d->q) && aligned16(d->k) && aligned16(d->v) && aligned16(b->dout) && aligned16(b->dq) &&
          aligned16(b->dk) && aligned16(b->dv) && is_aligned(d->h0, 8) && is_aligned(b->dht, 8) &&
          is_aligned(b->dh0, 8)))
        return 0;
    if (!(fabsf(d->scale) >= 1e-30f)) return 0; /* the end state is divided by scale */
    if (force_nseg > 1 && d->cu_seqlens) return 0;
    pl->Kp = pad_dim(d->K), pl->Vp = pad_dim(d->V);
    sgla_forward_desc dp = *d; /* the call on the kernels' sizes */
    dp.K = pl->Kp, dp.V = pl->Vp;
    pl->rows = d->B * d->T * d->H;
    pl->need_dg = (d->g && b->dg) || (d->g_gamma && b->dg_gamma);
    pl->half = half;
    /* fp16 rounds the pair weights of the passes' products to zero below 6e-8, and where decays are
     * steep the gate's gradient is made of such pairs alone: the mma.sync path keeps them in fp32 */
    if (pl->need_dg && d->dtype == SGLA_F16) return 0;
    size_t seg = 0;
    for (int i = 0; i < B3_PASSES; i++) {
        const sgla_forward_desc x = bwd3_pass_desc(&dp, i);
        pl->row[i] = row_for(x.K, x.V);
        if (pl->row[i] < 0) return 0;
        sgla_cuda_plan force = {pl->row[i], force_nseg};
        if (make_plan(&x, f, &force, &pl->fp[i]) != SGLA_OK || split_sub(&x, f, NULL, &pl->fp[i]) != SGLA_OK) {
            sgla_clear_error();
            return 0;
        }
        pl->fp[i].order = 0;
        if (pl->fp[i].nseg > 1 && pl->fp[i].ws_bytes > seg) seg = pl->fp[i].ws_bytes;
    }
    pl->nyq = (int)(pl->Kp / sgla_chunk_configs[pl->row[B3_DQ]].bv);
    pl->nyk = (int)(pl->Kp / sgla_chunk_configs[pl->row[B3_DK]].bv);
    pl->merged = pl->Kp == pl->Vp && pl->nyk == 1 && sgla_chunk_bwd3_bf16[3][pl->row[B3_DK]].fn != NULL;
    pl->qtile = pl->need_dg && sgla_chunk_bwd3_bf16[4][pl->row[B3_DQ]].fn != NULL;
    pl->seg_ws = seg;
    pl->sms = f->sms;
    pl->tsplit = 1;
    bwd3_layout(b, pl, 1);
    return 1;
}

/* Time windows: on a dense batch with the gate's gradient wanted and q, k read in place (no rounded
 * copy), the chunk states the dq pass keeps for X_c can be made one window at a time: 1 where tseg
 * windows serve b (pl laid out for them), else 0 (pl laid out as the plain plan). */
static int bwd3_windows(const sgla_backward_desc *b, bwd3_plan *pl, int tseg)
{
    const sgla_forward_desc *d = b->fwd;
    if (tseg <= 1) return bwd3_layout(b, pl, 1), 1;
    if (!pl->need_dg || d->cu_seqlens || pl->Kp != d->K || tseg > 64 || d->T < 128) return bwd3_layout(b, pl, 1), 0;
    const int64_t nhc = sgla_num_sequences(d) * d->H;
    /* where the passes split along time to fill the SMs, each window is split as many times (the dq and
     * dk passes alike; the dv pass apart runs as planned) */
    pl->tsplit = pl->fp[B3_DQ].nseg > pl->fp[B3_DK].nseg ? pl->fp[B3_DQ].nseg : pl->fp[B3_DK].nseg;
    if (pl->tsplit < 1) pl->tsplit = 1;
    bwd3_layout(b, pl, tseg);
    if (pl->tseg > 1 && (int64_t)pl->tseg * pl->tsplit * nhc <= 0x7fffffffLL) return 1; /* the first pass's grid */
    pl->tsplit = 1; /* one window would hold the whole sequence, or the first pass's grid be too large: the plain plan */
    bwd3_layout(b, pl, 1);
    return 0;
}

/* Batch group g (gB rows a group) of a dense call: b's tensors from batch row g gB on, B the group's rows
 * (fwd and bwd written into *f, *bb) */
static void bwd3_group_desc(const sgla_backward_desc *b, int64_t gB, int g, sgla_forward_desc *f, sgla_backward_desc *bb)
{
    const sgla_forward_desc *d = b->fwd;
    const int64_t b0 = g * gB, rows = d->B - b0 < gB ? d->B - b0 : gB;
    const size_t es = sgla_dtype_size(d->dtype), qk = (size_t)(d->T * d->H * d->K) * es, vv = (size_t)(d->T * d->H * d->V) * es,
                 gt = (size_t)(d->T * d->H) * sizeof(float), st = (size_t)(d->H * d->K * d->V) * sizeof(float);
    /* p + b0 rows of n bytes (NULL stays NULL) */
    const auto at = [b0](const void *p, size_t n) { return p ? (void *)((const unsigned char *)p + (size_t)b0 * n) : (void *)0; };
    *f = *d;
    f->B = rows;
    f->q = at(d->q, qk), f->k = at(d->k, qk), f->v = at(d->v, vv);
    f->g = at(d->g, gt), f->h0 = at(d->h0, st);
    *bb = *b;
    bb->fwd = f;
    bb->dout = at(b->dout, vv), bb->dht = at(b->dht, st);
    bb->dq = at(b->dq, qk), bb->dk = at(b->dk, qk), bb->dv = at(b->dv, vv);
    bb->dg = at(b->dg, gt), bb->dh0 = at(b->dh0, st);
}

/* Batch groups: where each group of a dense call still fills the SMs twice over with (sequence, head) pairs,
 * the passes run group by group, and the chunk states the dq pass keeps are a group's.  1 and *pl
 * extended where G groups serve b, else 0 (*pl as it was). */
static int bwd3_groups(const sgla_backward_desc *b, const device_facts *f, bwd3_plan *pl, int G)
{
    const sgla_forward_desc *d = b->fwd;
    if (G < 2 || !pl->need_dg || d->cu_seqlens || d->B < 2) return 0;
    const int64_t gB = (d->B + G - 1) / G;
    G = (int)((d->B + gB - 1) / gB);
    if (G < 2 || gB * d->H < 2 * (int64_t)f->sms) return 0;
    size_t most = 0;
    for (int i = 0; i < 2; i++) { /* the first group's plan and the last's (fewer rows) */
        sgla_forward_desc gf;
        sgla_backward_desc gb;
        bwd3_group_desc(b, gB, i ? G - 1 : 0, &gf, &gb);
        bwd3_plan gp;
        if (!bwd3_plan_of(&gb, f, 0, &gp, pl->half)) return 0;
        if (gp.bytes > most) most = gp.bytes;
    }
    pl->groups = G, pl->gB = gB, pl->gbytes = align256(most);
    const size_t dgc = d->g_gamma && b->dg_gamma ? (size_t)(G * sgla_bwd_tc_slots(gB, d->T, gB) * d->H) * sizeof(float) : 0;
    pl->bytes = pl->gbytes + align256(dgc);
    return 1;
}

/* One pass: its instance (BW = 1 dq; 2 dv, and dk without dg; 3 dk with dg's side outputs and X_c;
 * 4 dk and dv) and its split (reverse scans for the reverse passes). */
static sgla_status bwd3_pass(const sgla_forward_desc *d, const bwd3_plan *pl, int i, sgla_kparams p, void *seg_ws,
                             cudaStream_t st)
{
    /* the instance: [BW - 1], [4] the dq pass with its q tile */
    const int bw = i == B3_DQ ? (pl->qtile ? 4 : 0) : i == B3_DK && pl->merged ? 3 : i == B3_DK && p.xc ? 2 : 1;
    const sgla_chunk_kernel *k = &(d->dtype == SGLA_BF16 ? sgla_chunk_bwd3_bf16 : sgla_chunk_bwd3_f16)[bw][pl->row[i]];
    sgla_tmaps tm;
    sgla_status rc = tma_maps_dims(&p, d->dtype, &tm, p.kt, p.vt);
    if (rc != SGLA_OK) return rc;
    if (pl->fp[i].nseg == 1) return launch_chunk(k, pl->row[i], &p, &tm, st);
    return run_split(k, pl->row[i], &pl->fp[i], p, &tm, seg_ws, st, i != B3_DQ);
}

/* The passes a time window at a time (plan.tseg > 1), from the last window: the dq pass over it from its
 * entering state, writing its chunks' states into the blob, and the dk pass (merged: dk and dv) over
 * it, reading them, from the state the window after it left (dht's at the end).  Where the passes split
 * along time, each window is split in plan.tsplit segments: the dq pass's entering state of every
 * segment of every window comes from one state-only first pass and the scan, the dk pass's from its own
 * split of the window (its scan from the carried state).  The dv pass, where it is not merged, runs
 * once over the whole sequence as planned (it keeps no states).  params(i): pass i's parameters over
 * the whole sequence. */
template <class Params>
static sgla_status bwd3_run_windows(const sgla_forward_desc *d, const bwd3_plan *pl, unsigned char *ws, Params params,
                                    cudaStream_t st)
{
    const int64_t N = sgla_num_sequences(d), nhc = N * d->H, kv = pl->Kp * pl->Vp;
    const int ns = pl->tsplit, nall = pl->tseg * ns;
    const int64_t slen = pl->tlen / ns; /* a segment of a window (whole chunks) */
    float *tst = (float *)(ws + pl->off_tst), *chain = (float *)(ws + pl->off_chain);
    void *seg_ws = ws + pl->off_seg;
    sgla_status rc = SGLA_OK;
    if (!pl->merged && (rc = bwd3_pass(d, pl, B3_DV, params(B3_DV), seg_ws, st)) != SGLA_OK) return rc;
    const int bwq = pl->qtile ? 4 : 0, bwk = pl->merged ? 3 : 2;
    const sgla_chunk_kernel *kq = &(d->dtype == SGLA_BF16 ? sgla_chunk_bwd3_bf16 : sgla_chunk_bwd3_f16)[bwq][pl->row[B3_DQ]];
    const sgla_chunk_kernel *kk = &(d->dtype == SGLA_BF16 ? sgla_chunk_bwd3_bf16 : sgla_chunk_bwd3_f16)[bwk][pl->row[B3_DK]];
    sgla_kparams q = params(B3_DQ), r = params(B3_DK);
    sgla_tmaps tq, tk;
    if ((rc = tma_maps_dims(&q, d->dtype, &tq, q.kt, q.vt)) != SGLA_OK ||
        (rc = tma_maps_dims(&r, d->dtype, &tk, r.kt, r.vt)) != SGLA_OK)
        return rc;
    /* the dq pass's state entering every segment of every window: local states (the last one's is never
     * needed), the scan.  Its recurrence is the forward's on the pass's sizes (k' = v, v' = k): the
     * forward's first-pass instance (a split's: both warpgroups on the state's chain) makes them */
    sgla_kparams x = q;
    x.nseg = nall, x.seg_len = slen, x.seg_off = 0, x.seg_sub = 0, x.mode = 1;
    x.seg_buf = tst, x.seg_ld = tst + nall * nhc * kv;
    x.sblob = NULL, x.dot = x.dot_in = NULL, x.o = NULL, x.dotw = NULL, x.kw = NULL;
    if ((rc = launch_chunk(&chunk_kernels(d->dtype)[pl->row[B3_DQ]], pl->row[B3_DQ], &x, &tq, st)) != SGLA_OK ||
        (rc = sgla_seg_scan(x.seg_buf, x.seg_ld, q.h0, nall, nhc, kv, 0, st)) != SGLA_OK)
        return rc;
    plan wp; /* a window's split for the dk pass (split_steps, reverse) */
    memset(&wp, 0, sizeof wp);
    wp.nseg = ns, wp.seg_len = slen, wp.seg_sub = 1, wp.row = pl->row[B3_DK];
    const float *const rh0 = r.h0;
    float *const rht = r.ht;
    const float rmul = r.ht_mul;
    for (int w = pl->tseg - 1; w >= 0 && rc == SGLA_OK; w--) {
        x = q; /* mode 2 over window w's segments, their entering states from the scan */
        x.nseg = ns, x.seg_len = slen, x.seg_off = w * pl->tlen, x.seg_sub = 1, x.mode = 2;
        x.seg_buf = tst + (int64_t)w * ns * nhc * kv;
        x.blob_T = pl->tlen, x.blob_t0 = w * pl->tlen;
        if ((rc = launch_chunk(kq, pl->row[B3_DQ], &x, &tq, st)) != SGLA_OK) break;
        x = r;
        x.seg_off = w * pl->tlen;
        x.blob_T = pl->tlen, x.blob_t0 = w * pl->tlen;
        x.h0 = w == pl->tseg - 1 ? rh0 : chain;
        if (w > 0) /* the state leaving the window backwards, as it is held: the next one's h0 */
            x.ht = chain, x.ht_mul = 1.f, x.ht_raw = 1;
        else /* dh0 as the whole pass would leave it (merged: dv's; else the dv pass made it) */
            x.ht = rht, x.ht_mul = rmul;
        if (ns == 1) { /* one segment: mode 0 from h0 (in place: each thread reads its part, then writes it) */
            x.seg_len = pl->tlen;
            rc = launch_chunk(kk, pl->row[B3_DK], &x, &tk, st);
        } else { /* the split of the window: the scan starts from h0, segment 0 leaves ht */
            rc = split_steps(&wp, x, seg_ws, 1, st,
                             [&](const sgla_kparams *y) { return launch_chunk(kk, pl->row[B3_DK], y, &tk, st); });
        }
    }
    return rc;
}

/* dgc_ext: dg_gamma's chunk sums go there, zeroed and summed by the caller (batch groups), else into the
 * workspace and dg_gamma here */
static sgla_status bwd3_run(const sgla_backward_desc *b, const bwd3_plan *pl, unsigned char *ws, cudaStream_t st,
                            float *dgc_ext = NULL)
{
    const sgla_forward_desc *d = b->fwd;
    const int64_t N = sgla_num_sequences(d), nhc = N * d->H, K = d->K, V = d->V, Kp = pl->Kp, Vp = pl->Vp;
    const float s = d->scale;
    float *h0T = d->h0 ? (float *)(ws + pl->off_h0T) : NULL;
    /* dht / scale for the dv pass (none where dv is made in the dk pass), and its transpose for the dk pass */
    float *dhtS = b->dht && !pl->merged ? (float *)(ws + pl->off_dht) : NULL;
    float *dhtTS = b->dht ? (float *)(ws + pl->off_dhtT) : NULL;
    float *dh0p = b->dh0 && (Kp != K || Vp != V) ? (float *)(ws + pl->off_dh0p) : (float *)b->dh0;
    sgla_status rc = SGLA_OK;
    /* the passes' states in their layouts and sizes: h0^T; dht / scale and its transpose */
    if (h0T) rc = sgla_state_copy(h0T, Vp, Kp, (const float *)d->h0, K, V, nhc, 1, 1.f, st);
    if (rc == SGLA_OK && dhtS) rc = sgla_state_copy(dhtS, Kp, Vp, (const float *)b->dht, K, V, nhc, 0, 1.f / s, st);
    if (rc == SGLA_OK && dhtTS) rc = sgla_state_copy(dhtTS, Vp, Kp, (const float *)b->dht, K, V, nhc, 1, 1.f / s, st);
    if (rc != SGLA_OK) return rc;
    const int64_t slots = sgla_bwd_tc_slots(d->B, d->T, N);
    float *dgc = !(d->g_gamma && b->dg_gamma) ? NULL : dgc_ext ? dgc_ext : (float *)(ws + pl->off_dg);
    if (dgc && !dgc_ext) { /* dg_gamma sums it: slots no sequence covers read 0 */
        const cudaError_t e = cudaMemsetAsync(dgc, 0, (size_t)(slots * d->H) * sizeof(float), st);
        if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "backward: cudaMemsetAsync of dg's chunk sums: %s", cudaGetErrorString(e));
    }
    sgla_kparams p;
    memset(&p, 0, sizeof p);
    p.g = (const float *)d->g;
    p.g_gamma = (const float *)d->g_gamma;
    p.cu = d->cu_seqlens;
    p.T = d->T;
    p.blob_T = d->T; /* the blob's slots those of the sequence (a time window's under a cap) */
    p.blob_half = pl->half;
    p.H = d->H;
    p.N = N;
    p.scale = s;
    p.nseg = 1;
    p.gmode = d->g ? SGLA_GATE_G : (d->g_gamma ? SGLA_GATE_GAMMA : SGLA_GATE_NONE);
    p.dot_ld = pl->rows;
    p.ht_mul = 1.f;
    /* b once for the three passes, launched plainly: the dq pass as its programmatic dependent (as the
     * forward's) ran 2 % slower at K = 64 (docs/perf.md, session 17, call 4) */
    if (pl->gb_ld) {
        p.gb = (const float *)(ws + pl->off_gb), p.gb_ld = pl->gb_ld;
        if ((rc = sgla_gate_b_launch(&p, pl->sms, st)) != SGLA_OK) return rc;
    }
    void *seg_ws = ws + pl->off_seg;
    float *dots = (float *)(ws + pl->off_dot);
    float *e = dots, *ei = e + pl->nyq * pl->rows, *u = ei + pl->nyq * pl->rows, *ui = u + pl->nyk * pl->rows;
    unsigned char *blob = pl->need_dg ? ws + pl->off_blob : NULL;
    float *xc = (float *)(ws + pl->off_xc);
    void *dotw = pl->need_dg && Kp != K ? (void *)(ws + pl->off_dotw) : NULL;
    const size_t es = sgla_dtype_size(d->dtype);
    /* pass i's parameters over the whole sequence */
    const auto pass_params = [&](int i) {
        sgla_kparams x = p;
        const int mk = i == B3_DK && pl->merged, qk = i == B3_DQ && pl->qtile; /* dotw from the stage */
        if (i == B3_DQ) { /* q' = do, k' = v, v' = k */
            x.q = b->dout, x.k = d->v, x.v = d->k, x.o = b->dq, x.K = Vp, x.V = Kp, x.kt = V, x.vt = K;
            x.h0 = h0T;
            x.dotw = !pl->need_dg ? NULL : dotw && !qk ? dotw : d->q;
            x.dot = e, x.dot_in = ei, x.sblob = blob;
            if (qk) x.kw = d->q; /* the fourth tile (vt = K features) */
        } else if (i == B3_DV) {
            x.q = d->k, x.k = d->q, x.v = b->dout, x.o = b->dv, x.K = Kp, x.V = Vp, x.kt = K, x.vt = V;
            x.h0 = dhtS;
            x.ht = dh0p;
            x.ht_mul = s;
        } else {
            x.q = d->v, x.k = b->dout, x.v = d->q, x.o = b->dk, x.K = Vp, x.V = Kp, x.kt = V, x.vt = K;
            x.h0 = dhtTS;
            x.dotw = !pl->need_dg ? NULL : dotw && !mk ? dotw : d->k; /* merged: a flag (k is in the stage) */
            x.dot = u, x.dot_in = ui, x.sblob = blob, x.xc = blob ? xc : NULL;
            if (mk) x.kw = d->k, x.o2 = b->dv, x.ht = dh0p, x.ht_mul = s; /* dv as the dv pass would make it */
        }
        return x;
    };
    if (pl->tseg > 1)
        rc = bwd3_run_windows(d, pl, ws, pass_params, st);
    else
        for (int i = 0; i < B3_PASSES && rc == SGLA_OK; i++) {
            if (i == B3_DV && pl->merged) continue; /* in the dk pass */
            const int mk = i == B3_DK && pl->merged, qk = i == B3_DQ && pl->qtile; /* dotw from the stage */
            if (dotw && i != B3_DV && !mk && !qk &&
                (rc = resize(dotw, 1, Kp, i == B3_DQ ? d->q : d->k, 1, K, pl->rows, es, st)) != SGLA_OK)
                break;
            rc = bwd3_pass(d, pl, i, pass_params(i), seg_ws, st);
        }
    /* dh0 on the kernels' sizes cropped into the caller's (no pass reads dht or dh0 themselves: they take
     * dht's copies, so in place dh0 == dht waits for the end) */
    if (rc == SGLA_OK && dh0p && dh0p != (float *)b->dh0)
        rc = sgla_state_copy((float *)b->dh0, K, V, dh0p, Kp, Vp, nhc, 0, 1.f, st);
    if (rc != SGLA_OK || !pl->need_dg) return rc;
    sgla_dg3params g;
    memset(&g, 0, sizeof g);
    g.e = e, g.ei = ei, g.u = u, g.ui = ui, g.xc = xc;
    g.nyq = pl->nyq, g.nyk = pl->nyk;
    g.ld = pl->rows;
    g.cu = d->cu_seqlens;
    g.T = d->T, g.H = d->H, g.N = N;
    g.dg = (float *)b->dg, g.dgc = dgc;
    if ((rc = sgla_dg3_launch(&g, st)) != SGLA_OK) return rc;
    return dgc && !dgc_ext ? sgla_dg_gamma_launch(dgc, slots, d->H, (float *)b->dg_gamma, st) : SGLA_OK;
}

/* The three passes a batch group at a time (plan.groups > 1): each group's own plan in the workspace's
 * first gbytes; dg_gamma summed once over every group's chunk sums. */
static sgla_status bwd3_run_groups(const sgla_backward_desc *b, const device_facts *f, const bwd3_plan *pl,
                                   unsigned char *ws, cudaStream_t st)
{
    const sgla_forward_desc *d = b->fwd;
    const int64_t gslots = sgla_bwd_tc_slots(pl->gB, d->T, pl->gB);
    float *dgc = d->g_gamma && b->dg_gamma ? (float *)(ws + pl->gbytes) : NULL;
    if (dgc) {
        const cudaError_t e = cudaMemsetAsync(dgc, 0, (size_t)(pl->groups * gslots * d->H) * sizeof(float), st);
        if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "backward: cudaMemsetAsync of dg's chunk sums: %s", cudaGetErrorString(e));
    }
    sgla_status rc = SGLA_OK;
    bwd3_plan gp; /* the plan of gB rows (a shape's, not its pointers'), made again for a shorter last group */
    for (int g = 0; g < pl->groups && rc == SGLA_OK; g++) {
        sgla_forward_desc gf;
        sgla_backward_desc gb;
        bwd3_group_desc(b, pl->gB, g, &gf, &gb);
        if ((g == 0 || gf.B != pl->gB) && (!bwd3_plan_of(&gb, f, 0, &gp, pl->half) || gp.bytes > pl->gbytes))
            return sgla_fail(SGLA_ERR_INTERNAL, "backward: batch group %d has no plan within its %zu bytes", g, pl->gbytes);
        rc = bwd3_run(&gb, &gp, ws, st, dgc ? dgc + g * gslots * d->H : NULL);
    }
    if (rc != SGLA_OK || !dgc) return rc;
    return sgla_dg_gamma_launch(dgc, pl->groups * gslots, d->H, (float *)b->dg_gamma, st);
}

/* The backward's plan: the three passes where they serve (force 0 or 3), else bwd_plan_of's path. */
static sgla_status bwd_choose(const sgla_backward_desc *b, int force, int force_nseg, int force_tseg, bwd_plan *pl,
                              bwd3_plan *p3, int *three, size_t *bytes, int force_groups = 0)
{
    *three = 0;
    if (force == 0 || force == 3) {
        char why[192];
        const device_facts *f = current_device(why, sizeof why);
        if (!f || f->state != 1) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
        /* the memory-lean calls (forced windows, one included, or groups) keep every other chunk's state, as
         * a cap does, and so does a call that asks for it */
        *three = bwd3_plan_of(b, f, force_nseg, p3,
                              force_tseg >= 1 || force_groups > 1 || (b->fwd->flags & SGLA_FLAG_BWD_HALF_STATES));
        if (force == 3 && *three && force_tseg == 1 && !p3->need_dg)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "the backward's half blob is for calls with the gate's gradient");
        if (force == 3 && !*three)
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "the three-pass backward cannot serve this call (Hopper; bf16, or "
                             "fp16 without dg; K and V up to 256, multiples of 8; 16-byte aligned tensors; scale != 0)");
        if (*three && force_tseg > 1 && !bwd3_windows(b, p3, force_tseg))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "the backward in %d time windows cannot serve this call (the "
                             "gate's gradient wanted, no cu_seqlens, K of 64, 128 or 256, T >= 128)", force_tseg);
        if (*three && force_groups > 1 && !bwd3_groups(b, f, p3, force_groups))
            return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "the backward in %d batch groups cannot serve this call (the "
                             "gate's gradient wanted, no cu_seqlens, twice the SMs' (sequence, head) pairs a group)",
                             force_groups);
        /* under a workspace limit: every other chunk's state (half the blob, and faster), then with it the
         * fewest batch groups whose workspace fits it (each group filling the SMs twice over: about the time
         * of one call), else the fewest time windows */
        const size_t lim = b->workspace_limit;
        const int free_ = force_tseg < 1 && force_groups <= 1;
        size_t least = p3->bytes; /* the least of the plans tried (a window's states grow with their count) */
        if (*three && free_ && lim && p3->bytes > lim && p3->need_dg && !p3->half) {
            p3->half = 1;
            bwd3_layout(b, p3, 1);
            if (p3->bytes < least) least = p3->bytes;
        }
        for (int g = 2; *three && free_ && lim && p3->bytes > lim && g <= b->fwd->B; g++) {
            bwd3_plan x = *p3;
            if (!bwd3_groups(b, f, &x, g)) break;
            if (x.bytes < least) least = x.bytes;
            if (x.bytes <= lim) *p3 = x;
        }
        for (int t = 2; *three && free_ && lim && p3->bytes > lim && t <= 64; t++) {
            if (!bwd3_windows(b, p3, t)) break;
            if (p3->bytes < least) least = p3->bytes;
        }
        if (*three && lim && p3->bytes > lim)
            return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: no plan fits workspace_limit = %zu bytes (the "
                             "least this call takes: %zu)", lim, least);
    }
    /* where the three passes serve, a forced split is theirs and the fallback's plan is only sized (made
     * with the split, K = 256's fallback, which has none, refused a split meant for the passes) */
    const sgla_status rc = bwd_plan_of(b, force == 3 ? 0 : force, *three ? 0 : force_nseg, pl);
    if (rc != SGLA_OK) return rc;
    *bytes = *three ? p3->bytes : pl->bytes;
    if (b->workspace_limit && *bytes > b->workspace_limit)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA backward: no plan fits workspace_limit = %zu bytes (the "
                         "least this call takes: %zu)", b->workspace_limit, *bytes);
    return SGLA_OK;
}

static sgla_status cuda_backward_workspace_size(const sgla_backward_desc *b, size_t *bytes)
{
    bwd_plan pl;
    bwd3_plan p3;
    int three;
    return bwd_choose(b, 0, 0, 0, &pl, &p3, &three, bytes);
}

static sgla_status cuda_backward_run(const sgla_backward_desc *b, int force, int force_nseg, int force_tseg = 0,
                                     int force_groups = 0)
{
    const sgla_forward_desc *d = b->fwd;
    bwd_plan pl;
    bwd3_plan p3;
    int three;
    size_t need;
    sgla_status rc = bwd_choose(b, force, force_nseg, force_tseg, &pl, &p3, &three, &need, force_groups);
    if (rc != SGLA_OK) return rc;
    char why[192];
    const device_facts *f = current_device(why, sizeof why);
    if (!f || f->state != 1) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
    if ((rc = check_call(d, b->workspace, b->workspace_bytes, need, "CUDA backward")) != SGLA_OK) return rc;
    cudaStream_t st = (cudaStream_t)d->stream;
    const int64_t N = sgla_num_sequences(d);
    cudaError_t e;
    if (d->T == 0) { /* dh0 = dht (or 0), dg_gamma = 0 */
        const size_t sb = (size_t)(N * d->H * d->K * d->V) * sizeof(float);
        if (b->dh0 && b->dh0 != b->dht) {
            e = b->dht ? cudaMemcpyAsync(b->dh0, b->dht, sb, cudaMemcpyDeviceToDevice, st) : cudaMemsetAsync(b->dh0, 0, sb, st);
            if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "dh0 (T = 0): %s", cudaGetErrorString(e));
        }
        if (b->dg_gamma && (e = cudaMemsetAsync(b->dg_gamma, 0, (size_t)d->H * sizeof(float), st)) != cudaSuccess)
            return sgla_fail(SGLA_ERR_CUDA, "dg_gamma (T = 0): %s", cudaGetErrorString(e));
        return SGLA_OK;
    }
    void *wsv;
    if ((rc = ws_acquire(b->workspace, need, st, "backward", &wsv)) != SGLA_OK) return rc;
    unsigned char *ws = (unsigned char *)wsv;
    if (three)
        return ws_release(b->workspace, ws, st, p3.groups > 1 ? bwd3_run_groups(b, f, &p3, ws, st) : bwd3_run(b, &p3, ws, st),
                          "backward");
    sgla_bparams p;
    memset(&p, 0, sizeof p);
    p.q = d->q, p.k = d->k, p.v = d->v, p.dout = b->dout;
    p.g = (const float *)d->g, p.g_gamma = (const float *)d->g_gamma, p.h0 = (const float *)d->h0;
    p.dht = (const float *)b->dht, p.cu = d->cu_seqlens;
    p.dq = b->dq, p.dk = b->dk, p.dv = b->dv;
    p.dg_out = b->dg ? (float *)b->dg : d->g_gamma && b->dg_gamma ? (float *)(ws + pl.off_dg) : NULL;
    if (!b->dg && p.dg_out) { /* dg_gamma sums it: rows no sequence covers (device offsets are trusted) read 0 */
        const cudaError_t me = cudaMemsetAsync(p.dg_out, 0, (size_t)(d->B * d->T * d->H) * sizeof(float), st);
        if (me != cudaSuccess) {
            ws_release(b->workspace, ws, st, SGLA_OK, "backward");
            return sgla_fail(SGLA_ERR_CUDA, "backward: cudaMemsetAsync of dg: %s", cudaGetErrorString(me));
        }
    }
    p.dgg = (float *)b->dg_gamma, p.dh0 = (float *)b->dh0;
    p.B = d->B, p.T = d->T, p.H = d->H, p.K = d->K, p.V = d->V, p.N = N;
    p.scale = d->scale;
    p.gmode = d->g ? SGLA_GATE_G : (d->g_gamma ? SGLA_GATE_GAMMA : SGLA_GATE_NONE);
    p.nseg = pl.nseg;
    p.tc_nst = pl.tc;
    p.x3 = !(d->dtype == SGLA_F32 && (d->flags & SGLA_FLAG_ALLOW_TF32));
    p.ss = !pl.tc && sgla_bwd_grads_staged(d->K, d->V, f->optin);
    if (pl.tc) {
        p.ws_S = ws + pl.off_S;
        if (pl.nseg > 1) {
            const int64_t ns = (int64_t)pl.nseg * N * d->H * d->K * d->V;
            p.seg_len = pl.seg_len;
            p.seg_S = (float *)(ws + pl.off_seg);
            p.seg_dS = p.seg_S + ns;
            p.seg_ld = p.seg_dS + ns;
        }
    } else {
        p.base = d->cu_seqlens ? (int64_t *)ws : NULL;
        p.ws_states = (float *)(ws + pl.off_states);
        p.ws_dstates = (float *)(ws + pl.off_dstates);
    }
    return ws_release(b->workspace, ws, st, sgla_bwd_launch(&p, d->dtype, pl.blocks, st), "backward");
}

static sgla_status cuda_backward(const sgla_backward_desc *b, sgla_backend kind)
{
    (void)kind;
    return cuda_backward_run(b, 0, 0);
}

/* ---- the backend's entry and the development hooks ----------------------------------------- */

/* a state pool: every pointer on the device, validated as far as the host can
 * (sgla.h); no workspace.  With 16-bit inputs, a head size the chunked kernel
 * serves, a [K][V] pool and no speculative steps, the sequences of POOL_CHUNK_FROM tokens or
 * more run the chunked kernel on their slots and pool_fwd.cu's recurrence the
 * rest (decodes, padded rows), launched so that it may start while the chunked
 * kernel still runs (programmatic dependent launch): the two touch disjoint
 * slots and outputs, and a prefill leaves SMs idle that the decodes fill.
 * chunk = 1 runs every sequence as a recurrence: an engine's decode-only step,
 * where the host cannot see that no sequence is long (cu_seqlens lives on the
 * device) and a chunked launch of blocks that all exit at once would cost a
 * wave of 1-block-per-SM launches per 132 (sequence, head) pairs. */
enum { POOL_CHUNK_FROM = 4 };

static sgla_status cuda_pool_run(const sgla_forward_desc *d)
{
    if (d->dtype == SGLA_F64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CUDA backend: f64 inputs are for the reference backends");
    if (!sgla_pool_supported(d->K, d->V))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA state pool: K = %lld, V = %lld (it takes multiples of 4, "
                         "K <= 512)", (long long)d->K, (long long)d->V);
    if (!is_aligned(d->h0, 16))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "CUDA state pool: the pool (h0) must be 16-byte aligned");
    /* the recurrence's grid (at most N*H*ceil(V/32) blocks) checked here, before the chunked kernel of a
     * mixed batch writes anything */
    if (d->T > 0x7fffffffLL || sgla_num_sequences(d) * d->H * ((d->V + 31) / 32) > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE,
                         "CUDA state pool: T = %lld, N*H*ceil(V/32) = %lld (each must be < 2^31)", (long long)d->T,
                         (long long)(sgla_num_sequences(d) * d->H * ((d->V + 31) / 32)));
    sgla_status rc = check_call(d, d->workspace, d->workspace_bytes, 0, "CUDA backend");
    if (rc != SGLA_OK) return rc;
    char why[192];
    const device_facts *f = current_device(why, sizeof why);
    if (!f || f->state != 1) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA backend: %s", why);
    if (d->T == 0) return SGLA_OK;
    cudaStream_t st = (cudaStream_t)d->stream;
    const sgla_state_pool *sp = d->pool;
    sgla_kparams p;
    memset(&p, 0, sizeof p);
    p.q = d->q, p.k = d->k, p.v = d->v, p.o = d->o;
    p.g = (const float *)d->g, p.g_gamma = (const float *)d->g_gamma, p.h0 = (const float *)d->h0;
    p.cu = d->cu_seqlens, p.T = d->T, p.H = d->H, p.K = d->K, p.V = d->V, p.N = sgla_num_sequences(d);
    p.scale = d->scale, p.nseg = 1;
    p.gmode = d->g ? SGLA_GATE_G : (d->g_gamma ? SGLA_GATE_GAMMA : SGLA_GATE_NONE);
    sgla_poolparams pp;
    memset(&pp, 0, sizeof pp);
    pp.indices = sp->indices, pp.num_accepted = sp->num_accepted, pp.has_initial_state = sp->has_initial_state;
    pp.slots = sp->slots, pp.t_max = sp->t_max, pp.bits = sp->index_bits;
    pp.inplace = (sp->flags & SGLA_POOL_INPLACE) != 0, pp.v_first = (sp->flags & SGLA_POOL_V_FIRST) != 0;

    const sgla_cuda_plan one = {-1, 1};
    plan pl;
    const int chunked = f->hopper && d->dtype != SGLA_F32 && !sp->t_max && !pp.v_first && d->T >= POOL_CHUNK_FROM &&
                        chunk_taken(d->chunk) && native_dim(d->K) && native_v(d->V) && qkvo_aligned16(d) &&
                        make_plan(d, f, &one, &pl) == SGLA_OK;
    int64_t first = 0, last = p.N - 1; /* the sequences the chunked grid covers */
    if (chunked && sp->host_cu_seqlens) {
        const int64_t *cu = sp->host_cu_seqlens;
        first = -1;
        for (int64_t n = 0; n < p.N; n++)
            if (cu[n + 1] - cu[n] >= POOL_CHUNK_FROM) last = n, first = first < 0 ? n : first;
    }
    if (chunked && first >= 0) {
        sgla_kparams c = p;
        c.n0 = first, c.N = last - first + 1;
        c.ht = pp.inplace ? (float *)d->h0 : NULL;
        c.pidx = sp->indices, c.phis = sp->has_initial_state, c.pslots = sp->slots, c.pmin = POOL_CHUNK_FROM;
        c.pbits = sp->index_bits;
        sgla_tmaps tm;
        if ((rc = tma_maps(&c, d->dtype, &tm)) != SGLA_OK) return rc;
        /* gate g by TMA: the row's own instance, no workspace (launch_chunk); else the instance that scans g in
         * every consumer warp (GS) */
        c.gtma = gate_by_tma(&c, pl.row, 1, &tm);
        if ((rc = launch_chunk(&chunk_kernels(d->dtype)[pl.row], pl.row, &c, &tm, st)) != SGLA_OK) return rc;
    }
    if (chunked) pp.chunk_from = POOL_CHUNK_FROM; /* the long ones are the chunked kernel's, launched or not */
    /* the whole-row blocks on Hopper, where the grid is at least eight waves of three blocks an SM:
     * at 64 sequences x 16 heads (2.6 waves) their last wave made a step 4 % slower than narrow blocks */
    const int wide_ok = f->pool_wide && f->hopper && p.N * p.H * (p.V / 128) >= 24 * (int64_t)f->sms;
    return sgla_pool_launch(&p, &pp, d->dtype, chunked && first >= 0, wide_ok, st);
}

static sgla_status cuda_forward(const sgla_forward_desc *d, sgla_backend kind)
{
    (void)kind;
    if (d->pool) return cuda_pool_run(d);
    return cuda_run(d, NULL);
}

static sgla_status cuda_workspace_size(const sgla_forward_desc *d, size_t *bytes)
{
    plan pl;
    if (d->pool) {
        *bytes = 0;
        return SGLA_OK;
    }
    return plan_sized(d, &pl, bytes);
}

/* (C++17: no designated initializers; the order of sgla_backend_impl) */
extern "C" const sgla_backend_impl sgla_backend_cuda = {0, cuda_probe, cuda_forward, cuda_workspace_size,
                                                     cuda_backward, cuda_backward_workspace_size, NULL};

extern "C" int sgla_cuda_num_configs(void) { return SGLA_NUM_CHUNK_CONFIGS; }

extern "C" int sgla_cuda_config(int row, sgla_cuda_config_info *out)
{
    if (row < 0 || row >= SGLA_NUM_CHUNK_CONFIGS || !out) return 0;
    const sgla_chunk_config *c = &sgla_chunk_configs[row];
    out->K = c->K;
    out->v_min = c->v_min;
    out->v_max = c->v_max;
    out->bv = c->bv;
    out->stages = c->stages;
    out->out_wgs = c->out_wgs;
    out->smem = sgla_chunk_fwd_bf16[row].smem;
    out->threads = sgla_chunk_fwd_bf16[row].threads;
    out->why = c->why;
    out->persists = sgla_row_persists(c->K);
    return 1;
}

/* sgla_forward's checks for the CUDA backend (the hooks skip the dispatch) */
static sgla_status dev_prepare(const sgla_forward_desc *user, sgla_forward_desc *d)
{
    sgla_clear_error();
    sgla_status st = sgla_desc_read(user, d);
    if (st != SGLA_OK) return st;
    return sgla_check_desc(d, 0);
}

extern "C" sgla_status sgla_cuda_plan_of(const sgla_forward_desc *user, sgla_cuda_plan *out)
{
    sgla_forward_desc d;
    plan pl;
    sgla_status st = dev_prepare(user, &d);
    size_t bytes;
    if (st == SGLA_OK) st = plan_sized(&d, &pl, &bytes);
    if (st != SGLA_OK) return st;
    out->config = pl.portable == 1 ? SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE
                  : pl.portable   ? SGLA_CUDA_CONFIG_PORTABLE
                  : pl.f32        ? pl.f32
                                  : pl.row;
    out->nseg = pl.nseg;
    out->blocks = pl.persist;
    out->sub = pl.seg_sub;
    out->cols = pl.mcols;
    return SGLA_OK;
}

extern "C" sgla_status sgla_cuda_forward_forced(const sgla_forward_desc *user, const sgla_cuda_plan *force)
{
    sgla_forward_desc d;
    sgla_status st = dev_prepare(user, &d);
    return st != SGLA_OK ? st : cuda_run(&d, force);
}

/* the forced backward's arguments and descriptor, checked as sgla_backward checks them (query: as
 * sgla_backward_workspace_size does, tensors may be NULL) */
static sgla_status forced_backward_desc(const sgla_backward_desc *user, int path, int nseg, int query,
                                        sgla_backward_desc *bd, sgla_forward_desc *fwd)
{
    sgla_clear_error();
    if (path < 0 || path > 4) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "backward path %d", path);
    if (nseg < 0 || nseg > 64) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "backward segments %d", nseg);
    sgla_status st = sgla_backward_desc_read(user, bd, fwd);
    if (st != SGLA_OK) return st;
    return query ? sgla_check_backward_query(bd) : sgla_check_backward(bd, 0);
}

extern "C" sgla_status sgla_cuda_backward_forced_workspace(const sgla_backward_desc *user, int path, int nseg,
                                                           size_t *bytes)
{
    sgla_backward_desc bd;
    sgla_forward_desc fwd;
    bwd_plan pl;
    bwd3_plan p3;
    int three;
    const sgla_status st = forced_backward_desc(user, path, nseg, 1, &bd, &fwd);
    return st != SGLA_OK ? st : bwd_choose(&bd, path, nseg, 0, &pl, &p3, &three, bytes);
}

extern "C" sgla_status sgla_cuda_backward_forced(const sgla_backward_desc *user, int path, int nseg)
{
    sgla_backward_desc bd;
    sgla_forward_desc fwd;
    const sgla_status st = forced_backward_desc(user, path, nseg, 0, &bd, &fwd);
    return st != SGLA_OK ? st : cuda_backward_run(&bd, path, nseg);
}

/* the three passes in tseg time windows, or in groups batch groups (the other 0) */
static sgla_status backward_lean(const sgla_backward_desc *user, int tseg, int groups, size_t *bytes)
{
    sgla_backward_desc bd;
    sgla_forward_desc fwd;
    const sgla_status st = forced_backward_desc(user, 3, 0, bytes != NULL, &bd, &fwd);
    if (st != SGLA_OK || !bytes) return st != SGLA_OK ? st : cuda_backward_run(&bd, 3, 0, tseg, groups);
    bwd_plan pl;
    bwd3_plan p3;
    int three;
    return bwd_choose(&bd, 3, 0, tseg, &pl, &p3, &three, bytes, groups);
}

extern "C" sgla_status sgla_cuda_backward_windows(const sgla_backward_desc *user, int tseg, size_t *bytes)
{
    sgla_clear_error();
    if (tseg < 1 || tseg > 64) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "backward time windows %d", tseg);
    return backward_lean(user, tseg, 0, bytes);
}

extern "C" sgla_status sgla_cuda_backward_groups(const sgla_backward_desc *user, int groups, size_t *bytes)
{
    sgla_clear_error();
    if (groups < 2) return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "backward batch groups %d", groups);
    return backward_lean(user, 0, groups, bytes);
}
