/* Host side of the tensor-core kernels: one config row per instance and the
 * launch (shared-memory size, the opt-in above 48 KB, error checks). */
#ifndef SGLA_FWD_TC_LAUNCH_CUH
#define SGLA_FWD_TC_LAUNCH_CUH

#include <stdlib.h>
#include <string.h>

typedef void (*tc_kernel_fn)(const sgla_kparams);
typedef void (*tc_kernel_tma_fn)(const sgla_kparams, const sgla_tmaps);
typedef struct tc_cfg {
    int kd, bv, nw, stages, oq;
    tc_kernel_fn bf16, f16;
    const char *name;
    size_t smem; /* 0: tc_smem_bytes (fwd_tc_body.cuh's layout); else the instance's own size */
    tc_kernel_tma_fn tma_bf16, tma_f16; /* instead of bf16 / f16: kernels that take the TMA maps */
} tc_cfg;

/* cuTensorMapEncodeTiled, fetched once from the driver (the library does not link libcuda) */
typedef CUresult (*tc_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                 const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static tc_encode_fn tc_tma_encoder(void)
{
    static tc_encode_fn fn; /* a race here only repeats the same lookup */
    if (!fn) {
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (tc_encode_fn)f;
    }
    return fn;
}

/* Shapes the TMA versions take: a tensor map needs T >= 1, and their token coordinate is
 * an int (T < 2^31); others run v9. */
static inline int tc_tma_fits(const sgla_kparams *p) { return p->T >= 1 && p->T <= 0x7fffffffLL; }

/* q, k, v, o as 4-D (feature, head, token, batch) tensors, boxes of 64 x 1 x 64 x 1 with the
 * 128-byte swizzle; tokens past T read as zero and are not written.  With cu_seqlens the
 * batch is one packed row (the kernels copy a sequence's last chunk without TMA).  T >= 1. */
static sgla_status tc_tma_maps(const sgla_kparams *p, sgla_dtype dt, sgla_tmaps *m)
{
    tc_encode_fn enc = tc_tma_encoder();
    if (!enc) return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "the CUDA driver has no cuTensorMapEncodeTiled (TMA)");
    const CUtensorMapDataType ty = dt == SGLA_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    struct {
        CUtensorMap *map;
        const void *ptr;
        int64_t d;
        const char *name;
    } t[4] = {{&m->q, p->q, p->K, "q"}, {&m->k, p->k, p->K, "k"}, {&m->v, p->v, p->V, "v"}, {&m->o, p->o, p->V, "o"}};
    for (int i = 0; i < 4; i++) {
        const int64_t nb = p->cu ? 1 : p->N; /* cu_seqlens: one packed batch row */
        const cuuint64_t dim[4] = {(cuuint64_t)t[i].d, (cuuint64_t)p->H, (cuuint64_t)p->T, (cuuint64_t)nb};
        const cuuint64_t str[3] = {(cuuint64_t)(t[i].d * 2), (cuuint64_t)(p->H * t[i].d * 2),
                                   (cuuint64_t)(p->T * p->H * t[i].d * 2)};
        const cuuint32_t box[4] = {64, 1, 64, 1}, es[4] = {1, 1, 1, 1};
        CUresult r = enc(t[i].map, ty, 4, (void *)t[i].ptr, dim, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return sgla_fail(SGLA_ERR_CUDA, "cuTensorMapEncodeTiled(%s: %lld x %lld x %lld x %lld): CUresult %d",
                             t[i].name, (long long)t[i].d, (long long)p->H, (long long)p->T, (long long)p->N, (int)r);
    }
    return SGLA_OK;
}

/* Must match the layout in fwd_tc_body.cuh. */
static size_t tc_smem_bytes(const tc_cfg *c)
{
    size_t ldq = (size_t)c->kd + 8, ldv = (size_t)c->bv + 8;
    size_t stage = (2 * 64 * ldq + 64 * ldv) * 2;
    return c->stages * stage + c->stages * 64 * 4 + c->kd * ldv * 2 + (c->oq ? 0 : 64 * ldv * 2) + c->nw * 64 * 4;
}

/* Entering state of every segment: buf[s] holds segment s's local end state
 * (from zero) on entry and the state entering segment s on exit. */
static __global__ void sgla_seg_scan(float *buf, const float *ld, const float *h0, int nseg, int64_t nh_count,
                                     int64_t kv)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nh_count * kv) return;
    const int64_t nh = i / kv, e = i - nh * kv;
    float carry = h0 ? h0[i] : 0.f;
    for (int s = 0; s < nseg; s++) {
        float *slot = buf + ((int64_t)s * nh_count + nh) * kv + e;
        const float loc = s < nseg - 1 ? *slot : 0.f;
        *slot = carry;
        if (s < nseg - 1) carry = sgla_exp2(ld[(int64_t)s * nh_count + nh]) * carry + loc;
    }
}

static sgla_status tc_launch_one(const tc_cfg *c, const sgla_kparams *p, const void *fn, const sgla_tmaps *tm,
                                 size_t smem, cudaStream_t st)
{
    dim3 grid((unsigned)(p->N * p->H * p->nseg), (unsigned)(p->V / c->bv));
    void *args[2] = {(void *)p, (void *)tm};
    cudaError_t e = cudaLaunchKernel(fn, grid, dim3(c->nw * 32), args, smem, st);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of fwd_%s (grid %u x %u, %zu bytes smem, mode %d): %s", c->name,
                         grid.x, grid.y, smem, p->mode, cudaGetErrorString(e));
    return SGLA_OK;
}

/* Segments for the sequence split: enough to fill the SMs when B*H*(V/BV)
 * blocks alone leave them idle, each at least 8 chunks long.  1 = no split. */
static int tc_num_segments(const tc_cfg *c, const sgla_kparams *p, const void *fn, size_t smem)
{
    const char *env = getenv("SGLA_CUDA_SPLIT");
    if ((env && env[0] == '0') || p->cu || p->T < 1024) return 1;
    int dev = 0, sms = 0, bps = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, c->nw * 32, smem) != cudaSuccess || bps < 1)
        return 1;
    const int64_t base = p->N * p->H * (p->V / c->bv);
    int64_t nseg = (int64_t)sms * bps / base;
    if (nseg > p->T / 512) nseg = p->T / 512;
    if (nseg > 64) nseg = 64;
    return nseg >= 2 ? (int)nseg : 1;
}

static sgla_status sgla_tc_launch(const tc_cfg *c, const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    const void *fn = c->tma_bf16 ? (const void *)(dt == SGLA_BF16 ? c->tma_bf16 : c->tma_f16)
                                 : (const void *)(dt == SGLA_BF16 ? c->bf16 : c->f16);
    size_t smem = c->smem ? c->smem : tc_smem_bytes(c);
    sgla_tmaps tm;
    memset(&tm, 0, sizeof tm);
    if (c->tma_bf16) {
        sgla_status rc = tc_tma_maps(p, dt, &tm);
        if (rc != SGLA_OK) return rc;
    }
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "cudaFuncSetAttribute(fwd_%s, %zu bytes smem): %s", c->name, smem,
                         cudaGetErrorString(e));
    sgla_kparams q = *p;
    q.nseg = tc_num_segments(c, p, fn, smem);
    q.mode = 0;
    if (q.nseg == 1) return tc_launch_one(c, &q, fn, &tm, smem, st);

    /* split: local states, scan, outputs; workspace stream-ordered (no host sync) */
    int64_t seg_len = (p->T + q.nseg - 1) / q.nseg;
    seg_len = (seg_len + 63) / 64 * 64;
    q.nseg = (int)((p->T + seg_len - 1) / seg_len);
    q.seg_len = seg_len;
    const int64_t nhc = p->N * p->H, kv = p->K * p->V;
    void *ws = NULL;
    size_t bytes = (size_t)(q.nseg * nhc * kv + q.nseg * nhc) * sizeof(float);
    e = cudaMallocAsync(&ws, bytes, st);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "cudaMallocAsync(%zu bytes of split workspace): %s", bytes,
                         cudaGetErrorString(e));
    q.seg_buf = (float *)ws;
    q.seg_ld = q.seg_buf + q.nseg * nhc * kv;
    q.mode = 1;
    sgla_status rc = tc_launch_one(c, &q, fn, &tm, smem, st);
    if (rc == SGLA_OK) {
        const int64_t n = nhc * kv;
        sgla_seg_scan<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(q.seg_buf, q.seg_ld, p->h0, q.nseg, nhc, kv);
        e = cudaGetLastError();
        if (e != cudaSuccess) rc = sgla_fail(SGLA_ERR_CUDA, "launch of sgla_seg_scan: %s", cudaGetErrorString(e));
    }
    if (rc == SGLA_OK) {
        q.mode = 2;
        rc = tc_launch_one(c, &q, fn, &tm, smem, st);
    }
    e = cudaFreeAsync(ws, st);
    if (rc == SGLA_OK && e != cudaSuccess)
        rc = sgla_fail(SGLA_ERR_CUDA, "cudaFreeAsync(split workspace): %s", cudaGetErrorString(e));
    return rc;
}

/* Launch from a version's usual four-row table: K = 64; K = 128 with V = 64; K = 128
 * with V >= 128; K = 256. */
static inline sgla_status sgla_tc_launch4(const tc_cfg cfgs[4], const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    const tc_cfg *c = p->K == 64 ? &cfgs[0] : p->K == 128 ? (p->V == 64 ? &cfgs[1] : &cfgs[2]) : &cfgs[3];
    return sgla_tc_launch(c, p, dt, st);
}

#endif
