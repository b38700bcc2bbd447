/* The chunked forward on Hopper (sm_90a): one kernel family, warp-specialised,
 * TMA-fed, wgmma for all four products.  Instantiated per row of
 * chunk_fwd_config.cuh and per 16-bit type (chunk_fwd_bf16.cu, chunk_fwd_f16.cu).
 *
 * One block owns (sequence, head, BV columns of V) and walks its chunks of 64
 * tokens in order.  Its warpgroups (WG g = warps 4g .. 4g + 3):
 *   WG 0 .. NO-1  outputs: WG wo makes chunks wo, wo + NO, ...  For chunk c,
 *                 rows 16 wl .. of warp wl:
 *                   sc  = Q K^T                      wgmma m64n64, Q and K from shared memory
 *                   acc = Q S_c                      wgmma m64nBV, B = S_s[c % NSB]
 *                   sc_ij *= scale exp2(b_i - b_j) where j <= i, 0 elsewhere (never evaluated)
 *                   acc *= scale exp2(b_i);  acc += sc V   wgmma m64nBV, A = sc in registers
 *                 then o through its staging tile and a TMA store.
 *   WG NO         the state, all KD rows x BV columns in registers (KD / 64 m-tiles):
 *                   S_{c+1} = exp2(b_last) S_c + (K exp2(b_last - b))^T V   wgmma, A = K^T by
 *                   ldmatrix.trans times the 16-bit weight pairs, B = V
 *                 and the 16-bit copy of S_{c+1} into S_s[(c + 1) % NSB] for the outputs.
 *   WG NO + 1     the producer: its first thread arms each stage's full barrier with
 *                 the byte count and issues the TMA boxes; its 32 lanes store the gate g
 *                 (loaded one chunk ahead) and, for the last chunk of a cu_seqlens
 *                 sequence (a box would read the next sequence), copy the rows that
 *                 exist and zero the rest.
 * A split's first pass (mode 1: each segment's local state, no outputs) runs an
 * instance of its own (L = 1): no S_s or o tiles, so more stages, and its one output
 * warpgroup runs the state's upper m-tiles beside the state warpgroup (LocalHalves).
 * b is the chunk-local cumulative log2 gate (SPEC §2: restarts every chunk; every
 * weight is exp2 of a difference <= 0).
 *
 * Synchronisation, all without block-wide barriers after the start:
 *   full[s]   one arrival by the producer's thread 0 with the TMA byte count (+ 32 lane
 *             arrivals when it stores g or copies a tail): chunk data of stage s landed;
 *   empty[s]  256 arrivals, one per consumer thread that reads stage s (an arrival
 *             releases only its own thread's accesses): the producer may refill it;
 *   S_READY[b], S_FREE[b]  named barriers (256 threads: the state WG and the output WG
 *             that reads buffer b): S_s[b] written / read;
 *   O[wo]     named barrier of output WG wo (128 threads) around its o staging tile.
 * Every arrival is matched by exactly one sync (the last chunk writes no S_s).
 *
 * Tile layouts.  TMA tiles (Q, K: 64 x KD; V: 64 x BV; o: 64 x BV) are KD / 64 boxes of
 * 64 rows x 128 bytes with the 128-byte swizzle: 16-byte unit u of row r in box b at
 * b 8192 + r 128 + ((u % 8) ^ (r % 8)) 16 (sw128_offset).  S_s uses wgmma's no-swizzle
 * N-major canonical layout: (k, n) at ((k/8)(BV/8) + n/8) 128 + (k%8) 16 + (n%8) 2.
 */
#ifndef SGLA_CUDA_CHUNK_FWD_CUH
#define SGLA_CUDA_CHUNK_FWD_CUH

#include <stddef.h>

#include "chunk_fwd_config.cuh"
#include "fwd_params.cuh"
#include "ptx.cuh"

/* ---- compile-time shape of one instance ---------------------------------------- */

template <int KD_, int BV_, int ST_, int NO_, int X_ = 0, int L_ = 0> struct ChunkShape {
    static constexpr int KD = KD_;  /* K */
    static constexpr int BV = BV_;  /* V columns of the block */
    static constexpr int ST = ST_;  /* TMA stages */
    static constexpr int NO = NO_;  /* output warpgroups */
    static constexpr int X = X_;    /* 1: a fourth tile a stage (w: the side outputs' dotw, 64 x BV); 2: and a
                                     * second o tile (the merged reverse pass, BW = 4) */
    static constexpr int L = L_;    /* 1: a split's first pass only (mode 1: local states, no outputs), whose
                                     * block has no S_s or o tiles and so room for more stages, and whose
                                     * output warpgroup takes half the state (LocalHalves) */
    static constexpr int NSB = 2 * NO;             /* S_s buffers: chunk c reads S_s[c % NSB] */
    static constexpr int NCW = 4 * (NO + 1);       /* consumer warps */
    static constexpr int THREADS = 32 * NCW + 128; /* + the producer warpgroup */
    static constexpr int MT = KD / 64;             /* m-tiles of the state */
    static constexpr int NR = BV / 2;              /* f32 registers of a 64 x BV accumulator */
    static constexpr int QBYTES = 64 * KD * 2;     /* a 64-token tile of Q or K */
    static constexpr int VBYTES = 64 * BV * 2;     /* a 64-token tile of V or o */
    static constexpr int SBYTES = KD * BV * 2;     /* the state's 16-bit copy */
    /* K = 64's forward with gate g where the host made g's map (p.gtma): a ring of g's tiles (4 heads x 64
     * tokens), two slots more than stages, which the producer loads and scans into b itself, so that no
     * gate_b launch precedes the kernel and no strided loads run in it (chunk_producer).  K = 256 keeps
     * gate_b: its gate g costs ~1 % over g_gamma, and its producer spilled with the ring's loop */
    static constexpr int GT = X || L || !sgla_row_gate_tma(KD) ? 0 : ST + 2; /* (L: a split, never by TMA) */
    /* setmaxnreg shares (the producer needs few): 128 x (PRODUCER + NO x OUT + STATE) <= the block's registers */
    /* K = 64's forward: 56, its loop of g by TMA beside b's (the block's file allows it with two output
     * warpgroups) */
    /* K = V = 128's merged reverse pass (NO = 1, X = 2): the producer at setmaxnreg's least (a few words
     * of its loop spilled) and its 16 registers to the state warpgroup, whose 16 loads of X_c then all
     * go out before the first use: one L2 round trip a chunk, not two (docs/perf.md, sessions 39-40) */
    static constexpr bool MERGED128 = NO == 1 && X == 2;
    static constexpr int REG_PRODUCER = NO == 2 && !X ? 56 : MERGED128 ? 24 : 40;
    static constexpr int REG_OUT = NO == 1 ? 232 : 160;
    static constexpr int REG_STATE = NO == 1 ? (MERGED128 ? 248 : 232) : 136;

    static_assert(KD == 64 || KD == 128 || KD == 256, "K is 64, 128 or 256");
    static_assert((BV == 64 || BV == 128) && BV <= KD, "BV is 64 or 128, at most K");
    static_assert(ST >= 2, "at least two stages");
    static_assert(NO == 1 || NO == 2, "one or two output warpgroups");
    static_assert(X == 0 || X == 1 || (X == 2 && KD == BV), "the merged pass: one block holds the whole state (dv sums over it)");
    static_assert(L == 0 || (L == 1 && X == 0), "the first pass's instance is the forward's");
    /* setmaxnreg.inc takes from what the block was given at launch (__launch_bounds__(THREADS, 1): 64 K
     * registers a block, a multiple of 8 a thread), not from the SM's whole file */
    static_assert(128 * (REG_PRODUCER + NO * REG_OUT + REG_STATE) <= 65536 / THREADS / 8 * 8 * THREADS,
                  "registers the block holds");
    static_assert(REG_OUT % 8 == 0 && REG_STATE % 8 == 0, "setmaxnreg counts are multiples of 8");
};

/* Shared memory of one block.  No padding: every array is a multiple of 1 KB
 * up to g (the swizzled TMA tiles need 1 KB alignment), then 4-byte and
 * 8-byte arrays, and last g's ring (128-byte aligned where it exists). */
template <class Sh, bool W = Sh::X != 0> struct ChunkStage {
    unsigned char q[Sh::QBYTES], k[Sh::QBYTES], v[Sh::VBYTES];
};
template <class Sh> struct ChunkStage<Sh, true> { /* + w (q in the dq pass, k in the merged pass; 64 x BV) */
    unsigned char q[Sh::QBYTES], k[Sh::QBYTES], v[Sh::VBYTES], w[Sh::VBYTES];
};
/* n chunks of g, 4 heads x 64 tokens each, and their mbarriers (ChunkShape::GT); none where the shape's
 * instances never read g by TMA (last in ChunkSmem: the empty one adds a few bytes of tail) */
template <int N> struct alignas(128) GateRing {
    float t[N][64 * 4];
    uint64_t full[N];
};
template <> struct GateRing<0> {
};
template <class Sh> struct ChunkSmem {
    using Stage = ChunkStage<Sh>;
    Stage stage[Sh::ST];                    /* TMA tiles of chunk c in stage c % ST */
    /* 16-bit state read by Q.S; o of an output warpgroup, for its TMA store (X = 2: dv's after).  The first
     * pass's instance (L) never touches them: 1 KB each keeps the layout's alignment */
    unsigned char S[Sh::NSB][Sh::L ? 1024 : Sh::SBYTES];
    unsigned char o[Sh::NO * (1 + (Sh::X == 2))][Sh::L ? 1024 : Sh::VBYTES];
    float g[Sh::ST][64];                    /* b of stage s's chunk: cumulative log2 gate, floored */
    float b[Sh::NCW][64];                   /* per consumer warp: b of its current chunk */
    uint64_t full[Sh::ST], empty[Sh::ST];   /* stage mbarriers */
    GateRing<Sh::GT> gr;                    /* the forward's gate g by TMA (p.gtma) */
};

/* The opt-in shared-memory limit of a block on sm_90. */
constexpr size_t SGLA_SM90_SMEM_MAX = 227 * 1024;

template <class Sh> struct ChunkSmemChecks {
    using M = ChunkSmem<Sh>;
    static_assert(sizeof(typename M::Stage) % 1024 == 0, "stages keep 1 KB alignment");
    static_assert(offsetof(M, S) % 1024 == 0 && offsetof(M, o) % 1024 == 0, "S_s and o tiles 1 KB aligned");
    static_assert(offsetof(M, full) % 8 == 0, "mbarriers 8-byte aligned");
    static_assert(Sh::GT == 0 || offsetof(M, gr) % 128 == 0, "gr: TMA destinations");
    static_assert(sizeof(M) <= SGLA_SM90_SMEM_MAX, "one block's shared memory fits an SM");
    static constexpr bool ok = true;
};

/* ---- the 16-bit operand type --------------------------------------------------- */

struct ElemBf16 {
    static constexpr bool bf16 = true;
};
struct ElemF16 {
    static constexpr bool bf16 = false;
};

template <class E> static __device__ __forceinline__ uint32_t chunk_pack(float lo, float hi)
{
    if constexpr (E::bf16) return sgla_pack_bf16(lo, hi);
    else return sgla_pack_f16(lo, hi);
}
/* a 16-bit pair (lo first) as two floats */
template <class E> static __device__ __forceinline__ float2 chunk_unpack(uint32_t x)
{
    if constexpr (E::bf16) return __bfloat1622float2(*(const __nv_bfloat162 *)&x);
    else return __half22float2(*(const __half2 *)&x);
}
template <class E> static __device__ __forceinline__ uint32_t chunk_mul2(uint32_t a, uint32_t b)
{
    if constexpr (E::bf16) return sgla_mul2_bf16(a, b);
    else return sgla_mul2_f16(a, b);
}
/* d (64 x N) += A B, A and B in shared memory, A K-major, B N-major (TB = 1: Q S) or K-major (TB = 0:
 * Q K^T, and the merged pass's k T^T) */
template <class E, int N, int TB> static __device__ __forceinline__ void chunk_wg_ss(float *d, uint64_t da, uint64_t db)
{
    static_assert(N == 64 || N == 128, "wgmma N");
    if constexpr (E::bf16 && N == 64) sgla_wg_ss_n64_bf16<TB>(d, da, db);
    else if constexpr (E::bf16) sgla_wg_ss_n128_bf16<TB>(d, da, db);
    else if constexpr (N == 64) sgla_wg_ss_n64_f16<TB>(d, da, db);
    else sgla_wg_ss_n128_f16<TB>(d, da, db);
}
/* Q K^T: 64 x 64, both K-major */
template <class E> static __device__ __forceinline__ void chunk_wg_qk(float *d, uint64_t da, uint64_t db)
{
    chunk_wg_ss<E, 64, 0>(d, da, db);
}
/* d (64 x N) += A B, A in registers, B N-major in shared memory (A V, K^T V) */
template <class E, int N>
static __device__ __forceinline__ void chunk_wg_rs(float *d, const uint32_t *a, uint64_t db)
{
    static_assert(N == 64 || N == 128, "wgmma N");
    if constexpr (E::bf16 && N == 64) sgla_wg_rs_n64_t1_bf16(d, a, db);
    else if constexpr (E::bf16) sgla_wg_rs_n128_t1_bf16(d, a, db);
    else if constexpr (N == 64) sgla_wg_rs_n64_t1_f16(d, a, db);
    else sgla_wg_rs_n128_t1_f16(d, a, db);
}

/* ---- layouts and small pieces ------------------------------------------------------ */

/* byte offset of 16-byte unit u of row r in a TMA tile (64-column boxes, 128-byte swizzle) */
static __device__ __forceinline__ uint32_t sw128_offset(int r, int u)
{
    return (uint32_t)(((u >> 3) << 13) + r * 128 + (((u & 7) ^ (r & 7)) << 4));
}
/* descriptor-address increment (bytes / 16) of k-step kk (16 columns) of a K-major TMA tile */
static __device__ __forceinline__ uint64_t sw128_kstep(int kk) { return (uint64_t)((kk >> 2) * 512 + (kk & 3) * 2); }
/* ... and of k-step kk (16 tokens) of an N-major TMA tile (V) */
static __device__ __forceinline__ uint64_t sw128_vstep(int kk) { return (uint64_t)(kk * 128); }
static __device__ __forceinline__ uint64_t desc_kmajor(uint32_t a) { return sgla_wg_desc_sw128(a, 16, 1024); }
static __device__ __forceinline__ uint64_t desc_nmajor(uint32_t a) { return sgla_wg_desc_sw128(a, 8192, 1024); }

/* named barrier ids (0 is __syncthreads') */
template <class Sh> static __device__ __forceinline__ int bar_s_ready(int b) { return 1 + b; }
template <class Sh> static __device__ __forceinline__ int bar_s_free(int b) { return 1 + Sh::NSB + b; }
template <class Sh> static __device__ __forceinline__ int bar_o(int wo) { return 1 + 2 * Sh::NSB + wo; }

/* What this block works on. */
struct ChunkWork {
    int64_t nh, seg, h, bidx, t0, len, row0;
    int v0, nchunks, outputs;
    int wend; /* the item ends where its sequence or time window does (the backward's blob_kept) */
    const float *gg; /* g of the block's first token (stride H), or NULL without gate g */
    float gl2;       /* g_gamma[h] in log2 units (gate g_gamma) */
};

/* sequence n's slot in a state pool */
static __device__ __forceinline__ int64_t pool_slot(const sgla_kparams &p, int64_t n)
{
    return p.pbits == 32 ? (int64_t)((const int32_t *)p.pidx)[n] : ((const int64_t *)p.pidx)[n];
}
/* where the block's state is: (sequence or pool slot) x H + head; -1 for a pool slot that starts from zeros.
 * Recomputed where it is used rather than kept in ChunkWork: the 128 x 128 instance has no register for it. */
static __device__ __forceinline__ int64_t state_nh(const sgla_kparams &p, const ChunkWork &w, int entering)
{
    if (!p.pidx) return w.nh;
    const int n = (int)w.nh / (int)p.H; /* N * H < 2^31 (cuda_backend.cu) */
    if (entering && p.phis && !p.phis[n]) return -1;
    return pool_slot(p, n) * p.H + w.h;
}

/* gate g: the instances of the rows that read b made beforehand (sgla_row_reads_b): every launch with
 * gate g passes it (p.gb), but of the GS instances and those with g by TMA (p.gtma: K = 64's forward,
 * chunk_producer; chunk_fwd_kernel).  The backward's dq pass with its
 * q tile (X = 1, four tiles a stage) at K = 64 scans: it ran 5-8 % slower reading b, with more DRAM
 * reads than b explains, where every other pass gained (docs/perf.md, session 17, calls 2-6) */
template <class Sh, int BW> struct GateB {
    static constexpr bool on = sgla_row_reads_b(Sh::KD, BW != 0) && !(BW == 1 && Sh::X == 1 && Sh::KD == 64);
};
/* the instances whose producer loads g by TMA where the host made its map (p.gtma), GB their GateB (off
 * in the GS instances): the forward's with a ring (ChunkShape::GT) */
template <class Sh, int BW, bool GB> struct GateTma {
    static constexpr bool on = Sh::GT > 0 && GB && BW == 0;
};

/* The backward's passes (chunk_bwd3.cu) run this kernel with BW != 0:
 *   BW = 1  in time order, as the forward, and o . dotw of every token in fp32 into dot (dq: q . dq),
 *           and the 16-bit state entering every chunk into sblob;
 *   BW = 2  in reverse time order: o_u = scale sum_{t >= u} exp(b_t - b_u) (q_u . k_t) v_t + the state
 *           carried from the sequence's end (h0 is that end state; ht the state before the first token);
 *   BW = 3  the same and o . dotw (dk: k . dk), and X_c from sblob into xc;
 *   BW = 4  BW = 3 (dk) and, from the same state, the dv pass's output: with K = V one block holds the
 *           whole state T = R^T (dk's orientation) and the stage a fourth tile w = k, so that
 *           dv = scale (exp2(b_L - b_u) k T^T + P' do), P' the weighted scores k q^T (q in the v slot,
 *           do in the k slot), reading T's 16-bit copy as a K-major operand; dh0 = scale T^T.  q and do
 *           are read once for both gradients, and k . dk takes k from the stage.
 * Reverse order walks the same chunk grid from its last chunk: the partial chunk comes first, its
 * missing rows zeros (and g = 0) as in the forward, so no weight changes.  The roles of the gate
 * weights swap: a query row i gets exp2(b_L - b_i), a key row j exp2(b_j), a pair j >= i exp2(b_j - b_i),
 * each still exp2 of a difference <= 0. */
template <int BW> static __device__ __forceinline__ int chunk_index(const ChunkWork &w, int c)
{
    return BW >= 2 ? w.nchunks - 1 - c : c;
}

/* a compile-time switch passed to a generic lambda (weigh in chunk_outputs) */
template <bool B> struct Flag {
    static constexpr bool on = B;
};

/* the segment whose local state a split never needs: the last one (first in reverse) */
template <int BW> static __device__ __forceinline__ int64_t seg_unneeded(const sgla_kparams &p)
{
    return BW >= 2 ? 0 : p.nseg - 1;
}

/* The grid of a block a (pair, V column block): columns in x, (pair, segment) items in y (and z past
 * 65535 items), so that a pair's column blocks are adjacent in the order blocks start, run together and
 * read its q and k from HBM once (L2 serves the others; with the columns in y a wave held one column of
 * many pairs, and q and k came from HBM once a column).  Item and column come from blockIdx, which the
 * compiler reads again rather than keeping in registers. */
static __device__ __forceinline__ unsigned block_item(void) { return blockIdx.y + blockIdx.z * gridDim.y; }
/* A diagnostic build's timeline (-DSGLA_TRACE, bench/trace_run.py; sgla_trace_mark): mark ev of chunk c of
 * role r (0, 1: the output warpgroups; 2: the state's; 3: the producer), in the blocks of V column block 0,
 * one thread a role; the dense grid's blocks (a persistent grid's columns sit in blockIdx.y).  Other builds
 * have no marks. */
template <int BW> static __device__ __forceinline__ void chunk_trace(const sgla_kparams &p, int r, int c, int ev)
{
#ifdef SGLA_TRACE
    if (p.trace && p.trace_bw == BW && blockIdx.x == 0) sgla_trace_mark(p, block_item(), r, c, ev);
#else
    (void)p, (void)r, (void)c, (void)ev;
#endif
}

/* 0 when the block has nothing to do (mode 1, the unneeded segment) */
template <int BV, int BW>
static __device__ __forceinline__ int chunk_work(const sgla_kparams &p, ChunkWork &w, unsigned item = block_item(),
                                                 unsigned col = blockIdx.x)
{
    w.nh = item / p.nseg;
    w.seg = item - w.nh * p.nseg;
    w.nh += p.n0 * p.H;
    const int64_t n = w.nh / p.H;
    w.h = w.nh - n * p.H;
    w.v0 = col * BV;
    int64_t t1;
    sgla_seq_range(&p, n, &w.bidx, &w.t0, &t1);
    const int64_t st0 = w.t0, st1 = t1;
    if (p.nseg > 1 || p.seg_len > 0) { /* a split's segment, or one window (nseg = 1) */
        if (p.mode == 1 && w.seg == seg_unneeded<BW>(p)) return 0;
        const int64_t a = w.t0 + p.seg_off + w.seg * p.seg_len;
        w.t0 = a < t1 ? a : t1;
        t1 = w.t0 + p.seg_len < t1 ? w.t0 + p.seg_len : t1;
    }
    w.wend = t1 == st1 || t1 - st0 == p.blob_t0 + p.blob_T;
    w.outputs = p.mode != 1;
    if (p.pidx) { /* a state pool: padded rows and short sequences are the pool kernel's (pool_fwd.cu) */
        const int64_t s = pool_slot(p, n);
        if (s < 0 || s >= p.pslots || t1 - w.t0 < p.pmin) return 0;
    }
    w.len = t1 - w.t0;
    w.nchunks = (int)((w.len + 63) / 64); /* < 2^31: T < 2^31 */
    w.row0 = (w.bidx * p.T + w.t0) * p.H + w.h;
    w.gg = p.gmode == SGLA_GATE_G ? p.g + w.row0 : (const float *)0;
    w.gl2 = p.gmode == SGLA_GATE_GAMMA ? fmaxf(p.g_gamma[w.h], SGLA_GATE_FLOOR_F) * SGLA_LOG2E : 0.f;
    return 1;
}

/* Shared addresses of the block's arrays. */
struct ChunkAddr {
    uint32_t stage, S, full, empty, gfull;
};
template <class Sh> static __device__ __forceinline__ uint32_t stage_q(const ChunkAddr &a, int s)
{
    return a.stage + s * (uint32_t)sizeof(typename ChunkSmem<Sh>::Stage);
}

/* b of a chunk from its gates g (x0, x1: rows lane, lane + 32; 0 past the chunk's end), in place:
 * floored, in log2 units, the inclusive scan over the 64 rows.  The floor is taken here, not where
 * g is loaded: there it would wait for the load at once.  (The fp32 kernel's tf32_gate_scan does
 * the same in fp64.) */
static __device__ __forceinline__ void chunk_gate_b(float &x0, float &x1, int lane)
{
    x0 = fmaxf(x0, SGLA_GATE_FLOOR_F) * SGLA_LOG2E, x1 = fmaxf(x1, SGLA_GATE_FLOOR_F) * SGLA_LOG2E;
    sgla_warp_scan64(x0, x1, lane);
}

/* The top of every chunk in both consumer roles: wait for stage s, then this
 * warp's copy of b (chunk-local cumulative log2 gate); returns b of the last row. */
template <class Sh, bool PS, bool GB>
static __device__ __forceinline__ float chunk_top(const sgla_kparams &p, const ChunkWork &w, const ChunkSmem<Sh> &sm,
                                                  const ChunkAddr &a, int s, int c, int ci, int lane, float *bw)
{
    sgla_mbar_wait(a.full + 8 * s, (uint32_t)((c / Sh::ST) & 1));
    sgla_fence_proxy_async(); /* the producer's copies are read next by wgmma */
    const int cl = chunk_rows(w.len, ci);
    __syncwarp(); /* every lane is done reading bw of the previous chunk */
    if (p.gmode == SGLA_GATE_G && (PS || GB)) { /* b as the producer stored it (chunk_producer) */
        bw[lane] = sm.g[s][lane];
        bw[lane + 32] = sm.g[s][lane + 32];
    } else if (p.gmode == SGLA_GATE_G) {
        float x0 = sm.g[s][lane], x1 = sm.g[s][lane + 32];
        chunk_gate_b(x0, x1, lane);
        bw[lane] = x0;
        bw[lane + 32] = x1;
    } else if (p.gmode == SGLA_GATE_GAMMA) {
        bw[lane] = w.gl2 * (float)(lane + 1 < cl ? lane + 1 : cl);
        bw[lane + 32] = w.gl2 * (float)(lane + 33 < cl ? lane + 33 : cl);
    }
    __syncwarp();
    return p.gmode ? bw[63] : 0.f;
}

/* This thread is done with stage s (an arrival releases only its own accesses;
 * the fence orders them before the producer's TMA overwrites the stage). */
static __device__ __forceinline__ void release_stage(const ChunkAddr &a, int s)
{
    sgla_fence_proxy_async();
    sgla_mbar_arrive(a.empty + 8 * s);
}

/* ---- the producer ---------------------------------------------------------------- */

/* g of rows lane, lane + 32 of chunk c (0 past its end); GB: b of those rows (past the end the chunk's
 * last b, what the scan of zeros gives up to its last bit) from gate_b.cu's rows, 256 contiguous bytes
 * a chunk where g's are 64 lines apart */
template <bool GB>
static __device__ __forceinline__ void load_gate(const sgla_kparams &p, const ChunkWork &w, int c, int lane, float &g0,
                                                 float &g1)
{
    const int64_t tk0 = (int64_t)c * 64;
    const int cl = chunk_rows(w.len, c);
    if constexpr (GB) { /* ld.global.cg, not .nc: gate_b may have written b while this grid was resident */
        const float *b = p.gb + w.h * p.gb_ld + w.bidx * p.T + w.t0 + tk0;
        g0 = __ldcg(b + (lane < cl ? lane : cl - 1));
        g1 = __ldcg(b + (lane + 32 < cl ? lane + 32 : cl - 1));
        return;
    }
    g0 = lane < cl ? __ldg(w.gg + (tk0 + lane) * p.H) : 0.f;
    g1 = lane + 32 < cl ? __ldg(w.gg + (tk0 + lane + 32) * p.H) : 0.f;
}

/* A sequence's last chunk in a packed batch (the PK producer): the lanes copy the rows that exist
 * and zero the rest (a box would read the next sequence), in the TMA layout, by cp.async: all of a
 * lane's copies in flight at once and one wait.  Not inlined: in the loop its code changed the
 * whole kernel's schedule (docs/perf.md, session 18 call 3: full chunks 6.5 % slower than dense). */
template <class Sh>
static __device__ __noinline__ void packed_tail(const uint16_t *qg, const uint16_t *kg, const uint16_t *vg,
                                                const uint16_t *wg, int64_t tk0, int64_t sq, int64_t sv, int64_t kt,
                                                int64_t vt, int v0, int cl, uint32_t qs, bool outputs, bool wt, int lane)
{
    const uint32_t ks = qs + Sh::QBYTES, vs = ks + Sh::QBYTES;
    static_assert(Sh::KD / 8 <= 32 && Sh::BV / 8 <= 32, "a row's 16-byte units within a warp");
    constexpr int UK = Sh::KD / 8, UV = Sh::BV / 8; /* a lane keeps one 16-byte unit of each row */
    const uint4 z = make_uint4(0, 0, 0, 0);
    {
        const int u = lane % UK;
        int r = lane / UK;
        const uint16_t *qp = qg + (tk0 + r) * sq + u * 8, *kp = kg + (tk0 + r) * sq + u * 8;
        const int ub = 8 * u < kt ? 16 : 0; /* features past kt: zeros (cp.async's fill) */
        for (; r < cl; r += 32 / UK, qp += 32 / UK * sq, kp += 32 / UK * sq) {
            if (outputs) sgla_cp_async16(qs + sw128_offset(r, u), ub ? qp : qg, ub);
            sgla_cp_async16(ks + sw128_offset(r, u), ub ? kp : kg, ub);
        }
        for (; r < 64; r += 32 / UK) { /* rows past the sequence: zeros */
            if (outputs) sgla_st_shared16(qs + sw128_offset(r, u), z);
            sgla_st_shared16(ks + sw128_offset(r, u), z);
        }
    }
    /* v's rows, and the fourth tile's (k has v's feature size there) */
    const auto copy_v = [&](uint32_t dst, const uint16_t *src) {
        const int u = lane % UV;
        int r = lane / UV;
        const uint16_t *sp = src + (tk0 + r) * sv + u * 8;
        const int ub = v0 + 8 * u < vt ? 16 : 0;
        for (; r < cl; r += 32 / UV, sp += 32 / UV * sv) sgla_cp_async16(dst + sw128_offset(r, u), ub ? sp : src, ub);
        for (; r < 64; r += 32 / UV) sgla_st_shared16(dst + sw128_offset(r, u), z);
    };
    copy_v(vs, vg);
    if (wt) copy_v(vs + Sh::VBYTES, wg);
    sgla_cp_async_commit();
    sgla_cp_async_wait0();
    sgla_fence_proxy_async(); /* read next by wgmma */
}

/* PK: the instance for packed batches (cu_seqlens), the only one with the tail copy below */
template <class Sh, int BW, bool PK, bool PS, bool GB>
static __device__ __forceinline__ void chunk_producer(const sgla_kparams &p, const sgla_tmaps &tm, const ChunkWork &w,
                                                      ChunkSmem<Sh> &sm, const ChunkAddr &a, int lane, int g0 = 0)
{
    /* made here, after setmaxnreg, so that they are not live across it.  The packed instance's row
     * copies take the tensors' own feature sizes (kt, vt: zeros past them); the dense one's never run */
    const int64_t kt = PK && p.kt ? p.kt : Sh::KD, vt = PK && p.vt ? p.vt : p.V;
    const int64_t sv = p.H * vt; /* token stride of v */
    const int64_t sq = p.H * kt;
    const uint16_t *qg = (const uint16_t *)p.q + w.row0 * kt;
    const uint16_t *kg = (const uint16_t *)p.k + w.row0 * kt;
    const uint16_t *vg = (const uint16_t *)p.v + w.row0 * vt + w.v0;
    const uint16_t *wg = Sh::X ? (const uint16_t *)p.kw + w.row0 * vt + w.v0 : (const uint16_t *)0; /* X: w's rows */
    const bool wt = Sh::X && w.outputs; /* the fourth tile (read by the outputs only) */
    const uint32_t tx = (w.outputs ? Sh::QBYTES : 0) + Sh::QBYTES + Sh::VBYTES + (wt ? Sh::VBYTES : 0);
    const int tb = (int)w.bidx, th = (int)w.h;
    if (lane == 0) {
        if (w.outputs) sgla_tma_prefetch_map(&tm.q);
        sgla_tma_prefetch_map(&tm.k);
        sgla_tma_prefetch_map(&tm.v);
        if (wt) sgla_tma_prefetch_map(&tm.w);
    }
    /* stage s's tiles of chunk c (index ci, cl rows) on their way: TMA, or a packed sequence's last chunk by the
     * lanes */
    const auto issue = [&](int c, int s) {
        const uint32_t qs = stage_q<Sh>(a, s), ks = qs + Sh::QBYTES, vs = ks + Sh::QBYTES;
        const uint32_t full = a.full + 8 * s;
        const int ci = chunk_index<BW>(w, c);
        const int tt = (int)(w.t0 + (int64_t)ci * 64); /* token in the batch row: rows past T read as 0 */
        const int64_t tk0 = (int64_t)ci * 64;
        const int cl = chunk_rows(w.len, ci);
        if (PK && cl < 64) {
            /* a sequence's last chunk in a packed batch: a call, so that the copy's registers and code
             * stay out of the loop's schedule */
            if (lane == 0) sgla_mbar_arrive(full);
            packed_tail<Sh>(qg, kg, vg, wg, tk0, sq, sv, kt, vt, w.v0, cl, qs, w.outputs, wt, lane);
        } else if (!PK && p.cu && cl < 64) {
            /* Never taken: the dense instance runs without cu_seqlens.  This is the copy's form before
             * the packed instance split off, kept because ptxas allocates the whole kernel's registers
             * differently without it: the dense instances ran 2.5-6 % slower with no tail code or
             * with the one above (docs/perf.md, session 8 calls 4-6; 128 x 128 spills 36 bytes
             * instead of 24).  Remove it only with a device run of the dense rows. */
            if (lane == 0) sgla_mbar_arrive(full);
            const uint4 z = make_uint4(0, 0, 0, 0);
            for (int i = lane; i < 64 * Sh::KD / 8; i += 32) {
                const int r = i / (Sh::KD / 8), u = i % (Sh::KD / 8);
                const uint32_t off = sw128_offset(r, u);
                const int64_t go = (tk0 + r) * sq + u * 8;
                if (w.outputs) sgla_st_shared16(qs + off, r < cl ? __ldg((const uint4 *)(qg + go)) : z);
                sgla_st_shared16(ks + off, r < cl ? __ldg((const uint4 *)(kg + go)) : z);
            }
            for (int i = lane; i < 64 * Sh::BV / 8; i += 32) {
                const int r = i / (Sh::BV / 8), u = i % (Sh::BV / 8);
                sgla_st_shared16(vs + sw128_offset(r, u), r < cl ? __ldg((const uint4 *)(vg + (tk0 + r) * sv + u * 8)) : z);
            }
            sgla_fence_proxy_async(); /* read next by wgmma */
        } else if (lane == 0) {
            sgla_mbar_arrive_tx(full, tx);
#pragma unroll
            for (int b = 0; b < Sh::KD / 64; b++) {
                if (w.outputs) sgla_tma_load4(qs + b * 8192, &tm.q, 64 * b, th, tt, tb, full);
                sgla_tma_load4(ks + b * 8192, &tm.k, 64 * b, th, tt, tb, full);
            }
#pragma unroll
            for (int b = 0; b < Sh::BV / 64; b++) sgla_tma_load4(vs + b * 8192, &tm.v, w.v0 + 64 * b, th, tt, tb, full);
            if (wt)
#pragma unroll
                for (int b = 0; b < Sh::BV / 64; b++)
                    sgla_tma_load4(vs + Sh::VBYTES + b * 8192, &tm.w, w.v0 + 64 * b, th, tt, tb, full);
        }
    };
    /* GT (K = 64's forward, where the host made g's map: p.gtma): chunk c's tile of g by TMA into ring slot
     * (g0 + c) % GT (counted on across a persistent grid's items), issued GT chunks ahead; the producer scans
     * it into b once it has issued stage c's tiles, then refills the slot with chunk c + GT.  The ring is
     * two slots deeper than the stages, since a tile queues behind the stages in flight (four slots timed
     * the same on the dense rows; scanning before the stage's issue put the producer between the
     * consumers' chunks: docs/perf.md, session 35) */
    float gr0 = 0.f, gr1 = 0.f; /* g of rows lane, lane + 32 of the next chunk */
    constexpr bool GT = GateTma<Sh, BW, GB>::on;
    constexpr int RG = GT ? Sh::GT : 1; /* (1 where there is no ring) */
    const bool gt = GT && p.gtma && w.gg;
    const int hq = (int)(w.h & 3); /* this head's column of a tile */
    const auto gt_load = [&](int c) {
        const int r = (g0 + c) % RG;
        sgla_mbar_arrive_tx(a.gfull + 8 * r, 64 * 4 * 4);
        sgla_tma_load3(sgla_smem_u32(&sm.gr) + r * 1024, &tm.g, (int)(w.h - hq),
                       (int)(w.t0 + (int64_t)chunk_index<BW>(w, c) * 64), tb, a.gfull + 8 * r);
    };
    if (gt) {
        if (lane == 0) {
            sgla_tma_prefetch_map(&tm.g);
            sgla_fence_proxy_async(); /* a persistent grid's previous item read these slots */
            for (int c = 0; c < RG && c < w.nchunks; c++) gt_load(c);
        }
    } else {
        if (GB && w.gg) sgla_griddep_wait(); /* b: gate_b's, this kernel launched while it ran */
        if (w.gg && w.nchunks > 0) load_gate<GB>(p, w, chunk_index<BW>(w, 0), lane, gr0, gr1);
    }
    int s = g0 % Sh::ST; /* g0: the chunks this block walked before this item (a persistent grid) */
    for (int c = 0; c < w.nchunks; c++) {
        const int gc = g0 + c;
        if (lane == 0) chunk_trace<BW>(p, 3, c, 0);
        if (gc >= Sh::ST) sgla_mbar_wait(a.empty + 8 * s, (uint32_t)((gc / Sh::ST - 1) & 1));
        if (lane == 0) chunk_trace<BW>(p, 3, c, 1);
        issue(c, s);
        if (gt) { /* rows past the chunk's end: 0, as load_gate's */
            const int r = gc % RG, cl = chunk_rows(w.len, chunk_index<BW>(w, c));
            sgla_mbar_wait(a.gfull + 8 * r, (uint32_t)((gc / RG) & 1));
            const float *t = (const float *)&sm.gr + r * 256;
            float x0 = lane < cl ? t[4 * lane + hq] : 0.f, x1 = lane + 32 < cl ? t[4 * (lane + 32) + hq] : 0.f;
            chunk_gate_b(x0, x1, lane);
            sm.g[s][lane] = x0;
            sm.g[s][lane + 32] = x1;
            __syncwarp(); /* every lane has read the slot */
            if (lane == 0 && c + RG < w.nchunks) {
                sgla_fence_proxy_async(); /* those reads before the TMA's writes */
                gt_load(c + RG);
            }
        } else if (w.gg) {
            /* PS: b, the chunk-local cumulative log2 gate (floored), made here once rather than by every
             * consumer warp on its way into the chunk; else g as it is (or b, GB with p.gb) */
            float x0 = gr0, x1 = gr1;
            if constexpr (PS) chunk_gate_b(x0, x1, lane);
            sm.g[s][lane] = x0;
            sm.g[s][lane + 32] = x1;
        }
        if (w.gg || p.cu) sgla_mbar_arrive(a.full + 8 * s); /* release: this lane's stores above */
        if (!gt && w.gg && c + 1 < w.nchunks) load_gate<GB>(p, w, chunk_index<BW>(w, c + 1), lane, gr0, gr1);
        s = s + 1 == Sh::ST ? 0 : s + 1;
    }
}

/* ---- the output warpgroups ----------------------------------------------------------- */

/* o . dotw of this thread's rows i0, i1 over the block's columns (a wgmma D fragment and the
 * matching 16-bit pairs of dotw), in fp32, summed over the quad that holds a row */
template <class E, int BV>
static __device__ __forceinline__ void row_dots(const float *acc, const uint32_t (*dw)[2], float &d0, float &d1)
{
    d0 = d1 = 0.f;
#pragma unroll
    for (int j = 0; j < BV / 8; j++) {
        const float2 x = chunk_unpack<E>(dw[j][0]), y = chunk_unpack<E>(dw[j][1]);
        d0 = fmaf(acc[4 * j + 0], x.x, fmaf(acc[4 * j + 1], x.y, d0));
        d1 = fmaf(acc[4 * j + 2], y.x, fmaf(acc[4 * j + 3], y.y, d1));
    }
    d0 += __shfl_xor_sync(0xffffffffu, d0, 1);
    d1 += __shfl_xor_sync(0xffffffffu, d1, 1);
    d0 += __shfl_xor_sync(0xffffffffu, d0, 2);
    d1 += __shfl_xor_sync(0xffffffffu, d1, 2);
}

template <class E, class Sh, int BW, bool PS, bool GB, bool PK, bool PT = false>
static __device__ __forceinline__ void chunk_outputs(const sgla_kparams &p, const sgla_tmaps &tm, const ChunkWork &w,
                                                     ChunkSmem<Sh> &sm, const ChunkAddr &a, int tid, int wo, int lane,
                                                     float *bw, int g0 = 0)
{
    const int wl = (tid >> 5) & 3, gid = lane >> 2, tig = lane & 3;
    const int64_t vt = PK && p.vt ? p.vt : p.V; /* o's feature size in memory (kparams: kt, vt) */
    const int64_t sv = p.H * vt;                /* token stride of o */
    uint16_t *og = (uint16_t *)p.o + w.row0 * vt + w.v0;
    const int i0 = 16 * wl + gid, i1 = i0 + 8; /* this thread's rows */
    const float scl = p.scale;
    /* o copy-out by threads (only a cu_seqlens sequence's last chunk): this lane's rows
     * o_r + m * o_rs, 16-byte unit o_u */
    constexpr int o_units = Sh::BV / 8, o_rs = 32 / o_units;
    const int o_r = 16 * wl + lane / o_units, o_u = lane % o_units;
    uint16_t *og_t = og + (int64_t)o_r * sv + o_u * 8;
    /* stmatrix row of this lane for o: row 16 wl + (lane & 7) + 8 ((lane >> 3) & 1) */
    const int os_r = 16 * wl + (lane & 7) + ((lane >> 3) & 1) * 8;
    constexpr bool MV = BW == 4; /* the merged reverse pass: dv before dk, each through its o tile */
    /* MV's `wait_group.read 1` in put() counts on two store groups a chunk, or none only in a warpgroup's
     * first chunk (a packed sequence's partial chunk, copied by threads): true in reverse order, where
     * the partial chunk comes first (BW = 4 is a reverse pass) */
    static_assert(MV == (Sh::X == 2), "the merged pass and only it has the second o tile");
    /* x (64 x BV, this thread's D fragment) through o tile `tile` to the rows of chunk ci: columns col0 ..
     * of a tensor of ft features (ts apart from token to token) by TMA, or, for a cu_seqlens sequence's
     * last chunk, by this lane's copies from its first row's unit (gt) */
    const auto put = [&](const float (&x)[Sh::NR], int tile, const CUtensorMap *map, uint16_t *gt, int64_t ts,
                         int64_t ft, int col0, int ci, int cl) {
        if (tid == 128 * wo) { /* the tile's previous store has read it (MV: the other tile's may still run) */
            if constexpr (MV) sgla_bulk_wait_read1();
            else sgla_bulk_wait_read0();
        }
        sgla_bar_sync(bar_o<Sh>(wo), 128);
        const uint32_t o_u32 = sgla_smem_u32(sm.o[tile]);
#pragma unroll
        for (int jb = 0; jb < Sh::BV / 16; jb++) {
            const int u = 2 * jb + (lane >> 4);
            sgla_stm_x4(o_u32 + sw128_offset(os_r, u), chunk_pack<E>(x[8 * jb + 0], x[8 * jb + 1]),
                        chunk_pack<E>(x[8 * jb + 2], x[8 * jb + 3]), chunk_pack<E>(x[8 * jb + 4], x[8 * jb + 5]),
                        chunk_pack<E>(x[8 * jb + 6], x[8 * jb + 7]));
        }
        sgla_fence_proxy_async(); /* read next by the TMA store */
        sgla_bar_sync(bar_o<Sh>(wo), 128);
        if (p.cu && cl < 64) { /* the rows of this sequence only: a box would reach the next */
            const unsigned char *os = sm.o[tile];
            uint16_t *op = gt + (int64_t)ci * 64 * ts;
#pragma unroll
            for (int m = 0; m < 16 / o_rs; m++) {
                const int r = o_r + m * o_rs;
                if (r < cl && (!PK || col0 + 8 * o_u < ft))
                    *(uint4 *)(op + m * o_rs * ts) = *(const uint4 *)(os + sw128_offset(r, o_u));
            }
        } else if (tid == 128 * wo) {
            const int tt = (int)(w.t0 + (int64_t)ci * 64); /* rows past T are not written */
#pragma unroll
            for (int b = 0; b < Sh::BV / 64; b++) sgla_tma_store4(map, o_u32 + b * 8192, col0 + 64 * b, (int)w.h, tt, (int)w.bidx);
            sgla_bulk_commit();
        }
    };
    /* MV: dv's rows in memory (kt features: the pass's K is V) */
    const int64_t ktv = PK && p.kt ? p.kt : Sh::KD;
    uint16_t *ogv_t = MV ? (uint16_t *)p.o2 + w.row0 * ktv + (int64_t)o_r * p.H * ktv + o_u * 8 : (uint16_t *)0;
    /* PT (a persistent grid): the block's chunks are numbered on from g0 across its items, the output
     * warpgroups take them by that number, and chunk_fwd_kernel makes the S_FREE arrivals before the
     * first item */
    const int c0 = PT ? (wo + Sh::NO - g0 % Sh::NO) % Sh::NO : wo;
    int s = PT ? (g0 + c0) % Sh::ST : wo; /* stage of chunk c */
    /* S_FREE of the buffers the state warpgroup writes first (S_1 .. S_{NSB-1}): nobody read them */
    if constexpr (!PT)
#pragma unroll
        for (int b = 1; b < Sh::NSB; b++)
            if (b % Sh::NO == wo && w.outputs && b < w.nchunks) sgla_bar_arrive(bar_s_free<Sh>(b), 256);
    for (int c = c0; c < w.nchunks; c += Sh::NO) {
        const int ci = chunk_index<BW>(w, c);
        const bool trc = (tid & 127) == 0; /* chunk_trace's thread */
        if (trc) chunk_trace<BW>(p, wo, c, 0);
        (void)chunk_top<Sh, PS, GB>(p, w, sm, a, s, g0 + c, ci, lane, bw);
        if (trc) chunk_trace<BW>(p, wo, c, 1);
        const int cl = chunk_rows(w.len, ci);
        /* BW: this thread's columns of dotw in rows i0, i1, loaded now, used after the products */
        uint32_t dw[Sh::BV / 8][2];
        if constexpr (BW != 0 && !Sh::X) { /* X: from the stage's w tile, below */
            const bool on = p.dotw != nullptr && w.outputs;
            const uint16_t *dwp = (const uint16_t *)p.dotw + (w.row0 + ((int64_t)ci * 64 + i0) * p.H) * p.V + w.v0 + 2 * tig;
            const int64_t d8 = 8 * p.H * p.V; /* row i0 to row i1 */
#pragma unroll
            for (int j = 0; j < Sh::BV / 8; j++) {
                dw[j][0] = on && i0 < cl ? __ldg((const unsigned int *)(dwp + 8 * j)) : 0u;
                dw[j][1] = on && i1 < cl ? __ldg((const unsigned int *)(dwp + d8 + 8 * j)) : 0u;
            }
        }
        const uint32_t qs = stage_q<Sh>(a, s), ks = qs + Sh::QBYTES, vs = ks + Sh::QBYTES;
        const uint64_t dV = desc_nmajor(vs);
        if (w.outputs) {
            const int sb = (g0 + c) & (Sh::NSB - 1);
            sgla_bar_sync(bar_s_ready<Sh>(sb), 256); /* S_c is in S_s[sb] */
            if (trc) chunk_trace<BW>(p, wo, c, 2);
            const uint64_t dQ = desc_kmajor(qs);
            const uint64_t dK = desc_kmajor(ks);
            const uint64_t dS = sgla_wg_desc(a.S + sb * Sh::SBYTES, Sh::BV * 16, 128);
            float acc[Sh::NR], sc[32];
            uint32_t af[4][4];
            /* MV: dv's scores k q^T, its output, and its weighted scores */
            float scv[32], accv[Sh::NR]; /* unused (and gone) elsewhere */
            uint32_t afv[4][4];
            const uint32_t wsm = vs + Sh::VBYTES; /* X: the w tile (MV: k) */
#pragma unroll
            for (int e = 0; e < Sh::NR; e++) acc[e] = 0.f;
#pragma unroll
            for (int e = 0; e < 32; e++) sc[e] = 0.f;
            if constexpr (MV) {
#pragma unroll
                for (int e = 0; e < 32; e++) scv[e] = 0.f;
#pragma unroll
                for (int e = 0; e < Sh::NR; e++) accv[e] = 0.f;
            }
            sgla_wg_fence();
#pragma unroll
            for (int kk = 0; kk < Sh::KD / 16; kk++) chunk_wg_qk<E>(sc, dQ + sw128_kstep(kk), dK + sw128_kstep(kk));
            if constexpr (MV) {
                /* k q^T (q is the v tile), then dv's part through the state, k T^T: T's copy read as a
                 * K-major operand (lbo: the next 8 columns of S_s, 128 bytes; sbo: the next 8 rows) */
                const uint64_t dW = desc_kmajor(wsm), dQv = desc_kmajor(vs);
                const uint64_t dSt = sgla_wg_desc(a.S + sb * Sh::SBYTES, 128, Sh::BV * 16);
#pragma unroll
                for (int kk = 0; kk < Sh::BV / 16; kk++) chunk_wg_qk<E>(scv, dW + sw128_kstep(kk), dQv + sw128_kstep(kk));
                sgla_wg_commit();
#pragma unroll
                for (int kk = 0; kk < Sh::BV / 16; kk++) /* + 16 columns of S_s a k-step */
                    chunk_wg_ss<E, Sh::KD, 0>(accv, dW + sw128_kstep(kk), dSt + (uint64_t)(kk * 16));
                sgla_wg_commit();
            } else {
                sgla_wg_commit();
#pragma unroll
                for (int kk = 0; kk < Sh::KD / 16; kk++) /* S_s: + 16 rows a k-step */
                    chunk_wg_ss<E, Sh::BV, 1>(acc, dQ + sw128_kstep(kk), dS + (uint64_t)(kk * 2 * Sh::BV));
                sgla_wg_commit();
            }
            sgla_wg_wait<1>(); /* the scores done; the state's product may still run while they are weighted */
            if (trc) chunk_trace<BW>(p, wo, c, 8);
#pragma unroll
            for (int e = 0; e < 32; e++) sgla_pin(sc[e]);
            if constexpr (MV)
#pragma unroll
                for (int e = 0; e < 32; e++) sgla_pin(scv[e]);

            float bi0 = 0.f, bi1 = 0.f;
            if (p.gmode) {
                bi0 = bw[i0];
                bi1 = bw[i1];
            }
            /* pair (i, j) is in the sum when j <= i (j >= i in reverse), with weight exp2(x - y) */
            constexpr bool R = BW >= 2;
            /* BW = 1, 3: the weights of the pairs (i, i), ed0 and ed1, stay out of the product and are
             * added after the row dots, so that the chunk's own part of o . dotw holds the pairs (i, j != i)
             * alone: dg assembles the pairs on either side of a row from the two passes' dots, and the
             * diagonal pair, in both, cancels only to fp32 rounding of its size (where decays are steep
             * it dwarfs dg) */
            float ed0 = 0.f, ed1 = 0.f;
            /* the pairs' weights in one of two loops, gate or none, chosen once a chunk: with the gate
             * tested at every pair each exp2 sat behind a branch, and dv's weights (MV) were made a
             * second time (docs/perf.md, session 37).  A pair outside the sum (mask false) takes
             * exp2(0), never its own difference, and its product is dropped by the mask */
            const auto weigh = [&](auto gate) {
                constexpr bool G = decltype(gate)::on;
#pragma unroll
                for (int j = 0; j < 8; j++) { /* n8 block j: keys 8j + 2tig, +1 */
                    const int j0 = 8 * j + 2 * tig, j1 = j0 + 1;
                    const bool m0 = R ? j0 >= i0 : j0 <= i0, m1 = R ? j1 >= i0 : j1 <= i0;
                    const bool m2 = R ? j0 >= i1 : j0 <= i1, m3 = R ? j1 >= i1 : j1 <= i1;
                    float w0 = scl, w1 = scl, w2 = scl, w3 = scl;
                    if constexpr (G) {
                        const float bj0 = bw[j0], bj1 = bw[j1];
                        w0 = sgla_exp2(m0 ? (R ? bj0 - bi0 : bi0 - bj0) : 0.f) * scl;
                        w1 = sgla_exp2(m1 ? (R ? bj1 - bi0 : bi0 - bj1) : 0.f) * scl;
                        w2 = sgla_exp2(m2 ? (R ? bj0 - bi1 : bi1 - bj0) : 0.f) * scl;
                        w3 = sgla_exp2(m3 ? (R ? bj1 - bi1 : bi1 - bj1) : 0.f) * scl;
                    }
                    float e0 = m0 ? sc[4 * j + 0] * w0 : 0.f, e1 = m1 ? sc[4 * j + 1] * w1 : 0.f;
                    float e2 = m2 ? sc[4 * j + 2] * w2 : 0.f, e3 = m3 ? sc[4 * j + 3] * w3 : 0.f;
                    if constexpr (MV) { /* dv's pairs: the same weights, the diagonal in the product */
                        afv[j >> 1][2 * (j & 1) + 0] = chunk_pack<E>(m0 ? scv[4 * j + 0] * w0 : 0.f, m1 ? scv[4 * j + 1] * w1 : 0.f);
                        afv[j >> 1][2 * (j & 1) + 1] = chunk_pack<E>(m2 ? scv[4 * j + 2] * w2 : 0.f, m3 ? scv[4 * j + 3] * w3 : 0.f);
                    }
                    if constexpr (BW == 1 || BW >= 3) { /* the diagonal aside (see below) */
                        if (j0 == i0) ed0 = e0, e0 = 0.f;
                        if (j1 == i0) ed0 = e1, e1 = 0.f;
                        if (j0 == i1) ed1 = e2, e2 = 0.f;
                        if (j1 == i1) ed1 = e3, e3 = 0.f;
                    }
                    /* A fragment of k-step j/2: {i0, keys 2tig..}, {i1, 2tig..}, {i0, 2tig+8..}, {i1, 2tig+8..} */
                    af[j >> 1][2 * (j & 1) + 0] = chunk_pack<E>(e0, e1);
                    af[j >> 1][2 * (j & 1) + 1] = chunk_pack<E>(e2, e3);
                }
            };
            if (p.gmode) weigh(Flag<true>{});
            else weigh(Flag<false>{});
            if constexpr (BW == 1 || BW >= 3) { /* the quad's thread tig = gid / 2 held both */
                const int hl = (lane & ~3) | (gid >> 1);
                ed0 = __shfl_sync(0xffffffffu, ed0, hl);
                ed1 = __shfl_sync(0xffffffffu, ed1, hl);
            }
            if (trc) chunk_trace<BW>(p, wo, c, 3);
            /* the carried state reaches row i through exp2(b_i), or exp2(b_L - b_i) in reverse */
            const auto row_w = [&](float bL, float bi) { return p.gmode ? sgla_exp2(R ? bL - bi : bi) * scl : scl; };
            if constexpr (MV) {
                const float bL = bw[63], w0 = row_w(bL, bi0), w1 = row_w(bL, bi1);
                sgla_wg_wait<0>(); /* k T^T done */
                if (trc) chunk_trace<BW>(p, wo, c, 9);
#pragma unroll
                for (int e = 0; e < Sh::NR; e++) sgla_pin(accv[e]);
#pragma unroll
                for (int j = 0; j < Sh::KD / 8; j++) {
                    accv[4 * j + 0] *= w0;
                    accv[4 * j + 1] *= w0;
                    accv[4 * j + 2] *= w1;
                    accv[4 * j + 3] *= w1;
                }
                /* dv += P' do (do is the k tile, read N-major), then dk's Q.S behind it */
                const uint64_t dDo = desc_nmajor(ks);
                sgla_wg_fence();
#pragma unroll
                for (int kk = 0; kk < 4; kk++) chunk_wg_rs<E, Sh::KD>(accv, afv[kk], dDo + sw128_vstep(kk));
                sgla_wg_commit();
#pragma unroll
                for (int kk = 0; kk < Sh::KD / 16; kk++)
                    chunk_wg_ss<E, Sh::BV, 1>(acc, dQ + sw128_kstep(kk), dS + (uint64_t)(kk * 2 * Sh::BV));
                sgla_wg_commit();
                sgla_wg_wait<1>(); /* dv done */
                if (trc) chunk_trace<BW>(p, wo, c, 10);
#pragma unroll
                for (int e = 0; e < Sh::NR; e++) sgla_pin(accv[e]);
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) sgla_pin(afv[kk][e]);
                put(accv, Sh::NO + wo, &tm.o2, ogv_t, p.H * ktv, ktv, 0, ci, cl);
                if (trc) chunk_trace<BW>(p, wo, c, 7);
            }
            sgla_wg_wait<0>(); /* Q.S done */
            if (trc) chunk_trace<BW>(p, wo, c, 4);
#pragma unroll
            for (int e = 0; e < Sh::NR; e++) sgla_pin(acc[e]);
            /* S_FREE: this buffer gets S_{c+NSB}, written in the state's chunk c + NSB - 1 */
            if (PT || c + Sh::NSB < w.nchunks) sgla_bar_arrive(bar_s_free<Sh>(sb), 256); /* PT: the state's end takes the last */
            {
                const float bL = R ? bw[63] : 0.f, w0 = row_w(bL, bi0), w1 = row_w(bL, bi1);
#pragma unroll
                for (int j = 0; j < Sh::BV / 8; j++) {
                    acc[4 * j + 0] *= w0;
                    acc[4 * j + 1] *= w0;
                    acc[4 * j + 2] *= w1;
                    acc[4 * j + 3] *= w1;
                }
            }
            if constexpr (Sh::X != 0) /* dotw (q or k): this thread's columns of rows i0, i1 of the w tile */
                if (p.dotw)
#pragma unroll
                    for (int j = 0; j < Sh::BV / 8; j++) {
                        const uint32_t u = wsm + (j >> 3) * 8192 + 4 * tig;
                        dw[j][0] = sgla_ld_shared32(u + sw128_offset(i0, j & 7));
                        dw[j][1] = sgla_ld_shared32(u + sw128_offset(i1, j & 7));
                    }
            float di0 = 0.f, di1 = 0.f; /* BW: o . dotw of the state's part (rows i0, i1) */
            if constexpr (BW != 0)
                if (p.dotw) row_dots<E, Sh::BV>(acc, dw, di0, di1);
            if (trc) chunk_trace<BW>(p, wo, c, 11);
            sgla_wg_fence();
#pragma unroll
            for (int kk = 0; kk < 4; kk++) chunk_wg_rs<E, Sh::BV>(acc, af[kk], dV + sw128_vstep(kk));
            sgla_wg_commit();
            sgla_wg_wait<0>();
            if (trc) chunk_trace<BW>(p, wo, c, 12);
#pragma unroll
            for (int e = 0; e < Sh::NR; e++) sgla_pin(acc[e]);
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int e = 0; e < 4; e++) sgla_pin(af[kk][e]);
            if constexpr (BW != 0) {
                if (p.dotw) { /* the state's part and the chunk's own part (the total minus the first) */
                    float d0, d1;
                    row_dots<E, Sh::BV>(acc, dw, d0, d1);
                    const int64_t o = blockIdx.x * p.dot_ld + w.row0 + (int64_t)ci * 64 * p.H;
                    if (tig == 0 && i0 < cl) p.dot[o + (int64_t)i0 * p.H] = di0, p.dot_in[o + (int64_t)i0 * p.H] = d0 - di0;
                    if (tig == 1 && i1 < cl) p.dot[o + (int64_t)i1 * p.H] = di1, p.dot_in[o + (int64_t)i1 * p.H] = d1 - di1;
                }
            }
            if (trc) chunk_trace<BW>(p, wo, c, 13);
            if constexpr (BW == 1 || BW >= 3) { /* o_i += w_ii v_i, row i of the V tile at this thread's columns */
#pragma unroll
                for (int j = 0; j < Sh::BV / 8; j++) {
                    const uint32_t c = vs + (j >> 3) * 8192 + 4 * tig;
                    const float2 x = chunk_unpack<E>(sgla_ld_shared32(c + sw128_offset(i0, j & 7)));
                    const float2 y = chunk_unpack<E>(sgla_ld_shared32(c + sw128_offset(i1, j & 7)));
                    acc[4 * j + 0] = fmaf(ed0, x.x, acc[4 * j + 0]);
                    acc[4 * j + 1] = fmaf(ed0, x.y, acc[4 * j + 1]);
                    acc[4 * j + 2] = fmaf(ed1, y.x, acc[4 * j + 2]);
                    acc[4 * j + 3] = fmaf(ed1, y.y, acc[4 * j + 3]);
                }
            }

            /* the stage's last reader is done; o goes through the o tile */
            if (trc) chunk_trace<BW>(p, wo, c, 5);
            release_stage(a, s);
            put(acc, wo, &tm.o, og_t, sv, vt, w.v0, ci, cl);
            if (trc) chunk_trace<BW>(p, wo, c, 6);
        }
        if (!w.outputs) release_stage(a, s);
        s = s + Sh::NO >= Sh::ST ? s + Sh::NO - Sh::ST : s + Sh::NO;
    }
    if (!PT && tid == 128 * wo) sgla_bulk_wait0(); /* the last o stores are complete before the block ends (PT: chunk_fwd_kernel, after the last item) */
}

/* ---- the state warpgroup -------------------------------------------------------------- */

/* S (16-bit) into S_s buffer at S_base + st_off; m-tile mt holds rows 64 mt + 16 wl + gid (+8),
 * columns 8 j + 2 tig (+1) in S[mt][4 j ..] (the wgmma D fragment) */
template <class E, class Sh>
static __device__ __forceinline__ void store_state16(const float (&S)[Sh::MT][Sh::NR], uint32_t dst)
{
#pragma unroll
    for (int mt = 0; mt < Sh::MT; mt++)
#pragma unroll
        for (int jj = 0; jj < Sh::BV / 16; jj++)
            sgla_stm_x4(dst + (mt * 8 * (Sh::BV / 8) + 2 * jj) * 128, chunk_pack<E>(S[mt][8 * jj + 0], S[mt][8 * jj + 1]),
                        chunk_pack<E>(S[mt][8 * jj + 2], S[mt][8 * jj + 3]),
                        chunk_pack<E>(S[mt][8 * jj + 4], S[mt][8 * jj + 5]),
                        chunk_pack<E>(S[mt][8 * jj + 6], S[mt][8 * jj + 7]));
    sgla_fence_proxy_async(); /* these stores are read next by wgmma */
}

/* chunk ci's X_c (one value per state warp, and its form) at its (slot, head, column block) */
static __device__ __forceinline__ float *state_xc(const sgla_kparams &p, const ChunkWork &w, int ci)
{
    const int64_t item = (sgla_chunk_slot(w.bidx, p.T, w.t0, w.nh / p.H, ci) * p.H + w.h) * gridDim.x + blockIdx.x; /* (not in the persistent grid) */
    return p.xc + item * SGLA_XC_STRIDE;
}
/* Every other chunk's copy (p.blob_half; else every chunk keeps its own).  With S_c the state entering
 * chunk c and U_c its chunk's own part of the next, S_{c+1} = exp(b_L) S_c + U_c, so
 * X_c = s exp(b_L) <R_c, S_c> = s <R_c, S_{c+1}> - s <R_c, U_c>, and the last term is the chunk's sum of
 * u (k . dk through the carried state), which dg3 has in fp32.  So an odd chunk (counted from its
 * window's, or sequence's, first) reads the next chunk's copy, the one its even neighbour read a step
 * before (L2 still holds it), and the time-order pass writes half the copies into half the slots.  It
 * cancels inside one chunk only (the error is bf16's of the chunk's own u terms, which its rows add
 * anyway; docs/numerics.md section 8).  The window's or sequence's last chunk has no next copy: it keeps
 * its own.  blob_c0: the item's first chunk counted from the window's first. */
static __device__ __forceinline__ int64_t blob_c0(const sgla_kparams &p, const ChunkWork &w)
{
    return p.nseg > 1 || p.seg_len > 0 ? (p.seg_off - p.blob_t0 + w.seg * p.seg_len) / 64 : 0;
}
/* chunk ci's copy is kept (the time-order pass), and chunk ci's X_c goes through the next one's (the reverse) */
static __device__ __forceinline__ bool blob_kept(const sgla_kparams &p, int64_t c0, const ChunkWork &w, int ci)
{
    return !p.blob_half || !((c0 + ci) & 1) || (w.wend && ci + 1 == w.nchunks);
}
static __device__ __forceinline__ bool xc_next(const sgla_kparams &p, int64_t c0, const ChunkWork &w, int ci)
{
    return !blob_kept(p, c0, w, ci);
}
/* where chunk ci's copy lives: F = P0 + n, the slot sgla_chunk_slot gives the window's first chunk (a
 * sequence of blob_T tokens from blob_t0; F_{n+1} >= F_n + its chunks), plus the chunk's index (every
 * chunk kept), or with blob_half F halved, plus n, then one slot a kept chunk (an odd last one takes the
 * slot after its even neighbour's).  The + n keeps sequences apart
 * where one ends inside the 64-token block the next starts in (F_n + chunks = F_{n+1}: without it a
 * sequence of an even chunk count's last slot was the next one's first); bwd3_layout counts them. */
template <class Sh>
static __device__ __forceinline__ unsigned char *state_blob(const sgla_kparams &p, const ChunkWork &w, int64_t c0, int ci)
{
    const int64_t n = w.nh / p.H, F = (w.bidx * p.blob_T + w.t0 - p.blob_t0) / 64 - c0 + n, cr = c0 + ci;
    const int64_t slot = p.blob_half ? F / 2 + n + (cr + 1) / 2 : F + cr; /* F + cr: sgla_chunk_slot's */
    return p.sblob + ((slot * p.H + w.h) * gridDim.x + blockIdx.x) * (int64_t)Sh::SBYTES;
}
/* A chunk's state copy is laid out for the state warpgroup's threads, not as a matrix: the time-order
 * (dq) pass and the reverse (dk) pass hold the state (V x K in both) in the same fragments, so thread
 * t's 16-bit pairs go out and come back as whole 16-byte words.  Word w (0 .. NW - 1) of thread t:
 * m-tile mt = w / (BV / 4), column group j = (w / 2) % (BV / 8), row r (w even) or r + 8 (w odd);
 * uint4 u = w / 4 of thread t at u x 128 + t (a warp's loads are 512 contiguous bytes); frag(S, u)
 * is where its eight values live in the thread's registers, the one mapping both sides use. */
template <class Sh> struct BlobLayout {
    static constexpr int NW = Sh::MT * Sh::BV / 4; /* 32-bit words a thread */
    static_assert(NW % 4 == 0 && 128 * NW * 4 == Sh::SBYTES, "a thread's words fill whole uint4s; the copy is S_s's size");
    /* uint4 u holds S[mt][4 j .. 4 j + 7] (column groups j, j + 1, rows r and r + 8 of each) */
    static __device__ __forceinline__ const float *frag(const float (&S)[Sh::MT][Sh::NR], int u)
    {
        return &S[4 * u / (Sh::BV / 4)][4 * ((2 * u) % (Sh::BV / 8))];
    }
};
/* the time-order pass: this thread's part of the state entering chunk ci, from its registers */
template <class E, class Sh>
static __device__ __forceinline__ void blob_out(const sgla_kparams &p, const ChunkWork &w, int64_t c0, int ci,
                                                const float (&S)[Sh::MT][Sh::NR], int t)
{
    uint4 *dst = (uint4 *)state_blob<Sh>(p, w, c0, ci) + t;
#pragma unroll
    for (int u = 0; u < BlobLayout<Sh>::NW / 4; u++) {
        const float *x = BlobLayout<Sh>::frag(S, u);
        dst[u * 128] = make_uint4(chunk_pack<E>(x[0], x[1]), chunk_pack<E>(x[2], x[3]), chunk_pack<E>(x[4], x[5]),
                                  chunk_pack<E>(x[6], x[7]));
    }
}
/* The state's recurrence over m-tiles M0 .. M0 + MW - 1 of S (rows 64 mt .. of K); the whole state but in a
 * split's first pass (Sh::L), where the output warpgroup has no outputs to make and takes half the m-tiles
 * (LocalHalves): each warpgroup's chain of products a chunk is then half as long. */
template <class E, class Sh, int BW, bool PS, bool GB, int M0 = 0, int MW = Sh::MT, bool PT = false>
static __device__ __forceinline__ void chunk_state(const sgla_kparams &p, const ChunkWork &w, const ChunkSmem<Sh> &sm,
                                                   const ChunkAddr &a, int tid, int lane, float *bw, int g0 = 0)
{
    static_assert(M0 >= 0 && MW >= 1 && M0 + MW <= Sh::MT, "m-tiles of the state");
    static_assert(MW == Sh::MT || (Sh::L && BW == 0), "a part of the state only in a split's first pass");
    const bool outs = MW == Sh::MT && w.outputs; /* a part of the state makes no S_s (a first pass has no outputs) */
    const int wl = (tid >> 5) & 3, gid = lane >> 2, tig = lane & 3;
    float S[Sh::MT][Sh::NR];
    /* stmatrix address of this lane in S_s: row 64 mt + 16 wl + (lane & 7) + 8 ((lane >> 3) & 1),
     * 8-column block 2 jj + (lane >> 4) */
    const int st_k = 16 * wl + (lane & 7) + ((lane >> 3) & 1) * 8;
    const uint32_t st_off = (uint32_t)(((st_k >> 3) * (Sh::BV / 8) + (lane >> 4)) * 128 + (st_k & 7) * 16);
    {
        const int64_t snh = p.mode == 0 && p.h0 ? state_nh(p, w, 1) : -1;
        const int64_t sub = p.seg_sub > 1 ? p.seg_sub : 1; /* the first pass's segments a segment */
        const float *h0p = p.mode == 2 ? p.seg_buf + (w.seg * sub * p.N * p.H + w.nh) * Sh::KD * p.V + w.v0
                           : snh >= 0  ? p.h0 + snh * Sh::KD * p.V + w.v0
                                       : (const float *)0;
#pragma unroll
        for (int mt = M0; mt < M0 + MW; mt++)
#pragma unroll
            for (int j = 0; j < Sh::BV / 8; j++) {
                const int r = 64 * mt + 16 * wl + gid, cc = 8 * j + 2 * tig;
                if (h0p) {
                    const float2 x = *(const float2 *)(h0p + (int64_t)r * p.V + cc);
                    const float2 y = *(const float2 *)(h0p + (int64_t)(r + 8) * p.V + cc);
                    S[mt][4 * j + 0] = x.x;
                    S[mt][4 * j + 1] = x.y;
                    S[mt][4 * j + 2] = y.x;
                    S[mt][4 * j + 3] = y.y;
                } else {
                    S[mt][4 * j + 0] = S[mt][4 * j + 1] = S[mt][4 * j + 2] = S[mt][4 * j + 3] = 0.f;
                }
            }
    }
    /* BW: the time-order pass writes the chunks' state copies (every other one: blob_kept); the reverse pass reads them */
    const bool blob_w = BW == 1 && p.sblob != nullptr && outs, blob_r = BW >= 3 && p.xc != nullptr && outs;
    const int64_t bc0 = BW != 0 ? blob_c0(p, w) : 0;
    if (outs && w.nchunks >= 1) {
        const int sb = g0 & (Sh::NSB - 1); /* 0 but in a persistent grid's later items */
        if (PT && g0 > 0) sgla_bar_sync(bar_s_free<Sh>(sb), 256);
        store_state16<E, Sh>(S, a.S + sb * Sh::SBYTES + st_off);
        sgla_bar_arrive(bar_s_ready<Sh>(sb), 256);
        if (blob_w && blob_kept(p, bc0, w, chunk_index<BW>(w, 0)))
            blob_out<E, Sh>(p, w, bc0, chunk_index<BW>(w, 0), S, tid - 128 * Sh::NO);
    }
    /* K^T fragments: ldmatrix.trans of core matrices (keys 16 kk + 8 (j >> 1) .. + 7) x
     * (features 64 mt + 16 wl + 8 (j & 1) .. + 7), j = lane / 8; registers 0, 1 hold keys
     * 2 tig, 2 tig + 1 and 2, 3 keys 2 tig + 8, + 9.  keys + 16 kk: + 2 KB; features + 64 mt:
     * the next box */
    const int kmj = lane >> 3, k_key = (kmj >> 1) * 8 + (lane & 7), k_f = 16 * wl + (kmj & 1) * 8;
    const uint32_t k_off = (uint32_t)(k_key * 128 + (((k_f >> 3) ^ (lane & 7)) << 4));
    float ldsum = 0.f; /* total log2 decay of this block's tokens (mode 1) */
    int s = g0 % Sh::ST; /* stage of chunk c */
    /* the reverse pass's words of a chunk's state copy (X_c below): at K = 64 (four 16-byte words a thread)
     * loaded before the stage's wait, which then covers their latency (docs/perf.md, session 37); a larger
     * state's loads where they are used (their registers) */
    constexpr int NU = BlobLayout<Sh>::NW / 4;
    constexpr bool XEARLY = NU <= 4;
    const auto blob_load = [&](uint4 (&xs)[NU], int ci) {
        const uint4 *gsrc = (const uint4 *)state_blob<Sh>(p, w, bc0, ci) + (tid - 128 * Sh::NO);
#pragma unroll
        for (int u = 0; u < NU; u++) xs[u] = __ldg(gsrc + u * 128);
    };
    for (int c = 0; c < w.nchunks; c++) {
        const int ci = chunk_index<BW>(w, c);
        const bool trc = (tid & 127) == 0 && MW == Sh::MT; /* chunk_trace's thread (not a first pass's half) */
        if (trc) chunk_trace<BW>(p, 2, c, 0);
        uint4 xs[NU];
        const bool xn = BW >= 2 && xc_next(p, bc0, w, ci); /* X_c through chunk ci + 1's copy */
        if constexpr (BW >= 2 && XEARLY)
            if (blob_r) blob_load(xs, ci + xn);
        const float bC = chunk_top<Sh, PS, GB>(p, w, sm, a, s, g0 + c, ci, lane, bw);
        if (trc) chunk_trace<BW>(p, 2, c, 1);
        const uint32_t ks = stage_q<Sh>(a, s) + Sh::QBYTES, vs = ks + Sh::QBYTES;
        const uint64_t dV = desc_nmajor(vs);
        ldsum += bC;
        if constexpr (BW >= 2) {
            if (blob_r) {
                /* the next chunk's copy into L2 (the loads below sit on the state's chain).  One chunk
                 * ahead, not two: in two chunks ~30 MB of other lines pass through L2 and evicted most of
                 * the copies before their loads, which read them from DRAM again (docs/perf.md, session 40) */
                constexpr int PF = 1;
                if (tid == 128 * Sh::NO)
                    for (int d = c == 0 ? 0 : PF; d <= PF; d++) {
                        const int cd = chunk_index<BW>(w, c + d); /* the copy it reads */
                        if (c + d < w.nchunks) sgla_prefetch_l2(state_blob<Sh>(p, w, bc0, cd + xc_next(p, bc0, w, cd)), Sh::SBYTES);
                    }
                /* X_c = scale exp(b_L) <this state, the time-order pass's> (or scale <this state, the next
                 * chunk's>: xn, blob_kept), per warp: this thread's words of
                 * the copy read from global memory into registers (staged in shared memory the copy cost a TMA
                 * stage at K = V = 128 and ran 3% slower: docs/perf.md) */
                /* every load in flight before the first use, and four sums (one chain of 128 FMAs behind
                 * loads issued as registers freed was half the state's chunk: docs/perf.md, session 21) */
                if constexpr (!XEARLY) blob_load(xs, ci + xn);
                float pt[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    const float *y = BlobLayout<Sh>::frag(S, u);
                    const uint32_t xw[4] = {xs[u].x, xs[u].y, xs[u].z, xs[u].w};
#pragma unroll
                    for (int h = 0; h < 4; h++) {
                        const float2 f = chunk_unpack<E>(xw[h]);
                        pt[h] = fmaf(y[2 * h], f.x, pt[h]);
                        pt[h] = fmaf(y[2 * h + 1], f.y, pt[h]);
                    }
                }
                float part = (pt[0] + pt[1]) + (pt[2] + pt[3]);
#pragma unroll
                for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
                if (lane == 0) {
                    float *x = state_xc(p, w, ci);
                    x[wl] = part * (xn ? p.scale : p.scale * sgla_exp2(bC));
                    if (wl == 0) x[4] = xn ? 1.f : 0.f; /* dg3 subtracts the chunk's u */
                }
            }
        }
        if (trc) chunk_trace<BW>(p, 2, c, 5);
        /* S = exp2(b_last) S + (K exp2(b_last - b))^T V (the carry by sgla_carry_mul).  In reverse
         * S = exp2(b_0) (exp2(b_last - b_0) S + (K exp2(b - b_0))^T V): the key weights exp2(b_j)
         * would underflow fp16 where the first, exp2(b_0), is already small; b_0 factored out, the
         * first weight is 1.  Where the product is added in fp32 (kExactAdd) exp2(b_0) goes on the
         * product in that add, and the state takes one carry, exp2(b_last) */
        constexpr bool kExactAdd = Sh::MT <= 2;
        constexpr bool kFoldB0 = BW >= 2 && kExactAdd;
        const float b0 = BW >= 2 ? bw[0] : 0.f;
        const float d0 = kFoldB0 && p.gmode ? sgla_exp2(b0) : 1.f;
        if (p.gmode) {
            const float e = kFoldB0 ? bC : bC - b0, dm1 = expm1f(e * SGLA_LN2), d = sgla_exp2(e);
#pragma unroll
            for (int mt = M0; mt < M0 + MW; mt++)
#pragma unroll
                for (int e2 = 0; e2 < Sh::NR; e2++) S[mt][e2] = sgla_carry_mul(S[mt][e2], e, dm1, d);
        }
        /* the weights w of this lane's keys, bf16 pairs: keys 16 kk + 2 tig (+1) and + 8 (+9);
         * exp2(b_L - b_j), or exp2(b_j - b_0) in reverse */
        const float bK = BW >= 2 ? -b0 : bC, sK = BW >= 2 ? -1.f : 1.f;
        uint32_t w01[4], w89[4];
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            w01[kk] = w89[kk] = 0;
            if (p.gmode) {
                const int ta = 16 * kk + 2 * tig;
                w01[kk] = chunk_pack<E>(sgla_exp2(bK - sK * bw[ta]), sgla_exp2(bK - sK * bw[ta + 1]));
                w89[kk] = chunk_pack<E>(sgla_exp2(bK - sK * bw[ta + 8]), sgla_exp2(bK - sK * bw[ta + 9]));
            }
        }
        /* per m-tile of S, the chunk's (K w)^T V.  K <= 128: from zero, 64 columns at a time, then
         * added to S in fp32 (round to nearest).  Accumulated into S by the tensor cores, whose
         * additions truncate, it loses about half an ulp of S a chunk with one sign (1e-3 of ht after
         * 15,625 chunks near a = 1: docs/numerics.md §7).  K = 256 has no registers for the extra
         * accumulator and keeps accumulating into S. */
        /* this lane's K^T fragments of m-tile mt, times the key weights */
        const auto key_frags = [&](uint32_t (&kf)[4][4], int mt) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                uint32_t *ka = kf[kk];
                sgla_ldm_x4_t(ka, ks + k_off + kk * 2048 + mt * 8192);
                if (p.gmode) {
                    ka[0] = chunk_mul2<E>(ka[0], w01[kk]);
                    ka[1] = chunk_mul2<E>(ka[1], w01[kk]);
                    ka[2] = chunk_mul2<E>(ka[2], w89[kk]);
                    ka[3] = chunk_mul2<E>(ka[3], w89[kk]);
                }
            }
        };
        if constexpr (kExactAdd) {
#pragma unroll
            for (int mt = M0; mt < M0 + MW; mt++) {
                uint32_t kf[4][4];
                key_frags(kf, mt);
                /* columns 64 h .. + 63 in U, for S[mt][32 h ..]: the backward's passes issue both column
                 * halves before one wait (-2 to -4 %, session 11 call 4); in the forward ptxas then
                 * injected waits of its own and the rows ran 1 % slower, so it waits after each half */
                constexpr int HG = BW != 0 ? Sh::BV / 64 : 1;
#pragma unroll
                for (int h0 = 0; h0 < Sh::BV / 64; h0 += HG) {
                    float U[HG][32];
#pragma unroll
                    for (int h = 0; h < HG; h++)
#pragma unroll
                        for (int e = 0; e < 32; e++) U[h][e] = 0.f;
                    sgla_wg_fence();
#pragma unroll
                    for (int h = 0; h < HG; h++)
#pragma unroll
                        for (int kk = 0; kk < 4; kk++)
                            chunk_wg_rs<E, 64>(U[h], kf[kk], dV + sw128_vstep(kk) + 512 * (h0 + h));
                    sgla_wg_commit();
                    sgla_wg_wait<0>();
#pragma unroll
                    for (int h = 0; h < HG; h++)
#pragma unroll
                        for (int e = 0; e < 32; e++) {
                            float &x = S[mt][32 * (h0 + h) + e];
                            sgla_pin(U[h][e]);
                            if constexpr (kFoldB0) x = fmaf(d0, U[h][e], x);
                            else x += U[h][e];
                        }
                }
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) sgla_pin(kf[kk][e]);
            }
        } else {
            /* the m-tiles accumulate into S[mt] itself, so none waits for another: each m-tile's
             * fragments are made while the previous one's products run, and one wait ends the chunk */
            uint32_t kf[Sh::MT][4][4];
#pragma unroll
            for (int mt = M0; mt < M0 + MW; mt++) {
                key_frags(kf[mt], mt);
                sgla_wg_fence();
#pragma unroll
                for (int kk = 0; kk < 4; kk++) chunk_wg_rs<E, Sh::BV>(S[mt], kf[mt][kk], dV + sw128_vstep(kk));
                sgla_wg_commit();
            }
            sgla_wg_wait<0>();
#pragma unroll
            for (int mt = M0; mt < M0 + MW; mt++) {
#pragma unroll
                for (int e = 0; e < Sh::NR; e++) sgla_pin(S[mt][e]);
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) sgla_pin(kf[mt][kk][e]);
            }
        }
        if (BW >= 2 && !kFoldB0 && p.gmode) {
            const float dm1 = expm1f(b0 * SGLA_LN2), d = sgla_exp2(b0);
#pragma unroll
            for (int mt = M0; mt < M0 + MW; mt++)
#pragma unroll
                for (int e2 = 0; e2 < Sh::NR; e2++) S[mt][e2] = sgla_carry_mul(S[mt][e2], b0, dm1, d);
        }
        if (trc) chunk_trace<BW>(p, 2, c, 2);
        release_stage(a, s);
        /* S_{c+1} for the output warpgroup's chunk c + 1, once the Q.S of chunk c + 1 - NSB has read that buffer */
        if (outs && c + 1 < w.nchunks) {
            const int sb = (g0 + c + 1) & (Sh::NSB - 1);
            sgla_bar_sync(bar_s_free<Sh>(sb), 256);
            if (trc) chunk_trace<BW>(p, 2, c, 3);
            store_state16<E, Sh>(S, a.S + sb * Sh::SBYTES + st_off);
            sgla_bar_arrive(bar_s_ready<Sh>(sb), 256);
            if (trc) chunk_trace<BW>(p, 2, c, 4);
            if (blob_w && blob_kept(p, bc0, w, chunk_index<BW>(w, c + 1)))
                blob_out<E, Sh>(p, w, bc0, chunk_index<BW>(w, c + 1), S, tid - 128 * Sh::NO);
        }
        s = s + 1 == Sh::ST ? 0 : s + 1;
    }
    float *htp = p.mode == 1                           ? p.seg_buf + (w.seg * p.N * p.H + w.nh) * Sh::KD * p.V + w.v0
                 : (p.nseg > 1 && w.seg != (BW >= 2 ? 0 : p.nseg - 1)) ? (float *)0
                 : p.ht                                ? p.ht + state_nh(p, w, 0) * Sh::KD * p.V + w.v0
                                                       : (float *)0;
    if (p.mode == 1 && blockIdx.x == 0 && tid == 128 * Sh::NO) p.seg_ld[w.seg * p.N * p.H + w.nh] = ldsum;
    if (htp) {
        const float hm = BW != 0 && p.mode != 1 ? p.ht_mul : 1.f; /* the backward's dh0 = scale x the end state */
        const bool tr = BW == 4 && p.mode != 1 && !p.ht_raw; /* the merged pass's dh0 is dv's: T^T (one block, v0 = 0) */
#pragma unroll
        for (int mt = M0; mt < M0 + MW; mt++)
#pragma unroll
            for (int j = 0; j < Sh::BV / 8; j++) {
                const int r = 64 * mt + 16 * wl + gid, cc = 8 * j + 2 * tig;
                if (tr) {
                    htp[(int64_t)cc * Sh::KD + r] = hm * S[mt][4 * j + 0];
                    htp[(int64_t)(cc + 1) * Sh::KD + r] = hm * S[mt][4 * j + 1];
                    htp[(int64_t)cc * Sh::KD + r + 8] = hm * S[mt][4 * j + 2];
                    htp[(int64_t)(cc + 1) * Sh::KD + r + 8] = hm * S[mt][4 * j + 3];
                } else {
                    *(float2 *)(htp + (int64_t)r * p.V + cc) = make_float2(hm * S[mt][4 * j + 0], hm * S[mt][4 * j + 1]);
                    *(float2 *)(htp + (int64_t)(r + 8) * p.V + cc) =
                        make_float2(hm * S[mt][4 * j + 2], hm * S[mt][4 * j + 3]);
                }
            }
    }
}

/* ---- the kernel ------------------------------------------------------------------------ */

/* A split's first pass makes local states only: its one output warpgroup (232 registers, as many as the
 * state's) runs the upper half of the state's m-tiles beside the state warpgroup's lower half.  Where the
 * state is one m-tile (K = 64, two output warpgroups) the first pass keeps the forward's roles. */
template <class Sh, int BW> struct LocalHalves {
    static constexpr bool on = Sh::L && BW == 0 && Sh::NO == 1 && Sh::MT % 2 == 0;
    static_assert(!on || Sh::REG_OUT == Sh::REG_STATE, "the output warpgroup holds what the state warpgroup does");
};

/* A persistent grid's walk (PT): items blockIdx.x, + gridDim.x, ..., each with its ChunkWork and g0, the
 * chunks the block walked before it (stage, phase and S_s buffer numbers run on from there); returns the
 * block's chunks in all */
template <int BV, int BW, class F>
static __device__ __forceinline__ int walk_items(const sgla_kparams &p, ChunkWork &w, F &&body)
{
    int g0 = 0;
    for (unsigned it = blockIdx.x; it < p.items; it += gridDim.x) {
        (void)chunk_work<BV, BW>(p, w, it, blockIdx.y); /* V column block blockIdx.y */
        body(g0);
        g0 += w.nchunks;
    }
    return g0;
}

/* GS: gate g scanned in the kernel where the row reads b otherwise (a state pool's prefills: the pool
 * call takes no workspace) */
template <class E, class Sh, int BW, bool PK, bool GS = false, bool PT = false>
__global__ void __launch_bounds__(Sh::THREADS, 1) chunk_fwd_kernel(const sgla_kparams p, const __grid_constant__ sgla_tmaps tm)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 /* wgmma, TMA, setmaxnreg: sm_90a */
    static_assert(ChunkSmemChecks<Sh>::ok, "shared-memory layout");
    /* gate g: who scans the chunk's gates into b.  The producer, once, in the forward at K = 128 (5-6 %
     * faster there: docs/perf.md, session 9 call 8); at K = 64 the producer too, from g's tiles by TMA
     * where the host made their map (GTK, p.gtma: session 35); elsewhere gate_b.cu beforehand (GateB: the
     * producer's loads of g, a line per token, were most of K = 64's cost over g_gamma: docs/perf.md,
     * sessions 16-17); every consumer warp in GateB's one exception and the pool's GS instances */
    constexpr bool PS = Sh::KD == 128 && BW == 0;
    extern __shared__ __align__(1024) unsigned char chunk_smem[];
    ChunkSmem<Sh> &sm = *reinterpret_cast<ChunkSmem<Sh> *>(chunk_smem);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, wg = warp >> 2;
    /* with a state pool, the recurrence of the short sequences (pool_fwd.cu, launched next) may start at
     * once: it touches other slots and outputs */
    if (p.pidx) sgla_griddep_launch();
    ChunkWork w;
    if constexpr (PT) { /* a persistent grid: items blockIdx.x, + gridDim.x, ... of V column block blockIdx.y (a
                         * pair's column blocks run together); the forward alone: one segment,
                         * outputs, no pool; the host's choice) */
        static_assert(BW == 0 && !Sh::L && !GS && !PK, "a persistent grid runs the dense forward's instances");
        static_assert(Sh::NSB == 2 * Sh::NO, "S_s buffer b is read by output warpgroup b % NO alone (the S_FREE counts)");
        if (p.nseg != 1 || p.mode != 0 || p.pidx || p.cu || blockIdx.x >= p.items) __trap();
    } else {
        if (blockIdx.z > 0 && block_item() >= p.N * p.H * p.nseg) return; /* the last z slice's spare blocks */
        if (!chunk_work<Sh::BV, BW>(p, w)) return;
        if (Sh::L && w.outputs) __trap(); /* the first pass's instance has no room for outputs (the host's choice) */
    }
    constexpr bool GB = GateB<Sh, BW>::on && !GS;
    constexpr bool GTK = GateTma<Sh, BW, GB>::on; /* g by TMA where p.gtma (chunk_producer) */
    if (GB && p.gmode == SGLA_GATE_G && !p.gb && !(GTK && p.gtma)) __trap(); /* the host's duty (cuda_backend.cu) */
    float *bw = sm.b[warp % Sh::NCW]; /* this consumer warp's b (the producer has none) */
    ChunkAddr a;
    a.stage = sgla_smem_u32(sm.stage);
    a.S = sgla_smem_u32(sm.S);
    a.full = sgla_smem_u32(sm.full);
    a.empty = sgla_smem_u32(sm.empty);
    a.gfull = sgla_smem_u32(&sm.gr) + Sh::GT * 1024; /* (gr.full where GT) */

    if (tid == 0) {
        if (a.stage & 1023) __trap(); /* the 128-byte swizzle needs 1 KB-aligned tiles */
        for (int i = 0; i < Sh::ST; i++) {
            /* thread 0's arrival (with the TMA byte count) + the 32 lanes' (storing g, or the
             * tiles of a cu_seqlens sequence's last chunk) */
            sgla_mbar_init(a.full + 8 * i, (PT ? p.gmode == SGLA_GATE_G : w.gg != nullptr) || p.cu ? 33 : 1);
            sgla_mbar_init(a.empty + 8 * i, 256); /* every consumer thread of a stage */
        }
        if (GTK)
            for (int i = 0; i < Sh::GT; i++) sgla_mbar_init(a.gfull + 8 * i, 1); /* the producer's TMA of g */
        sgla_mbar_init_fence();
    }
    __syncthreads(); /* the only block-wide barrier: the mbarriers exist */

    if (wg > Sh::NO) {
        sgla_setmaxnreg_dec<Sh::REG_PRODUCER>();
        if (warp != Sh::NCW) return;
        if constexpr (PT) {
            walk_items<Sh::BV, BW>(p, w, [&](int g0) { chunk_producer<Sh, BW, PK, PS, GB>(p, tm, w, sm, a, lane, g0); });
        } else {
            chunk_producer<Sh, BW, PK, PS, GB>(p, tm, w, sm, a, lane);
        }
        return;
    }
    if constexpr (Sh::REG_OUT == Sh::REG_STATE) {
        sgla_setmaxnreg_inc<Sh::REG_OUT>();
    } else {
        if (wg < Sh::NO) sgla_setmaxnreg_inc<Sh::REG_OUT>();
        else sgla_setmaxnreg_inc<Sh::REG_STATE>();
    }
    /* each role runs its own loop, so the state's registers are live only in its own */
    if constexpr (LocalHalves<Sh, BW>::on) { /* a first pass: the output warpgroup takes half the state */
        constexpr int H = Sh::MT / 2;
        if (wg < Sh::NO) chunk_state<E, Sh, BW, PS, GB, H, H>(p, w, sm, a, tid, lane, bw);
        else chunk_state<E, Sh, BW, PS, GB, 0, H>(p, w, sm, a, tid, lane, bw);
    } else if constexpr (PT) {
        /* the S_s hand-over runs on across items: the output warpgroups free S_1 .. S_{NSB-1} once before
         * the first, the state warpgroup takes the last arrival on every buffer after the last (every
         * S_FREE arrival then has its sync) */
        const int wo = Sh::NO == 1 ? 0 : wg;
        if (wg < Sh::NO) { /* each role its own walk (as above: the state's registers) */
#pragma unroll
            for (int b = 1; b < Sh::NSB; b++)
                if (b % Sh::NO == wo) sgla_bar_arrive(bar_s_free<Sh>(b), 256);
            walk_items<Sh::BV, BW>(p, w, [&](int g0) {
                chunk_outputs<E, Sh, BW, PS, GB, PK, true>(p, tm, w, sm, a, tid, wo, lane, bw, g0);
            });
            if (tid == 128 * wo) sgla_bulk_wait0(); /* the last o stores are complete before the block ends */
        } else {
            const int g0 = walk_items<Sh::BV, BW>(p, w, [&](int g) {
                chunk_state<E, Sh, BW, PS, GB, 0, Sh::MT, true>(p, w, sm, a, tid, lane, bw, g);
            });
#pragma unroll
            for (int b = 0; b < Sh::NSB; b++)
                if (b > 0 || g0 > 0) sgla_bar_sync(bar_s_free<Sh>(b), 256);
        }
    } else {
        if (wg < Sh::NO) chunk_outputs<E, Sh, BW, PS, GB, PK>(p, tm, w, sm, a, tid, Sh::NO == 1 ? 0 : wg, lane, bw);
        else chunk_state<E, Sh, BW, PS, GB>(p, w, sm, a, tid, lane, bw);
    }
#else
    __trap(); /* a Hopper kernel: the runtime never launches it elsewhere (cuda_backend.cu) */
#endif
}

/* What the host needs of one instance. */
typedef void (*sgla_chunk_fn)(const sgla_kparams, const sgla_tmaps);
typedef struct sgla_chunk_kernel {
    sgla_chunk_fn fn;        /* dense batches */
    sgla_chunk_fn fn_packed; /* packed batches (cu_seqlens): the same with the copy of partial last chunks,
                              * an instance of its own so that the dense one's code stays as it was */
    unsigned smem;           /* dynamic shared memory of a block */
    int threads;
    sgla_chunk_fn fn_local;  /* a split's first pass (mode 1, dense): more stages in the room of S_s and the
                              * o tiles, the output warpgroup on half the state; NULL where none (the
                              * backward's passes) */
    unsigned smem_local;
    sgla_chunk_fn fn_scan, fn_packed_scan; /* gate g without b (GS: a pool's prefills) where the row reads b;
                                            * NULL elsewhere (fn, fn_packed scan or are not given b) */
    sgla_chunk_fn fn_persist; /* fn on a persistent grid (PT: blocks walk kparams.items), dense batches with one
                               * segment; NULL where the row has none (sgla_row_persists) */
} sgla_chunk_kernel;

/* The instance of row I of sgla_chunk_configs for element type E (BW: the backward's passes). */
template <class E, class Sh, int BW> constexpr sgla_chunk_kernel chunk_instance(void)
{
    return {chunk_fwd_kernel<E, Sh, BW, false>, chunk_fwd_kernel<E, Sh, BW, true>, (unsigned)sizeof(ChunkSmem<Sh>),
            Sh::THREADS, nullptr, 0};
}
/* The stages of the first pass's instance: as many as fit without S_s and the o tiles (ChunkSmem term by
 * term, as in w_stages below) */
constexpr int local_stages(const sgla_chunk_config c)
{
    const int q = 64 * c.K * 2, v = 64 * c.bv * 2, no = c.out_wgs;
    const int fixed = 2 * no * 1024 + no * 1024 + 64 * 4 * 4 * (no + 1);
    int st = c.stages;
    while ((st + 1) * (2 * q + v + 64 * 4 + 16) + fixed <= (int)SGLA_SM90_SMEM_MAX) st++;
    return st;
}
template <class E, int I, int BW = 0> constexpr sgla_chunk_kernel chunk_row(void)
{
    constexpr sgla_chunk_config c = sgla_chunk_configs[I];
    using S = ChunkShape<c.K, c.bv, c.stages, c.out_wgs>; /* the row's shape */
    sgla_chunk_kernel k = chunk_instance<E, S, BW>();
    if constexpr (BW == 0) {
        using Sl = ChunkShape<c.K, c.bv, local_stages(c), c.out_wgs, 0, 1>;
        k.fn_local = chunk_fwd_kernel<E, Sl, 0, false>;
        k.smem_local = (unsigned)sizeof(ChunkSmem<Sl>);
        if constexpr (sgla_row_persists(c.K)) k.fn_persist = chunk_fwd_kernel<E, S, 0, false, false, true>;
        if constexpr (sgla_row_reads_b(c.K, false)) {
            k.fn_scan = chunk_fwd_kernel<E, S, 0, false, true>;
            k.fn_packed_scan = chunk_fwd_kernel<E, S, 0, true, true>;
        }
    }
    return k;
}

/* The stages of a pass with the fourth tile (x = 1) or with it and the second o tile (x = 2, the merged
 * pass): the row's, less as many as they take from shared memory (ChunkSmemChecks holds the sum to the
 * limit). */
constexpr int w_stages(const sgla_chunk_config c, int x)
{
    /* ChunkSmem term by term: a stage's four tiles, g and two mbarriers; S_s; the o tiles; b of every
     * consumer warp.  0 where not even two stages fit */
    const int q = 64 * c.K * 2, v = 64 * c.bv * 2, no = c.out_wgs;
    const int fixed = 2 * no * (c.K * c.bv * 2) + (x == 2 ? 2 : 1) * no * v + 64 * 4 * 4 * (no + 1);
    int st = c.stages;
    while (st >= 2 && st * (2 * q + 2 * v + 64 * 4 + 16) + fixed > (int)SGLA_SM90_SMEM_MAX) st--;
    return st >= 2 ? st : 0;
}
/* The merged reverse pass's instance of row I (BW = 4), where one block holds the whole state (K = bv);
 * none elsewhere. */
template <class E, int I> constexpr sgla_chunk_kernel chunk_row_merged(void)
{
    constexpr sgla_chunk_config c = sgla_chunk_configs[I];
    if constexpr (c.K != c.bv) {
        return {nullptr, nullptr, 0, 0, nullptr, 0};
    } else {
        return chunk_instance<E, ChunkShape<c.K, c.bv, w_stages(c, 2), c.out_wgs, 2>, 4>();
    }
}

/* The dq pass with q by TMA as the fourth tile (BW = 1, X = 1), where two stages fit; none elsewhere. */
template <class E, int I> constexpr sgla_chunk_kernel chunk_row_qtile(void)
{
    constexpr sgla_chunk_config c = sgla_chunk_configs[I];
    if constexpr (w_stages(c, 1) == 0) {
        return {nullptr, nullptr, 0, 0, nullptr, 0};
    } else {
        return chunk_instance<E, ChunkShape<c.K, c.bv, w_stages(c, 1), c.out_wgs, 1>, 1>();
    }
}

/* one entry per row of sgla_chunk_configs (chunk_fwd_bf16.cu, chunk_fwd_f16.cu) */
extern const sgla_chunk_kernel sgla_chunk_fwd_bf16[SGLA_NUM_CHUNK_CONFIGS];
extern const sgla_chunk_kernel sgla_chunk_fwd_f16[SGLA_NUM_CHUNK_CONFIGS];
/* the backward's passes: [BW - 1][row] (chunk_bwd3.cu); [3][row] has no kernel where K != bv; [4][row]: the
 * dq pass with q as a fourth tile (none where two stages do not fit) */
extern const sgla_chunk_kernel sgla_chunk_bwd3_bf16[5][SGLA_NUM_CHUNK_CONFIGS];
extern const sgla_chunk_kernel sgla_chunk_bwd3_f16[5][SGLA_NUM_CHUNK_CONFIGS];

#endif
