/* Host side of the tensor-core kernels: one config row per instance and the
 * launch (shared-memory size, the opt-in above 48 KB, error checks). */
#ifndef SGLA_FWD_TC_LAUNCH_CUH
#define SGLA_FWD_TC_LAUNCH_CUH

#include <stdlib.h>

typedef void (*tc_kernel_fn)(const sgla_kparams);
typedef struct tc_cfg {
    int kd, bv, nw, stages, oq;
    tc_kernel_fn bf16, f16;
    const char *name;
    size_t smem; /* 0: tc_smem_bytes (fwd_tc_body.cuh's layout); else the instance's own size */
} tc_cfg;

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

static sgla_status tc_launch_one(const tc_cfg *c, const sgla_kparams *p, tc_kernel_fn fn, size_t smem,
                                 cudaStream_t st)
{
    dim3 grid((unsigned)(p->N * p->H * p->nseg), (unsigned)(p->V / c->bv));
    fn<<<grid, c->nw * 32, smem, st>>>(*p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of fwd_%s (grid %u x %u, %zu bytes smem, mode %d): %s", c->name,
                         grid.x, grid.y, smem, p->mode, cudaGetErrorString(e));
    return SGLA_OK;
}

/* Segments for the sequence split: enough to fill the SMs when B*H*(V/BV)
 * blocks alone leave them idle, each at least 8 chunks long.  1 = no split. */
static int tc_num_segments(const tc_cfg *c, const sgla_kparams *p, tc_kernel_fn fn, size_t smem)
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
    tc_kernel_fn fn = dt == SGLA_BF16 ? c->bf16 : c->f16;
    size_t smem = c->smem ? c->smem : tc_smem_bytes(c);
    cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "cudaFuncSetAttribute(fwd_%s, %zu bytes smem): %s", c->name, smem,
                         cudaGetErrorString(e));
    sgla_kparams q = *p;
    q.nseg = tc_num_segments(c, p, fn, smem);
    q.mode = 0;
    if (q.nseg == 1) return tc_launch_one(c, &q, fn, smem, st);

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
    sgla_status rc = tc_launch_one(c, &q, fn, smem, st);
    if (rc == SGLA_OK) {
        const int64_t n = nhc * kv;
        sgla_seg_scan<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(q.seg_buf, q.seg_ld, p->h0, q.nseg, nhc, kv);
        e = cudaGetLastError();
        if (e != cudaSuccess) rc = sgla_fail(SGLA_ERR_CUDA, "launch of sgla_seg_scan: %s", cudaGetErrorString(e));
    }
    if (rc == SGLA_OK) {
        q.mode = 2;
        rc = tc_launch_one(c, &q, fn, smem, st);
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
