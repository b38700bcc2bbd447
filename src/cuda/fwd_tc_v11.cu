/* Versions 11 and 12 — v9 with the copies made by the tensor memory accelerator.
 *
 * v9's profiles (bench/ncu_source.sh, 2026-11-29): its producer warpgroup spends most
 * of its time issuing 16-byte cp.async (address math and LSU throttle: 76% of its
 * samples at 8x4096x16x128, 80% at 2x16384x8x256), and while it does, both math
 * warpgroups wait for data (WG 1 31% / WG 0 11% of their samples at D = 128; 34% / 44%
 * at D = 256).  At 4x8192x32x64 the producer instead waits for a free stage 43% of its
 * time: three stages of 24 KB are too few there.
 * v11: one producer thread loads a stage with 2 KD / 64 + BV / 64 TMA boxes (64 x 64,
 * 128-byte swizzle, the wgmma descriptors switched to that layout), arming the stage's
 * full barrier with its byte count; the 32 lanes of that warp store the gate g (loaded one
 * chunk ahead with plain loads) and arrive too.
 * Stages per shape: K = 64: 6, K = 128 x BV 64: 4, K = 128 x BV 128: 3, K = 256: 2.
 * v12: v11 with o stored by TMA from its own staging tile, so WG 0 releases a stage as
 * soon as its A.V product has read it (v11, like v9, holds it through the o copy-out).
 * With cu_seqlens a sequence's last chunk is copied in and out by the producer's lanes
 * and WG 0's threads (a box would reach into the next sequence); with T = 0 or T >= 2^31
 * (the token coordinate is an int) they run v9.
 * Prediction: 8x4096x16x128 0.218 -> ~0.17 ms, 2x16384x8x256 0.80 -> ~0.5 ms.
 * Measured (docs/perf.md): v12 0.137 / 0.135 ms (g_gamma / g), 0.460 / 0.504.
 *
 * v13 (K = 64 only; other K run v12's kernels): v12's profile at 4x8192x32x64 shows the
 * output warpgroup as the chain (busy nearly all the time: the score weighting's exp2 and
 * the wgmma waits of one warp per scheduler) while the state warpgroup waits for it at
 * S_FREE 30% of its time.  So two output warpgroups take alternate chunks (WG 0 even,
 * WG 1 odd), each with twice the time per chunk; WG 2 carries the state, WG 3 copies;
 * four S_s buffers so that a buffer and its barriers belong to one output warpgroup.
 * setmaxnreg 160 (outputs) / 136 (state) / 40 (producer).
 * Prediction: 4x8192x32x64 0.188 -> ~0.15 ms.
 */
#include "sgla_dev.cuh"
#include "sgla_wgmma.cuh"

#define T8_NAME fwd_v11_k64_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k64_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k128_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 4
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k128_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 4
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k128_b128_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k128_b128_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k256_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v11_k256_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 0
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k64_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k64_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k128_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 4
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k128_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 4
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k128_b128_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k128_b128_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k256_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v12_k256_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
/* v13 at K = 64: two output warpgroups (16 warps) */
#define T8_NAME fwd_v13_k64_b64_bf16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_NO 2
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v13_k64_b64_f16
#define T8_NPW 1
#define T8_TMA 1
#define T8_OST 1
#define T8_NO 2
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 6
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v11_cfgs[] = {
    {64, 64, 12, 6, 0, 0, 0, "v11_k64_b64", T8_SMEM_TMA(64, 64, 6, 0), fwd_v11_k64_b64_bf16, fwd_v11_k64_b64_f16},
    {128, 64, 12, 4, 0, 0, 0, "v11_k128_b64", T8_SMEM_TMA(128, 64, 4, 0), fwd_v11_k128_b64_bf16, fwd_v11_k128_b64_f16},
    {128, 128, 12, 3, 0, 0, 0, "v11_k128_b128", T8_SMEM_TMA(128, 128, 3, 0), fwd_v11_k128_b128_bf16, fwd_v11_k128_b128_f16},
    {256, 64, 12, 2, 0, 0, 0, "v11_k256_b64", T8_SMEM_TMA(256, 64, 2, 0), fwd_v11_k256_b64_bf16, fwd_v11_k256_b64_f16},
};

static const tc_cfg v12_cfgs[] = {
    {64, 64, 12, 6, 0, 0, 0, "v12_k64_b64", T8_SMEM_TMA(64, 64, 6, 1), fwd_v12_k64_b64_bf16, fwd_v12_k64_b64_f16},
    {128, 64, 12, 4, 0, 0, 0, "v12_k128_b64", T8_SMEM_TMA(128, 64, 4, 1), fwd_v12_k128_b64_bf16, fwd_v12_k128_b64_f16},
    {128, 128, 12, 3, 0, 0, 0, "v12_k128_b128", T8_SMEM_TMA(128, 128, 3, 1), fwd_v12_k128_b128_bf16, fwd_v12_k128_b128_f16},
    {256, 64, 12, 2, 0, 0, 0, "v12_k256_b64", T8_SMEM_TMA(256, 64, 2, 1), fwd_v12_k256_b64_bf16, fwd_v12_k256_b64_f16},
};

/* v13: K = 64 with two output warpgroups; other K as v12 */
static const tc_cfg v13_cfgs[] = {
    {64, 64, 16, 6, 0, 0, 0, "v13_k64_b64", T8_SMEM_NO2(64, 64, 6), fwd_v13_k64_b64_bf16, fwd_v13_k64_b64_f16},
    {128, 64, 12, 4, 0, 0, 0, "v12_k128_b64", T8_SMEM_TMA(128, 64, 4, 1), fwd_v12_k128_b64_bf16, fwd_v12_k128_b64_f16},
    {128, 128, 12, 3, 0, 0, 0, "v12_k128_b128", T8_SMEM_TMA(128, 128, 3, 1), fwd_v12_k128_b128_bf16, fwd_v12_k128_b128_f16},
    {256, 64, 12, 2, 0, 0, 0, "v12_k256_b64", T8_SMEM_TMA(256, 64, 2, 1), fwd_v12_k256_b64_bf16, fwd_v12_k256_b64_f16},
};

extern "C" sgla_status sgla_cuda_launch_tc_v9(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st);

/* shapes a tensor map cannot take (T = 0, T >= 2^31) run v9 */
static sgla_status tc_tma_launch4(const tc_cfg cfgs[4], const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return tc_tma_fits(p) ? sgla_tc_launch4(cfgs, p, dt, st) : sgla_cuda_launch_tc_v9(p, dt, st);
}

extern "C" sgla_status sgla_cuda_launch_tc_v11(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return tc_tma_launch4(v11_cfgs, p, dt, st);
}

extern "C" sgla_status sgla_cuda_launch_tc_v12(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return tc_tma_launch4(v12_cfgs, p, dt, st);
}

extern "C" sgla_status sgla_cuda_launch_tc_v13(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return tc_tma_launch4(v13_cfgs, p, dt, st);
}
