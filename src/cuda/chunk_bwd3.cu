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
 * The gate's gradient is the sum over the pairs (query u >= t, key s < t) of their terms (dg3_kernel),
 * assembled per chunk from what the passes take in fp32 before rounding their outputs: q.dq and
 * k.dk split into the part through the carried state and the chunk's own part, and X_c, the pairs
 * that span chunk c, from the time-order pass's 16-bit state of every chunk and the reverse pass's
 * state.  (The shorter sum_{u >= t} (q.dq - k.dk)_u is exact too, but it cancels across the whole
 * sequence: bf16's rounding of the carried states left 1-2e-2 in dg, and 3e10 where dg ~ 0.)
 * python/tests/test_bwd_as_forwards.py checks these identities in fp64. */
#include <stdint.h>

#include "cuda_backend.cuh"
#include "ptx.cuh"

namespace {

__global__ void state_copy_kernel(float *dst, int64_t dr, int64_t dc, const float *src, int64_t sr, int64_t sc,
                                  int64_t n, int trans, float mul)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t dd = dr * dc, m = i / dd, e = i - m * dd, r = e / dc, c = e - r * dc;
    /* dst (r, c) of matrix m: src (c, r) transposed, or (r, c); zero outside src */
    const int64_t a = trans ? c : r, b = trans ? r : c;
    dst[i] = a < sr && b < sc ? mul * src[(m * sr + a) * sc + b] : 0.f;
}

constexpr int DG_HEADS = 8; /* a block's heads, a warp each: a token's 8 values are one sector */

constexpr int DG_PARTS = 4; /* the passes' column blocks at most (K, V <= 256 in blocks of 64 or more) */

/* a row's parts a[y][row], y < ny <= NP, loaded all at once where `on` (a loop that added each as it
 * came waited a load's round trip a part: most of the kernel's time, docs/perf.md, session 37), and their
 * sum in the order y = 0, 1, ... from 0 (the parts past ny are 0: the same bits) */
template <int NP>
__device__ __forceinline__ void parts_load(const float *a, int ny, int64_t ld, int64_t row, bool on, float (&v)[NP])
{
#pragma unroll
    for (int y = 0; y < NP; y++) v[y] = on && y < ny ? a[y * ld + row] : 0.f;
}
template <int NP> __device__ __forceinline__ float parts_sum(const float (&v)[NP])
{
    float x = 0.f;
#pragma unroll
    for (int y = 0; y < NP; y++) x += v[y];
    return x;
}

/* A block per (sequence, 8 heads) and chunk, a warp per head (no chunk waits for another: X_c
 * carries what lies outside it).  For row r of chunk c, the pairs (query u >= r, key s < r), each
 * class a sum of terms of one sign:
 *   dg_r = X_c                        u after the chunk, s before it (the dht and h0 terms too)
 *        + sum_{u >= r} e_u           s before the chunk: q.dq through the state
 *        + sum_{s < r} u_s            u after the chunk: k.dk through the state
 *        + sum_{u >= r} (qi_u - ki_u) both in the chunk: the chunk's own parts, whose difference
 *                                     leaves the pairs (u >= r, s < r) (their 16-bit products are
 *                                     the same in both passes, so it cancels to fp32 rounding)
 * The side outputs and dg are [B T H]: the block reads and writes them a token's 8 heads at a time
 * through a transposing tile (a warp reading one head's 64 tokens touched 64 sectors for 256 bytes). */
template <int NP> /* the passes' column blocks at most: 1 (one block each, the usual) or DG_PARTS */
__global__ void __launch_bounds__(32 * DG_HEADS) dg3_kernel(const sgla_dg3params p)
{
    __shared__ float tile[3][64][DG_HEADS + 1]; /* e, u, ei - ui; then dg in [0] */
    const int64_t hb = (p.H + DG_HEADS - 1) / DG_HEADS, n = blockIdx.x / hb, h0 = (blockIdx.x - n * hb) * DG_HEADS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int th = threadIdx.x % DG_HEADS, tr = threadIdx.x / DG_HEADS; /* the tile copies' head and row */
    const int64_t h = h0 + warp;
    const bool hin = h < p.H, thin = h0 + th < p.H;
    int64_t bidx = n, t0 = 0, t1 = p.T;
    if (p.cu) {
        int64_t a = p.cu[n], e = p.cu[n + 1];
        a = a < 0 ? 0 : (a > p.T ? p.T : a);
        e = e < a ? a : (e > p.T ? p.T : e);
        bidx = 0, t0 = a, t1 = e;
    }
    const int64_t slot0 = sgla_chunk_slot(bidx, p.T, t0, n, 0);
    for (int64_t c = blockIdx.y; t0 + 64 * c < t1; c += gridDim.y) { /* the same trips in every warp */
        const int64_t c0 = t0 + 64 * c;
        const int L = (int)(t1 - c0 < 64 ? t1 - c0 : 64);
        const int64_t rb = (bidx * p.T + c0) * p.H + h0 + th; /* row tr of the chunk, head h0 + th */
        __syncthreads(); /* the last chunk's tile is read */
        /* every load of the chunk first (two rows a thread, and X_c's parts), then the sums */
        float ve[2][NP], vu[2][NP], vei[2][NP], vui[2][NP], vx[4 * NP];
#pragma unroll
        for (int k = 0; k < 2; k++) { /* 32 rows a pass: 32 DG_HEADS threads, DG_HEADS a row */
            const int i = tr + 32 * k;
            const bool on = i < L && thin;
            const int64_t r = rb + (int64_t)i * p.H;
            parts_load(p.e, p.nyq, p.ld, r, on, ve[k]), parts_load(p.u, p.nyk, p.ld, r, on, vu[k]);
            parts_load(p.ei, p.nyq, p.ld, r, on, vei[k]), parts_load(p.ui, p.nyk, p.ld, r, on, vui[k]);
        }
        const float *xp = p.xc + ((slot0 + c) * p.H + h) * p.nyk * SGLA_XC_STRIDE;
#pragma unroll
        for (int i = 0; i < 4 * NP; i++) vx[i] = hin && i < 4 * p.nyk ? xp[(i >> 2) * SGLA_XC_STRIDE + (i & 3)] : 0.f;
        const float xn = hin ? xp[4] : 0.f; /* 1: vx is s <R_c, S_{c+1}>, from which the chunk's u goes */
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const int i = tr + 32 * k;
            tile[0][i][th] = parts_sum(ve[k]), tile[1][i][th] = parts_sum(vu[k]);
            tile[2][i][th] = parts_sum(vei[k]) - parts_sum(vui[k]);
        }
        float X = 0.f;
#pragma unroll
        for (int i = 0; i < 4 * NP; i++) X += vx[i];
        __syncthreads();
        float e0 = tile[0][lane][warp], e1 = tile[0][lane + 32][warp];
        float u0 = tile[1][lane][warp], u1 = tile[1][lane + 32][warp];
        float d0 = tile[2][lane][warp], d1 = tile[2][lane + 32][warp];
        if (xn != 0.f) { /* X_c = s <R_c, S_{c+1}> - the chunk's u (chunk_fwd.cuh: blob_kept) */
            float ut = u0 + u1;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) ut += __shfl_xor_sync(0xffffffffu, ut, m);
            X -= ut;
        }
        sgla_warp_suffix64(e0, e1, lane);
        sgla_warp_suffix64(d0, d1, lane);
        sgla_warp_prefix64_excl(u0, u1, lane);
        const float g0 = lane < L ? X + e0 + u0 + d0 : 0.f, g1 = lane + 32 < L ? X + e1 + u1 + d1 : 0.f;
        if (p.dgc) { /* dg_gamma's share of this chunk, in a fixed order */
            float x = g0 + g1;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
            if (lane == 0 && hin) p.dgc[(slot0 + c) * p.H + h] = x;
        }
        if (p.dg) {
            __syncthreads(); /* every warp has its column of [0] */
            tile[0][lane][warp] = g0, tile[0][lane + 32][warp] = g1;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < 64; k += 32) {
                const int i = tr + k;
                if (i < L && thin) p.dg[rb + (int64_t)i * p.H] = tile[0][i][th];
            }
        }
    }
}

} /* namespace */

sgla_status sgla_state_copy(float *dst, int64_t dr, int64_t dc, const float *src, int64_t sr, int64_t sc, int64_t nhc,
                            int trans, float mul, cudaStream_t st)
{
    const int64_t n = nhc * dr * dc;
    if (n == 0) return SGLA_OK;
    state_copy_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(dst, dr, dc, src, sr, sc, n, trans, mul);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the backward's state copy: %s", cudaGetErrorString(e));
}

sgla_status sgla_dg3_launch(const sgla_dg3params *p, cudaStream_t st)
{
    if (p->N * p->H == 0 || p->T == 0) return SGLA_OK;
    if (p->nyq < 1 || p->nyq > DG_PARTS || p->nyk < 1 || p->nyk > DG_PARTS)
        return sgla_fail(SGLA_ERR_INTERNAL, "the backward's dg: %d and %d column blocks (1 to %d)", p->nyq, p->nyk,
                         DG_PARTS);
    /* enough blocks to fill the device for a few long sequences, one a (sequence, 8 heads) for many */
    const int64_t hb = (p->H + DG_HEADS - 1) / DG_HEADS, chunks = (p->T + 63) / 64;
    int64_t gy = 4096 / (p->N * hb);
    gy = gy < 1 ? 1 : (gy > chunks ? chunks : gy);
    const dim3 grid((unsigned)(p->N * hb), (unsigned)gy);
    if (p->nyq == 1 && p->nyk == 1) dg3_kernel<1><<<grid, 32 * DG_HEADS, 0, st>>>(*p);
    else dg3_kernel<DG_PARTS><<<grid, 32 * DG_HEADS, 0, st>>>(*p);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK : sgla_fail(SGLA_ERR_CUDA, "launch of the backward's dg: %s", cudaGetErrorString(e));
}
