/* Version 9 — v8 with a producer warpgroup: the compute warps never issue a copy.
 *
 * v8 ran no faster than v5 (0.255 vs 0.250 ms at 8x4096x16x128).  Its profile
 * (bench/ncu_source.sh, 2026-11-29): 40% of the warp-stall samples sit in the
 * cp.async issue at the top of each chunk (long scoreboard on the copy's address
 * registers, LSU throttle): with two chunks in flight the LSU queue is full and
 * every compute warp waits there before its math.  bench/stream_probe.cu, the
 * same access pattern without math, moves 3.9-4.1 TB/s with 16-byte cp.async
 * (so the copies themselves are not the limit; bulk row copies of 256 bytes
 * reached only 1.4-1.5 TB/s).  So v9 moves every copy to producer warps that wait on
 * the LSU alone (a 3rd warpgroup, its registers handed to the math warpgroups
 * by setmaxnreg): per-stage mbarriers (full: cp.async.mbarrier.arrive.noinc from
 * each producer lane; empty: one arrival per consumer thread since 2026-11-29 late,
 * per consumer warp before, which racecheck flagged) replace the per-chunk
 * block barrier, and the state hand-over between the warpgroups becomes two pairs
 * of named barriers (S_READY, S_FREE).  Math, layouts and numerics are v8's:
 * the body is fwd_tc_body8.cuh with T8_NPW = 1 (v10: 2).
 * Prediction: 8x4096x16x128 0.255 -> ~0.17 ms (loads and math overlap: the
 * larger of ~0.13 of memory and v8's math without the copy stalls).
 * Measured (docs/perf.md): 0.218 ms (g_gamma), 0.222 (g).
 *
 * v10 (same file and body, T8_NPW = 2): two producer warpgroups, 16 warps, so twice
 * the copies in flight from the issuing side (setmaxnreg 32 / 224).
 *
 * Configs (K, BV, stages), 12 warps (v10: 16), one block per SM:
 *   K=64: BV=64, 3;  K=128: V=64 -> BV=64, 3; V>=128 -> BV=128, 3;  K=256: BV=64, 2
 */
#include "sgla_dev.cuh"
#include "sgla_wgmma.cuh"

#define T8_NAME fwd_v9_k64_b64_bf16
#define T8_NPW 1
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k64_b64_f16
#define T8_NPW 1
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k128_b64_bf16
#define T8_NPW 1
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k128_b64_f16
#define T8_NPW 1
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k128_b128_bf16
#define T8_NPW 1
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k128_b128_f16
#define T8_NPW 1
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k256_b64_bf16
#define T8_NPW 1
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#define T8_NAME fwd_v9_k256_b64_f16
#define T8_NPW 1
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

/* v10: the same body with two producer warpgroups (16 warps) */
#define T8_NAME fwd_v10_k64_b64_bf16
#define T8_NPW 2
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k64_b64_f16
#define T8_NPW 2
#define T8_KD 64
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k128_b64_bf16
#define T8_NPW 2
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k128_b64_f16
#define T8_NPW 2
#define T8_KD 128
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k128_b128_bf16
#define T8_NPW 2
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 1
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k128_b128_f16
#define T8_NPW 2
#define T8_KD 128
#define T8_BV 128
#define T8_BF16 0
#define T8_ST 3
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k256_b64_bf16
#define T8_NPW 2
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 1
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"
#define T8_NAME fwd_v10_k256_b64_f16
#define T8_NPW 2
#define T8_KD 256
#define T8_BV 64
#define T8_BF16 0
#define T8_ST 2
#define T8_MINB 1
#include "fwd_tc_body8.cuh"

#include "fwd_tc_launch.cuh"

static const tc_cfg v9_cfgs[] = {
    {64, 64, 12, 3, 0, fwd_v9_k64_b64_bf16, fwd_v9_k64_b64_f16, "v9_k64_b64", T8_SMEM(64, 64, 3, 1)},
    {128, 64, 12, 3, 0, fwd_v9_k128_b64_bf16, fwd_v9_k128_b64_f16, "v9_k128_b64", T8_SMEM(128, 64, 3, 1)},
    {128, 128, 12, 3, 0, fwd_v9_k128_b128_bf16, fwd_v9_k128_b128_f16, "v9_k128_b128", T8_SMEM(128, 128, 3, 1)},
    {256, 64, 12, 2, 0, fwd_v9_k256_b64_bf16, fwd_v9_k256_b64_f16, "v9_k256_b64", T8_SMEM(256, 64, 2, 1)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v9(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v9_cfgs, p, dt, st);
}

static const tc_cfg v10_cfgs[] = {
    {64, 64, 16, 3, 0, fwd_v10_k64_b64_bf16, fwd_v10_k64_b64_f16, "v10_k64_b64", T8_SMEM(64, 64, 3, 2)},
    {128, 64, 16, 3, 0, fwd_v10_k128_b64_bf16, fwd_v10_k128_b64_f16, "v10_k128_b64", T8_SMEM(128, 64, 3, 2)},
    {128, 128, 16, 3, 0, fwd_v10_k128_b128_bf16, fwd_v10_k128_b128_f16, "v10_k128_b128", T8_SMEM(128, 128, 3, 2)},
    {256, 64, 16, 2, 0, fwd_v10_k256_b64_bf16, fwd_v10_k256_b64_f16, "v10_k256_b64", T8_SMEM(256, 64, 2, 2)},
};

extern "C" sgla_status sgla_cuda_launch_tc_v10(const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    return sgla_tc_launch4(v10_cfgs, p, dt, st);
}
