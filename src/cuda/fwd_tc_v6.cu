/* Version 6 — the chunk kernel on wgmma (sm_90a warpgroup MMA).  EXPERIMENTAL.
 *
 * v1 and v5 issue every product as mma.sync m16n8k16 from single warps: the
 * shared operand (S in Q.S, K in Q.K^T, V in A.V and K^T.V) is re-read by every
 * warp through ldmatrix, and mma.sync runs at about half of wgmma's rate on
 * Hopper.  What v6 tries: two warpgroups per block, each owning half of the
 * block's V columns for both the outputs and the state; all four products are
 * wgmma m64nNk16 with B read straight from shared memory by descriptor
 * (no-swizzle canonical layouts, the tiles written into that layout by the
 * cp.async copies themselves), A from shared memory (Q) or from registers (the
 * masked, weighted scores for A.V; K^T weighted by exp2(b_last - b) for the
 * state update).  Each warpgroup reads only its own columns of the state's
 * 16-bit copy, so one block barrier per chunk remains.  Inside a chunk each
 * warpgroup issues Q.K^T and Q.S as two wgmma groups and weights the scores while
 * Q.S runs, then A.V while it builds the state update's A fragments (ldmatrix.trans
 * of K, scaled), then K^T.V.  Numerics are v1's (same fp32 weights, same rounding
 * points), except that Q.K^T is computed on the full 64 x 64 tile (the masked half
 * is discarded by select, never weighted).
 * FLOPs per chunk-head at D = 128: 7.3 M (Q.K^T done by both warpgroups, full
 * tile) against v5's 5.5 M, at ~2x the issue rate.
 * Prediction: 8x4096x16x128 0.30 -> ~0.17 ms; 4x8192x32x64 ~0.20; 2x16384x8x256
 * 1.05 -> ~0.5 ms (wgmma at D = 256).  Unverified on the device when written:
 * the descriptor layouts and register fragments follow the PTX ISA text and were
 * checked by a host emulation (src/cuda/emu/emu6.cpp), not by a run.
 *
 * Configs (K, BV = columns per block; each warpgroup BV / 2), 8 warps, 2 stages:
 *   K=64: BV=64;  K=128: V=64 -> BV=64, V>=128 -> BV=128;  K=256: BV=64
 */
#include "sgla_dev.cuh"
#include "sgla_wgmma.cuh"

#define T6_NAME fwd_v6_k64_b64_bf16
#define T6_KD 64
#define T6_BV 64
#define T6_BF16 1
#define T6_MINB 2
#include "fwd_tc_body6.cuh"
#define T6_NAME fwd_v6_k64_b64_f16
#define T6_KD 64
#define T6_BV 64
#define T6_BF16 0
#define T6_MINB 2
#include "fwd_tc_body6.cuh"

#define T6_NAME fwd_v6_k128_b64_bf16
#define T6_KD 128
#define T6_BV 64
#define T6_BF16 1
#define T6_MINB 1
#include "fwd_tc_body6.cuh"
#define T6_NAME fwd_v6_k128_b64_f16
#define T6_KD 128
#define T6_BV 64
#define T6_BF16 0
#define T6_MINB 1
#include "fwd_tc_body6.cuh"

#define T6_NAME fwd_v6_k128_b128_bf16
#define T6_KD 128
#define T6_BV 128
#define T6_BF16 1
#define T6_MINB 1
#include "fwd_tc_body6.cuh"
#define T6_NAME fwd_v6_k128_b128_f16
#define T6_KD 128
#define T6_BV 128
#define T6_BF16 0
#define T6_MINB 1
#include "fwd_tc_body6.cuh"

#define T6_NAME fwd_v6_k256_b64_bf16
#define T6_KD 256
#define T6_BV 64
#define T6_BF16 1
#define T6_MINB 1
#include "fwd_tc_body6.cuh"
#define T6_NAME fwd_v6_k256_b64_f16
#define T6_KD 256
#define T6_BV 64
#define T6_BF16 0
#define T6_MINB 1
#include "fwd_tc_body6.cuh"

#include "fwd_tc_launch.cuh"

/* Must match the layout in fwd_tc_body6.cuh: 2 stages of Q, K (64 x KD) and V
 * (64 x BV) in core-matrix order; S_s KD x BV; O_s [64][BV+8]; g [2][64] f32;
 * b [8][64] f32. */
#define T6_SMEM(kd, bv)                                                                        \
    ((size_t)2 * (2 * 64 * (kd) + 64 * (bv)) * 2 + (size_t)(kd) * (bv) * 2 + 64 * ((bv) + 8) * 2 + \
     2 * 64 * 4 + 8 * 64 * 4)

static const tc_cfg v6_cfgs[] = {
    {64, 64, 8, 2, 0, fwd_v6_k64_b64_bf16, fwd_v6_k64_b64_f16, "v6_k64_b64", T6_SMEM(64, 64)},
    {128, 64, 8, 2, 0, fwd_v6_k128_b64_bf16, fwd_v6_k128_b64_f16, "v6_k128_b64", T6_SMEM(128, 64)},
    {128, 128, 8, 2, 0, fwd_v6_k128_b128_bf16, fwd_v6_k128_b128_f16, "v6_k128_b128", T6_SMEM(128, 128)},
    {256, 64, 8, 2, 0, fwd_v6_k256_b64_bf16, fwd_v6_k256_b64_f16, "v6_k256_b64", T6_SMEM(256, 64)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v6(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v6_cfgs, p, dt, st);
}
