/* Versions 2 and 3 — more independent blocks per SM.
 *
 * v1 runs one 8-warp block per SM on the target shapes (B*H = 128 blocks) and
 * measured 0.30 ms at 8x4096x16x128 (2.4x the floor) although its mma, shared
 * memory and HBM work each fit in ~0.10-0.13 ms: the phases of one block
 * (load wait, outputs, state update, two barriers per chunk) serialise.
 * What these try: halve BV so that the grid has 2x (v3 at D=64: 4x) the blocks
 * and two 4-warp blocks share an SM, overlapping one block's barriers with the
 * other's math.  Q.K^T is then recomputed per V-block, but v1 already computed
 * it twice per row block (two column-group warps), so FLOPs stay equal at
 * D=128.  To fit two blocks in 227 KB the o tile is staged in the warp's own
 * rows of the Q tile (Q fragments are held in registers: TC_QREG, TC_OQ),
 * which also drops the per-key-block reload of Q from shared memory.
 * Prediction: 0.30 -> ~0.20 ms at 8x4096x16x128, 0.35 -> ~0.22 at 4x8192x32x64.
 *
 * Configs (K: BV, warps, phase-2 grid):
 *   v2: K=64: BV=32 (2x2); K=128: BV=64 (4x1); K=256: BV=32 (4x1, Q from smem)
 *   v3: as v2 but K=64: BV=16 (4x1): 4 blocks per SM at 4x8192x32x64
 */
#include "sgla_dev.cuh"

#define TC_NAME fwd_v2_k64_b32_bf16
#define TC_KD 64
#define TC_BV 32
#define TC_NW 4
#define TC_RW 2
#define TC_CW 2
#define TC_BF16 1
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v2_k64_b32_f16
#define TC_KD 64
#define TC_BV 32
#define TC_NW 4
#define TC_RW 2
#define TC_CW 2
#define TC_BF16 0
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v3_k64_b16_bf16
#define TC_KD 64
#define TC_BV 16
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v3_k64_b16_f16
#define TC_KD 64
#define TC_BV 16
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v2_k128_b64_bf16
#define TC_KD 128
#define TC_BV 64
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v2_k128_b64_f16
#define TC_KD 128
#define TC_BV 64
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 2
#define TC_QREG 1
#define TC_OQ 1
#include "fwd_tc_body.cuh"

#define TC_NAME fwd_v2_k256_b32_bf16
#define TC_KD 256
#define TC_BV 32
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 2
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v2_k256_b32_f16
#define TC_KD 256
#define TC_BV 32
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 2
#include "fwd_tc_body.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v2_cfgs[] = {
    {64, 32, 4, 2, 1, fwd_v2_k64_b32_bf16, fwd_v2_k64_b32_f16, "v2_k64_b32"},
    {128, 64, 4, 2, 1, fwd_v2_k128_b64_bf16, fwd_v2_k128_b64_f16, "v2_k128_b64"},
    {256, 32, 4, 2, 0, fwd_v2_k256_b32_bf16, fwd_v2_k256_b32_f16, "v2_k256_b32"},
    {64, 16, 4, 2, 1, fwd_v3_k64_b16_bf16, fwd_v3_k64_b16_f16, "v3_k64_b16"},
};

extern "C" sgla_status sgla_cuda_launch_tc_v2(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    const tc_cfg *c = p->K == 64 ? &v2_cfgs[0] : p->K == 128 ? &v2_cfgs[1] : &v2_cfgs[2];
    return sgla_tc_launch(c, p, dt, st);
}
extern "C" sgla_status sgla_cuda_launch_tc_v3(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    const tc_cfg *c = p->K == 64 ? &v2_cfgs[3] : p->K == 128 ? &v2_cfgs[1] : &v2_cfgs[2];
    return sgla_tc_launch(c, p, dt, st);
}

/* Version 4 — K = 256 with two blocks per SM.
 * v1/v2 at K = 256 hold 1 block per SM (Q and K tiles are 2 x 33 KB a stage),
 * so 2x16384x8x256 runs 64-128 blocks and the sequence split cannot add any
 * (slots = SMs).  v4 drops to a single stage (load, then compute: ~100 KB) so
 * two 4-warp blocks share an SM and the split doubles the grid (nseg = 2).
 * K = 64 and 128 as v3.  Prediction: 2x16384x8x256 ~1.3-1.5x faster than v2. */
#define TC_NAME fwd_v4_k256_b32_bf16
#define TC_KD 256
#define TC_BV 32
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 1
#define TC_STAGES 1
#include "fwd_tc_body.cuh"
#define TC_NAME fwd_v4_k256_b32_f16
#define TC_KD 256
#define TC_BV 32
#define TC_NW 4
#define TC_RW 4
#define TC_CW 1
#define TC_BF16 0
#define TC_STAGES 1
#include "fwd_tc_body.cuh"

static const tc_cfg v4_cfg = {256, 32, 4, 1, 0, fwd_v4_k256_b32_bf16, fwd_v4_k256_b32_f16, "v4_k256_b32_s1"};

extern "C" sgla_status sgla_cuda_launch_tc_v4(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    const tc_cfg *c = p->K == 64 ? &v2_cfgs[3] : p->K == 128 ? &v2_cfgs[1] : &v4_cfg;
    return sgla_tc_launch(c, p, dt, st);
}
