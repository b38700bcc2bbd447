/* What the forward kernels receive: the parameter block (by value), the TMA
 * descriptors, and the sequence bounds every kernel computes the same way. */
#ifndef SGLA_CUDA_FWD_PARAMS_CUH
#define SGLA_CUDA_FWD_PARAMS_CUH

#include <cuda.h>
#include <stdint.h>

#define SGLA_LOG2E 1.4426950408889634f
#define SGLA_LN2 0.6931471805599453f

#ifdef __CUDACC__
/* x *= exp2(e) for a carry: near 1 (e > -1) as x + expm1(e ln 2) x, whose rounding does
 * not compound over a long sequence; below 1/2 as a product, where a - 1 would lose
 * the carry's relative digits (the CPU's sgla_carry makes the same choice) */
static __device__ __forceinline__ float sgla_carry_mul(float x, float e, float em1, float ex)
{
    return e > -1.f ? fmaf(em1, x, x) : x * ex;
}
#endif
/* SGLA_GATE_FLOOR (core.h) in fp32: every chunked kernel takes max(g, this) */
#define SGLA_GATE_FLOOR_F (-128.0f)
/* the backward's xc: floats a chunk and column block (the state warps' four parts, the flag; kparams) */
#define SGLA_XC_STRIDE 8

enum { SGLA_GATE_NONE = 0, SGLA_GATE_GAMMA = 1, SGLA_GATE_G = 2 };

/* Everything a forward kernel needs; passed by value. */
typedef struct sgla_kparams {
    const void *q, *k, *v;
    void *o;
    const float *g;        /* [B,T,H] or NULL */
    const float *g_gamma;  /* [H] or NULL */
    const float *h0;       /* [N,H,K,V] or NULL */
    float *ht;             /* [N,H,K,V] or NULL */
    const int64_t *cu;     /* [N+1] or NULL */
    int64_t T, H, K, V, N;
    float scale;
    int gmode;             /* SGLA_GATE_* */
    /* sequence split (long sequences, few blocks): segment s of nseg covers
     * tokens [seg_off + s*seg_len, ... + seg_len) of each sequence; the block's item is nh*nseg + s.
     * mode 0: plain; 1: local end state of each segment from zero into
     * seg_buf[s] and its total log2 decay into seg_ld[s] (no outputs);
     * 2: outputs, entering state read from seg_buf[s * seg_sub] (filled by the scan).
     * seg_sub > 1 (the Hopper rows): the first pass ran on pieces seg_sub times shorter
     * (nseg, seg_len its own), so that it fills the SMs; 0 or 1 otherwise.  seg_off: the
     * first pass's pieces start that many tokens later (a reverse split in pieces: its
     * piece 0, never needed, ends where segment 0 does, so that slot s seg_sub is the
     * state at segment s's end either way).  The backward's time windows (bwd3_run_windows in
     * cuda_backend.cu) start at seg_off: nseg = 1 with seg_len > 0 is one window of each
     * sequence, [seg_off, seg_off + seg_len) (h0, or seg_buf[0] in mode 2, the state entering
     * it, ht the one leaving it); nseg > 1 the segments of a window split along time. */
    int nseg, mode, seg_sub;
    int64_t seg_len, seg_off;
    float *seg_buf;        /* [the first pass's nseg][N*H][K][V] */
    float *seg_ld;         /* [the first pass's nseg][N*H] */
    /* a state pool (sgla.h; h0 is the pool, ht the pool or NULL): sequence n's state is
     * slot pidx[n] (int32 or int64: pbits), a [K][V] state; the chunked kernel
     * takes the sequences of at least pmin tokens in a valid slot, pool_fwd.cu the rest */
    const void *pidx;
    const unsigned char *phis; /* has_initial_state [N] or NULL */
    int64_t pslots, pmin;
    int64_t n0; /* the grid's first sequence (a pool's prefills, when the host knows where they are) */
    int pbits;
    /* cu holds [start, end) pairs, 2 N int64, rather than N + 1 offsets: a packed batch without
     * states, its sequences sorted longest first (cuda_backend.cu) */
    int cu_pairs;
    /* the backward's passes (chunk_bwd3.cu): per token, o . dotw (dotw [rows][V] 16-bit, rows the token
     * rows (b T + t) H + h) in fp32, the part through the carried state into dot and the chunk's own
     * part into dot_in, at [column block * dot_ld + row]; the end state times ht_mul.  sblob: the 16-bit
     * state entering every chunk in the state warpgroup's fragment order (BlobLayout in chunk_fwd.cuh),
     * written by the time-order pass (BW = 1)
     * and read by the reverse one (BW = 2), which puts scale exp(b_L) <its state, that one> of every
     * chunk, per state warp, into xc (SGLA_XC_STRIDE floats a chunk and column block: the four warps'
     * parts, then 1 where they are scale <its state, the next chunk's copy>, from which dg3 takes the
     * chunk's u; with blob_half the time-order pass keeps only the copies read: blob_kept in
     * chunk_fwd.cuh).  xc indexed by chunk slot (sgla_bwd_tc_slots); the blob (half as many with
     * blob_half: state_blob),
     * by the slot of its chunk in a sequence of blob_T tokens from token blob_t0 (T and 0, or a time
     * window's length and first token: dense batches, the window's segments if split), so that it
     * holds one window's states.  ht_raw: the merged pass (BW = 4) writes
     * its end state as it holds it (the next window's h0), not as dh0. */
    const void *dotw;
    float *dot, *dot_in;
    int64_t dot_ld;
    float ht_mul;
    unsigned char *sblob;
    float *xc;
    int64_t blob_T, blob_t0;
    int blob_half; /* 1: every other chunk's copy (a workspace cap's first saving; dg's error 1.5-1.9x) */
    int ht_raw;
    /* the feature sizes of q / k and v / o in memory where the kernel runs on larger K, V (their
     * rows then read as zero past them and are not written there); 0 means K, V.  Only the
     * packed instance's row copies (q, k, v in, o out) read them: TMA has them in its maps */
    int64_t kt, vt;
    /* the merged reverse pass (BW = 4: dk as BW = 3 and dv beside it, chunk_fwd.cuh): k, a fourth
     * tile of vt features a chunk, and dv, a second output of kt features (maps w and o2) */
    const void *kw;
    void *o2;
    /* gate g at the rows that read b (sgla_row_reads_b): b of token row r (b T + t) and head h at
     * gb[h gb_ld + r] (gate_b.cu), or NULL: the kernel scans g */
    const float *gb;
    int64_t gb_ld;
    /* gate g in the forward's row that loads it itself (sgla_row_gate_tma): 1 where the host made g's tensor
     * map (tmaps.g; H a multiple of 4, g 16-byte aligned, no split), which its producer then loads and
     * scans; gb is then NULL */
    int gtma;
    /* a persistent grid's items, (sequence, head) pairs (the instances with PT walk items blockIdx.x,
     * + gridDim.x, ...); 0 elsewhere */
    int64_t items;
#ifdef SGLA_TRACE
    /* a diagnostic build's timeline (chunk_trace in chunk_fwd.cuh; bench/trace_run.py): clock64 marks
     * of the chunked kernels whose BW is trace_bw, NULL in every other call */
    unsigned long long *trace;
    int trace_bw;
#endif
} sgla_kparams;

/* A diagnostic build's timeline buffer (-DSGLA_TRACE; bench/trace_run.py reads the same layout): clock64 at
 * mark ev of chunk c of role r in item it (a (sequence, head) pair below SGLA_TRACE_ITEMS), pass trace_bw:
 * 0, 1, 4 the chunked kernels' forward, dq and merged passes (chunk_trace in chunk_fwd.cuh), 8 the fp32
 * forward on wgmma (wg_trace in chunk_fwd_tf32.cu) */
constexpr int SGLA_TRACE_ITEMS = 8, SGLA_TRACE_CHUNKS = 512, SGLA_TRACE_EV = 16, SGLA_TRACE_F32 = 8;
static __device__ __forceinline__ void sgla_trace_mark(const sgla_kparams &p, unsigned it, int r, int c, int ev)
{
#ifdef SGLA_TRACE
    if (it < SGLA_TRACE_ITEMS && c < SGLA_TRACE_CHUNKS) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
        p.trace[((it * 4 + r) * SGLA_TRACE_CHUNKS + c) * SGLA_TRACE_EV + ev] = t;
    }
#else
    (void)p, (void)it, (void)r, (void)c, (void)ev;
#endif
}

/* the most sequences one block sorts in shared memory (8 bytes each) */
#define SGLA_ORDER_MAX_SEQS 4096

/* TMA descriptors of q, k, v, o (and kw, o2 for the merged reverse pass): each tensor seen as 4-D
 * (feature, head, token, batch), boxes of 64 features x 1 head x 64 tokens x 1 batch, 128-byte swizzle.
 * Passed as a __grid_constant__ kernel parameter (the TMA unit reads it from
 * parameter space). */
typedef struct sgla_tmaps {
    CUtensorMap q, k, v, o, w, o2;
    CUtensorMap g; /* gate g as (head, token, batch) fp32, boxes of 4 heads x 64 tokens (kparams.gtma) */
} sgla_tmaps;

#ifdef __CUDACC__
/* Tokens of chunk c (64 a chunk) of a sequence of len tokens: 64 but in its last chunk. */
static __device__ __forceinline__ int chunk_rows(int64_t len, int c)
{
    const int64_t tk0 = (int64_t)c * 64;
    return (int)(len - tk0 < 64 ? len - tk0 : 64);
}

/* The slot of chunk c of the block that starts at token t0 of batch row bidx, sequence n (t0 at a
 * multiple of 64 from the sequence's start): one-to-one over the chunks of all sequences and
 * below B T / 64 + N + 1 (sgla_bwd_tc_slots), where the backward keeps per-chunk values. */
static __device__ __forceinline__ int64_t sgla_chunk_slot(int64_t bidx, int64_t T, int64_t t0, int64_t n, int64_t c)
{
    return (bidx * T + t0) / 64 + n + c;
}

/* Sequence n's batch row and token range [t0, t1), clamped so that a bad
 * cu_seqlens can never address outside the tensors. */
static __device__ __forceinline__ void sgla_seq_range(const sgla_kparams *p, int64_t n, int64_t *b,
                                                      int64_t *t0, int64_t *t1)
{
    if (p->cu) {
        int64_t a = p->cu[p->cu_pairs ? 2 * n : n], e = p->cu[p->cu_pairs ? 2 * n + 1 : n + 1];
        a = a < 0 ? 0 : (a > p->T ? p->T : a);
        e = e < a ? a : (e > p->T ? p->T : e);
        *b = 0;
        *t0 = a;
        *t1 = e;
    } else {
        *b = n;
        *t0 = 0;
        *t1 = p->T;
    }
}
#endif

#endif
