/* fp32 inputs on the tensor cores: the chunked forward on TF32 mma.sync, and its Hopper member on wgmma
 * (below, from "the Hopper member").
 *
 * TF32 keeps 10 bits of the mantissa (relative error ~5e-4 a product), far from
 * fp32's bar of 1e-5.  So every operand is split into two TF32 halves,
 *     x = hi + lo,  hi = tf32(x),  lo = tf32(x - hi)   (~22 bits together),
 * and every product is taken as lo.hi + hi.lo + hi.hi with fp32 accumulation
 * (lo.lo, ~2^-22 of the product, is left out): 3xTF32, three times the tensor
 * work of one TF32 product.  SGLA_FLAG_ALLOW_TF32 takes hi.hi alone (fla's
 * accuracy) where the caller accepts it.
 *
 * The chunked form of the mma.sync forward (chunk_fwd_mma.cu), in fp32:
 *     o_c = rs ⊙ (Q S_c) + A V,   A = scale Γ ⊙ (Q K^T) (j <= i),  rs_i = scale exp2(b_i)
 *     S_{c+1} = exp2(b_L) S_c + U,  U = (K ⊙ w)^T V,  w_j = exp2(b_L - b_j)
 * with U summed from zero each chunk and added to S in fp32 (RN) outside the
 * tensor cores, as x + expm1 x near 1 (sgla_carry_mul): over a long sequence of
 * gates near 0 the state's rounding does not compound.
 *
 * Block = (sequence x head, 64 columns of V), 16 warps (the kernel is bound by
 * latency: 8 warps left 0.5 of 2 warps a scheduler eligible, docs/perf.md);
 * warp w computes rows 16 (w % 4) .. + 15 of o in the columns 16 (w / 4) .. + 15
 * of its block, the scores of those rows with the keys 16 (w / 4) .. + 15 (none
 * past the diagonal), and owns the state rows K/4 (w % 4) .. in its columns.  The
 * weighted scores go through shared memory to the warps of their rows.  Two
 * stages of q, k, v by cp.async (one where a block cannot hold two).  Shared rows
 * are padded so that every fragment load is free of bank conflicts: row strides
 * of q, k, v and the scores = 4 mod 32 words, of the state copy 8.  A . V and
 * K^T . V reduce over keys in the order
 * (2t, 2t + 1) for the k index (t, t + 4) of the instruction, so that the loads
 * of v and k stay conflict-free; the score tile is stored in that order. */
#include <stddef.h>
#include <stdint.h>

#include "cuda_backend.cuh"
#include "mma_tiles.cuh"
#include "ptx.cuh"
#include "tf32_frag.cuh"

namespace {

constexpr int BVT = 64; /* columns of V a block */
constexpr int TTHREADS = 512; /* 16 warps: four row groups x four quarters of the columns */

/* NST stages of q, k, v: 2 (chunk c and the next one) where a block holds them, else 1 (K = 128 on an
 * sm_80 block, K = 64 on 99 KB): each tile then loaded once its last reader is done */
template <int KD, int NST> struct Tf32Smem {
    static constexpr int LK = KD + 4, LV = BVT + 4, LS = BVT + 8, LA = 64 + 4;
    float q[NST][64 * LK], k[NST][64 * LK];
    float v[NST][64 * LV];
    float S[KD * LS];                   /* fp32 copy of S_c (this block's columns) */
    float bh[2][64], bl[2][64];         /* log2 b of each stage's chunk as bh + bl (tf32_gate_scan) */
    float wt[64];                       /* the chunk's key weights w */
    float A[64 * LA];                   /* the chunk's weighted scores (keys in A . V's order) */
};
static_assert(sizeof(Tf32Smem<128, 2>) <= 227 * 1024, "fits the shared memory of a Hopper block");
static_assert(sizeof(Tf32Smem<128, 1>) <= 163 * 1024, "one stage fits an sm_80 block");
static_assert(sizeof(Tf32Smem<64, 1>) <= 99 * 1024, "one stage at K = 64 fits an sm_86 block");
static_assert(Tf32Smem<64, 2>::LK % 32 == 4 && Tf32Smem<128, 2>::LK % 32 == 4 && Tf32Smem<64, 2>::LV % 32 == 4 &&
                  Tf32Smem<64, 2>::LS % 32 == 8 && Tf32Smem<64, 2>::LA % 32 == 4,
              "the padding that keeps fragment loads conflict-free");

/* 64 rows of D floats (row stride LD in shared memory) by cp.async, rows from L on zeros */
template <int D, int LD, int NT = TTHREADS>
__device__ __forceinline__ void f32_rows(float *dst, const float *src, int64_t stride, int L, int tid)
{
    constexpr int U = D / 4;
    const uint32_t d0 = sgla_smem_u32(dst);
    for (int i = tid; i < 64 * U; i += NT) {
        const int r = i / U, u = i - r * U;
        const int64_t g = (r < L ? (int64_t)r * stride : 0) + u * 4;
        sgla_cp_async16(d0 + (uint32_t)((r * LD + u * 4) * 4), src + g, r < L ? 16 : 0);
    }
}

/* b of a chunk (chunk_gate_scan's) by one warp, summed in fp64 and kept as a pair of floats
 * b = bh + bl.  b_i - b_j weighs every pair, and after a steep gate (-30) b is in the hundreds
 * while b_i - b_j is small: an fp32 cumulative sum loses ~1e-4 of it (the bf16 kernels' bar
 * allows that, fp32's does not).  (bh_i - bh_j) + (bl_i - bl_j) has the difference to fp32's
 * rounding: the first term is exact where b_i and b_j are close (Sterbenz). */
__device__ __forceinline__ void tf32_gate_scan(int gmode, float g0, float g1, float gamma, int L, float *bh, float *bl,
                                               int lane)
{
    const double l2e = 1.4426950408889634;
    double x0 = 0.0, x1 = 0.0;
    if (gmode == SGLA_GATE_G) {
        x0 = (double)fmaxf(g0, SGLA_GATE_FLOOR_F) * l2e, x1 = (double)fmaxf(g1, SGLA_GATE_FLOOR_F) * l2e;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const double y0 = __shfl_up_sync(0xffffffffu, x0, off), y1 = __shfl_up_sync(0xffffffffu, x1, off);
            if (lane >= off) x0 += y0, x1 += y1;
        }
        x1 += __shfl_sync(0xffffffffu, x0, 31);
    } else if (gmode == SGLA_GATE_GAMMA) {
        const double gl2 = (double)fmaxf(gamma, SGLA_GATE_FLOOR_F) * l2e;
        x0 = gl2 * (double)(lane + 1 < L ? lane + 1 : L);
        x1 = gl2 * (double)(lane + 33 < L ? lane + 33 : L);
    }
    const float h0 = (float)x0, h1 = (float)x1;
    bh[lane] = h0, bl[lane] = (float)(x0 - (double)h0);
    bh[lane + 32] = h1, bl[lane + 32] = (float)(x1 - (double)h1);
}
/* b_i - b_j from the pair */
__device__ __forceinline__ float bdiff(const float *bh, const float *bl, int i, int j)
{
    return (bh[i] - bh[j]) + (bl[i] - bl[j]);
}
/* A's element scale exp2(b_i - b_j) s for j <= i, else 0, by selects: ptxas made the conditional a branch
 * around each element's loads and exp2, and the condition diverges within a warp */
__device__ __forceinline__ float masked_a(float s, float scale, const float *bh, const float *bl, int i, int j)
{
    const bool in = j <= i;
    const float x = sgla_exp2(in ? bdiff(bh, bl, i, j) : 0.f);
    return in ? s * scale * x : 0.f;
}

template <int KD, bool X3, int NST> __global__ void __launch_bounds__(TTHREADS, 1) chunk_fwd_tf32(const sgla_kparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    using Sm = Tf32Smem<KD, NST>;
    Sm &sm = *reinterpret_cast<Sm *>(smraw);
    constexpr int LK = Sm::LK, LV = Sm::LV, LS = Sm::LS, LA = Sm::LA;
    constexpr int MS = KD / 64; /* m16 tiles of a warp's state rows (K / 4) */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m = warp & 3, qt = warp >> 2; /* row group; quarter of the columns (and of the keys) */

    MWork w;
    if (!mwork<false>(p, w)) return; /* (no split: the plan refuses one) */
    const int col0 = (int)blockIdx.y * BVT; /* the block's first column of V */
    const float *q = (const float *)p.q, *k = (const float *)p.k, *v = (const float *)p.v + col0;
    float *o = (float *)p.o + col0;
    const int64_t sk = p.H * KD, sv = p.H * p.V; /* token strides */

    /* the warp's state: rows K/4 m .. (MS m16 tiles), columns 16 qt .. (two n8 tiles) of the block's */
    const int srow = (KD / 4) * m + gid, scol = 16 * qt + 2 * tig;
    float S[MS][2][4];
    /* f(x0, x1, row, col) on each pair of the warp's state entries: (row, col), (row, col + 1) */
    const auto state_pairs = [&](auto f) {
#pragma unroll
        for (int mt = 0; mt < MS; mt++)
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int e = 0; e < 4; e += 2)
                    f(S[mt][nt][e], S[mt][nt][e + 1], srow + 16 * mt + 8 * (e >> 1), scol + 8 * nt);
    };
    {
        const float *h0 = p.h0 ? p.h0 + w.nh * KD * p.V + col0 : (const float *)0;
        state_pairs([&](float &x0, float &x1, int r, int cl) {
            x0 = h0 ? h0[(int64_t)r * p.V + cl] : 0.f;
            x1 = h0 ? h0[(int64_t)r * p.V + cl + 1] : 0.f;
        });
    }
    const auto copy_state = [&]() {
        state_pairs([&](float &x0, float &x1, int r, int cl) { *(float2 *)&sm.S[r * LS + cl] = make_float2(x0, x1); });
    };
    /* rows of chunk c into stage s: what 1 q, 2 k and v, 3 all three */
    const auto load = [&](int c, int s, int what) {
        const int L = chunk_rows(w.len, c);
        const int64_t r0 = w.row0 + (int64_t)c * 64 * p.H;
        if (what & 1) f32_rows<KD, LK>(sm.q[s], q + r0 * KD, sk, L, tid);
        if (what & 2) {
            f32_rows<KD, LK>(sm.k[s], k + r0 * KD, sk, L, tid);
            f32_rows<BVT, LV>(sm.v[s], v + r0 * p.V, sv, L, tid);
        }
        sgla_cp_async_commit();
    };
    const float gamma = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[w.h] : 0.f;

    if (w.nc > 0) {
        copy_state();
        load(0, 0, 3);
    }
    float g0 = 0.f, g1 = 0.f;
    if (warp == 0) {
        mgate_load(p, w, 0, lane, g0, g1);
        tf32_gate_scan(p.gmode, g0, g1, gamma, chunk_rows(w.len, 0), sm.bh[0], sm.bl[0], lane);
    }
    const float scale = p.scale;
    const int i0 = 16 * m + gid, i1 = i0 + 8;
    const bool live = qt <= m; /* this warp's 16 keys meet its 16 rows (the rest are masked) */
    for (int c = 0; c < w.nc; c++) {
        const int s = c & 1, L = chunk_rows(w.len, c), t = NST == 2 ? s : 0; /* t: the tiles' stage */
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's tiles, its b and S_c's copy are complete; chunk c - 1 is done with A, wt */
        if (NST == 2 && c + 1 < w.nc) load(c + 1, t ^ 1, 3);
        if (warp == 0) mgate_load(p, w, c + 1, lane, g0, g1);
        const float *bh = sm.bh[s], *bl = sm.bl[s], *qs = sm.q[t], *ks = sm.k[t], *vs = sm.v[t];
        const float bC = bh[63];
        if (tid < 64) sm.wt[tid] = sgla_exp2(bdiff(bh, bl, 63, tid)); /* read after the barrier below */

        /* Q S_c (16 rows x 16 columns) and this warp's quarter of Q K^T (16 rows x 16 keys) */
        float acc[2][4], sc[2][4];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][e] = sc[i][e] = 0.f;
#pragma unroll 4
        for (int kk = 0; kk < KD / 8; kk++) {
            const float *qa = qs + i0 * LK + 8 * kk + tig;
            FragA a;
            frag_a(a, qa[0], qa[8 * LK], qa[4], qa[8 * LK + 4]);
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                const float *sb = sm.S + (8 * kk + tig) * LS + 16 * qt + 8 * nt + gid;
                FragB b;
                frag_b(b, sb[0], sb[4 * LS]);
                mma3<X3>(acc[nt], a, b);
            }
            if (live)
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    const float *kb = ks + (16 * qt + 8 * nt + gid) * LK + 8 * kk + tig;
                    FragB b;
                    frag_b(b, kb[0], kb[4]);
                    mma3<X3>(sc[nt], a, b);
                }
        }
        {
            const float r0 = scale * sgla_exp2(bh[i0]), r1 = scale * sgla_exp2(bh[i1]);
#pragma unroll
            for (int nt = 0; nt < 2; nt++) acc[nt][0] *= r0, acc[nt][1] *= r0, acc[nt][2] *= r1, acc[nt][3] *= r1;
        }
        /* A = scale exp2(b_i - b_j) (q_i . k_j), j <= i, into the shared A tile with the keys of each 8 in the
         * order (0, 2, 4, 6, 1, 3, 5, 7): key 8 u + 2 t + e at column 8 u + t + 4 e, so that A . V's fragments
         * (k index t, t + 4 = keys 2 t, 2 t + 1, as K^T . V below) read it conflict-free */
        if (live)
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int i = e < 2 ? i0 : i1, j = 16 * qt + 8 * nt + 2 * tig + (e & 1);
                    sm.A[i * LA + 16 * qt + 8 * nt + tig + 4 * (e & 1)] = masked_a(sc[nt][e], scale, bh, bl, i, j);
                }
        __syncthreads(); /* A and wt complete; every warp is done with q */
        if (NST == 1 && c + 1 < w.nc) load(c + 1, 0, 1);
        /* o += A V over the keys of this row group's diagonal and before */
#pragma unroll
        for (int kt = 0; kt < 8; kt++)
            if ((kt >> 1) <= m) {
                const float *aa = sm.A + i0 * LA + 8 * kt + tig;
                FragA a;
                frag_a(a, aa[0], aa[8 * LA], aa[4], aa[8 * LA + 4]);
                const float *vb = vs + (8 * kt + 2 * tig) * LV + 16 * qt + gid;
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    FragB b;
                    frag_b(b, vb[8 * nt], vb[LV + 8 * nt]);
                    mma3<X3>(acc[nt], a, b);
                }
            }
        {
            float *orow = o + (w.row0 + ((int64_t)c * 64) * p.H) * p.V + 16 * qt + 2 * tig;
            const int64_t rs = p.H * p.V;
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                if (i0 < L) *(float2 *)(orow + i0 * rs + 8 * nt) = make_float2(acc[nt][0], acc[nt][1]);
                if (i1 < L) *(float2 *)(orow + i1 * rs + 8 * nt) = make_float2(acc[nt][2], acc[nt][3]);
            }
        }
        if (c + 1 == w.nc && !p.ht) break;

        /* S_{c+1} = exp2(b_L) S_c + (K ⊙ w)^T V (every warp read S_c's copy before the barrier above) */
        float U[MS][2][4];
#pragma unroll
        for (int mt = 0; mt < MS; mt++)
#pragma unroll
            for (int nt = 0; nt < 2; nt++) U[mt][nt][0] = U[mt][nt][1] = U[mt][nt][2] = U[mt][nt][3] = 0.f;
#pragma unroll 2
        for (int kt = 0; kt < 8; kt++) {
            const int j = 8 * kt + 2 * tig;
            FragB b[2];
            const float *vb = vs + j * LV + 16 * qt + gid;
#pragma unroll
            for (int nt = 0; nt < 2; nt++) frag_b(b[nt], vb[8 * nt], vb[LV + 8 * nt]);
            const float w0 = sm.wt[j], w1 = sm.wt[j + 1];
#pragma unroll
            for (int mt = 0; mt < MS; mt++) {
                const float *ka = ks + j * LK + srow + 16 * mt;
                FragA a;
                frag_a(a, ka[0] * w0, ka[8] * w0, ka[LK] * w1, ka[LK + 8] * w1);
#pragma unroll
                for (int nt = 0; nt < 2; nt++) mma3<X3>(U[mt][nt], a, b[nt]);
            }
        }
        const float em1 = expm1f(bC * SGLA_LN2), ex = sgla_exp2(bC);
#pragma unroll
        for (int mt = 0; mt < MS; mt++)
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) S[mt][nt][e] = sgla_carry_mul(S[mt][nt][e], bC, em1, ex) + U[mt][nt][e];
        if (NST == 1 && c + 1 < w.nc) {
            __syncthreads(); /* every warp is done with k and v */
            load(c + 1, 0, 2);
        }
        if (c + 1 < w.nc) {
            copy_state();
            if (warp == 0) tf32_gate_scan(p.gmode, g0, g1, gamma, chunk_rows(w.len, c + 1), sm.bh[s ^ 1], sm.bl[s ^ 1], lane);
        }
    }
    if (p.ht) { /* (h0, or zeros, for an empty sequence) */
        float *ht = p.ht + w.nh * KD * p.V + col0;
        state_pairs([&](float &x0, float &x1, int r, int cl) { *(float2 *)&ht[(int64_t)r * p.V + cl] = make_float2(x0, x1); });
    }
}

/* ---- the Hopper member: the same chunked form on wgmma ------------------------------------------------
 * Block = (sequence x head, BVT = 64 columns of V, as above), 1 + K/64 warpgroups: warpgroup 0 the chunk's outputs, warpgroup
 * 1 + s the state's rows 64 s .. + 63.  TF32 wgmma takes B K-major only (its rows contiguous along the
 * reduction), so the B operands are
 *   [K ; S_c^T]: the keys, then the block's columns of the state, each by the feature index: one m64n128
 *       product a k-step gives Q K^T and Q S_c together;
 *   V^T: the block's columns of v by the keys, B of A V and of (K ⊙ w)^T V alike, written by the block.
 * A comes from registers (Q; the weighted scores in their accumulators' layout; (K ⊙ w)^T), split into
 * hi + lo there.  A B tile's lo sits in a copy beside it; the hi of k is k as loaded (the tensor cores
 * read the top 19 bits of an fp32 operand, truncating: bench/wgmma_tf32_probe.cu), so its lo is
 * x - trunc(x).  The keys of a k-step are reduced in the order of the accumulators' columns: A's k index
 * t, t + 4 are keys 2t, 2t + 1, so the scores feed A V as they are, and V^T keeps its keys in that order.
 * Shared tiles: q, v and [K ; S_c^T] (and its lo) in TMA's 128-byte swizzle, V^T in 8 x 4 core
 * matrices (128 bytes) without swizzle; at K = 128 they take the whole block (one stage of each tile).
 * The roles meet at named barriers: the state's warpgroups load q, k and v (a whole chunk by TMA:
 * per-thread cp.async of 80 KB a chunk held the step on the memory pipe, docs/perf.md, session 27), write
 * K's lo, V^T and S_c^T and say so (B_READY, LO_READY); warpgroup 0 says when it is done with q, [K ; S_c^T]
 * and V^T (B_FREE, VT_FREE), and scans the next chunk's gates while it waits for the state (SCAN_READY).
 * With TF32 alone no lo is made or read. */
/* float offset of (r, c) in a tile of C columns: core matrix (r / 8, c / 4) at (r / 8) (C / 4) + c / 4 */
template <int C> __device__ __forceinline__ int core_at(int r, int c)
{
    return ((r >> 3) * (C / 4) + (c >> 2)) * 32 + (r & 7) * 4 + (c & 3);
}
/* a core-matrix tile of C columns from its k-step ks (8 columns) on: the next 4 columns 128 bytes on
 * (leading byte offset), the next 8 rows 32 C (stride byte offset) */
template <int C> __device__ __forceinline__ uint64_t core_desc(const float *tile, int ks)
{
    return sgla_wg_desc(sgla_smem_u32(tile) + (uint32_t)ks * 256u, 128, C * 32);
}

/* q, v and [K ; S_c^T] in TMA's 128-byte swizzle: column block c / 32 of RT rows, then row r's 128 bytes
 * with 16-byte unit u at u ^ (r % 8); tiles 1 KB aligned */
template <int RT> __device__ __forceinline__ int sw_at(int r, int c)
{
    return (c >> 5) * RT * 32 + r * 32 + ((((c >> 2) & 7) ^ (r & 7)) << 2) + (c & 3);
}
/* k-step ks (8 columns) of such a tile: 32 bytes on within a row, 8 rows 1 KB apart */
template <int RT> __device__ __forceinline__ uint64_t sw_desc(const float *tile, int ks)
{
    return sgla_wg_desc_sw128(sgla_smem_u32(tile + (ks >> 2) * RT * 32 + (ks & 3) * 8), 16, 1024);
}

template <int KD> struct WgSmem {
    float q[64 * KD];                  /* q (sw_at<64>) */
    float bhi[128 * KD];               /* [K ; S_c^T] (sw_at<128>): k as loaded, then S_c^T's hi */
    float blo[128 * KD];               /* their lo */
    float v[64 * BVT];                 /* v as loaded (sw_at<64>: the transposition reads it conflict-free) */
    float vt[2][64 * 64];              /* V^T's hi and lo: keys of each 8 in the order 0 2 4 6 1 3 5 7 */
    float bh[2][64], bl[2][64];        /* log2 b of chunk c (stage c % 2) as bh + bl (tf32_gate_scan) */
    float wt[64];                      /* the chunk's key weights */
    uint64_t qk_full;                  /* q and k of the chunk landed (TMA's bytes, or the issuing thread) */
    uint64_t v_full;                   /* v likewise */
};
static_assert(sizeof(WgSmem<128>) <= 227 * 1024, "fits the shared memory of a Hopper block");
static_assert(offsetof(WgSmem<128>, bhi) % 1024 == 0 && offsetof(WgSmem<128>, blo) % 1024 == 0 &&
                  offsetof(WgSmem<64>, bhi) % 1024 == 0 && offsetof(WgSmem<64>, blo) % 1024 == 0 &&
                  offsetof(WgSmem<128>, v) % 1024 == 0 && offsetof(WgSmem<64>, v) % 1024 == 0 &&
                  offsetof(WgSmem<128>, vt) % 128 == 0 && offsetof(WgSmem<64>, vt) % 128 == 0,
              "the swizzled tiles on 1 KB boundaries, V^T's on 128 bytes");

/* rows 0 .. L - 1 of a 64 x C tile (of RT rows) by cp.async into sw_at<RT>, zeros past L: a partial chunk's
 * (TMA would read the next sequence's tokens there); a warp's 32 units are 4 rows' 128 bytes */
template <int C, int RT, int NT>
__device__ __forceinline__ void sw_rows(float *dst, const float *src, int64_t stride, int L, int tid)
{
    static_assert(16 * C % NT == 0, "whole rounds of the block's threads");
    const uint32_t d0 = sgla_smem_u32(dst);
#pragma unroll
    for (int n = 0; n < 16 * C / NT; n++) {
        const int i = tid + n * NT, rest = i >> 3, r = rest & 63, c = 32 * (rest >> 6) + 4 * (i & 7);
        const int64_t g = (r < L ? (int64_t)r * stride : 0) + c;
        sgla_cp_async16(d0 + 4u * (uint32_t)sw_at<RT>(r, c), src + g, r < L ? 16 : 0);
    }
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 /* (used by the sm_90a kernel alone) */
/* the hi that the tensor cores read from a raw fp32 value, and what is left */
__device__ __forceinline__ float trunc_lo(float x) { return x - __uint_as_float(__float_as_uint(x) & 0xffffe000u); }

/* A diagnostic build's timeline (-DSGLA_TRACE, bench/trace_run.py --pass f32; sgla_trace_mark): mark ev
 * of chunk c of role r (0 the outputs, 2 the state), by thread 0 of each role in the blocks of V column block
 * 0.  Other builds have no marks. */
__device__ __forceinline__ void wg_trace(const sgla_kparams &p, int r, int c, int ev)
{
#ifdef SGLA_TRACE
    if (p.trace && p.trace_bw == SGLA_TRACE_F32 && blockIdx.y == 0) sgla_trace_mark(p, blockIdx.x, r, c, ev);
#else
    (void)p, (void)r, (void)c, (void)ev;
#endif
}
#endif

/* d += A . V^T's k-step j, A split as (hi, lo): lo.hi + hi.lo + hi.hi, or hi.hi alone (the A V and the state's
 * products) */
template <bool X3>
__device__ __forceinline__ void wg_vt3(float d[32], const uint32_t hi[4], const uint32_t lo[4], const float *vt_hi,
                                       const float *vt_lo, int j)
{
    const uint64_t dh = core_desc<64>(vt_hi, j);
    if constexpr (X3) {
        sgla_wg_rs_n64_tf32(d, lo, dh);
        sgla_wg_rs_n64_tf32(d, hi, core_desc<64>(vt_lo, j));
    }
    sgla_wg_rs_n64_tf32(d, hi, dh);
}

template <int KD, bool X3>
__global__ void __launch_bounds__(128 * (1 + KD / 64), 1) chunk_fwd_wgtf32(const sgla_kparams p, const __grid_constant__ sgla_tmaps tm)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 /* wgmma: sm_90a */
    constexpr int NT = 128 * (1 + KD / 64), NS = NT - 128;
    /* Q's k-steps in batches, two batches' fragments in registers: a batch's loads and splits run while the
     * one before it is on the tensor cores.  At K = 128 batches of 2: with 4, REG_OUT's registers made ptxas
     * wait on each wgmma before the next (C7512; docs/perf.md, session 28) */
    constexpr int QB = KD == 128 ? 2 : 4, NB = (X3 ? 2 : 1) * KD / 8 / QB;
    /* registers at K = 128 (setmaxnreg from the even share, REG_EVEN = 168): warpgroup 0 holds the accumulator and two
     * batches of Q, the state's warpgroups S, U, half of (K ⊙ w)^T and the loads' addresses; these shares
     * spill nowhere (K = 64's 256 threads have 255 each) */
    constexpr int REG_OUT = 152, REG_STATE = 176, REG_EVEN = 65536 / NT / 8 * 8;
    static_assert(KD != 128 || 128 * REG_OUT + NS * REG_STATE <= REG_EVEN * NT, "setmaxnreg's shares");
    /* named barriers between the roles (the state's warpgroups arrive at the first two, warpgroup 0 at the
     * next two, its warp 0 at SCAN_READY), and one within the state's */
    enum { B_READY = 1, LO_READY, B_FREE, VT_FREE, STATE_BAR, SCAN_READY };
    extern __shared__ __align__(1024) unsigned char wgraw[];
    WgSmem<KD> &sm = *reinterpret_cast<WgSmem<KD> *>(wgraw);
    const int tid = threadIdx.x, wg = tid >> 7, wi = (tid >> 5) & 3, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    /* b of chunk 0 is scanned by warp 0 of warpgroup 1, b of chunk c + 1 by warpgroup 0's warp 0 during
     * chunk c, in the time it waits for the state (SCAN_READY: its warp 0 arrives, the state waits before
     * reading it) */
    const bool scanner = tid >> 5 == 4;

    MWork w;
    if (!mwork<false>(p, w)) return;
    const int col0 = (int)blockIdx.y * BVT;
    const float *q = (const float *)p.q, *k = (const float *)p.k, *v = (const float *)p.v + col0;
    float *o = (float *)p.o + col0;
    const int64_t sk = p.H * KD, sv = p.H * p.V;
    const auto rows = [&](int c) { return w.row0 + (int64_t)c * 64 * p.H; };
    const float gamma = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[w.h] : 0.f;

    if (wg == 0) { /* ---- the outputs ---- */
        if constexpr (KD == 128) sgla_setmaxnreg_to<REG_OUT, REG_EVEN>();
        const float scale = p.scale;
        const int i0 = 16 * wi + gid, i1 = i0 + 8;
        const bool trc = tid == 0; /* wg_trace's thread */
        for (int c = 0; c < w.nc; c++) {
            const int s = c & 1, L = chunk_rows(w.len, c);
            if (trc) wg_trace(p, 0, c, 0);
            sgla_bar_sync(B_READY, NT); /* q, k, S_c^T and b of chunk c */
            sgla_mbar_wait(sgla_smem_u32(&sm.qk_full), c & 1); /* (TMA's writes seen here too) */
            if (trc) wg_trace(p, 0, c, 1);
            float g0 = 0.f, g1 = 0.f;
            if (wi == 0 && c + 1 < w.nc) mgate_load(p, w, c + 1, lane, g0, g1);
            /* [Q K^T | Q S_c] in one accumulator: batches 0 .. NB / 2 - 1 with B's hi (Q's lo and hi), then
             * (3xTF32) the rest with B's lo (Q's hi) */
            float acc[64];
#pragma unroll
            for (int e = 0; e < 64; e++) acc[e] = 0.f;
            uint32_t ah[2][QB][4], al[2][QB][4];
            const auto pin_q = [&](int r) {
#pragma unroll
                for (int x = 0; x < QB; x++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        sgla_pin(ah[r][x][e]);
                        if constexpr (X3) sgla_pin(al[r][x][e]);
                    }
            };
#pragma unroll
            for (int b = 0; b < NB; b++) {
                const int r = b & 1, b0 = (b % (KD / 8 / QB)) * QB;
                const bool blo = X3 && b >= NB / 2;
                if (b >= 2) { /* batch b - 2's fragments are free once batch b - 1 is all that may run */
                    sgla_wg_wait<1>();
                    pin_q(r);
                }
#pragma unroll
                for (int x = 0; x < QB; x++) {
                    const int kc = 8 * (b0 + x) + tig;
                    const float f[4] = {sm.q[sw_at<64>(i0, kc)], sm.q[sw_at<64>(i1, kc)], sm.q[sw_at<64>(i0, kc + 4)],
                                        sm.q[sw_at<64>(i1, kc + 4)]};
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        if (X3 && !blo) tf32_split(f[e], ah[r][x][e], al[r][x][e]);
                        else if (X3) ah[r][x][e] = (__float_as_uint(f[e]) + 0x1000u) & 0xffffe000u;
                        else ah[r][x][e] = __float_as_uint(f[e]); /* TF32 alone: the tensor cores truncate */
                    }
                }
                if (blo && b == NB / 2) {
                    sgla_bar_sync(LO_READY, NT); /* K's lo */
                    if (trc) wg_trace(p, 0, c, 3);
                }
                sgla_wg_fence();
#pragma unroll
                for (int x = 0; x < QB; x++) {
                    if (!blo) {
                        const uint64_t dh = sw_desc<128>(sm.bhi, b0 + x);
                        if constexpr (X3) sgla_wg_rs_n128_tf32(acc, al[r][x], dh);
                        sgla_wg_rs_n128_tf32(acc, ah[r][x], dh);
                    } else {
                        sgla_wg_rs_n128_tf32(acc, ah[r][x], sw_desc<128>(sm.blo, b0 + x));
                    }
                }
                sgla_wg_commit();
            }
            sgla_wg_wait<0>();
#pragma unroll
            for (int e = 0; e < 64; e++) sgla_pin(acc[e]);
            pin_q(0);
            pin_q(1);
            if (trc) wg_trace(p, 0, c, 2);
            sgla_bar_arrive(B_FREE, NT); /* done with q, k and S_c^T */

            /* o = rs ⊙ (Q S_c) + A V, A = scale exp2(b_i - b_j) (q_i . k_j) for j <= i, split as A's fragments
             * (the accumulator's (row, key 2t + e) is A's k index t + 4 e), each k-step's products issued as
             * soon as its fragments are made */
            const float *bh = sm.bh[s], *bl = sm.bl[s];
            const float r0 = scale * sgla_exp2(bh[i0]), r1 = scale * sgla_exp2(bh[i1]);
            float *ov = acc + 32;
#pragma unroll
            for (int j = 0; j < 8; j++) ov[4 * j] *= r0, ov[4 * j + 1] *= r0, ov[4 * j + 2] *= r1, ov[4 * j + 3] *= r1;
            if constexpr (!X3) {
                sgla_bar_sync(LO_READY, NT); /* V^T */
                if (trc) wg_trace(p, 0, c, 3);
            }
            uint32_t ph[8][4], pl[8][4];
#pragma unroll
            for (int j = 0; j < 8; j++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int i = e < 2 ? i0 : i1, key = 8 * j + 2 * tig + (e & 1), slot = (e >> 1) + 2 * (e & 1);
                    const float a = masked_a(acc[4 * j + e], scale, bh, bl, i, key);
                    if constexpr (X3) tf32_split(a, ph[j][slot], pl[j][slot]);
                    else ph[j][slot] = __float_as_uint(a);
                }
                sgla_wg_fence();
                wg_vt3<X3>(ov, ph[j], pl[j], sm.vt[0], sm.vt[1], j);
            }
            if (trc) wg_trace(p, 0, c, 4);
            sgla_wg_commit();
            sgla_wg_wait<0>();
            if (trc) wg_trace(p, 0, c, 5);
#pragma unroll
            for (int e = 0; e < 32; e++) sgla_pin(ov[e]);
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    sgla_pin(ph[j][e]);
                    if constexpr (X3) sgla_pin(pl[j][e]);
                }
            sgla_bar_arrive(VT_FREE, NT); /* done with V^T */
            if (wi == 0 && c + 1 < w.nc) {
                tf32_gate_scan(p.gmode, g0, g1, gamma, chunk_rows(w.len, c + 1), sm.bh[s ^ 1], sm.bl[s ^ 1], lane);
                sgla_bar_arrive(SCAN_READY, NS + 32);
            }
            float *orow = o + rows(c) * p.V + 2 * tig;
            const int64_t rs = p.H * p.V;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                if (i0 < L) *(float2 *)(orow + i0 * rs + 8 * j) = make_float2(ov[4 * j], ov[4 * j + 1]);
                if (i1 < L) *(float2 *)(orow + i1 * rs + 8 * j) = make_float2(ov[4 * j + 2], ov[4 * j + 3]);
            }
            if (trc) wg_trace(p, 0, c, 6);
        }
        return;
    }

    /* ---- the state: warpgroup 1 + s holds rows 64 s .. + 63 in U's layout, rows kr (+ 8), columns
     * 8 j + 2 tig (+ 1); its warpgroups load q, k and v and write what B needs ---- */
    if constexpr (KD == 128) sgla_setmaxnreg_to<REG_STATE, REG_EVEN>();
    const int st = tid - 128, kr = 64 * (wg - 1) + 16 * wi + gid;
    /* the row (feature index of k) and column of V of the state's element e */
    const auto srow = [&](int e) { return kr + 8 * ((e >> 1) & 1); };
    const auto scol = [&](int e) { return 8 * (e >> 2) + 2 * tig + (e & 1); };
    float S[32];
    {
        const float *h0 = p.h0 ? p.h0 + w.nh * KD * p.V + col0 : (const float *)0;
#pragma unroll
        for (int e = 0; e < 32; e++) S[e] = h0 ? h0[(int64_t)srow(e) * p.V + scol(e)] : 0.f;
    }
    /* S^T's hi and lo into rows 64 .. of [K ; S^T] */
    const auto put_state = [&]() {
#pragma unroll
        for (int e = 0; e < 32; e++) {
            const int at = sw_at<128>(64 + scol(e), srow(e));
            uint32_t hi, lo;
            tf32_split(S[e], hi, lo);
            sm.bhi[at] = __uint_as_float(hi);
            if constexpr (X3) sm.blo[at] = __uint_as_float(lo);
        }
    };
    /* q and k of chunk c: a whole chunk by TMA (thread 0 of the state), a partial one by cp.async with zeros
     * past its end; either way qk_full's phase c completes */
    const uint32_t qk_full = sgla_smem_u32(&sm.qk_full);
    const int64_t tg0 = (w.row0 - w.h) / p.H; /* chunk 0's token in (token, batch) */
    const int tb = (int)(tg0 / p.T), tt0 = (int)(tg0 - tb * p.T), hh = (int)w.h;
    const auto load_qk = [&](int c) {
        const int L = chunk_rows(w.len, c);
        if (L == 64) {
            if (st == 0) {
                sgla_fence_proxy_async(); /* the generic reads of the tiles before TMA overwrites them */
                sgla_mbar_arrive_tx(qk_full, 2 * 64 * KD * 4);
#pragma unroll
                for (int cb = 0; cb < KD / 32; cb++) {
                    sgla_tma_load4(sgla_smem_u32(sm.q + cb * 64 * 32), &tm.q, 32 * cb, hh, tt0 + 64 * c, tb, qk_full);
                    sgla_tma_load4(sgla_smem_u32(sm.bhi + cb * 128 * 32), &tm.k, 32 * cb, hh, tt0 + 64 * c, tb, qk_full);
                }
            }
        } else {
            sw_rows<KD, 64, NS>(sm.q, q + rows(c) * KD, sk, L, st);
            sw_rows<KD, 128, NS>(sm.bhi, k + rows(c) * KD, sk, L, st);
            if (st == 0) sgla_mbar_arrive(qk_full);
        }
    };
    /* v of chunk c (the block's 64 columns) the same way, on v_full */
    const uint32_t v_full = sgla_smem_u32(&sm.v_full);
    const auto load_v = [&](int c) {
        const int L = chunk_rows(w.len, c);
        if (L == 64) {
            if (st == 0) {
                sgla_fence_proxy_async(); /* (as for q and k) */
                sgla_mbar_arrive_tx(v_full, 64 * BVT * 4);
#pragma unroll
                for (int cb = 0; cb < BVT / 32; cb++)
                    sgla_tma_load4(sgla_smem_u32(sm.v + cb * 64 * 32), &tm.v, col0 + 32 * cb, hh, tt0 + 64 * c, tb, v_full);
            }
        } else {
            sw_rows<BVT, 64, NS>(sm.v, v + rows(c) * p.V, sv, L, st);
            if (st == 0) sgla_mbar_arrive(v_full);
        }
    };
    if (w.nc > 0) {
        put_state();
        if (scanner) {
            float g0, g1;
            mgate_load(p, w, 0, lane, g0, g1);
            tf32_gate_scan(p.gmode, g0, g1, gamma, chunk_rows(w.len, 0), sm.bh[0], sm.bl[0], lane);
        }
        if (st == 0) {
            sgla_mbar_init(qk_full, 1);
            sgla_mbar_init(v_full, 1);
            sgla_mbar_init_fence();
        }
        sgla_bar_sync(STATE_BAR, NS); /* the mbarriers initialised before any thread waits on them */
        load_qk(0);
        load_v(0);
        sgla_cp_async_commit();
    }
    const bool trc = st == 0; /* wg_trace's thread */
    for (int c = 0; c < w.nc; c++) {
        const int s = c & 1;
        if (trc) wg_trace(p, 2, c, 0);
        sgla_cp_async_wait0();
        sgla_mbar_wait(qk_full, c & 1);
        sgla_mbar_wait(v_full, c & 1);
        sgla_fence_proxy_async(); /* k (and S^T) to wgmma's proxy */
        sgla_bar_sync(STATE_BAR, NS);
        if (trc) wg_trace(p, 2, c, 1);
        sgla_bar_arrive(B_READY, NT); /* q, k, S_c^T and b of chunk c */
        if (c > 0) sgla_bar_sync(VT_FREE, NT); /* warpgroup 0 is done with chunk c - 1's V^T */
        if (trc) wg_trace(p, 2, c, 2);
#pragma unroll
        for (int n = 0; X3 && n < 16 * KD / NS; n++) { /* K's lo: rows 0 .. 63 (512 float4) of each column block (1024) */
            const int i = st + n * NS, at = (i >> 9) * 1024 + (i & 511);
            const float4 x = reinterpret_cast<const float4 *>(sm.bhi)[at];
            reinterpret_cast<float4 *>(sm.blo)[at] = make_float4(trunc_lo(x.x), trunc_lo(x.y), trunc_lo(x.z), trunc_lo(x.w));
        }
#pragma unroll
        for (int n = 0; n < 64 * 64 / NS; n++) { /* V^T: a warp's 32 writes in one core matrix's rows */
            const int i = st + n * NS, rest = i >> 5, cl = 8 * (rest & 7) + (i & 7), pk = 4 * (rest >> 3) + ((i >> 3) & 3);
            const int key = (pk & ~7) + 2 * (pk & 3) + ((pk >> 2) & 1);
            uint32_t hi, lo;
            tf32_split(sm.v[sw_at<64>(key, cl)], hi, lo);
            const int at = core_at<64>(cl, pk);
            sm.vt[0][at] = __uint_as_float(hi);
            if constexpr (X3) sm.vt[1][at] = __uint_as_float(lo);
        }
        if (c > 0) sgla_bar_sync(SCAN_READY, NS + 32); /* b of chunk c */
        if (st < 64) sm.wt[st] = sgla_exp2(bdiff(sm.bh[s], sm.bl[s], 63, st));
        sgla_fence_proxy_async();
        sgla_bar_sync(STATE_BAR, NS); /* K's lo, V^T and the key weights; v is free */
        sgla_bar_arrive(LO_READY, NT);
        if (trc) wg_trace(p, 2, c, 3);
        if (c + 1 < w.nc) {
            load_v(c + 1);
            sgla_cp_async_commit();
        }
        /* warpgroup 0 done with q, k and S_c^T, the next chunk's q and k load: at K = 128, and at K = 64 in
         * TF32 alone, once the second batch of U's K is in registers, beside that batch's products (at K = 64
         * in 3xTF32 that wait costs as much as the earlier load gains), else after U */
        constexpr bool QK_IN_U = KD == 128 || !X3;
        const auto next_qk = [&]() {
            if (trc) wg_trace(p, 2, c, 4);
            sgla_bar_sync(B_FREE, NT);
            if (trc) wg_trace(p, 2, c, 5);
            if (c + 1 < w.nc) {
                load_qk(c + 1);
                sgla_cp_async_commit();
            }
        };
        const bool upd = c + 1 < w.nc || p.ht;
        if (upd) {
            /* U = (K ⊙ w)^T V: A's k index t, t + 4 of k-step j are keys 8 j + 2 t, + 1; two batches */
            float U[32];
#pragma unroll
            for (int e = 0; e < 32; e++) U[e] = 0.f;
#pragma unroll
            for (int j0 = 0; j0 < 8; j0 += 4) {
                uint32_t kh[4][4], kl[4][4];
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int key = 8 * (j0 + x) + 2 * tig;
                    const float w0 = sm.wt[key], w1 = sm.wt[key + 1];
                    tf32_split(sm.bhi[sw_at<128>(key, kr)] * w0, kh[x][0], kl[x][0]);
                    tf32_split(sm.bhi[sw_at<128>(key, kr + 8)] * w0, kh[x][1], kl[x][1]);
                    tf32_split(sm.bhi[sw_at<128>(key + 1, kr)] * w1, kh[x][2], kl[x][2]);
                    tf32_split(sm.bhi[sw_at<128>(key + 1, kr + 8)] * w1, kh[x][3], kl[x][3]);
                }
                if (QK_IN_U && j0 == 4) next_qk(); /* (no products in flight here) */
                sgla_wg_fence();
#pragma unroll
                for (int x = 0; x < 4; x++) wg_vt3<X3>(U, kh[x], kl[x], sm.vt[0], sm.vt[1], j0 + x);
                sgla_wg_commit();
                sgla_wg_wait<0>();
#pragma unroll
                for (int e = 0; e < 32; e++) sgla_pin(U[e]);
#pragma unroll
                for (int x = 0; x < 4; x++)
#pragma unroll
                    for (int e = 0; e < 4; e++) sgla_pin(kh[x][e]), sgla_pin(kl[x][e]);
            }
            const float bC = sm.bh[s][63], em1 = expm1f(bC * SGLA_LN2), ex = sgla_exp2(bC);
#pragma unroll
            for (int e = 0; e < 32; e++) S[e] = sgla_carry_mul(S[e], bC, em1, ex) + U[e];
        }
        if (!QK_IN_U || !upd) next_qk();
        if (c + 1 < w.nc) {
            put_state();
        }
        if (trc) wg_trace(p, 2, c, 6);
    }
    if (w.nc > 0) sgla_bar_sync(VT_FREE, NT); /* the last chunk's (warpgroup 0 arrives once a chunk) */
    if (p.ht) { /* (h0, or zeros, for an empty sequence) */
        float *ht = p.ht + w.nh * KD * p.V + col0;
#pragma unroll
        for (int e = 0; e < 32; e += 2) *(float2 *)&ht[(int64_t)srow(e) * p.V + scol(e)] = make_float2(S[e], S[e + 1]);
    }
#endif
}

typedef void (*tf32_fn)(const sgla_kparams);
struct TInst {
    tf32_fn fn;
    unsigned smem;
};
template <int KD, bool X3, int NST> constexpr TInst tinst(void)
{
    return {chunk_fwd_tf32<KD, X3, NST>, (unsigned)sizeof(Tf32Smem<KD, NST>)};
}
/* [K = 64, 128][TF32 alone, 3xTF32][one stage, two] */
const TInst tinsts[2][2][2] = {
    {{tinst<64, false, 1>(), tinst<64, false, 2>()}, {tinst<64, true, 1>(), tinst<64, true, 2>()}},
    {{tinst<128, false, 1>(), tinst<128, false, 2>()}, {tinst<128, true, 1>(), tinst<128, true, 2>()}}};

/* [K = 64, 128][TF32 alone, 3xTF32] */
struct WInst {
    void (*fn)(const sgla_kparams, const sgla_tmaps);
    unsigned smem;
};
template <int KD, bool X3> constexpr WInst winst(void)
{
    return {chunk_fwd_wgtf32<KD, X3>, (unsigned)sizeof(WgSmem<KD>)};
}
const WInst winsts[2][2] = {{winst<64, false>(), winst<64, true>()}, {winst<128, false>(), winst<128, true>()}};

} /* namespace */

int sgla_fwd_tf32_supported(int64_t K, int64_t V) { return (K == 64 || K == 128) && V >= BVT && V % BVT == 0; }

size_t sgla_fwd_tf32_smem(int64_t K, int nst) { return tinsts[K == 128][0][nst == 2].smem; }

/* the shared-memory opt-in of each of the n instances at x that fits optin */
template <class I> static cudaError_t set_smem(const I *x, int n, int optin)
{
    for (int i = 0; i < n; i++) {
        const cudaError_t e = (int)x[i].smem > optin ? cudaSuccess
                                                      : cudaFuncSetAttribute((const void *)x[i].fn,
                                                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                             (int)x[i].smem);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t sgla_fwd_tf32_setup(int optin)
{
    const cudaError_t e = set_smem(&tinsts[0][0][0], (int)(sizeof tinsts / sizeof(TInst)), optin);
    return e != cudaSuccess ? e : set_smem(&winsts[0][0], (int)(sizeof winsts / sizeof(WInst)), optin);
}

size_t sgla_fwd_wgtf32_smem(int64_t K) { return winsts[K == 128][0].smem; }

sgla_status sgla_fwd_tf32_launch(const sgla_kparams *p, const sgla_tmaps *tm, int x3, int nst, cudaStream_t st)
{
    if (!sgla_fwd_tf32_supported(p->K, p->V))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "TF32 forward: K = %lld, V = %lld", (long long)p->K,
                         (long long)p->V);
    if (p->nseg != 1 || p->mode != 0)
        return sgla_fail(SGLA_ERR_INTERNAL, "TF32 forward: no sequence split (%d segments, mode %d)", p->nseg, p->mode);
    if (p->N * p->H == 0) return SGLA_OK;
    const dim3 grid((unsigned)(p->N * p->H), (unsigned)(p->V / BVT));
    if (tm) {
        const WInst *x = &winsts[p->K == 128][x3 ? 1 : 0];
        x->fn<<<grid, 128 * (1 + (unsigned)p->K / 64), x->smem, st>>>(*p, *tm);
    } else {
        const TInst *x = &tinsts[p->K == 128][x3 ? 1 : 0][nst == 2];
        x->fn<<<grid, TTHREADS, x->smem, st>>>(*p);
    }
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the TF32 forward: %s", cudaGetErrorString(e));
}
