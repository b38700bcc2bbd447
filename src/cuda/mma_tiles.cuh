/* mma.sync tiles shared by the tensor-core kernels that run on every GPU since
 * Ampere (chunk_bwd_tc.cu, chunk_fwd_mma.cu): PTX for ldmatrix, mma.sync
 * m16n8k16 and cp.async; fragment loads from padded row-major 16-bit tiles; the
 * state tile of a warp (8 warps: rows K/4 x columns V/2 each) and its update
 * S = exp2(pre) S + (X w)^T Y; the masked, weighted 64 x 64 scores.  Compile-time
 * shapes: MmaShape<K, V>. */
#ifndef SGLA_CUDA_MMA_TILES_CUH
#define SGLA_CUDA_MMA_TILES_CUH

#include <stdint.h>

#include "chunk_fwd.cuh"
#include "ptx.cuh"

namespace {

constexpr int NTH = 256; /* 8 warps */

/* ---- PTX: ldmatrix (both forms), mma.sync, cp.async ------------------------------ */

__device__ __forceinline__ void ldm_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

template <class E> __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if constexpr (E::bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}


/* A chunk's 64 token rows of D 16-bit features into a shared tile (row stride LD elements), one
 * cp.async of 16 bytes a thread at a time: s0 is the first token's row, stride the distance
 * between tokens (H D elements); rows from L on are zeros.  With s1, a second tensor of the same
 * shape into d1 in the same loop (one index computation for both).  Committed by the caller. */
template <int D, int LD>
__device__ __forceinline__ void load_rows(uint32_t d0, const uint16_t *s0, int64_t stride, int L, int tid,
                                          uint32_t d1 = 0, const uint16_t *s1 = nullptr)
{
    constexpr int U = D / 8;
    for (int i = tid; i < 64 * U; i += NTH) {
        const int r = i / U, u = i - r * U, ok = r < L ? 16 : 0;
        const int64_t g = (r < L ? (int64_t)r * stride : 0) + u * 8;
        const uint32_t d = (uint32_t)((r * LD + u * 8) * 2);
        sgla_cp_async16(d0 + d, s0 + g, ok);
        if (s1) sgla_cp_async16(d1 + d, s1 + g, ok);
    }
}

/* ---- fragments from row-major 16-bit tiles (ld = row stride in elements) -------------
 * A (16 x 16) of rows r0.., columns k0.. of X:             ldA
 * A (16 x 16) = X^T, X rows k0.., columns m0..:             ldAt
 * B (16 x 8, two n-tiles n0, n0 + 8) = Y^T, Y rows n0..:     ldBn  (b[0..1] tile n0, b[2..3] tile n0 + 8)
 * B (16 x 8, two n-tiles) = Z rows k0.., columns n0..:      ldBk */

__device__ __forceinline__ void ldA(uint32_t a[4], uint32_t base, int ld, int r0, int k0, int lane)
{
    ldm_x4(a, base + (uint32_t)(((r0 + (lane & 15)) * ld + k0 + (lane >> 4) * 8) * 2));
}
__device__ __forceinline__ void ldAt(uint32_t a[4], uint32_t base, int ld, int m0, int k0, int lane)
{
    sgla_ldm_x4_t(a, base + (uint32_t)(((k0 + (lane & 7) + ((lane >> 4) & 1) * 8) * ld + m0 + ((lane >> 3) & 1) * 8) * 2));
}
__device__ __forceinline__ void ldBn(uint32_t b[4], uint32_t base, int ld, int n0, int k0, int lane)
{
    ldm_x4(b, base + (uint32_t)(((n0 + (lane & 7) + ((lane >> 4) & 1) * 8) * ld + k0 + ((lane >> 3) & 1) * 8) * 2));
}
__device__ __forceinline__ void ldBk(uint32_t b[4], uint32_t base, int ld, int k0, int n0, int lane)
{
    sgla_ldm_x4_t(b, base + (uint32_t)(((k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * ld + n0 + ((lane >> 4) & 1) * 8) * 2));
}

/* ---- the shape of an instance and its shared memory --------------------------------- */

template <int KD_, int VD_> struct MmaShape {
    static constexpr int KD = KD_, VD = VD_;
    static constexpr int LK = KD + 8, LV = VD + 8; /* padded rows: ldmatrix without bank conflicts */
    static constexpr int KH = KD / 2;              /* dq columns of a warp */
    static constexpr int MS = KD / 64;             /* m16 tiles of a warp's state rows (K / 4) */
    static constexpr int NS = VD / 16;             /* n8 tiles of its state columns (V / 2) */
    /* K = 256 in the forward alone, with 64 columns (a warp's state tile 64 x 32, as 128 x 64's) */
    static_assert((KD == 64 || KD == 128 || (KD == 256 && VD == 64)) && (VD == 64 || VD == 128),
                  "K and V are 64 or 128, or K = 256 with V = 64");
};

/* The instances of an mma.sync kernel family for one input type: [K = 64, 128 (, 256)][a block's
 * columns of V = 64, 128][one stage, two]; NK = 3 adds K = 256 (the forward, chunk_fwd_mma.cu) */
template <class I, int NK = 2> struct MmaTable {
    I x[NK][2][2];
};
/* the entry of (dt, K, a block's columns V, stages) in a family's tables [bf16, f16]; NULL outside them */
template <class I, int NK>
static inline const I *mma_entry(const MmaTable<I, NK> (&t)[2], sgla_dtype dt, int64_t K, int64_t V, int nst)
{
    if (dt != SGLA_BF16 && dt != SGLA_F16) return NULL;
    const int ki = K == 64 ? 0 : K == 128 ? 1 : K == 256 ? 2 : NK;
    if (ki >= NK || (V != 64 && V != 128) || nst < 1 || nst > 2) return NULL;
    return &t[dt == SGLA_BF16 ? 0 : 1].x[ki][V == 128][nst - 1];
}

/* gate g of a chunk's rows lane and lane + 32 (0 past its L rows, and 0 unless gmode is g);
 * gp: the gate of its first row, H: the token stride.  Loaded a chunk ahead of its scan. */
__device__ __forceinline__ void chunk_gate_load(int gmode, const float *gp, int64_t H, int L, int lane, float &g0,
                                                float &g1)
{
    g0 = g1 = 0.f;
    if (gmode != SGLA_GATE_G) return;
    if (lane < L) g0 = __ldg(gp + (int64_t)lane * H);
    if (lane + 32 < L) g1 = __ldg(gp + (int64_t)(lane + 32) * H);
}

/* b (log2, chunk-local, cumulative; rows past L repeat the last) of a chunk, by one warp, from
 * its loaded g (gate g) or the head's gamma (gate g_gamma) */
__device__ __forceinline__ void chunk_gate_scan(int gmode, float g0, float g1, float gamma, int L, float *bdst,
                                                int lane)
{
    if (gmode == SGLA_GATE_G) {
        /* the floor here: at the load it would wait for the load at once */
        float x0 = fmaxf(g0, SGLA_GATE_FLOOR_F) * SGLA_LOG2E, x1 = fmaxf(g1, SGLA_GATE_FLOOR_F) * SGLA_LOG2E;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float y0 = __shfl_up_sync(0xffffffffu, x0, off), y1 = __shfl_up_sync(0xffffffffu, x1, off);
            if (lane >= off) x0 += y0, x1 += y1;
        }
        x1 += __shfl_sync(0xffffffffu, x0, 31);
        bdst[lane] = x0;
        bdst[lane + 32] = x1;
    } else if (gmode == SGLA_GATE_GAMMA) {
        const float gl2 = fmaxf(gamma, SGLA_GATE_FLOOR_F) * SGLA_LOG2E;
        bdst[lane] = gl2 * (float)(lane + 1 < L ? lane + 1 : L);
        bdst[lane + 32] = gl2 * (float)(lane + 33 < L ? lane + 33 : L);
    } else {
        bdst[lane] = bdst[lane + 32] = 0.f;
    }
}

/* ---- a block's sequence and head (the mma.sync forwards: blockIdx.x = n H + h) ---------- */

struct MWork {
    int64_t nh, h, row0, len; /* row0: (b T + t0) H + h, the first token's row index */
    int nc, seg;
};

/* Block blockIdx.x = (nh nseg + seg) 2^lg + its column block (2^lg of them): (sequence, head) nh, and with a
 * sequence split (SPLIT; fwd_params.cuh) the tokens of segment seg; a pair's column blocks
 * adjacent in launch order, so that their reads of q and k meet in L2 (the block's columns:
 * chunk_fwd_mma.cu's mcol0).  0 where the block has nothing to do (mode 1: the last segment's
 * local state, which the scan never reads) */
template <bool SPLIT> __device__ __forceinline__ int mwork(const sgla_kparams &p, MWork &w, unsigned lg = 0)
{
    const unsigned it = blockIdx.x >> lg;
    w.nh = SPLIT ? it / p.nseg : it;
    w.seg = SPLIT ? (int)(it - w.nh * p.nseg) : 0;
    const int64_t n = w.nh / p.H;
    w.h = w.nh - n * p.H;
    int64_t b, t0, t1;
    sgla_seq_range(&p, n, &b, &t0, &t1);
    if (SPLIT) {
        if (p.mode == 1 && w.seg == p.nseg - 1) return 0;
        const int64_t a = t0 + w.seg * p.seg_len;
        t0 = a < t1 ? a : t1;
        t1 = t0 + p.seg_len < t1 ? t0 + p.seg_len : t1;
    }
    w.len = t1 - t0;
    w.nc = (int)((w.len + 63) / 64);
    w.row0 = (b * p.T + t0) * p.H + w.h;
    return 1;
}

/* g of chunk c's rows (nothing past the sequence; chunk_gate_load) */
__device__ __forceinline__ void mgate_load(const sgla_kparams &p, const MWork &w, int c, int lane, float &g0, float &g1)
{
    const bool in = c >= 0 && c < w.nc;
    const bool gated = in && p.gmode == SGLA_GATE_G;
    const float *gp = gated ? p.g + w.row0 + (int64_t)c * 64 * p.H : nullptr;
    chunk_gate_load(gated ? SGLA_GATE_G : SGLA_GATE_NONE, gp, p.H, in ? chunk_rows(w.len, c) : 0, lane, g0, g1);
}

/* where this warp's fragment (mt, nt) of the state sits: row of its first element (the
 * other at + 8) and column of its pair (warp w holds rows K/4 (w % 4) .., columns V/2 (w / 4) ..) */
template <class Sh> __device__ __forceinline__ int state_row(int m, int mt, int gid)
{
    return (Sh::KD / 4) * m + 16 * mt + gid;
}
template <class Sh> __device__ __forceinline__ int state_col(int hf, int nt, int tig)
{
    return (Sh::VD / 2) * hf + 8 * nt + 2 * tig;
}

/* f(mt, nt, r, c) for every C fragment of this warp's state tile: rows r, r + 8, columns c, c + 1 */
template <class Sh, class F> __device__ __forceinline__ void state_each(int m, int hf, int gid, int tig, F f)
{
#pragma unroll
    for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
        for (int nt = 0; nt < Sh::NS; nt++) f(mt, nt, state_row<Sh>(m, mt, gid), state_col<Sh>(hf, nt, tig));
}

/* the state tile of this warp (fp32 mma C fragments) into the 16-bit copy */
template <class E, class Sh>
__device__ __forceinline__ void state_store16(const float (&S)[Sh::MS][Sh::NS][4], uint16_t *dst, int m, int hf,
                                              int gid, int tig)
{
    state_each<Sh>(m, hf, gid, tig, [&](int mt, int nt, int r, int c) {
        *(uint32_t *)(dst + r * Sh::LV + c) = chunk_pack<E>(S[mt][nt][0], S[mt][nt][1]);
        *(uint32_t *)(dst + (r + 8) * Sh::LV + c) = chunk_pack<E>(S[mt][nt][2], S[mt][nt][3]);
    });
}

/* the state tile from a [K][V] fp32 array, or zeros */
template <class Sh>
__device__ __forceinline__ void state_load(float (&S)[Sh::MS][Sh::NS][4], const float *src, int64_t V, int m, int hf,
                                           int gid, int tig)
{
    state_each<Sh>(m, hf, gid, tig, [&](int mt, int nt, int r, int c) {
        float2 x = make_float2(0.f, 0.f), y = x;
        if (src) {
            x = *(const float2 *)(src + (int64_t)r * V + c);
            y = *(const float2 *)(src + (int64_t)(r + 8) * V + c);
        }
        S[mt][nt][0] = x.x, S[mt][nt][1] = x.y, S[mt][nt][2] = y.x, S[mt][nt][3] = y.y;
    });
}

/* the state tile into a [K][V] fp32 array */
template <class Sh>
__device__ __forceinline__ void state_store(const float (&S)[Sh::MS][Sh::NS][4], float *dst, int64_t V, int m, int hf,
                                            int gid, int tig)
{
    state_each<Sh>(m, hf, gid, tig, [&](int mt, int nt, int r, int c) {
        *(float2 *)(dst + (int64_t)r * V + c) = make_float2(S[mt][nt][0], S[mt][nt][1]);
        *(float2 *)(dst + (int64_t)(r + 8) * V + c) = make_float2(S[mt][nt][2], S[mt][nt][3]);
    });
}

/* S = exp2(pre) S + (X ⊙ wt)^T Y, then S *= exp2(post), over the chunk's 64 tokens (both
 * carries by sgla_carry_mul): X (tokens x K) gives A = X^T by ldmatrix.trans, scaled per
 * token by wt (16-bit pairs: the callers keep |wt| <= 1, its largest 1 in the forward
 * sweep and |scale| in the reverse one, so that in fp16 a weight underflows only 2^-24
 * below the chunk's largest, or (reverse) |scale| times that: docs/numerics.md §8);
 * Y (tokens x V) gives B.  The chunk's product is accumulated from zero, half of the
 * warp's columns at a time, and added to S with fp32 adds: the tensor cores' fp32
 * accumulation does not round to nearest, and accumulating into S itself let that
 * error grow with the chunks a block carries (docs/numerics.md §7). */
template <class E, class Sh>
__device__ __forceinline__ void state_update(float (&S)[Sh::MS][Sh::NS][4], float pre, float post, const float *wt,
                                             uint32_t X, uint32_t Y, int m, int hf, int tig, int lane)
{
    {
        const float em1 = expm1f(pre * SGLA_LN2), ex = sgla_exp2(pre);
#pragma unroll
        for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
            for (int nt = 0; nt < Sh::NS; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) S[mt][nt][e] = sgla_carry_mul(S[mt][nt][e], pre, em1, ex);
    }
    constexpr int NH = Sh::NS / 2; /* n8 tiles of one column half */
#pragma unroll
    for (int half = 0; half < 2; half++) {
        float P[Sh::MS][NH][4];
#pragma unroll
        for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
            for (int nt = 0; nt < NH; nt++) P[mt][nt][0] = P[mt][nt][1] = P[mt][nt][2] = P[mt][nt][3] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            uint32_t a[Sh::MS][4];
            const int t = 16 * ks + 2 * tig;
            const uint32_t w01 = chunk_pack<E>(wt[t], wt[t + 1]), w89 = chunk_pack<E>(wt[t + 8], wt[t + 9]);
#pragma unroll
            for (int mt = 0; mt < Sh::MS; mt++) {
                ldAt(a[mt], X, Sh::LK, (Sh::KD / 4) * m + 16 * mt, 16 * ks, lane);
                a[mt][0] = chunk_mul2<E>(a[mt][0], w01);
                a[mt][1] = chunk_mul2<E>(a[mt][1], w01);
                a[mt][2] = chunk_mul2<E>(a[mt][2], w89);
                a[mt][3] = chunk_mul2<E>(a[mt][3], w89);
            }
#pragma unroll
            for (int np = 0; np < NH / 2; np++) {
                uint32_t bf[4];
                ldBk(bf, Y, Sh::LV, 16 * ks, (Sh::VD / 2) * hf + 8 * NH * half + 16 * np, lane);
#pragma unroll
                for (int mt = 0; mt < Sh::MS; mt++) {
                    mma16816<E>(P[mt][2 * np], a[mt], bf[0], bf[1]);
                    mma16816<E>(P[mt][2 * np + 1], a[mt], bf[2], bf[3]);
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
            for (int nt = 0; nt < NH; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) S[mt][NH * half + nt][e] += P[mt][nt][e];
    }
    if (post != 0.f) {
        const float em1 = expm1f(post * SGLA_LN2), ex = sgla_exp2(post);
#pragma unroll
        for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
            for (int nt = 0; nt < Sh::NS; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) S[mt][nt][e] = sgla_carry_mul(S[mt][nt][e], post, em1, ex);
    }
}

/* rows r0, r0 + 8 of a C-fragment block (NT n8 tiles from column c0) times w0, w1; then,
 * when dot is set, each row's dot product with the same rows and columns of a 16-bit
 * tile (leading dimension ld), summed over the quad: the row's e or u */
template <class E, int NT, int NTA>
__device__ __forceinline__ void rows_scale_dot(float (&acc)[NTA][4], float w0, float w1, const uint16_t *tile, int ld,
                                               int r0, int c0, int tig, bool dot, float &d0, float &d1)
{
    d0 = d1 = 0.f;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        acc[nt][0] *= w0, acc[nt][1] *= w0, acc[nt][2] *= w1, acc[nt][3] *= w1;
        if (dot) {
            const int col = c0 + 8 * nt + 2 * tig;
            const float2 a = chunk_unpack<E>(*(const uint32_t *)(tile + r0 * ld + col));
            const float2 b = chunk_unpack<E>(*(const uint32_t *)(tile + (r0 + 8) * ld + col));
            d0 = fmaf(a.x, acc[nt][0], d0);
            d0 = fmaf(a.y, acc[nt][1], d0);
            d1 = fmaf(b.x, acc[nt][2], d1);
            d1 = fmaf(b.y, acc[nt][3], d1);
        }
    }
    if (dot) {
        d0 += __shfl_xor_sync(0xffffffffu, d0, 1);
        d1 += __shfl_xor_sync(0xffffffffu, d1, 1);
        d0 += __shfl_xor_sync(0xffffffffu, d0, 2);
        d1 += __shfl_xor_sync(0xffffffffu, d1, 2);
    }
}

/* 64 x 64 scores of 16 rows (this warp's, C fragments) -> masked, weighted 16-bit A fragments.
 * rows_are_queries: row i, column j, kept where j <= i, weight scale exp2(b_i - b_j);
 * else row j (key), column i (query), kept where i >= j, weight scale exp2(b_i - b_j). */
template <class E>
__device__ __forceinline__ void scores_weigh(float (&sc)[8][4], const float *bb, float scale, int m, int gid, int tig,
                                             bool rows_are_queries)
{
    const int r0 = 16 * m + gid, r1 = r0 + 8;
    const float br0 = bb[r0], br1 = bb[r1];
#pragma unroll
    for (int nt = 0; nt < 8; nt++) {
        const int c0 = 8 * nt + 2 * tig, c1 = c0 + 1;
        const float bc0 = bb[c0], bc1 = bb[c1];
        if (rows_are_queries) {
            sc[nt][0] = c0 <= r0 ? sc[nt][0] * (sgla_exp2(br0 - bc0) * scale) : 0.f;
            sc[nt][1] = c1 <= r0 ? sc[nt][1] * (sgla_exp2(br0 - bc1) * scale) : 0.f;
            sc[nt][2] = c0 <= r1 ? sc[nt][2] * (sgla_exp2(br1 - bc0) * scale) : 0.f;
            sc[nt][3] = c1 <= r1 ? sc[nt][3] * (sgla_exp2(br1 - bc1) * scale) : 0.f;
        } else {
            sc[nt][0] = c0 >= r0 ? sc[nt][0] * (sgla_exp2(bc0 - br0) * scale) : 0.f;
            sc[nt][1] = c1 >= r0 ? sc[nt][1] * (sgla_exp2(bc1 - br0) * scale) : 0.f;
            sc[nt][2] = c0 >= r1 ? sc[nt][2] * (sgla_exp2(bc0 - br1) * scale) : 0.f;
            sc[nt][3] = c1 >= r1 ? sc[nt][3] * (sgla_exp2(bc1 - br1) * scale) : 0.f;
        }
    }
}

template <class E> __device__ __forceinline__ void scores_pack(const float (&sc)[8][4], uint32_t (&af)[4][4])
{
#pragma unroll
    for (int p = 0; p < 4; p++) {
        af[p][0] = chunk_pack<E>(sc[2 * p][0], sc[2 * p][1]);
        af[p][1] = chunk_pack<E>(sc[2 * p][2], sc[2 * p][3]);
        af[p][2] = chunk_pack<E>(sc[2 * p + 1][0], sc[2 * p + 1][1]);
        af[p][3] = chunk_pack<E>(sc[2 * p + 1][2], sc[2 * p + 1][3]);
    }
}

/* this warp's 16 output rows (NT n8 tiles from column c0 of a D-wide tensor) to global through
 * its staging tile: rows < L only, 16-byte stores */
template <class E, int NT>
__device__ __forceinline__ void rows_store(const float (&acc)[NT][4], uint16_t *stg, uint16_t *gdst, int64_t rstride,
                                           int c0, int m, int L, int gid, int tig, int lane)
{
    constexpr int LS = 8 * NT + 8; /* staging row stride */
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        *(uint32_t *)(stg + gid * LS + 8 * nt + 2 * tig) = chunk_pack<E>(acc[nt][0], acc[nt][1]);
        *(uint32_t *)(stg + (gid + 8) * LS + 8 * nt + 2 * tig) = chunk_pack<E>(acc[nt][2], acc[nt][3]);
    }
    __syncwarp();
    for (int i = lane; i < 16 * NT; i += 32) { /* NT 16-byte units a row */
        const int r = i / NT, u = i - r * NT;
        if (16 * m + r < L)
            *(uint4 *)(gdst + (int64_t)(16 * m + r) * rstride + c0 + 8 * u) = *(const uint4 *)(stg + r * LS + 8 * u);
    }
    __syncwarp();
}

/* the same straight from the fragments (the reverse sweep has no room to stage) */
template <class E, int NT, int NTA>
__device__ __forceinline__ void rows_store_direct(const float (&acc)[NTA][4], uint16_t *gdst, int64_t rstride, int m,
                                                  int L, int gid, int tig)
{
    const int r0 = 16 * m + gid, r1 = r0 + 8;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        if (r0 < L) *(uint32_t *)(gdst + (int64_t)r0 * rstride + 8 * nt + 2 * tig) = chunk_pack<E>(acc[nt][0], acc[nt][1]);
        if (r1 < L) *(uint32_t *)(gdst + (int64_t)r1 * rstride + 8 * nt + 2 * tig) = chunk_pack<E>(acc[nt][2], acc[nt][3]);
    }
}

} /* namespace */

#endif
