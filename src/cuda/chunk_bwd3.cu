/* The backward as three passes of the chunked forward kernel (chunk_fwd.cuh with BW = 1, 2;
 * instances in chunk_bwd3_bf16.cu, chunk_bwd3_f16.cu), and the small kernels around them.
 *
 * With b the cumulative log gate and w_tu = exp(b_t - b_u) (t >= u), the forward is
 * o_t = scale (sum_{u<=t} w_tu (q_t.k_u) v_u + exp(b_t) h0^T q_t).  Its gradients are three
 * linear attentions of the same form:
 *   dq_t = scale sum_{u<=t} w_tu (do_t.v_u) k_u + ...     time order: q' = do, k' = v, v' = k, h0' = h0^T
 *   dv_u = scale sum_{t>=u} w_tu (k_u.q_t) do_t + ...     reverse:    q' = k, k' = q, v' = do, end state dht / scale
 *   dk_u = scale sum_{t>=u} w_tu (v_u.do_t) q_t + ...     reverse:    q' = v, k' = do, v' = q, end state dht^T / scale
 * dh0 is scale x the dv pass's state before the first token; the dq pass's end state is ht^T.
 * The gate's gradient (with respect to b_t, then summed from the end):
 *   dg_t = sum_{u>=t} (q_u.dq_u - k_u.dk_u) + <ht, dht>,
 * from q.dq and k.dk that the dq and dk passes take in fp32 before rounding their outputs
 * (python/tests/test_bwd_as_forwards.py checks these identities in fp64). */
#include <stdint.h>

#include "cuda_backend.cuh"

namespace {

__global__ void state_copy_kernel(float *dst, const float *src, int64_t n, int64_t R, int64_t C, int trans, float mul)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t rc = R * C, m = i / rc, e = i - m * rc;
    /* dst element e of matrix m: (c, r) of the transposed layout, or (r, c) */
    const int64_t s = trans ? (e % R) * C + e / R : e;
    dst[i] = mul * src[m * rc + s];
}

constexpr int DG_THREADS = 512;

/* the sum of x over the block, in a fixed order; every thread gets it */
__device__ float block_total(float x, float *red)
{
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads(); /* red is free */
    if (lane == 0) red[warp] = x;
    __syncthreads();
    float t = 0.f;
    for (int i = 0; i < DG_THREADS / 32; i++) t += red[i];
    return t;
}

__device__ __forceinline__ float dg_term(const sgla_dg3params &p, int64_t row)
{
    float a = 0.f;
    for (int y = 0; y < p.nyq; y++) a += p.dotq[y * p.ld + row];
    for (int y = 0; y < p.nyk; y++) a -= p.dotk[y * p.ld + row];
    return a;
}

/* one block per (sequence, head): thread i sums the terms of its run of tokens, the block's
 * exclusive suffix sums of those give each run's start value, and each thread walks its run
 * from the end.  One order of additions: deterministic. */
__global__ void __launch_bounds__(DG_THREADS) dg3_kernel(const sgla_dg3params p)
{
    __shared__ float red[DG_THREADS / 32];
    const int64_t nh = blockIdx.x, n = nh / p.H, h = nh - n * p.H;
    float X = 0.f;
    if (p.htT) { /* <ht, dht>: htT [V][K], dht [K][V] */
        const int64_t kv = p.K * p.V;
        const float *a = p.htT + nh * kv, *b = p.dht + nh * kv;
        float part = 0.f;
        for (int64_t i = threadIdx.x; i < kv; i += DG_THREADS) part = fmaf(a[i], b[(i % p.K) * p.V + i / p.K], part);
        X = block_total(part, red);
    }
    int64_t bidx = n, t0 = 0, t1 = p.T;
    if (p.cu) {
        int64_t s = p.cu[n], e = p.cu[n + 1];
        s = s < 0 ? 0 : (s > p.T ? p.T : s);
        e = e < s ? s : (e > p.T ? p.T : e);
        bidx = 0, t0 = s, t1 = e;
    }
    const int64_t len = t1 - t0, span = (len + DG_THREADS - 1) / DG_THREADS;
    const int64_t a0 = t0 + threadIdx.x * span < t1 ? t0 + threadIdx.x * span : t1;
    const int64_t a1 = a0 + span < t1 ? a0 + span : t1;
    const int64_t rs = p.H, r0 = (bidx * p.T) * p.H + h; /* row of token t: r0 + t H */
    float mine = 0.f;
    for (int64_t t = a0; t < a1; t++) mine += dg_term(p, r0 + t * rs);
    /* exclusive suffix sum of mine over the threads after this one */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float x = mine;
    for (int off = 1; off < 32; off <<= 1) {
        const float y = __shfl_down_sync(0xffffffffu, x, off);
        if (lane + off < 32) x += y;
    }
    __syncthreads(); /* red is free */
    if (lane == 0) red[warp] = x; /* the warp's total */
    __syncthreads();
    float acc = __shfl_down_sync(0xffffffffu, x, 1); /* exclusive by a shift, not x - mine (which rounds) */
    if (lane == 31) acc = 0.f;
    acc += X;
    for (int i = warp + 1; i < DG_THREADS / 32; i++) acc += red[i];
    for (int64_t t = a1 - 1; t >= a0; t--) {
        acc += dg_term(p, r0 + t * rs);
        p.dg[r0 + t * rs] = acc;
    }
}

} /* namespace */

sgla_status sgla_state_copy(float *dst, const float *src, int64_t nhc, int64_t R, int64_t C, int trans, float mul,
                            cudaStream_t st)
{
    const int64_t n = nhc * R * C;
    if (n == 0) return SGLA_OK;
    state_copy_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(dst, src, n, R, C, trans, mul);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the backward's state copy: %s", cudaGetErrorString(e));
}

sgla_status sgla_dg3_launch(const sgla_dg3params *p, cudaStream_t st)
{
    if (p->N * p->H == 0) return SGLA_OK;
    dg3_kernel<<<(unsigned)(p->N * p->H), DG_THREADS, 0, st>>>(*p);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK : sgla_fail(SGLA_ERR_CUDA, "launch of the backward's dg: %s", cudaGetErrorString(e));
}
