/* Version 8 — wgmma with the two warpgroups specialised: one makes the outputs,
 * the other carries the state, both on the same chunk at the same time.
 *
 * Profiles (bench/ncu_source.sh, 8x4096x16x128, bf16, g_gamma, 2026-11-29):
 * v5 (mma.sync) spends its time in latency stalls with 2 warps per scheduler
 * (wait 30%, short scoreboard 30% of samples), and half of its instructions are
 * the per-chunk scalar tail; 16 warps (v7) did not help.  v6 (wgmma, both
 * warpgroups doing everything on half of the columns each) runs each warpgroup
 * through the whole serial chain (Q.K^T -> weights -> Q.S -> A.V -> K^T V ->
 * state store) and its scalar tail is 54% of the instructions.
 * What v8 changes (body fwd_tc_body8.cuh):
 *   - WG 0 computes the chunk's outputs for all BV columns (Q.K^T once, not twice;
 *     Q.S and A.V as m64nBV); WG 1 computes the state update for all BV columns
 *     (KD x BV fp32 in its registers) and writes S_{c+1}'s 16-bit copy into the
 *     other of two S_s buffers.  WG 0's chain no longer contains the state update
 *     and WG 1's no longer contains the outputs: the chunk costs the longer of the
 *     two chains, not their sum;
 *   - 3 cp.async stages where shared memory allows (K <= 128): two chunks in
 *     flight; o staged in the chunk's Q tile (swizzled rows), so no O_s;
 *   - the cheap scalar paths of v5: full-chunk copies from fixed per-thread slots,
 *     K scaled by packed 16-bit weight pairs, scale folded into the weights,
 *     stmatrix for S_s and o.
 * FLOPs per chunk-head at D = 128: 6.3 M (Q.K^T on the full 64 x 64 tile).
 * Prediction: 8x4096x16x128 0.25 -> ~0.16 ms (WG 0's chain ~2500 cycles a chunk
 * against ~4000 of memory at the per-SM share of HBM); 4x8192x32x64 ~0.17;
 * 2x16384x8x256 ~0.5; 64x1024x16x128 ~0.32.
 *
 * Configs (K, BV, stages, blocks per SM), 8 warps:
 *   K=64: BV=64, 3, 2;  K=128: V=64 -> BV=64, 3, 1; V>=128 -> BV=128, 3, 1;  K=256: BV=64, 2, 1
 */
#include "sgla_dev.cuh"
#include "sgla_wgmma.cuh"

#define T8_NAME fwd_v8_k64_b64_bf16
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 2
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k64_b64_f16
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 2
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k128_b64_bf16
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k128_b64_f16
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k128_b128_bf16
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k128_b128_f16
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k256_b64_bf16
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v8_k256_b64_f16
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v8_cfgs[] = {
    {64, 64, 8, 3, 0, fwd_v8_k64_b64_bf16, fwd_v8_k64_b64_f16, "v8_k64_b64", T8_SMEM(64, 64, 3, 0)},
    {128, 64, 8, 3, 0, fwd_v8_k128_b64_bf16, fwd_v8_k128_b64_f16, "v8_k128_b64", T8_SMEM(128, 64, 3, 0)},
    {128, 128, 8, 3, 0, fwd_v8_k128_b128_bf16, fwd_v8_k128_b128_f16, "v8_k128_b128", T8_SMEM(128, 128, 3, 0)},
    {256, 64, 8, 2, 0, fwd_v8_k256_b64_bf16, fwd_v8_k256_b64_f16, "v8_k256_b64", T8_SMEM(256, 64, 2, 0)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v8(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v8_cfgs, p, dt, st);
}
