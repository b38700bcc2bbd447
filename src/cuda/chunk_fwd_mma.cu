/* The chunked forward on mma.sync and cp.async: the path for GPUs without
 * wgmma and TMA (Ampere and Ada, sm_80 .. sm_89; Blackwell until it has its
 * own), bf16 / fp16 inputs with K in {64, 128, 256} and V a multiple of 64.
 * The H200 runs it when it is forced (sgla_cuda_forward_forced with
 * SGLA_CUDA_CONFIG_PORTABLE), which is how the tests check it here.
 *
 * One block of 8 warps per (sequence, head) and VD columns of V (64 or 128;
 * a head's V/VD blocks adjacent in the grid, each computing Q K^T), over
 * chunks of 64 tokens, the
 * mirror of the tensor-core backward's forward sweep (chunk_bwd_tc.cu) with q
 * in the place of dO:
 *     o_c = rs ⊙ (Q S_c) + A V,   A = scale Γ ⊙ (Q K^T) (j <= i),  rs_i = scale exp2(b_i)
 *     S_{c+1} = exp2(b_L) S_c + (K ⊙ w)^T V,   w_j = exp2(b_L - b_j)
 * Warp w computes rows 16 m .. + 15 of o in column half w / 4 of the block's
 * (m = w % 4; with one stage 3 - w % 4 for w >= 4) and owns the state tile of
 * rows K/4 m .. and that column half (mma_tiles.cuh);
 * the state is fp32 in registers, its 16-bit copy in shared memory is the
 * operand of Q S.  The next chunk's q, k, v arrive by cp.async while this one
 * is computed (two stages), or while its o is stored and the state's copy
 * rewritten (one stage). */
#include <stdint.h>

#include "chunk_fwd.cuh"
#include "cuda_backend.cuh"
#include "mma_tiles.cuh"
#include "ptx.cuh"

namespace {

/* NST stages of q, k, v: 2 (chunk c and the next one, the next loaded while c is computed) where a
 * block's shared memory holds them, else 1 (sm_86 / sm_89 blocks hold 99 KB: K = 128 takes one;
 * sm_80's 163 KB: K = 256 takes one) */
template <class Sh, int NST> struct FwdMmaSmem {
    uint16_t q[NST][64 * Sh::LK], k[NST][64 * Sh::LK];
    uint16_t v[NST][64 * Sh::LV];
    /* S_c's 16-bit copy, the operand of Q S; once every warp is past Q S (a barrier) until the state
     * update rewrites it, each warp's staging tile of its o rows (16-byte stores) */
    union {
        uint16_t S[Sh::KD * Sh::LV];
        uint16_t stg[8][16 * (Sh::VD / 2 + 8)];
    };
    float b[2][64]; /* log2 b of chunk c and of the next one */
    float wt[64];   /* the chunk's key weights w */
};
/* an sm_80 block (163 KB) holds two stages at K = V = 128, one at K = 256 (two: Hopper's 227 KB) */
static_assert(sizeof(FwdMmaSmem<MmaShape<128, 128>, 2>) <= 163 * 1024, "fits the shared memory of an sm_80 block");
static_assert(sizeof(FwdMmaSmem<MmaShape<128, 128>, 1>) <= 99 * 1024, "fits the shared memory of an sm_86 block");
static_assert(sizeof(FwdMmaSmem<MmaShape<256, 64>, 1>) <= 163 * 1024, "fits the shared memory of an sm_80 block");
static_assert(sizeof(FwdMmaSmem<MmaShape<256, 64>, 2>) <= 227 * 1024, "fits the shared memory of a Hopper block");

/* the block's first column of V: its column block is blockIdx.x mod V/VD (mwork), a power of two, so
 * the column is blockIdx.x VD mod V.  Read where it is used (a volatile read, which the compiler
 * neither hoists nor keeps, and V from the parameters), so that no register holds it through the
 * chunk loop: the one-stage instances at K = 128 are at 255 registers and spilled 150 bytes more on
 * sm_80 with it held. */
template <class Sh> __device__ __forceinline__ int64_t mcol0(const sgla_kparams &p)
{
    unsigned x;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
    return (int64_t)(((uint64_t)x * Sh::VD) & (uint64_t)(p.V - 1));
}
/* log2 of a head's column blocks (mwork) */
template <class Sh> __device__ __forceinline__ unsigned mcols_lg(const sgla_kparams &p)
{
    return (unsigned)(__ffs((unsigned)(p.V / Sh::VD)) - 1);
}

/* rows of chunk c into stage s (rows past the chunk are zeros): q, k and the block's columns of v, or
 * (with_q false) k and v */
template <class Sh, int NST>
__device__ __forceinline__ void mload(const sgla_kparams &p, const MWork &w, FwdMmaSmem<Sh, NST> &sm, int c, int s,
                                      int tid, bool with_q = true)
{
    const int L = chunk_rows(w.len, c);
    const int64_t r0 = w.row0 + (int64_t)c * 64 * p.H;
    const uint16_t *q = (const uint16_t *)p.q + r0 * Sh::KD, *k = (const uint16_t *)p.k + r0 * Sh::KD;
    const uint16_t *v = (const uint16_t *)p.v + r0 * p.V + mcol0<Sh>(p);
    if (with_q)
        load_rows<Sh::KD, Sh::LK>(sgla_smem_u32(sm.q[s]), q, p.H * Sh::KD, L, tid, sgla_smem_u32(sm.k[s]), k);
    else
        load_rows<Sh::KD, Sh::LK>(sgla_smem_u32(sm.k[s]), k, p.H * Sh::KD, L, tid);
    load_rows<Sh::VD, Sh::LV>(sgla_smem_u32(sm.v[s]), v, p.H * p.V, L, tid);
    sgla_cp_async_commit();
}

/* chunk c's b into bdst (chunk_gate_scan), from g loaded by mgate_load */
__device__ __forceinline__ void mgate_scan(const sgla_kparams &p, const MWork &w, int c, float g0, float g1,
                                           float *bdst, int lane)
{
    chunk_gate_scan(p.gmode, g0, g1, p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[w.h] : 0.f, chunk_rows(w.len, c), bdst, lane);
}

/* the key weights w_j = exp2(b_L - b_j) of the chunk whose b this warp has just scanned into b */
__device__ __forceinline__ void mkey_weights(const float *b, float *wt, int lane)
{
    __syncwarp(); /* every lane's b is in shared memory */
    const float bL = b[63];
    wt[lane] = sgla_exp2(bL - b[lane]);
    wt[lane + 32] = sgla_exp2(bL - b[lane + 32]);
}

/* The split's first pass (mode 1): a segment's end state from zero over its chunks (k and v only) into
 * its slot (the block's columns), and its total log2 decay; the last segment's is never read (mwork
 * skips it). */
template <class E, class Sh, int NST>
__global__ void __launch_bounds__(NTH, 1) chunk_seg_mma(const sgla_kparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    FwdMmaSmem<Sh, NST> &sm = *reinterpret_cast<FwdMmaSmem<Sh, NST> *>(smraw);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m = warp & 3, hf = warp >> 2;
    MWork w;
    if (!mwork<true>(p, w, mcols_lg<Sh>(p))) return;
    const int64_t kv = Sh::KD * p.V;
    float *slot = p.seg_buf + ((int64_t)w.seg * p.N * p.H + w.nh) * kv + mcol0<Sh>(p);
    float S[Sh::MS][Sh::NS][4];
    state_load<Sh>(S, (const float *)0, p.V, m, hf, gid, tig);
    float ld = 0.f;
    if (w.nc > 0) mload<Sh, NST>(p, w, sm, 0, 0, tid, false);
    float g0 = 0.f, g1 = 0.f;
    if (warp == 0) {
        mgate_load(p, w, 0, lane, g0, g1);
        mgate_scan(p, w, 0, g0, g1, sm.b[0], lane);
    }
    for (int c = 0; c < w.nc; c++) {
        const int s = NST == 2 ? c & 1 : 0;
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's k, v and b are complete; chunk c - 1 is done with wt */
        if (NST == 2 && c + 1 < w.nc) mload<Sh, NST>(p, w, sm, c + 1, s ^ 1, tid, false);
        if (warp == 0) mgate_load(p, w, c + 1, lane, g0, g1);
        const float *bb = sm.b[c & 1];
        const float bC = bb[63];
        if (tid < 64) sm.wt[tid] = sgla_exp2(bC - bb[tid]);
        __syncthreads();
        state_update<E, Sh>(S, bC, 0.f, sm.wt, sgla_smem_u32(sm.k[s]), sgla_smem_u32(sm.v[s]), m, hf, tig, lane);
        ld += bC;
        if (NST == 1 && c + 1 < w.nc) {
            __syncthreads(); /* every warp is done with k and v */
            mload<Sh, NST>(p, w, sm, c + 1, 0, tid, false);
        }
        if (warp == 0 && c + 1 < w.nc) mgate_scan(p, w, c + 1, g0, g1, sm.b[(c + 1) & 1], lane);
    }
    state_store<Sh>(S, slot, p.V, m, hf, gid, tig);
    if (tid == 0 && mcol0<Sh>(p) == 0) p.seg_ld[(int64_t)w.seg * p.N * p.H + w.nh] = ld;
}

/* SPLIT: a split's outputs (mode 2); a template switch so that the unsplit forward compiles as it
 * does without one (a run-time mode cost it 5% on the H200: docs/perf.md) */
template <class E, class Sh, int NST, bool SPLIT>
__global__ void __launch_bounds__(NTH, 1) chunk_fwd_mma(const sgla_kparams p)
{
    extern __shared__ __align__(128) unsigned char smraw[];
    FwdMmaSmem<Sh, NST> &sm = *reinterpret_cast<FwdMmaSmem<Sh, NST> *>(smraw);
    constexpr int VH = Sh::VD / 2; /* o columns of a warp */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    /* a warp's 16 rows m of the chunk.  Warps w and w + 4 share a scheduler (w % 4), and row tile m has
     * m + 1 of the causal products' key tiles; with one stage each scheduler takes a light and a heavy
     * tile (m and 3 - m), 5 key tiles each against 2 to 8.  Two stages keep m = w % 4: the balance gained
     * nothing there, and other maps lost (docs/perf.md, session 33 calls 2 and 7) */
    const int hf = warp >> 2, m = NST == 1 && hf ? 3 - (warp & 3) : warp & 3;
    MWork w;
    if (!mwork<SPLIT>(p, w, mcols_lg<Sh>(p))) return;
    const int64_t kv = Sh::KD * p.V;
    float S[Sh::MS][Sh::NS][4];
    /* the state entering (the block's columns): a split's segment from its slot (filled by the scan), else h0 */
    const float *S0 = SPLIT ? p.seg_buf + ((int64_t)w.seg * p.N * p.H + w.nh) * kv + mcol0<Sh>(p)
                      : p.h0 ? p.h0 + w.nh * kv + mcol0<Sh>(p)
                             : 0;
    state_load<Sh>(S, S0, p.V, m, hf, gid, tig);
    /* ht: by the last segment of a split */
    const bool want_ht = p.ht && (!SPLIT || w.seg == p.nseg - 1);
    if (w.nc > 0) {
        state_store16<E, Sh>(S, sm.S, m, hf, gid, tig);
        mload<Sh, NST>(p, w, sm, 0, 0, tid);
    }
    float g0 = 0.f, g1 = 0.f;
    if (warp == 0) {
        mgate_load(p, w, 0, lane, g0, g1);
        mgate_scan(p, w, 0, g0, g1, sm.b[0], lane);
        if (NST == 1) mkey_weights(sm.b[0], sm.wt, lane);
    }
    const float scale = p.scale;
    uint16_t *o = (uint16_t *)p.o;
    const int64_t rso = p.H * p.V;
    for (int c = 0; c < w.nc; c++) {
        const int s = NST == 2 ? c & 1 : 0, L = chunk_rows(w.len, c);
        sgla_cp_async_wait0();
        __syncthreads(); /* chunk c's tiles, its b (one stage: and key weights) and S_c's copy are complete */
        if (NST == 2 && c + 1 < w.nc) mload<Sh, NST>(p, w, sm, c + 1, s ^ 1, tid);
        if (warp == 0) mgate_load(p, w, c + 1, lane, g0, g1);
        const float *bb = sm.b[c & 1];
        const float bC = bb[63];
        const uint32_t qs = sgla_smem_u32(sm.q[s]), ks = sgla_smem_u32(sm.k[s]), vs = sgla_smem_u32(sm.v[s]);
        const uint32_t Ss = sgla_smem_u32(sm.S);

        /* Q S_c (16 rows x this half's V/2 columns) and P = Q K^T (16 x 64; tiles past the diagonal skipped) */
        float acc[VH / 8][4], sc[8][4];
#pragma unroll
        for (int i = 0; i < VH / 8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
#pragma unroll
        for (int i = 0; i < 8; i++) sc[i][0] = sc[i][1] = sc[i][2] = sc[i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < Sh::KD / 16; kk++) {
            uint32_t a[4], bf[4];
            ldA(a, qs, Sh::LK, 16 * m, 16 * kk, lane);
#pragma unroll
            for (int np = 0; np < VH / 16; np++) {
                ldBk(bf, Ss, Sh::LV, 16 * kk, VH * hf + 16 * np, lane);
                mma16816<E>(acc[2 * np], a, bf[0], bf[1]);
                mma16816<E>(acc[2 * np + 1], a, bf[2], bf[3]);
            }
#pragma unroll
            for (int np = 0; np < 4; np++)
                if (np <= m) {
                    ldBn(bf, ks, Sh::LK, 16 * np, 16 * kk, lane);
                    mma16816<E>(sc[2 * np], a, bf[0], bf[1]);
                    mma16816<E>(sc[2 * np + 1], a, bf[2], bf[3]);
                }
        }
        /* One stage: S_{c+1} = exp(b_L) S_c + (K ⊙ w)^T V here, beside the outputs' products (it reads k, v
         * and the weights, they S_c's 16-bit copy), so that chunk c + 1 loads whole after the barrier below
         * and the loop has one barrier less; with two stages the same order was 2-6 % slower (more registers
         * live; docs/perf.md, session 25 call 3).  After the last chunk too: a branch would part the two. */
        if constexpr (NST == 1) state_update<E, Sh>(S, bC, 0.f, sm.wt, ks, vs, m, hf, tig, lane);
        const int i0 = 16 * m + gid, i1 = i0 + 8;
        {
            float d0, d1; /* unused: no dot products here */
            rows_scale_dot<E, VH / 8>(acc, sgla_exp2(bb[i0]) * scale, sgla_exp2(bb[i1]) * scale, sm.v[s], Sh::LV, i0,
                                      VH * hf, tig, false, d0, d1);
        }
        /* o += A V */
        scores_weigh<E>(sc, bb, scale, m, gid, tig, true);
        {
            uint32_t af[4][4];
            scores_pack<E>(sc, af);
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                if (kk <= m)
#pragma unroll
                    for (int np = 0; np < VH / 16; np++) {
                        uint32_t bf[4];
                        ldBk(bf, vs, Sh::LV, 16 * kk, VH * hf + 16 * np, lane);
                        mma16816<E>(acc[2 * np], af[kk], bf[0], bf[1]);
                        mma16816<E>(acc[2 * np + 1], af[kk], bf[2], bf[3]);
                    }
        }
        __syncthreads(); /* every warp is done with S_c's copy (the staging tiles take its place) and with q (one
                          * stage: and with k, v and the weights) */
        if (NST == 1 && c + 1 < w.nc) mload<Sh, NST>(p, w, sm, c + 1, 0, tid);
        rows_store<E, VH / 8>(acc, sm.stg[warp], o + (w.row0 + (int64_t)c * 64 * p.H) * p.V + mcol0<Sh>(p), rso,
                              VH * hf, m, L, gid, tig, lane);
        if constexpr (NST == 1) {
            if (c + 1 == w.nc) break;
            __syncthreads(); /* every warp is done with its staging tile (S's place) */
            state_store16<E, Sh>(S, sm.S, m, hf, gid, tig);
            if (warp == 0) {
                mgate_scan(p, w, c + 1, g0, g1, sm.b[(c + 1) & 1], lane);
                mkey_weights(sm.b[(c + 1) & 1], sm.wt, lane);
            }
            continue;
        }
        if (c + 1 == w.nc && !want_ht) break;
        /* S_{c+1} = exp(b_L) S_c + (K ⊙ w)^T V, w_j = exp(b_L - b_j) */
        if (tid < 64) sm.wt[tid] = sgla_exp2(bC - bb[tid]);
        __syncthreads(); /* the weights are written; every warp is done with its staging tile (S's place: this
                          * barrier must stay unconditional wherever S is rewritten after it) */
        state_update<E, Sh>(S, bC, 0.f, sm.wt, ks, vs, m, hf, tig, lane);
        if (c + 1 < w.nc) {
            state_store16<E, Sh>(S, sm.S, m, hf, gid, tig);
            if (warp == 0) mgate_scan(p, w, c + 1, g0, g1, sm.b[(c + 1) & 1], lane);
        }
    }
    if (want_ht) /* (h0, or zeros, for an empty sequence) */
        state_store<Sh>(S, p.ht + w.nh * kv + mcol0<Sh>(p), p.V, m, hf, gid, tig);
}

typedef void (*mma_fn)(const sgla_kparams);
struct MInst {
    mma_fn fn[3]; /* by mode: the forward, a split's first pass, a split's outputs (NULL: no instance) */
    unsigned smem;
};
template <class E, int KD, int VD, int NST> constexpr MInst minst(void)
{
    return {{chunk_fwd_mma<E, MmaShape<KD, VD>, NST, false>, chunk_seg_mma<E, MmaShape<KD, VD>, NST>,
             chunk_fwd_mma<E, MmaShape<KD, VD>, NST, true>},
            (unsigned)sizeof(FwdMmaSmem<MmaShape<KD, VD>, NST>)};
}
/* K = 256 with 64 columns alone (its 128-column entries empty) */
template <class E> constexpr MmaTable<MInst, 3> mrow(void)
{
    return {{{{minst<E, 64, 64, 1>(), minst<E, 64, 64, 2>()}, {minst<E, 64, 128, 1>(), minst<E, 64, 128, 2>()}},
             {{minst<E, 128, 64, 1>(), minst<E, 128, 64, 2>()}, {minst<E, 128, 128, 1>(), minst<E, 128, 128, 2>()}},
             {{minst<E, 256, 64, 1>(), minst<E, 256, 64, 2>()}, {MInst{}, MInst{}}}}};
}
const MmaTable<MInst, 3> minsts[2] = {mrow<ElemBf16>(), mrow<ElemF16>()}; /* [bf16, f16] */
const MInst *minst_of(sgla_dtype dt, int64_t K, int cols, int nst)
{
    const MInst *x = mma_entry(minsts, dt, K, cols, nst);
    return x && x->fn[0] ? x : NULL;
}

} /* namespace */

int sgla_fwd_mma_supported(sgla_dtype dt, int64_t K, int cols) { return minst_of(dt, K, cols, 2) != NULL; }

size_t sgla_fwd_mma_smem(sgla_dtype dt, int64_t K, int cols, int nst)
{
    const MInst *x = minst_of(dt, K, cols, nst);
    return x ? x->smem : 0;
}

cudaError_t sgla_fwd_mma_setup(int optin)
{
    cudaError_t e = cudaSuccess;
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 2; b++)
                for (int n = 0; n < 2; n++) {
                    const MInst &x = minsts[t].x[a][b][n];
                    if (!x.fn[0] || x.smem > (unsigned)optin) continue; /* refused per call (sgla_fwd_mma_smem) */
                    for (int mode = 0; mode < 3; mode++)
                        if ((e = cudaFuncSetAttribute((const void *)x.fn[mode],
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)x.smem)) !=
                            cudaSuccess)
                            return e;
                }
    return e;
}

sgla_status sgla_fwd_mma_launch(const sgla_kparams *p, sgla_dtype dt, int cols, int nst, cudaStream_t st)
{
    const MInst *x = minst_of(dt, p->K, cols, nst);
    if (!x || p->V % cols)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "mma.sync forward: dtype or K = %lld, V = %lld in blocks of %d "
                         "columns", (long long)p->K, (long long)p->V, cols);
    const int64_t ncb = p->V / cols, blocks = p->N * p->H * p->nseg * ncb;
    if ((ncb & (ncb - 1)) != 0) /* (mcol0: V is 64, 128, 256 or 512 after padding) */
        return sgla_fail(SGLA_ERR_INTERNAL, "mma.sync forward: V = %lld is not a power of two", (long long)p->V);
    if (blocks == 0) return SGLA_OK;
    if (blocks > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "mma.sync forward: %lld blocks exceed the grid", (long long)blocks);
    if (p->mode < 0 || p->mode > 2 || (p->mode != 0) != (p->nseg > 1))
        return sgla_fail(SGLA_ERR_INTERNAL, "mma.sync forward: mode %d with %d segment(s)", p->mode, p->nseg);
    if (p->seg_sub > 1 || p->seg_off) /* its blocks read slot s and start segments at s seg_len */
        return sgla_fail(SGLA_ERR_INTERNAL, "mma.sync forward: a split in pieces (%d a segment, offset %lld)",
                         p->seg_sub, (long long)p->seg_off);
    x->fn[p->mode]<<<(unsigned)blocks, NTH, x->smem, st>>>(*p);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the mma.sync forward: %s", cudaGetErrorString(e));
}
