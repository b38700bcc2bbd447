/* The CUDA backward on the tensor cores (mma.sync m16n8k16, 16-bit operands,
 * fp32 accumulation), for bf16 / fp16 inputs with K, V in {64, 128}.  Two
 * sweeps per (sequence, head), one block each, over chunks of 64 tokens:
 *
 *   forward sweep  (chunk order): the state S_c entering chunk c in registers
 *       (fp32; a 16-bit copy in shared memory is the mma operand), and
 *         dq_c = rs ⊙ (dO S_c^T) + dA K,   dA = scale Γ ⊙ (dO V^T), j <= i
 *         e_i  = q_i . (rs ⊙ dO S_c^T)_i  (its in-chunk suffix sums go to dg)
 *         S_{c+1} = exp(b_L) S_c + (K ⊙ w)^T V
 *   reverse sweep (reverse order): dS_c, the gradient of chunk c's end state,
 *       in registers, and
 *         dk_c = w ⊙ (V dS_c^T) + dA^T Q,   dv_c = w ⊙ (K dS_c) + A^T dO
 *         u_j  = k_j . (w ⊙ V dS_c^T)_j
 *         dS_{c-1} = exp(b_L) dS_c + (Q ⊙ rs)^T dO    (dh0 after chunk 0)
 *
 * rs_i = scale exp(b_i), w_j = exp(b_L - b_j), b the chunk-local cumulative
 * log gate (SPEC §2).  Without dg no state is stored at all.
 *
 * The gate gradient (reference B's form, no cancellation inside a chunk):
 *   dg_r = X_c + sum_{j<r} u_j + sum_{i>=r} e_i + sum_{i>=r, j<r} A_ij dP_ij
 * with X_c = exp(b_L) <dS_c, S_c>, the pairs (query after chunk c, key before
 * it).  Neither sweep holds both states: when dg is asked for, the forward
 * sweep stores the 16-bit S_c of every chunk (the copy it makes anyway) and the
 * reverse sweep takes the inner product with its fp32 dS_c.  (The telescoping
 * X_c = X_{c+1} - U_c + E_{c+1} needs no memory, but its rounding grows with
 * |U_c|, not |X_c|: 2-5e-2 on dg_gamma in bf16, docs/perf.md.)
 *
 * Warps: 8; warp w works on token rows 16 (w % 4) .. + 15 and on column half
 * w / 4 where an output is split; the state is split into 8 tiles of K/4 rows
 * x V/2 columns.  Every sum has one order: the gradients are bit-identical
 * from call to call. */
#include <stdint.h>

#include "chunk_fwd.cuh"
#include "cuda_backend.cuh"
#include "mma_tiles.cuh"
#include "ptx.cuh"

namespace {

/* what both sweeps keep in shared memory: NST stages of q, k, v, dO, 2 (chunk c and the next one, loaded
 * while c is computed) where a block's shared memory holds them, else 1 (each tile loaded once its last
 * reader is done: K = V = 128 on an sm_80 block, K = V = 64 on 99 KB) */
template <class Sh, int NST> struct BwdCommon {
    uint16_t q[NST][64 * Sh::LK], k[NST][64 * Sh::LK];
    uint16_t v[NST][64 * Sh::LV], o[NST][64 * Sh::LV]; /* o: the output gradient dO */
    uint16_t S[Sh::KD * Sh::LV];                       /* 16-bit copy of the state (dS in the reverse sweep) */
    float b[2][64];                                    /* log2 b of chunk c and of the next one */
    float e[2][2][64];                                 /* e (forward) or u (reverse): [chunk parity][half][row] */
    float box[64];
    float red[NTH / 32];
};
template <class Sh, int NST> struct FwdSmem : BwdCommon<Sh, NST> {
    uint16_t stg[8][16 * (Sh::KH + 8)]; /* per warp: its dq rows, for 16-byte stores */
};
template <class Sh, int NST> struct RevSmem : BwdCommon<Sh, NST> {
    uint16_t Sin[Sh::KD * Sh::LV]; /* S_c stored by the forward sweep (dg only) */
    float M[64][65];               /* A ⊙ dP, rows key j, columns query i (dg only) */
};
static_assert(sizeof(FwdSmem<MmaShape<128, 128>, 2>) <= 227 * 1024, "the forward sweep fits an SM");
static_assert(sizeof(RevSmem<MmaShape<128, 128>, 2>) <= 227 * 1024, "the reverse sweep fits an SM");
static_assert(sizeof(RevSmem<MmaShape<128, 128>, 1>) <= 163 * 1024, "one stage fits an sm_80 block");
static_assert(sizeof(RevSmem<MmaShape<64, 64>, 1>) <= 99 * 1024, "one stage at K = V = 64 fits an sm_86 block");

/* ---- the work of one block ------------------------------------------------------------ */

struct BwdWork {
    int64_t nh, h, bidx, t0, len, row0; /* row0: (bidx T + t0) H + h, the first token's row index */
    int nc, seg;
};

__device__ __forceinline__ void bwd_work(const sgla_bparams &p, BwdWork &w)
{
    w.nh = blockIdx.x / p.nseg;
    w.seg = (int)(blockIdx.x - w.nh * p.nseg);
    const int64_t n = w.nh / p.H;
    w.h = w.nh - n * p.H;
    if (p.cu) {
        int64_t a = p.cu[n], e = p.cu[n + 1];
        a = a < 0 ? 0 : (a > p.T ? p.T : a);
        e = e < a ? a : (e > p.T ? p.T : e);
        w.bidx = 0, w.t0 = a, w.len = e - a;
    } else if (p.nseg > 1) { /* segments of seg_len tokens (a multiple of 64), the last one shorter */
        w.bidx = n, w.t0 = w.seg * p.seg_len;
        w.len = p.T - w.t0 < p.seg_len ? p.T - w.t0 : p.seg_len;
    } else {
        w.bidx = n, w.t0 = 0, w.len = p.T;
    }
    w.nc = (int)((w.len + 63) / 64);
    w.row0 = (w.bidx * p.T + w.t0) * p.H + w.h;
}

/* where chunk c's state is stored (sgla_chunk_slot) */
__device__ __forceinline__ const uint16_t *state_slot(const sgla_bparams &p, const BwdWork &w, int c)
{
    const int64_t slot = sgla_chunk_slot(w.bidx, p.T, w.t0, w.nh / p.H, c);
    return (const uint16_t *)p.ws_S + (slot * p.H + w.h) * p.K * p.V;
}

/* q, k, v, dO of chunk c into stage s (rows past the chunk are zeros) */
enum { LD_Q = 1, LD_K = 2, LD_V = 4, LD_O = 8, LD_ALL = 15 };
template <class Sh, int NST, int WHICH = LD_ALL>
__device__ __forceinline__ void load_chunk(const sgla_bparams &p, const BwdWork &w, BwdCommon<Sh, NST> &sm, int c,
                                           int s, int tid)
{
    const int L = chunk_rows(w.len, c);
    const int64_t r0 = w.row0 + (int64_t)c * 64 * p.H; /* row index of the chunk's first token */
    const uint16_t *q = (const uint16_t *)p.q + r0 * Sh::KD, *k = (const uint16_t *)p.k + r0 * Sh::KD;
    const uint16_t *v = (const uint16_t *)p.v + r0 * Sh::VD, *o = (const uint16_t *)p.dout + r0 * Sh::VD;
    const uint32_t qs = sgla_smem_u32(sm.q[s]), ks = sgla_smem_u32(sm.k[s]);
    const uint32_t vs = sgla_smem_u32(sm.v[s]), os = sgla_smem_u32(sm.o[s]);
    constexpr int SK = (WHICH & (LD_Q | LD_K)) == (LD_Q | LD_K), SV = (WHICH & (LD_V | LD_O)) == (LD_V | LD_O);
    /* q with k, v with dO in one loop each when both are asked for (the sweeps); one of each pair
     * otherwise (the split's state passes) */
    if constexpr (SK) load_rows<Sh::KD, Sh::LK>(qs, q, p.H * Sh::KD, L, tid, ks, k);
    else if constexpr ((WHICH & LD_Q) != 0) load_rows<Sh::KD, Sh::LK>(qs, q, p.H * Sh::KD, L, tid);
    else if constexpr ((WHICH & LD_K) != 0) load_rows<Sh::KD, Sh::LK>(ks, k, p.H * Sh::KD, L, tid);
    if constexpr (SV) load_rows<Sh::VD, Sh::LV>(vs, v, p.H * Sh::VD, L, tid, os, o);
    else if constexpr ((WHICH & LD_V) != 0) load_rows<Sh::VD, Sh::LV>(vs, v, p.H * Sh::VD, L, tid);
    else if constexpr ((WHICH & LD_O) != 0) load_rows<Sh::VD, Sh::LV>(os, o, p.H * Sh::VD, L, tid);
    sgla_cp_async_commit();
}

/* g of chunk c's rows (nothing past the sequence), and its b into bdst (chunk_gate_*) */
__device__ __forceinline__ void gate_load(const sgla_bparams &p, const BwdWork &w, int c, int lane, float &g0,
                                          float &g1)
{
    const bool in = c >= 0 && c < w.nc;
    const bool gated = in && p.gmode == SGLA_GATE_G;
    const float *gp = gated ? p.g + w.row0 + (int64_t)c * 64 * p.H : nullptr;
    chunk_gate_load(gated ? SGLA_GATE_G : SGLA_GATE_NONE, gp, p.H, in ? chunk_rows(w.len, c) : 0, lane, g0, g1);
}
__device__ __forceinline__ void gate_scan(const sgla_bparams &p, const BwdWork &w, int c, float g0, float g1,
                                          float *bdst, int lane)
{
    chunk_gate_scan(p.gmode, g0, g1, p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[w.h] : 0.f, chunk_rows(w.len, c), bdst, lane);
}


/* ---- the forward sweep: dq, the e part of dg, S_c for X_c -------------------------------- */

template <class E, class Sh, int NST>
__global__ void __launch_bounds__(NTH, 1) bwd_sweep_fwd(const sgla_bparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    FwdSmem<Sh, NST> &sm = *reinterpret_cast<FwdSmem<Sh, NST> *>(smraw);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m = warp & 3, hf = warp >> 2;
    BwdWork w;
    bwd_work(p, w);
    if (w.nc == 0) return;
    const bool need_dg = p.dg_out != NULL;
    const int64_t kv = Sh::KD * p.V;
    float S[Sh::MS][Sh::NS][4];
    const float *S0 = p.nseg > 1 ? p.seg_S + ((int64_t)w.seg * p.N * p.H + w.nh) * kv : p.h0 ? p.h0 + w.nh * kv : 0;
    state_load<Sh>(S, S0, p.V, m, hf, gid, tig);
    state_store16<E, Sh>(S, sm.S, m, hf, gid, tig);
    load_chunk<Sh, NST>(p, w, sm, 0, 0, tid);
    float g0, g1;
    if (warp == 0) {
        gate_load(p, w, 0, lane, g0, g1);
        gate_scan(p, w, 0, g0, g1, sm.b[0], lane);
    }
    const float scale = p.scale;
    uint16_t *dq = (uint16_t *)p.dq;
    const int64_t rsq = p.H * Sh::KD;
    for (int c = 0; c < w.nc; c++) {
        const int s = c & 1, L = chunk_rows(w.len, c), t = NST == 2 ? s : 0; /* t: the tiles' stage */
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's tiles, its b, S_c's copy and chunk c - 1's e are complete */
        if (NST == 2 && c + 1 < w.nc) load_chunk<Sh, NST>(p, w, sm, c + 1, t ^ 1, tid);
        if (warp == 0) gate_load(p, w, c + 1, lane, g0, g1);
        if (need_dg) { /* S_c for the reverse sweep's X_c, [K][V] */
            uint16_t *dst = (uint16_t *)state_slot(p, w, c);
            for (int i = tid; i < Sh::KD * Sh::VD / 8; i += NTH) {
                const int row = i / (Sh::VD / 8), u = i - row * (Sh::VD / 8);
                *(uint4 *)(dst + row * Sh::VD + 8 * u) = *(const uint4 *)(sm.S + row * Sh::LV + 8 * u);
            }
        }
        if (warp == 1 && need_dg && c > 0) { /* chunk c - 1's in-chunk suffix sums of e into dg */
            const int s1 = s ^ 1, L1 = chunk_rows(w.len, c - 1);
            float x0 = sm.e[s1][0][lane] + sm.e[s1][1][lane], x1 = sm.e[s1][0][lane + 32] + sm.e[s1][1][lane + 32];
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float y0 = __shfl_down_sync(0xffffffffu, x0, off), y1 = __shfl_down_sync(0xffffffffu, x1, off);
                if (lane + off < 32) x0 += y0, x1 += y1;
            }
            x0 += __shfl_sync(0xffffffffu, x1, 0);
            float *dgp = p.dg_out + w.row0 + (int64_t)(c - 1) * 64 * p.H;
            if (lane < L1) dgp[(int64_t)lane * p.H] = x0;
            if (lane + 32 < L1) dgp[(int64_t)(lane + 32) * p.H] = x1;
        }
        const float *bb = sm.b[s];
        const float bC = bb[63];
        const uint32_t qs = sgla_smem_u32(sm.q[t]), ks = sgla_smem_u32(sm.k[t]);
        const uint32_t vs = sgla_smem_u32(sm.v[t]), os = sgla_smem_u32(sm.o[t]), Ss = sgla_smem_u32(sm.S);

        /* dO S^T (16 rows x this half's K/2 columns) and dP = dO V^T (16 x 64; tiles past the diagonal skipped) */
        float acc[Sh::KH / 8][4], sc[8][4];
#pragma unroll
        for (int i = 0; i < Sh::KH / 8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
#pragma unroll
        for (int i = 0; i < 8; i++) sc[i][0] = sc[i][1] = sc[i][2] = sc[i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < Sh::VD / 16; kk++) {
            uint32_t a[4], bf[4];
            ldA(a, os, Sh::LV, 16 * m, 16 * kk, lane);
#pragma unroll
            for (int np = 0; np < Sh::KH / 16; np++) {
                ldBn(bf, Ss, Sh::LV, Sh::KH * hf + 16 * np, 16 * kk, lane);
                mma16816<E>(acc[2 * np], a, bf[0], bf[1]);
                mma16816<E>(acc[2 * np + 1], a, bf[2], bf[3]);
            }
#pragma unroll
            for (int np = 0; np < 4; np++)
                if (np <= m) {
                    ldBn(bf, vs, Sh::LV, 16 * np, 16 * kk, lane);
                    mma16816<E>(sc[2 * np], a, bf[0], bf[1]);
                    mma16816<E>(sc[2 * np + 1], a, bf[2], bf[3]);
                }
        }
        const int i0 = 16 * m + gid, i1 = i0 + 8;
        { /* the state part times rs; e = q . (state part) */
            float e0, e1;
            rows_scale_dot<E, Sh::KH / 8>(acc, sgla_exp2(bb[i0]) * scale, sgla_exp2(bb[i1]) * scale, sm.q[t], Sh::LK,
                                          i0, Sh::KH * hf, tig, need_dg, e0, e1);
            if (need_dg && tig == 0) sm.e[s][hf][i0] = e0, sm.e[s][hf][i1] = e1;
        }
        /* dQ += dA K */
        scores_weigh<E>(sc, bb, scale, m, gid, tig, true);
        {
            uint32_t af[4][4];
            scores_pack<E>(sc, af);
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                if (kk <= m)
#pragma unroll
                    for (int np = 0; np < Sh::KH / 16; np++) {
                        uint32_t bf[4];
                        ldBk(bf, ks, Sh::LK, 16 * kk, Sh::KH * hf + 16 * np, lane);
                        mma16816<E>(acc[2 * np], af[kk], bf[0], bf[1]);
                        mma16816<E>(acc[2 * np + 1], af[kk], bf[2], bf[3]);
                    }
        }
        rows_store<E, Sh::KH / 8>(acc, sm.stg[warp], dq + (w.row0 + (int64_t)c * 64 * p.H) * Sh::KD, rsq,
                                  Sh::KH * hf, m, L, gid, tig, lane);
        if (c + 1 == w.nc) break;
        /* S_{c+1} = exp(b_L) S_c + (K ⊙ w)^T V, w_j = exp(b_L - b_j) */
        {
            float *wt = sm.box; /* free in the forward sweep: the weights of this chunk */
            __syncthreads();    /* every warp is done with S_c's copy (and with box of the last chunk), q and dO */
            if (NST == 1) load_chunk<Sh, NST, LD_Q | LD_O>(p, w, sm, c + 1, 0, tid);
            if (tid < 64) wt[tid] = sgla_exp2(bC - bb[tid]);
            __syncthreads();
            state_update<E, Sh>(S, bC, 0.f, wt, ks, vs, m, hf, tig, lane);
            if (NST == 1) {
                __syncthreads(); /* every warp is done with k and v */
                load_chunk<Sh, NST, LD_K | LD_V>(p, w, sm, c + 1, 0, tid);
            }
            state_store16<E, Sh>(S, sm.S, m, hf, gid, tig);
        }
        if (warp == 0) gate_scan(p, w, c + 1, g0, g1, sm.b[s ^ 1], lane);
    }
    __syncthreads();
    if (warp == 1 && need_dg) { /* the last chunk's suffix sums of e */
        const int c = w.nc - 1, s = c & 1, L1 = chunk_rows(w.len, c);
        float x0 = sm.e[s][0][lane] + sm.e[s][1][lane], x1 = sm.e[s][0][lane + 32] + sm.e[s][1][lane + 32];
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float y0 = __shfl_down_sync(0xffffffffu, x0, off), y1 = __shfl_down_sync(0xffffffffu, x1, off);
            if (lane + off < 32) x0 += y0, x1 += y1;
        }
        x0 += __shfl_sync(0xffffffffu, x1, 0);
        float *dgp = p.dg_out + w.row0 + (int64_t)c * 64 * p.H;
        if (lane < L1) dgp[(int64_t)lane * p.H] = x0;
        if (lane + 32 < L1) dgp[(int64_t)(lane + 32) * p.H] = x1;
    }
}

/* ---- the reverse sweep: dk, dv, dg, dh0 ------------------------------------------------- */

template <class E, class Sh, int NST>
__global__ void __launch_bounds__(NTH, 1) bwd_sweep_rev(const sgla_bparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    RevSmem<Sh, NST> &sm = *reinterpret_cast<RevSmem<Sh, NST> *>(smraw);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m = warp & 3, hf = warp >> 2;
    BwdWork w;
    bwd_work(p, w);
    const bool need_dg = p.dg_out != NULL;
    const int64_t kv = Sh::KD * p.V;
    float dS[Sh::MS][Sh::NS][4];
    const float *dS0 = p.nseg > 1 ? p.seg_dS + ((int64_t)w.seg * p.N * p.H + w.nh) * kv
                                  : p.dht ? p.dht + w.nh * kv : 0;
    state_load<Sh>(dS, dS0, p.V, m, hf, gid, tig);
    if (w.nc > 0) {
        state_store16<E, Sh>(dS, sm.S, m, hf, gid, tig);
        load_chunk<Sh, NST>(p, w, sm, w.nc - 1, 0, tid);
    }
    float g0, g1;
    if (warp == 0) {
        gate_load(p, w, w.nc - 1, lane, g0, g1);
        gate_scan(p, w, w.nc - 1, g0, g1, sm.b[0], lane);
    }
    const float scale = p.scale;
    uint16_t *dk = (uint16_t *)p.dk, *dv = (uint16_t *)p.dv;
    for (int it = 0; it < w.nc; it++) {
        const int c = w.nc - 1 - it, s = it & 1, L = chunk_rows(w.len, c), t = NST == 2 ? s : 0; /* t: tiles */
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's tiles, b, dS_c's copy are complete; the last chunk's dg is out */
        if (need_dg) { /* S_c, for X_c = exp(b_L) <dS_c, S_c> */
            const uint16_t *src = state_slot(p, w, c);
            const uint32_t dst = sgla_smem_u32(sm.Sin);
            for (int i = tid; i < Sh::KD * Sh::VD / 8; i += NTH) {
                const int row = i / (Sh::VD / 8), u = i - row * (Sh::VD / 8);
                sgla_cp_async16(dst + (uint32_t)((row * Sh::LV + 8 * u) * 2), src + row * Sh::VD + 8 * u, 16);
            }
            sgla_cp_async_commit();
        }
        if (NST == 2 && c > 0) load_chunk<Sh, NST>(p, w, sm, c - 1, t ^ 1, tid);
        if (warp == 0) gate_load(p, w, c - 1, lane, g0, g1);
        float ea0 = 0.f, ea1 = 0.f; /* the dg warp: the forward sweep's e suffix sums of this chunk */
        if (warp == 1 && need_dg) {
            const float *dgp = p.dg_out + w.row0 + (int64_t)c * 64 * p.H;
            if (lane < L) ea0 = dgp[(int64_t)lane * p.H];
            if (lane + 32 < L) ea1 = dgp[(int64_t)(lane + 32) * p.H];
        }
        const float *bb = sm.b[s];
        const float bC = bb[63];
        const uint32_t qs = sgla_smem_u32(sm.q[t]), ks = sgla_smem_u32(sm.k[t]);
        const uint32_t vs = sgla_smem_u32(sm.v[t]), os = sgla_smem_u32(sm.o[t]), Ss = sgla_smem_u32(sm.S);
        const int j0 = 16 * m + gid, j1 = j0 + 8;

        /* scores, rows = keys j of this warp, columns = queries i >= j:
         * half 0: dP^T = V dO^T (-> dA^T); half 1: (Q K^T)^T = K Q^T (-> A^T) */
        float sc[8][4];
#pragma unroll
        for (int i = 0; i < 8; i++) sc[i][0] = sc[i][1] = sc[i][2] = sc[i][3] = 0.f;
        if (hf == 0) {
#pragma unroll
            for (int kk = 0; kk < Sh::VD / 16; kk++) {
                uint32_t a[4], bf[4];
                ldA(a, vs, Sh::LV, 16 * m, 16 * kk, lane);
#pragma unroll
                for (int np = 0; np < 4; np++)
                    if (np >= m) {
                        ldBn(bf, os, Sh::LV, 16 * np, 16 * kk, lane);
                        mma16816<E>(sc[2 * np], a, bf[0], bf[1]);
                        mma16816<E>(sc[2 * np + 1], a, bf[2], bf[3]);
                    }
            }
        } else {
#pragma unroll
            for (int kk = 0; kk < Sh::KD / 16; kk++) {
                uint32_t a[4], bf[4];
                ldA(a, ks, Sh::LK, 16 * m, 16 * kk, lane);
#pragma unroll
                for (int np = 0; np < 4; np++)
                    if (np >= m) {
                        ldBn(bf, qs, Sh::LK, 16 * np, 16 * kk, lane);
                        mma16816<E>(sc[2 * np], a, bf[0], bf[1]);
                        mma16816<E>(sc[2 * np + 1], a, bf[2], bf[3]);
                    }
            }
        }
        if (need_dg && hf == 0) /* dP^T as it is; half 1 multiplies in its A^T */
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                const int i = 8 * nt + 2 * tig;
                sm.M[j0][i] = sc[nt][0], sm.M[j0][i + 1] = sc[nt][1];
                sm.M[j1][i] = sc[nt][2], sm.M[j1][i + 1] = sc[nt][3];
            }
        scores_weigh<E>(sc, bb, scale, m, gid, tig, false);
        if (need_dg) {
            __syncthreads();
            if (hf == 1)
#pragma unroll
                for (int nt = 0; nt < 8; nt++) {
                    const int i = 8 * nt + 2 * tig;
                    sm.M[j0][i] *= sc[nt][0], sm.M[j0][i + 1] *= sc[nt][1];
                    sm.M[j1][i] *= sc[nt][2], sm.M[j1][i + 1] *= sc[nt][3];
                }
            __syncthreads();
            /* box_r = sum_{j<r} sum_{i>=r} M[j][i]: suffix sums along each row (4 threads a row,
             * 16 columns each), then column sums over j < r (4 threads a column) */
            {
                const int j = tid >> 2, qq = tid & 3;
                float run = 0.f;
                for (int x = 15; x >= 0; x--) {
                    run += sm.M[j][16 * qq + x];
                    sm.M[j][16 * qq + x] = run;
                }
                /* add the totals of the later quarters of the row (lanes 4j' + qq' of this warp) */
                const float t1 = __shfl_down_sync(0xffffffffu, run, 1), t2 = __shfl_down_sync(0xffffffffu, run, 2),
                            t3 = __shfl_down_sync(0xffffffffu, run, 3);
                const float later = qq == 0 ? t1 + t2 + t3 : qq == 1 ? t1 + t2 : qq == 2 ? t1 : 0.f;
                for (int x = 0; x < 16; x++) sm.M[j][16 * qq + x] += later;
            }
            __syncthreads();
            {
                const int r = tid >> 2, qq = tid & 3;
                float part = 0.f;
                for (int x = 0; x < 16; x++) {
                    const int j = 16 * qq + x;
                    if (j < r) part += sm.M[j][r];
                }
                part += __shfl_down_sync(0xffffffffu, part, 1);
                const float p2 = __shfl_down_sync(0xffffffffu, part, 2);
                if (qq == 0) sm.box[r] = part + p2;
            }
        }
        uint32_t af[4][4];
        scores_pack<E>(sc, af);

        /* half 0: dk = w ⊙ (V dS^T) + dA^T Q, and u = k . (w ⊙ V dS^T);
         * half 1: dv = w ⊙ (K dS) + A^T dO */
        {
            constexpr int D = Sh::KD > Sh::VD ? Sh::KD : Sh::VD;
            float acc[D / 8][4];
#pragma unroll
            for (int i = 0; i < D / 8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
            const float w0 = sgla_exp2(bC - bb[j0]), w1 = sgla_exp2(bC - bb[j1]);
            if (hf == 0) {
#pragma unroll
                for (int kk = 0; kk < Sh::VD / 16; kk++) {
                    uint32_t a[4], bf[4];
                    ldA(a, vs, Sh::LV, 16 * m, 16 * kk, lane);
#pragma unroll
                    for (int np = 0; np < Sh::KD / 16; np++) {
                        ldBn(bf, Ss, Sh::LV, 16 * np, 16 * kk, lane);
                        mma16816<E>(acc[2 * np], a, bf[0], bf[1]);
                        mma16816<E>(acc[2 * np + 1], a, bf[2], bf[3]);
                    }
                }
                float u0, u1;
                rows_scale_dot<E, Sh::KD / 8>(acc, w0, w1, sm.k[t], Sh::LK, j0, 0, tig, need_dg, u0, u1);
                if (need_dg && tig == 0) sm.e[s][0][j0] = u0, sm.e[s][0][j1] = u1;
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
                    if (kk >= m)
#pragma unroll
                        for (int np = 0; np < Sh::KD / 16; np++) {
                            uint32_t bf[4];
                            ldBk(bf, qs, Sh::LK, 16 * kk, 16 * np, lane);
                            mma16816<E>(acc[2 * np], af[kk], bf[0], bf[1]);
                            mma16816<E>(acc[2 * np + 1], af[kk], bf[2], bf[3]);
                        }
                rows_store_direct<E, Sh::KD / 8>(acc, dk + (w.row0 + (int64_t)c * 64 * p.H) * Sh::KD, p.H * Sh::KD, m,
                                                 L, gid, tig);
            } else {
#pragma unroll
                for (int kk = 0; kk < Sh::KD / 16; kk++) {
                    uint32_t a[4], bf[4];
                    ldA(a, ks, Sh::LK, 16 * m, 16 * kk, lane);
#pragma unroll
                    for (int np = 0; np < Sh::VD / 16; np++) {
                        ldBk(bf, Ss, Sh::LV, 16 * kk, 16 * np, lane);
                        mma16816<E>(acc[2 * np], a, bf[0], bf[1]);
                        mma16816<E>(acc[2 * np + 1], a, bf[2], bf[3]);
                    }
                }
                float unused0, unused1;
                rows_scale_dot<E, Sh::VD / 8>(acc, w0, w1, sm.k[t], Sh::LK, j0, 0, tig, false, unused0, unused1);
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
                    if (kk >= m)
#pragma unroll
                        for (int np = 0; np < Sh::VD / 16; np++) {
                            uint32_t bf[4];
                            ldBk(bf, os, Sh::LV, 16 * kk, 16 * np, lane);
                            mma16816<E>(acc[2 * np], af[kk], bf[0], bf[1]);
                            mma16816<E>(acc[2 * np + 1], af[kk], bf[2], bf[3]);
                        }
                rows_store_direct<E, Sh::VD / 8>(acc, dv + (w.row0 + (int64_t)c * 64 * p.H) * Sh::VD, p.H * Sh::VD, m,
                                                 L, gid, tig);
            }
        }
        if (need_dg) { /* this warp's part of <dS_c, S_c> */
            if (NST == 2 && c > 0) sgla_cp_async_wait1(); /* the next chunk's tiles may stay in flight */
            else sgla_cp_async_wait0();
            __syncthreads(); /* every thread's copies of S_c have landed */
            float part = 0.f;
#pragma unroll
            for (int mt = 0; mt < Sh::MS; mt++)
#pragma unroll
                for (int nt = 0; nt < Sh::NS; nt++) {
                    const int r = state_row<Sh>(m, mt, gid), cc = state_col<Sh>(hf, nt, tig);
                    const float2 fx = chunk_unpack<E>(*(const uint32_t *)(sm.Sin + r * Sh::LV + cc));
                    const float2 fy = chunk_unpack<E>(*(const uint32_t *)(sm.Sin + (r + 8) * Sh::LV + cc));
                    part = fmaf(fx.x, dS[mt][nt][0], part);
                    part = fmaf(fx.y, dS[mt][nt][1], part);
                    part = fmaf(fy.x, dS[mt][nt][2], part);
                    part = fmaf(fy.y, dS[mt][nt][3], part);
                }
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
            if (lane == 0) sm.red[warp] = part;
        }
        /* dS_{c-1} = exp(b_L) dS_c + (Q ⊙ rs)^T dO, rs_i = scale exp(b_i), as
         * f (exp(b_L - b_0) dS_c + (Q ⊙ rs / f)^T dO) with f = exp(b_0): every weight
         * rs_i / f = scale exp(b_i - b_0), the first |scale| (b is non-increasing); scale
         * stays in the weights because dividing the carries by it would round them the
         * same way every chunk (the drift of docs/numerics.md §7) */
        float *rs = sm.e[s][1]; /* free in the reverse sweep: this chunk's weights */
        if (tid < 64) rs[tid] = sgla_exp2(bb[tid] - bb[0]) * scale;
        __syncthreads(); /* rs is complete; every warp is done with dS_c's copy, k and v; u and box are complete */
        if (NST == 1 && c > 0) load_chunk<Sh, NST, LD_K | LD_V>(p, w, sm, c - 1, 0, tid);
        state_update<E, Sh>(dS, bC - bb[0], bb[0], rs, qs, os, m, hf, tig, lane);
        if (NST == 1 && c > 0) {
            __syncthreads(); /* every warp is done with q and dO */
            load_chunk<Sh, NST, LD_Q | LD_O>(p, w, sm, c - 1, 0, tid);
        }
        if (c > 0) state_store16<E, Sh>(dS, sm.S, m, hf, gid, tig);
        if (warp == 1 && need_dg) {
            /* dg_r = X_c + sum_{j<r} u_j + (e suffix)_r + box_r, X_c = exp(b_L) <dS_c, S_c> from red */
            float x0 = sm.e[s][0][lane], x1 = sm.e[s][0][lane + 32];
            sgla_warp_prefix64_excl(x0, x1, lane); /* u_{L-1} (weight 1) can dwarf the sum before it */
            float X = 0.f;
#pragma unroll
            for (int i = 0; i < NTH / 32; i++) X += sm.red[i];
            X *= sgla_exp2(bC);
            float *dgp = p.dg_out + w.row0 + (int64_t)c * 64 * p.H;
            if (lane < L) dgp[(int64_t)lane * p.H] = X + x0 + ea0 + sm.box[lane];
            if (lane + 32 < L) dgp[(int64_t)(lane + 32) * p.H] = X + x1 + ea1 + sm.box[lane + 32];
        }
        if (warp == 0) gate_scan(p, w, c - 1, g0, g1, sm.b[s ^ 1], lane);
    }
    if (p.dh0 && w.seg == 0) state_store<Sh>(dS, p.dh0 + w.nh * kv, p.V, m, hf, gid, tig);
}

/* ---- the split: each segment's local state (from zero) and its total decay ------------------- */

/* REV = 0: S over the segment's chunks in order (k, v), for every segment but the last;
 * REV = 1: dS over them in reverse (q, dO), for every segment but the first: the gradient
 * of the state entering the segment from its own tokens.  The same updates as the sweeps. */
template <class E, class Sh, int NST, int REV>
__global__ void __launch_bounds__(NTH, 1) bwd_seg_states(const sgla_bparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    BwdCommon<Sh, NST> &sm = *reinterpret_cast<BwdCommon<Sh, NST> *>(smraw);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m = warp & 3, hf = warp >> 2;
    BwdWork w;
    bwd_work(p, w);
    if (w.seg == (REV ? 0 : p.nseg - 1) || w.nc == 0) return;
    constexpr int WHICH = REV ? LD_Q | LD_O : LD_K | LD_V;
    float S[Sh::MS][Sh::NS][4];
    state_load<Sh>(S, (const float *)0, p.V, m, hf, gid, tig);
    load_chunk<Sh, NST, WHICH>(p, w, sm, REV ? w.nc - 1 : 0, 0, tid);
    float g0, g1;
    if (warp == 0) {
        gate_load(p, w, REV ? w.nc - 1 : 0, lane, g0, g1);
        gate_scan(p, w, REV ? w.nc - 1 : 0, g0, g1, sm.b[0], lane);
    }
    float ld = 0.f; /* the segment's total log2 decay (written by one pass per segment, below) */
    for (int it = 0; it < w.nc; it++) {
        const int c = REV ? w.nc - 1 - it : it, s = it & 1, cn = REV ? c - 1 : c + 1, t = NST == 2 ? s : 0;
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's tiles and b are complete; every warp is done with chunk c - 1's */
        if (NST == 2 && it + 1 < w.nc) load_chunk<Sh, NST, WHICH>(p, w, sm, cn, t ^ 1, tid);
        if (warp == 0) gate_load(p, w, it + 1 < w.nc ? cn : -1, lane, g0, g1);
        const float *bb = sm.b[s];
        const float bC = bb[63];
        float *wt = sm.box;
        if (tid < 64) wt[tid] = REV ? sgla_exp2(bb[tid] - bb[0]) * p.scale : sgla_exp2(bC - bb[tid]);
        __syncthreads();
        if (REV)
            state_update<E, Sh>(S, bC - bb[0], bb[0], wt, sgla_smem_u32(sm.q[t]), sgla_smem_u32(sm.o[t]), m, hf, tig,
                                lane);
        else
            state_update<E, Sh>(S, bC, 0.f, wt, sgla_smem_u32(sm.k[t]), sgla_smem_u32(sm.v[t]), m, hf, tig, lane);
        if (NST == 1 && it + 1 < w.nc) {
            __syncthreads(); /* every warp is done with the tiles */
            load_chunk<Sh, NST, WHICH>(p, w, sm, cn, 0, tid);
        }
        ld += bC;
        if (warp == 0 && it + 1 < w.nc) gate_scan(p, w, cn, g0, g1, sm.b[s ^ 1], lane);
    }
    const int64_t slot = (int64_t)w.seg * p.N * p.H + w.nh;
    state_store<Sh>(S, (REV ? p.seg_dS : p.seg_S) + slot * Sh::KD * p.V, p.V, m, hf, gid, tig);
    /* the forward pass covers every segment but the last, the reverse one only adds it: one writer,
     * one order of the sum per segment */
    if (tid == 0 && (!REV || w.seg == p.nseg - 1)) p.seg_ld[slot] = ld;
}

/* ---- host --------------------------------------------------------------------------------- */

typedef void (*sweep_fn)(const sgla_bparams);
struct Inst {
    sweep_fn fwd, rev, seg_fwd, seg_rev;
    unsigned smem_fwd, smem_rev, smem_seg;
};

template <class E, int KD, int VD, int NST> constexpr Inst inst(void)
{
    using Sh = MmaShape<KD, VD>;
    return {bwd_sweep_fwd<E, Sh, NST>,         bwd_sweep_rev<E, Sh, NST>,          bwd_seg_states<E, Sh, NST, 0>,
            bwd_seg_states<E, Sh, NST, 1>,     (unsigned)sizeof(FwdSmem<Sh, NST>), (unsigned)sizeof(RevSmem<Sh, NST>),
            (unsigned)sizeof(BwdCommon<Sh, NST>)};
}

template <class E> constexpr MmaTable<Inst> inst_row(void)
{
    return {{{{inst<E, 64, 64, 1>(), inst<E, 64, 64, 2>()}, {inst<E, 64, 128, 1>(), inst<E, 64, 128, 2>()}},
             {{inst<E, 128, 64, 1>(), inst<E, 128, 64, 2>()}, {inst<E, 128, 128, 1>(), inst<E, 128, 128, 2>()}}}};
}
const MmaTable<Inst> insts[2] = {inst_row<ElemBf16>(), inst_row<ElemF16>()}; /* [bf16, f16] */
const Inst *inst_of(sgla_dtype dt, int64_t K, int64_t V, int nst) { return mma_entry(insts, dt, K, V, nst); }

} /* namespace */

int sgla_bwd_tc_supported(sgla_dtype dt, int64_t K, int64_t V) { return inst_of(dt, K, V, 2) != NULL; }

size_t sgla_bwd_tc_smem(sgla_dtype dt, int64_t K, int64_t V, int nst)
{
    const Inst *x = inst_of(dt, K, V, nst);
    if (!x) return 0;
    unsigned m = x->smem_fwd > x->smem_rev ? x->smem_fwd : x->smem_rev;
    return m > x->smem_seg ? m : x->smem_seg;
}

int64_t sgla_bwd_tc_slots(int64_t B, int64_t T, int64_t N) { return B * T / 64 + N + 1; }

cudaError_t sgla_bwd_tc_setup(int optin)
{
    cudaError_t e = cudaSuccess;
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int n = 0; n < 2; n++) {
                    const Inst &x = insts[t].x[a][b][n];
                    if (sgla_bwd_tc_smem(t ? SGLA_F16 : SGLA_BF16, a ? 128 : 64, b ? 128 : 64, n + 1) > (size_t)optin)
                        continue; /* refused per call (sgla_bwd_tc_smem) */
                    if ((e = cudaFuncSetAttribute((const void *)x.fwd, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)x.smem_fwd)) != cudaSuccess ||
                        (e = cudaFuncSetAttribute((const void *)x.rev, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)x.smem_rev)) != cudaSuccess ||
                        (e = cudaFuncSetAttribute((const void *)x.seg_fwd, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)x.smem_seg)) != cudaSuccess ||
                        (e = cudaFuncSetAttribute((const void *)x.seg_rev, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)x.smem_seg)) != cudaSuccess)
                        return e;
                }
    return e;
}

sgla_status sgla_bwd_tc_launch(const sgla_bparams *p, sgla_dtype dt, int nst, cudaStream_t st)
{
    const Inst *x = inst_of(dt, p->K, p->V, nst);
    if (!x) return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "tensor-core backward: dtype or K = %lld, V = %lld",
                             (long long)p->K, (long long)p->V);
    const unsigned blocks = (unsigned)(p->N * p->H * p->nseg);
    cudaError_t e;
    if (p->nseg > 1) {
        x->seg_fwd<<<blocks, NTH, x->smem_seg, st>>>(*p);
        x->seg_rev<<<blocks, NTH, x->smem_seg, st>>>(*p);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's segment states: %s", cudaGetErrorString(e));
        /* the forward's scan: S entering each segment from h0, dS leaving it from dht */
        const int64_t nhc = p->N * p->H, kv = p->K * p->V;
        sgla_status rc = sgla_seg_scan(p->seg_S, p->seg_ld, p->h0, p->nseg, nhc, kv, 0, st);
        if (rc == SGLA_OK) rc = sgla_seg_scan(p->seg_dS, p->seg_ld, p->dht, p->nseg, nhc, kv, 1, st);
        if (rc != SGLA_OK) return rc;
    }
    x->fwd<<<blocks, NTH, x->smem_fwd, st>>>(*p);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's forward sweep: %s", cudaGetErrorString(e));
    x->rev<<<blocks, NTH, x->smem_rev, st>>>(*p);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's reverse sweep: %s", cudaGetErrorString(e));
    return SGLA_OK;
}
