/* Version 7 — v5's kernel with 16 warps (512 threads) instead of 8.
 *
 * Nsight Compute on v5 at 8x4096x16x128 (bf16, g_gamma; bench/ncu_profile.sh,
 * 2026-11-29): 2 warps per scheduler, 0.47 of them eligible, issue slots 37%
 * busy, tensor pipe 27.5% active, DRAM 40% of peak; per issued instruction
 * 5.4 cycles, of which 1.7 "wait" (fixed-latency dependencies), 1.2 short
 * scoreboard (ldmatrix / shared memory), 0.25 barrier and only 0.24 long
 * scoreboard (global loads).  So v5 is latency-bound, not memory-bound: each
 * scheduler has two warps to pick from and both are usually waiting.
 * v7 doubles the warps with the same work per chunk (body fwd_tc_body5.cuh
 * with T5_NW = 16):
 *   - phase 1: 4 row blocks x 4 column groups (BV / 4 output columns each);
 *     warp w holds row block w >> 2, so each sub-partition (w & 3) runs one warp
 *     of every row block: equal causal work; the 2 (r + 1) score half-tiles of
 *     row block r are dealt round-robin to its 4 warps (no Q.K^T twice) and met
 *     at a 128-thread named barrier;
 *   - phase 2: the state on a 4 x 4 (K = 128) or 8 x 2 (K = 256) warp grid,
 *     32 x 32 fp32 per warp (32 registers instead of 64);
 *   - at most 128 registers a thread (65536 / 512).
 * Shared-memory reads per chunk grow (~350 -> ~410 KB at D = 128: smaller warp
 * tiles re-read S_s and V more), so the gain is bounded by the ldmatrix rate.
 * Prediction: 8x4096x16x128 0.268 -> ~0.19 ms (issue slots ~37% -> ~60%);
 * 2x16384x8x256 0.89 -> ~0.65; K = 64 (4x8192x32x64) about v1's 0.30.
 *
 * Configs (K, BV, phase-2 warp grid, S double-buffered), 16 warps, 2 stages:
 *   K=64:  BV=64, 4x4, yes (~97 KB)
 *   K=128: V=64 -> BV=64, 4x4, yes; V>=128 -> BV=128, 4x4, yes (~205 KB)
 *   K=256: BV=64, 8x2, no (~213 KB)
 */
#include "sgla_dev.cuh"

#define T5_NAME fwd_v7_k64_b64_bf16
#define T5_NW 16
#define T5_KD 64
#define T5_BV 64
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k64_b64_f16
#define T5_NW 16
#define T5_KD 64
#define T5_BV 64
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k128_b64_bf16
#define T5_NW 16
#define T5_KD 128
#define T5_BV 64
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k128_b64_f16
#define T5_NW 16
#define T5_KD 128
#define T5_BV 64
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k128_b128_bf16
#define T5_NW 16
#define T5_KD 128
#define T5_BV 128
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 1
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k128_b128_f16
#define T5_NW 16
#define T5_KD 128
#define T5_BV 128
#define T5_RW 4
#define T5_CW 4
#define T5_BF16 0
#define T5_SDB 1
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k256_b64_bf16
#define T5_NW 16
#define T5_KD 256
#define T5_BV 64
#define T5_RW 8
#define T5_CW 2
#define T5_BF16 1
#define T5_SDB 0
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#define T5_NAME fwd_v7_k256_b64_f16
#define T5_NW 16
#define T5_KD 256
#define T5_BV 64
#define T5_RW 8
#define T5_CW 2
#define T5_BF16 0
#define T5_SDB 0
#define T5_MINB 1
#include "fwd_tc_body5.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v7_cfgs[] = {
    {64, 64, 16, 2, 0, fwd_v7_k64_b64_bf16, fwd_v7_k64_b64_f16, "v7_k64_b64", T5_SMEM(64, 64, 1, 16)},
    {128, 64, 16, 2, 0, fwd_v7_k128_b64_bf16, fwd_v7_k128_b64_f16, "v7_k128_b64", T5_SMEM(128, 64, 1, 16)},
    {128, 128, 16, 2, 0, fwd_v7_k128_b128_bf16, fwd_v7_k128_b128_f16, "v7_k128_b128", T5_SMEM(128, 128, 1, 16)},
    {256, 64, 16, 2, 0, fwd_v7_k256_b64_bf16, fwd_v7_k256_b64_f16, "v7_k256_b64", T5_SMEM(256, 64, 0, 16)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v7(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v7_cfgs, p, dt, st);
}
