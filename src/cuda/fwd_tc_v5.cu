/* Version 5 — v1 with the mma.sync work cut and its chains interleaved.
 *
 * v1 measured 0.30 ms at 8x4096x16x128 (~9200 cycles per chunk per SM) against
 * ~3200 cycles of mma.sync on its busiest sub-partition and ~3600 of ldmatrix
 * traffic (460 KB per chunk): the time goes to latency (dependent Q.K^T chains:
 * 2 accumulators x 8 k-steps per key block, key blocks one after another),
 * duplicated work and barriers.  What v5 changes (kernel body: fwd_tc_body5.cuh):
 *   1. no duplicated Q.K^T: the two column-group warps of a row block split its
 *      score tiles (each the 16 x 8 half-tiles of its own 8 keys of every key
 *      block), round them into a shared A tile and meet at a 64-thread named
 *      barrier; 1504 -> 1344 mma.sync per chunk-head at D = 128 (-11%);
 *   2. Q.K^T in the same k-loop as Q.S: one Q fragment load serves both, the
 *      r1 + 1 score chains run beside the 8 Q.S chains (no chain stands alone),
 *      K fragments loaded once per two k-steps (ldmatrix.x4); ldmatrix traffic
 *      ~460 -> ~350 KB per chunk at D = 128;
 *   3. every SM sub-partition gets equal causal work: row block of warp pair pr
 *      is gray(pr), so warps w and w + 4 hold row blocks {0, 3} or {1, 2};
 *   4. the state's 16-bit copy is double-buffered (S_s[c & 1] read, S_s[(c+1) & 1]
 *      written) so the end-of-chunk __syncthreads goes: one block barrier per
 *      chunk instead of two (not at K = 256: 36 KB more does not fit);
 *   5. 8 warps everywhere (K = 64 too: 2 blocks per SM instead of v1's 4-warp
 *      blocks), so the pair split applies to every shape.
 * Numerics are v1's: same products, same fp32 weights, same rounding points
 * (A rounded once to 16 bits, exactly as v1 rounds it into registers).
 * Prediction: 8x4096x16x128 0.30 -> ~0.25 ms; 4x8192x32x64 0.30 -> ~0.26;
 * 2x16384x8x256 1.05 -> ~0.95 (mma.sync still bounds D = 256: see v6).
 *
 * Configs (K, BV, phase-2 warp grid, S double-buffered), all 8 warps, 2 stages:
 *   K=64:  BV=64, 4x2, yes (92.5 KB: 2 blocks per SM, registers capped at 128)
 *   K=128: V=64 -> BV=64, 4x2, yes (142.5 KB); V>=128 -> BV=128, 4x2, yes (198.5 KB)
 *   K=256: BV=64, 8x1, no (206.5 KB)
 */
#include "sgla_dev.cuh"

#define T5_NAME fwd_v5_k64_b64_bf16
#define T5_KD 64
#define T5_BV 64
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 2
#include "fwd_tc_body5.cuh"
#define T5_NAME fwd_v5_k64_b64_f16
#define T5_KD 64
#define T5_BV 64
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 2
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v5_k128_b64_bf16
#define T5_KD 128
#define T5_BV 64
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"
#define T5_NAME fwd_v5_k128_b64_f16
#define T5_KD 128
#define T5_BV 64
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v5_k128_b128_bf16
#define T5_KD 128
#define T5_BV 128
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"
#define T5_NAME fwd_v5_k128_b128_f16
#define T5_KD 128
#define T5_BV 128
#define T5_RW 4
#define T5_CW 2
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v5_k256_b64_bf16
#define T5_KD 256
#define T5_BV 64
#define T5_RW 8
#define T5_CW 1
#define T5_BF16 1
#define T5_SDB 0
#define T5_MINB 1
#include "fwd_tc_body5.cuh"
#define T5_NAME fwd_v5_k256_b64_f16
#define T5_KD 256
#define T5_BV 64
#define T5_RW 8
#define T5_CW 1
#define T5_BF16 0
#define T5_SDB 0
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#include "fwd_tc_launch.cuh"


static const tc_cfg v5_cfgs[] = {
    {64, 64, 8, 2, 0, fwd_v5_k64_b64_bf16, fwd_v5_k64_b64_f16, "v5_k64_b64", T5_SMEM(64, 64, 1, 8)},
    {128, 64, 8, 2, 0, fwd_v5_k128_b64_bf16, fwd_v5_k128_b64_f16, "v5_k128_b64", T5_SMEM(128, 64, 1, 8)},
    {128, 128, 8, 2, 0, fwd_v5_k128_b128_bf16, fwd_v5_k128_b128_f16, "v5_k128_b128", T5_SMEM(128, 128, 1, 8)},
    {256, 64, 8, 2, 0, fwd_v5_k256_b64_bf16, fwd_v5_k256_b64_f16, "v5_k256_b64", T5_SMEM(256, 64, 0, 8)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v5(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v5_cfgs, p, dt, st);
}
