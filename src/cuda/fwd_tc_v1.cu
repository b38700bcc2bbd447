/* Version 1 — the article's kernel (§5) on tensor cores, bandwidth-first.
 *
 * What it tries: the serial-in-block design (grid = (sequence x head,
 * V-blocks), chunks walked inside the block, K x BV fp32 state in registers)
 * with mma.sync m16n8k16 + ldmatrix(.trans) and a 2-stage cp.async pipeline.
 * Unlike the article's block_DV = 32, a block owns as much of V as its
 * registers allow (BV = 128 at K = 128 with 8 warps; 64 at K = 64 and 256),
 * so Q and K of a chunk are read from HBM once and Q.K^T is not recomputed
 * per V-block: FLOPs per chunk-head at D = 128 drop from ~7.5 M (BV = 32) to
 * ~6.2 M, and L2 traffic from 4x Q,K to 1x.  Risk: only B*H blocks (128 on the
 * target shapes, one per SM), so latency hiding rests on the pipeline.
 *
 * Configs (K, BV, warps, phase-2 warp grid):
 *   K=64:  BV=64,  4 warps, 2x2 (32x32 state per warp)
 *   K=128: V=64 -> BV=64, 4 warps, 4x1;  V>=128 -> BV=128, 8 warps, 4x2
 *   K=256: BV=64,  8 warps, 8x1
 */
#include "sgla_dev.cuh"

#define TC_NAME fwd_v1_k64_b64_bf16
#define TC_KD 64
#define TC_BV 64
#define TC_NW 4
#define TC_RW 2
#define TC_CW 2
#define TC_BF16 1
#define TC_STAGES 2
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v1_k64_b64_f16
#define TC_KD 64
#define TC_BV 64
#define TC_NW 4
#define TC_RW 2
#define TC_CW 2
#define TC_BF16 0
#define TC_STAGES 2
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v1_k128_b64_bf16
#define TC_KD 128
#define TC_BV 64
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 2
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v1_k128_b64_f16
#define TC_KD 128
#define TC_BV 64
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 2
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v1_k128_b128_bf16
#define TC_KD 128
#define TC_BV 128
#define TC_NW 8
#define TC_RW 4
#define TC_CW 2
#define TC_BF16 1
#define TC_STAGES 2
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v1_k128_b128_f16
#define TC_KD 128
#define TC_BV 128
#define TC_NW 8
#define TC_RW 4
#define TC_CW 2
#define TC_BF16 0
#define TC_STAGES 2
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v1_k256_b64_bf16
#define TC_KD 256
#define TC_BV 64
#define TC_NW 8
#define TC_RW 8
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 2
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v1_k256_b64_f16
#define TC_KD 256
#define TC_BV 64
#define TC_NW 8
#define TC_RW 8
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 2
#include "fwd_tc_body.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v1_cfgs[] = {
    {64, 64, 4, 2, 0, fwd_v1_k64_b64_bf16, fwd_v1_k64_b64_f16, "v1_k64_b64"},
    {128, 64, 4, 2, 0, fwd_v1_k128_b64_bf16, fwd_v1_k128_b64_f16, "v1_k128_b64"},
    {128, 128, 8, 2, 0, fwd_v1_k128_b128_bf16, fwd_v1_k128_b128_f16, "v1_k128_b128"},
    {256, 64, 8, 2, 0, fwd_v1_k256_b64_bf16, fwd_v1_k256_b64_f16, "v1_k256_b64"},
};

extern "C" sgla_status sgla_cuda_launch_tc_v1(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v1_cfgs, p, dt, st);
}
