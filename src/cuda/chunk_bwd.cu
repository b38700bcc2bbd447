/* The CUDA backward, first version: the chunked form of src/ref/ref_bwd.c
 * (reference B) in fp32, deterministic (no atomics: every sum has one order),
 * any input dtype, K, V <= 256; the fp32 inputs' backward, and what the
 * 16-bit tensor-core paths do not take.  Blocks of BT = 32 tokens
 * (the chunked form is exact for any block length).  Five launches:
 *
 *   1. (cu_seqlens only) chunk_base: the first block of every sequence;
 *   2. states:  per (sequence, head, 32 columns of V), the entering state S of
 *      every block, in order (each block's product on the tensor cores in
 *      3xTF32)                          -> workspace [blocks][H][K][V]
 *   3. dstates: the same in reverse, dS' (the gradient of each block's end
 *      state) from dht, and dh0          -> workspace [blocks][H][K][V]
 *   4. grads:   per (block, head), independent of each other: with S and dS'
 *      of that block (copied into shared memory first where both fit beside
 *      two blocks an SM: K x V up to 64 x 64 on an H100), dq, dk, dv and dg
 *      (sgla_cpu_backward's products: on the tensor cores in 3xTF32 where K
 *      and V are multiples of 8, else as register-tiled dot products on CUDA
 *      cores);
 *   5. (g_gamma) dg_gamma: dg summed per head in a fixed order.
 *
 * With SGLA_FLAG_ALLOW_TF32 (fp32 inputs) every tensor-core product is TF32 alone (X3 = false: the
 * states and grads kernels' compile-time switch, mma3's hi.hi; ~4e-4 against fp64, as the forward).
 *
 * Memory: two fp32 states per block of 32 tokens, 2 x blocks x H x K x V x 4
 * bytes, plus dg when only dg_gamma is asked for. */
#include <stdint.h>

#include "cuda_backend.cuh"
#include "ptx.cuh"
#include "tf32_frag.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

constexpr int BT = 32;         /* tokens per block */
constexpr int NTHREADS = 256;  /* every kernel */
constexpr int MAXK = 256;
constexpr int MG = MAXK / 32; /* a thread's groups of 32 state rows (or columns) at most */

/* an input value's float, and the zero of its dtype: rows are loaded raw and converted where they are stored
 * to shared memory (the states kernels hold them in registers meanwhile, so that no instruction needs a
 * load before the products that hide it) */
static __device__ __forceinline__ float f32(float x) { return x; }
static __device__ __forceinline__ float f32(__half x) { return __half2float(x); }
static __device__ __forceinline__ float f32(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class E> static __device__ __forceinline__ E raw_zero();
template <> __device__ __forceinline__ float raw_zero<float>() { return 0.f; }
template <> __device__ __forceinline__ __half raw_zero<__half>() { return __ushort_as_half(0); }
template <> __device__ __forceinline__ __nv_bfloat16 raw_zero<__nv_bfloat16>() { return __ushort_as_bfloat16(0); }
static __device__ __forceinline__ void st(float *p, int64_t i, float x) { p[i] = x; }
static __device__ __forceinline__ void st(__half *p, int64_t i, float x) { p[i] = __float2half_rn(x); }
static __device__ __forceinline__ void st(__nv_bfloat16 *p, int64_t i, float x) { p[i] = __float2bfloat16_rn(x); }

/* Sequence n: batch row, first token, length; and its first block in the workspace. */
static __device__ __forceinline__ void bwd_seq(const sgla_bparams &p, int64_t n, int64_t *b, int64_t *t0,
                                               int64_t *len, int64_t *base)
{
    if (p.cu) {
        int64_t a = p.cu[n], e = p.cu[n + 1];
        a = a < 0 ? 0 : (a > p.T ? p.T : a);
        e = e < a ? a : (e > p.T ? p.T : e);
        *b = 0, *t0 = a, *len = e - a, *base = p.base[n];
    } else {
        const int64_t nb = (p.T + BT - 1) / BT;
        *b = n, *t0 = 0, *len = p.T, *base = n * nb;
    }
}

/* The natural-log gate of token t (absolute in the batch row) of head h. */
static __device__ __forceinline__ float gate_of(const sgla_bparams &p, int64_t b, int64_t t, int64_t h)
{
    if (p.gmode == SGLA_GATE_G) return fmaxf(p.g[(b * p.T + t) * p.H + h], SGLA_GATE_FLOOR_F);
    if (p.gmode == SGLA_GATE_GAMMA) return fmaxf(p.g_gamma[h], SGLA_GATE_FLOOR_F);
    return 0.f;
}

/* bc[r] = cumulative log-gate of the block's first r + 1 tokens (r < len), by one warp.  In fp64: after a
 * gate at the floor (-128) an fp32 sum rounds to 2^-16, and the block's decays exp(bc[i] - bc[j])
 * between later tokens would carry that (1.5e-5 a reset) into every gradient. */
static __device__ __forceinline__ void block_scan(double x, double *bc, int lane)
{
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x += y;
    }
    bc[lane] = x;
}
static __device__ __forceinline__ void block_logcum(const sgla_bparams &p, int64_t b, int64_t t, int64_t h, int len,
                                                    double *bc, int lane)
{
    block_scan(lane < len ? (double)gate_of(p, b, t + lane, h) : 0.0, bc, lane);
}
/* the block's log decay from token j to token i, its digits kept (bc from block_logcum) */
static __device__ __forceinline__ float logdecay(const double *bc, int i, int j) { return (float)(bc[i] - bc[j]); }

/* ---- 1. the first block of every sequence (cu_seqlens) ---------------------------------- */

static __global__ void chunk_base_kernel(const int64_t *cu, int64_t N, int64_t T, int64_t *base)
{
    __shared__ int64_t part[NTHREADS];
    int64_t carry = 0;
    for (int64_t s0 = 0; s0 < N; s0 += NTHREADS) {
        const int64_t n = s0 + threadIdx.x;
        int64_t nb = 0;
        if (n < N) {
            int64_t a = cu[n], e = cu[n + 1];
            a = a < 0 ? 0 : (a > T ? T : a);
            e = e < a ? a : (e > T ? T : e);
            nb = (e - a + BT - 1) / BT;
        }
        part[threadIdx.x] = nb;
        __syncthreads();
        for (int off = 1; off < NTHREADS; off <<= 1) { /* inclusive scan, fixed order */
            const int64_t y = threadIdx.x >= off ? part[threadIdx.x - off] : 0;
            __syncthreads();
            part[threadIdx.x] += y;
            __syncthreads();
        }
        if (n < N) base[n] = carry + part[threadIdx.x] - nb;
        carry += part[NTHREADS - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0) base[N] = carry;
}

/* ---- 2, 3. the entering states and the end-state gradients, per 32 columns ------------ */

/* A block's product acc = A^T B (A: the block's BT x K k rows (forward) or rs-weighted q rows (reverse),
 * B: its BT x 32 v (dO) columns) on the tensor cores, mma.sync m16n8k8 in 3xTF32 (fp32's accuracy, as the
 * grads kernel's state products), each block's sum in a fresh accumulator, then S = carry S + acc in
 * fp32.  The K x 32 state is (K16 / 16) m16 tiles by 4 n8 tiles (K16 = K rounded up to 16, a_s's columns
 * past K zero); a warp holds NTW = min(MGT, 4) n tiles of MTW = MGT / NTW m tiles (warp w: m w / WPM +
 * (8 / WPM) i, i < MTW, n NTW (w % WPM) + jn, jn < NTW, WPM = 4 / NTW warps an m tile), in the C layout
 * (row g, g + 8, columns 2 t, 2 t + 1: g = lane / 4, t = lane % 4): each of its A fragments (split into
 * TF32 halves, 4 values) serves NTW tiles and each B fragment (2 values) MTW, so a k-step splits 4 MTW +
 * 2 NTW values a warp (12 at K = 128, where one A fragment and four tiles by n had split 18).  The
 * strides LA, LB are 8 mod 32: a fragment's 32 loads (rows t, columns g) fall on 32 banks.  Rows j >= L
 * of both operands are stored as zeros (never NaN times garbage).
 * A block's k (q) and v (dO) values go through registers (4 MGT + 4 a thread, raw: in the input's dtype,
 * converted and weighted by w (rs) when they are stored; a conversion at the load made 16-bit rows wait
 * for their loads before the products, docs/perf.md, session 50), and warp 0's gates (rg, a lane's
 * token) with them: the next block's load while this block's products run.  At K > 128 (MGT = 8) a
 * thread holds 222 registers, one block an SM (capped at 128 for two, it spilled in the loop). */
constexpr int LA = MAXK + 8, LB = 32 + 8;
template <class E, int MGT, bool X3, int HD = 0> /* HD: K = V = HD known to the compiler, as the gradient kernel's */
static __global__ void __launch_bounds__(NTHREADS, MGT > 4 ? 1 : 2) states_kernel(const sgla_bparams p, int reverse)
{
    __shared__ __align__(16) float a_s[BT][LA]; /* k rows (forward) or rs-weighted q rows (reverse) */
    __shared__ float b_s[BT][LB];  /* v columns (forward) or dout columns (reverse) */
    __shared__ double bc[32];
    __shared__ float wv[32];
    const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
    const int64_t nh = blockIdx.x, n = nh / p.H, h = nh - n * p.H;
    constexpr int NTW = MGT < 4 ? MGT : 4, MTW = MGT / NTW, WPM = 4 / NTW;
    static_assert(MTW * NTW == MGT && WPM * NTW == 4, "a warp's tiles: MTW m tiles by NTW n tiles");
    static_assert(HD % 16 == 0 && HD <= 32 * MGT, "a constant head: whole k16 steps, within the warp's tiles");
    const int K = HD ? HD : (int)p.K, V = HD ? HD : (int)p.V, K16 = (K + 15) & ~15;
    const int mw = w / WPM, c0 = (int)blockIdx.y * 32 + 8 * NTW * (w % WPM) + 2 * tq; /* + 8 jn (+ 1) */
    int64_t b, t0, len, base;
    bwd_seq(p, n, &b, &t0, &len, &base);
    const int64_t nb = (len + BT - 1) / BT;
    const E *A = (const E *)(reverse ? p.q : p.k);
    const E *Bm = (const E *)(reverse ? p.dout : p.v);
    const int64_t kv = (int64_t)K * V;
    const bool ev = (V & 1) == 0; /* the workspace's states by pairs of columns (kv even: 8-byte aligned) */
    /* the state's entry e of tile (i, jn): row 16 (mw + (8 / WPM) i) + g + 8 (e >> 1), column c0 + 8 jn +
     * (e & 1); its offset in a K x V state (< 2^16) */
    auto entry = [&](int i, int jn, int e, int *off) {
        const int r = 16 * (mw + (8 / WPM) * i) + g + 8 * (e >> 1), cc = c0 + 8 * jn + (e & 1);
        *off = r * V + cc;
        return r < K && cc < V;
    };
    float S[MTW][NTW][4];
    const float *init = reverse ? p.dht : p.h0; /* the start: h0 (forward) or dht (reverse) */
#pragma unroll
    for (int i = 0; i < MTW; i++)
#pragma unroll
        for (int jn = 0; jn < NTW; jn++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int off;
                const bool in = entry(i, jn, e, &off);
                S[i][jn][e] = init && in ? init[nh * kv + off] : 0.f;
            }
    if constexpr (HD == 0) /* a constant head (whole k16 steps) has no such column */
        for (int idx = tid; idx < BT * (K16 - K); idx += NTHREADS) { /* the columns past K: zero, never loaded */
            const int r = idx / (K16 - K);
            a_s[r][K + idx - r * (K16 - K)] = 0.f;
        }
    /* a thread's values of a block: rows 8 u + w (u < 4), columns lane + 32 m of a (m < MGT), column
     * lane of b (no division an element) */
    E ra[4][MGT], rb[4];
    float rg = 0.f;
    auto load = [&](int64_t blk) {
        const int64_t t = t0 + blk * BT;
        const int L = (int)(len - blk * BT < BT ? len - blk * BT : BT);
        if (w == 0) rg = lane < L ? gate_of(p, b, t + lane, h) : 0.f;
        const int64_t col2 = (int64_t)blockIdx.y * 32 + lane;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int r = 8 * u + w;
            const int64_t row = (b * p.T + t + r) * p.H + h;
#pragma unroll
            for (int m = 0; m < MGT; m++)
                ra[u][m] = r < L && lane + 32 * m < K ? A[row * K + lane + 32 * m] : raw_zero<E>();
            rb[u] = r < L && col2 < V ? Bm[row * V + col2] : raw_zero<E>();
        }
    };
    if (nb > 0) load(reverse ? nb - 1 : 0);
    for (int64_t i = 0; i < nb; i++) {
        const int64_t blk = reverse ? nb - 1 - i : i;
        const int L = (int)(len - blk * BT < BT ? len - blk * BT : BT);
        /* the block's state: S entering it (forward), dS' of its end (reverse) */
        float *out = (reverse ? p.ws_dstates : p.ws_states) + ((base + blk) * p.H + h) * kv;
#pragma unroll
        for (int m = 0; m < MTW; m++)
#pragma unroll
            for (int jn = 0; jn < NTW; jn++)
#pragma unroll
                for (int e = 0; e < 4; e += 2) {
                    int off;
                    const bool in = entry(m, jn, e, &off);
                    if (ev) { /* the pair in one 8-byte store (off even; cc < V even: cc + 1 < V) */
                        if (in) *(float2 *)(out + off) = make_float2(S[m][jn][e], S[m][jn][e + 1]);
                    } else {
                        if (in) out[off] = S[m][jn][e];
                        if (entry(m, jn, e + 1, &off)) out[off] = S[m][jn][e + 1];
                    }
                }
        __syncthreads(); /* the previous block's reads of a_s, b_s, bc, wv are done */
        if (w == 0) {
            block_scan((double)rg, bc, lane);
            __syncwarp();
            /* forward: w_r = exp(b_L - b_r); reverse: rs_r = scale exp(b_r) */
            if (lane < L) wv[lane] = reverse ? p.scale * expf((float)bc[lane]) : expf(logdecay(bc, L - 1, lane));
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int r = 8 * u + w;
            const float wr = r < L ? wv[r] : 0.f; /* zero past L */
#pragma unroll
            for (int m = 0; m < MGT; m++)
                if (lane + 32 * m < K) a_s[r][lane + 32 * m] = wr * f32(ra[u][m]);
            b_s[r][lane] = f32(rb[u]); /* zero past L and V */
        }
        __syncthreads();
        if (i + 1 < nb) load(reverse ? blk - 1 : blk + 1); /* in flight during the products */
        const float bl = (float)bc[L - 1], ce = bl * SGLA_LOG2E, cm1 = expm1f(bl), ca = expf(bl); /* the carry */
        float acc[MTW][NTW][4];
#pragma unroll
        for (int m = 0; m < MTW; m++)
#pragma unroll
            for (int jn = 0; jn < NTW; jn++) acc[m][jn][0] = acc[m][jn][1] = acc[m][jn][2] = acc[m][jn][3] = 0.f;
        const int nc = 8 * NTW * (w % WPM) + g; /* b_s column of the warp's n tile 0 */
#pragma unroll
        for (int j0 = 0; j0 < BT; j0 += 8) {
            FragB fb[NTW];
#pragma unroll
            for (int jn = 0; jn < NTW; jn++) frag_b(fb[jn], b_s[j0 + tq][nc + 8 * jn], b_s[j0 + tq + 4][nc + 8 * jn]);
#pragma unroll
            for (int m = 0; m < MTW; m++) {
                const int r0 = 16 * (mw + (8 / WPM) * m) + g;
                if (r0 < K16) { /* the warp's m tile is in the state (the same in every lane) */
                    FragA fa;
                    frag_a(fa, a_s[j0 + tq][r0], a_s[j0 + tq][r0 + 8], a_s[j0 + tq + 4][r0], a_s[j0 + tq + 4][r0 + 8]);
#pragma unroll
                    for (int jn = 0; jn < NTW; jn++) mma3<X3>(acc[m][jn], fa, fb[jn]);
                }
            }
        }
#pragma unroll
        for (int m = 0; m < MTW; m++)
#pragma unroll
            for (int jn = 0; jn < NTW; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    S[m][jn][e] = sgla_carry_mul(S[m][jn][e], ce, cm1, ca) + acc[m][jn][e];
    }
    if (reverse && p.dh0) {
#pragma unroll
        for (int m = 0; m < MTW; m++)
#pragma unroll
            for (int jn = 0; jn < NTW; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    int off;
                    if (entry(m, jn, e, &off)) p.dh0[nh * kv + off] = S[m][jn][e];
                }
    }
}

/* ---- 4. the gradients of one block of tokens ------------------------------------------- */

/* A state-sized product of the block's rows: X[i][c] = w[i] sum_{j < nj} R[i][j] M(c, j), i < BT, c < nc
 * (<= MAXK), R in shared memory (ld lr, odd: a column's 32 rows on 32 banks), M a state in global memory:
 * M(c, j) = M[c ld + j] (TRANS) or M[j ld + c].  M goes through the tile Mt (BT values of j at a time,
 * row stride ncp + 4: float4-aligned, a transposed fill's column on 8 banks), which shares X's space
 * (x_floats), X written after the last tile is read; thread (warp w, lane i) sums row i in the columns
 * 4 w + 32 m + (0..3): one shared load of R and a broadcast float4 of Mt a step for every four products
 * (a product each read R and M before).  The sum over j runs in order from 0, as before the tiles (the
 * same bits).  Rows i >= L are left as garbage (w there is not set): no one reads them.  Begins with a
 * barrier (X's last readers done) and ends with one (X complete). */
static __host__ __device__ __forceinline__ int x_floats(int K, int V)
{
    const int mx = K > V ? K : V, lt = 32 * ((mx + 31) / 32) + 4;
    return BT * (mx + 1 > lt ? mx + 1 : lt);
}
template <bool TRANS>
static __device__ __forceinline__ void state_prod(const float *R, int lr, const float *M, int64_t ld, const float *w,
                                                  float *X, int lx, int nc, int nj, int tid)
{
    const int lane = tid & 31, wp = tid >> 5, mc = (nc + 31) / 32, ncp = 32 * mc, LT = ncp + 4;
    float *Mt = X;
    float acc[MG][4];
#pragma unroll
    for (int m = 0; m < MG; m++) acc[m][0] = acc[m][1] = acc[m][2] = acc[m][3] = 0.f;
    for (int j0 = 0; j0 < nj; j0 += BT) {
        const int jt = nj - j0 < BT ? nj - j0 : BT;
        __syncthreads(); /* the last tile's reads are done */
        if (TRANS) /* a warp reads 32 j of one c (128 bytes) */
            for (int idx = tid; idx < BT * ncp; idx += NTHREADS) {
                const int c = idx / BT, jj = idx - c * BT;
                Mt[jj * LT + c] = jj < jt && c < nc ? M[(int64_t)c * ld + j0 + jj] : 0.f;
            }
        else
            for (int idx = tid; idx < BT * ncp; idx += NTHREADS) {
                const int jj = idx / ncp, c = idx - jj * ncp;
                Mt[jj * LT + c] = jj < jt && c < nc ? M[(int64_t)(j0 + jj) * ld + c] : 0.f;
            }
        __syncthreads();
        for (int jj = 0; jj < jt; jj++) {
            const float r = R[lane * lr + j0 + jj];
#pragma unroll
            for (int m = 0; m < MG; m++)
                if (m < mc) {
                    const float4 v = *(const float4 *)&Mt[jj * LT + 4 * wp + 32 * m];
                    acc[m][0] = fmaf(r, v.x, acc[m][0]), acc[m][1] = fmaf(r, v.y, acc[m][1]);
                    acc[m][2] = fmaf(r, v.z, acc[m][2]), acc[m][3] = fmaf(r, v.w, acc[m][3]);
                }
        }
    }
    const float wi = w[lane];
    __syncthreads(); /* Mt read: X takes its space */
#pragma unroll
    for (int m = 0; m < MG; m++)
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int c = 4 * wp + 32 * m + q;
            if (m < mc && c < nc) X[lane * lx + c] = wi * acc[m][q];
        }
    __syncthreads();
}

/* state_prod on the tensor cores, for nc and nj multiples of 8: mma.sync m16n8k8 in 3xTF32 (every
 * operand split hi + lo, lo.hi + hi.lo + hi.hi summed in fp32: fp32's accuracy, bench/tf32x3_bwd_study.py).
 * Warp wp makes all 32 rows (two m16 tiles) of the n8 tiles wp, wp + 8, ... of X's columns (NTP of them a
 * pass: two passes at nc > 128, so that two blocks fit an SM's registers), each value of M read once a
 * block, straight from global memory into the B fragments.  j runs in blocks of 32; in k-step s of a
 * block the instruction's k index t stands for j0 + 8 t + s and t + 4 for j0 + 8 t + 4 + s (any order of
 * j is a valid product): a lane's B values of the block are 8 consecutive j (two float4 loads where
 * M(c, j) = M[c ld + j]), and its A loads of one row, at R's odd stride, fall on 32 banks.  The next
 * block's B values load while this one's multiply.  Each block of 32 j sums in a fresh accumulator,
 * added to the total in fp32 (round to nearest): the tensor cores' own accumulation keeps fewer
 * digits, and over K = 256 its error reached 1.35e-6 (session 44).  Rows i >= L come out as garbage,
 * as in state_prod (an mma row is its A row's alone).  X written between two barriers. */
constexpr int NTP = 2;
/* a pass's accumulators (two m16 tiles by NTP n8 tiles) set to zero */
static __device__ __forceinline__ void zero_tiles(float (&a)[2][NTP][4])
{
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int n = 0; n < NTP; n++) a[mt][n][0] = a[mt][n][1] = a[mt][n][2] = a[mt][n][3] = 0.f;
}
template <bool TRANS>
static __device__ __forceinline__ void tc_load_b(float (&b)[NTP][8], const float *M, int64_t ld, int j0, int nj,
                                                 int ntl, int nt0, int g, int t)
{
    const int jb = j0 + 8 * t;
#pragma unroll
    for (int n = 0; n < NTP; n++) {
        const int nt = nt0 + 8 * n, c = 8 * nt + g;
        if (nt < ntl && jb < nj) { /* nj % 8 == 0: a lane's 8 j are all in or all out */
            if (TRANS) {
                const float4 x = *(const float4 *)&M[(int64_t)c * ld + jb];
                const float4 y = *(const float4 *)&M[(int64_t)c * ld + jb + 4];
                b[n][0] = x.x, b[n][1] = x.y, b[n][2] = x.z, b[n][3] = x.w;
                b[n][4] = y.x, b[n][5] = y.y, b[n][6] = y.z, b[n][7] = y.w;
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) b[n][e] = M[(int64_t)(jb + e) * ld + c];
            }
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) b[n][e] = 0.f;
        }
    }
}
template <bool TRANS, bool X3>
static __device__ __forceinline__ void state_prod_tc(const float *R, int lr, const float *M, int64_t ld, const float *w,
                                                     float *X, int lx, int nc, int nj, int tid)
{
    const int lane = tid & 31, wp = tid >> 5, g = lane >> 2, t = lane & 3, ntl = nc / 8;
    for (int pass = 0; 8 * NTP * pass < ntl; pass++) {
        const int nt0 = wp + 8 * NTP * pass;
        float acc[2][NTP][4];
        zero_tiles(acc);
        float b[NTP][8];
        tc_load_b<TRANS>(b, M, ld, 0, nj, ntl, nt0, g, t);
        for (int j0 = 0; j0 < nj; j0 += 32) {
            float bn[NTP][8], ab[2][NTP][4];
            tc_load_b<TRANS>(bn, M, ld, j0 + 32, nj, ntl, nt0, g, t); /* zeros past nj */
            zero_tiles(ab);
            const int jb = j0 + 8 * t;
            const bool in = jb < nj;
            const float *r0 = R + g * lr + jb;
#pragma unroll
            for (int s = 0; s < 4; s++) {
                FragA fa[2];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    const float *rr = r0 + 16 * mt * lr + s;
                    frag_a(fa[mt], in ? rr[0] : 0.f, in ? rr[8 * lr] : 0.f, in ? rr[4] : 0.f, in ? rr[8 * lr + 4] : 0.f);
                }
#pragma unroll
                for (int n = 0; n < NTP; n++)
                    if (nt0 + 8 * n < ntl) {
                        FragB fb;
                        frag_b(fb, b[n][s], b[n][4 + s]);
                        mma3<X3>(ab[0][n], fa[0], fb);
                        mma3<X3>(ab[1][n], fa[1], fb);
                    }
            }
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int n = 0; n < NTP; n++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[mt][n][e] += ab[mt][n][e];
#pragma unroll
            for (int n = 0; n < NTP; n++)
#pragma unroll
                for (int e = 0; e < 8; e++) b[n][e] = bn[n][e];
        }
        if (pass == 0) __syncthreads(); /* X's last readers are done (pass is the same in every thread) */
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int n = 0; n < NTP; n++) {
                const int nt = nt0 + 8 * n;
                if (nt < ntl) {
                    const int r = 16 * mt + g, c = 8 * nt + 2 * t;
                    const float w0 = w[r], w1 = w[r + 8];
                    X[r * lx + c] = w0 * acc[mt][n][0], X[r * lx + c + 1] = w0 * acc[mt][n][1];
                    X[(r + 8) * lx + c] = w1 * acc[mt][n][2], X[(r + 8) * lx + c + 1] = w1 * acc[mt][n][3];
                }
            }
    }
    __syncthreads();
}

/* The state part of dQ or dK (state_prod with M(c, j) = M[c ld + j], a K x V state), then dot[i] =
 * sum_c P[i][c] X[i][c], the row's term of the gate gradient: warp w the rows w + 8 y, a lane every
 * 32nd column, summed by a butterfly (the same order in every run). */
template <bool X3>
static __device__ __forceinline__ void state_part(const float *R, int lr, const float *M, int64_t ld, const float *w,
                                                  const float *P, int lp, float *X, int lx, float *dot, int L, int K,
                                                  int V, bool tc, int tid, int lane)
{
    if (tc) state_prod_tc<true, X3>(R, lr, M, ld, w, X, lx, K, V, tid);
    else state_prod<true>(R, lr, M, ld, w, X, lx, K, V, tid);
#pragma unroll
    for (int y = 0; y < 4; y++) {
        const int r = (tid >> 5) + 8 * y;
        float s = 0.f;
        if (r < L)
            for (int c = lane; c < K; c += 32) s = fmaf(P[r * lp + c], X[r * lx + c], s);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if (lane == 0) dot[r] = s;
    }
}

/* A triangular product of the block's rows, added to the state part X and stored: with W the block's
 * weights (ld BT + 1, zero above the diagonal) and F its rows in shared memory (ld lf),
 *   LOWER:  Y[r][c] = X[r][c] + sum_{s <= r} W[r][s] F[s][c]   (dQ: dA K)
 *   else:   Y[r][c] = X[r][c] + sum_{s >= r} W[s][r] F[s][c]   (dK: dA^T Q, dV: A^T dO)
 * for r < L, c < nc (<= MAXK), into out[(row0 + r H) nc + c].  Warp w makes the rows w + 8 y (y < 4),
 * lane the columns lane + 32 m: a step reads the warp's four weights (broadcasts) and the lane's
 * columns of one row of F (one load each) for 4 nc / 32 products (two loads a product before).  The
 * sums run in the same order as before (s ascending); the steps past a row's diagonal add W's zeros. */
template <bool LOWER, class E>
static __device__ __forceinline__ void tri_prod(const float *W, const float *F, int lf, const float *X, int lx, int nc,
                                                int L, E *out, int64_t row0, int64_t H, int tid)
{
    const int lane = tid & 31, w = tid >> 5, mc = (nc + 31) / 32;
    float acc[4][MG];
#pragma unroll
    for (int y = 0; y < 4; y++)
#pragma unroll
        for (int m = 0; m < MG; m++) {
            const int r = w + 8 * y, c = lane + 32 * m;
            acc[y][m] = m < mc && r < L && c < nc ? X[r * lx + c] : 0.f;
        }
    /* LOWER: s up to the warp's last row (w + 24) or L - 1; else s from its first row (w) */
    const int s0 = LOWER ? 0 : w, s1 = LOWER ? (w + 25 < L ? w + 25 : L) : L;
    for (int s = s0; s < s1; s++) {
        float wr[4];
#pragma unroll
        for (int y = 0; y < 4; y++) wr[y] = LOWER ? W[(w + 8 * y) * (BT + 1) + s] : W[s * (BT + 1) + w + 8 * y];
#pragma unroll
        for (int m = 0; m < MG; m++)
            if (m < mc) {
                const int c = lane + 32 * m;
                const float f = c < nc ? F[s * lf + c] : 0.f;
#pragma unroll
                for (int y = 0; y < 4; y++) acc[y][m] = fmaf(wr[y], f, acc[y][m]);
            }
    }
#pragma unroll
    for (int y = 0; y < 4; y++)
#pragma unroll
        for (int m = 0; m < MG; m++) {
            const int r = w + 8 * y, c = lane + 32 * m;
            if (m < mc && r < L && c < nc) st(out, (row0 + (int64_t)r * H) * nc + c, acc[y][m]);
        }
}

/* tri_prod on the tensor cores (nc a multiple of 8; W zero past L and above the diagonal, F's rows past
 * L zero, so that every row sums all 32 s): mma.sync m16n8k8 in 3xTF32, warp wp all 32 rows of the n8
 * tiles wp, wp + 8, ... (NTP a pass), the k index t of step kk standing for s = 8 t + kk (t + 4 for
 * 8 t + 4 + kk: W's and F's loads on 32 banks at their odd strides); the sum in a fresh accumulator,
 * added to X in fp32. */
template <bool LOWER, bool X3, class E>
static __device__ __forceinline__ void tri_prod_tc(const float *W, const float *F, int lf, const float *X, int lx,
                                                   int nc, int L, E *out, int64_t row0, int64_t H, int tid)
{
    const int lane = tid & 31, wp = tid >> 5, g = lane >> 2, t = lane & 3, ntl = nc / 8;
    for (int pass = 0; 8 * NTP * pass < ntl; pass++) {
        const int nt0 = wp + 8 * NTP * pass;
        float acc[2][NTP][4];
        zero_tiles(acc);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const int s0 = 8 * t + kk, s1 = s0 + 4;
            FragA fa[2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                const int r0 = 16 * mt + g, r1 = r0 + 8;
                if (LOWER)
                    frag_a(fa[mt], W[r0 * (BT + 1) + s0], W[r1 * (BT + 1) + s0], W[r0 * (BT + 1) + s1],
                           W[r1 * (BT + 1) + s1]);
                else
                    frag_a(fa[mt], W[s0 * (BT + 1) + r0], W[s0 * (BT + 1) + r1], W[s1 * (BT + 1) + r0],
                           W[s1 * (BT + 1) + r1]);
            }
#pragma unroll
            for (int n = 0; n < NTP; n++) {
                const int nt = nt0 + 8 * n;
                if (nt < ntl) {
                    FragB fb;
                    frag_b(fb, F[s0 * lf + 8 * nt + g], F[s1 * lf + 8 * nt + g]);
                    mma3<X3>(acc[0][n], fa[0], fb);
                    mma3<X3>(acc[1][n], fa[1], fb);
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int n = 0; n < NTP; n++) {
                const int nt = nt0 + 8 * n;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int r = 16 * mt + g + 8 * (e >> 1), c = 8 * nt + 2 * t + (e & 1);
                    if (nt < ntl && r < L) st(out, (row0 + (int64_t)r * H) * nc + c, X[r * lx + c] + acc[mt][n][e]);
                }
            }
    }
}

/* The block's scores of one warp's m16 x n8 tile (rows 16 mt + g (+ 8), columns 8 nt + 2 t (+ 1), the C
 * layout): c[e] = sum_{c < n} X[i][c] Y[j][c] (n a multiple of 8, rows of ld lx, odd) on mma.sync in
 * 3xTF32, the k index permuted as in state_prod_tc (loads on 32 banks), each 32 c in a fresh
 * accumulator added in fp32. */
template <bool X3>
static __device__ __forceinline__ void score_tile_tc(const float *X, const float *Y, int ld, int n, int mt, int nt,
                                                     int g, int t, float (&c)[4])
{
    c[0] = c[1] = c[2] = c[3] = 0.f;
    for (int c0 = 0; c0 < n; c0 += 32) {
        const int cb = c0 + 8 * t;
        const bool in = cb < n; /* n % 8 == 0: a lane's 8 values all in or all out */
        const float *x = X + (16 * mt + g) * ld + cb, *y = Y + (8 * nt + g) * ld + cb;
        float ab[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int s = 0; s < 4; s++) {
            FragA fa;
            FragB fb;
            frag_a(fa, in ? x[s] : 0.f, in ? x[8 * ld + s] : 0.f, in ? x[4 + s] : 0.f, in ? x[8 * ld + 4 + s] : 0.f);
            frag_b(fb, in ? y[s] : 0.f, in ? y[4 + s] : 0.f);
            mma3<X3>(ab, fa, fb);
        }
#pragma unroll
        for (int e = 0; e < 4; e++) c[e] += ab[e];
    }
}

/* block sum of x over NTHREADS threads in a fixed order (every thread gets it): a butterfly in each warp,
 * then the warps' sums in order; two barriers (a tree over shared memory had one a level) */
static __device__ __forceinline__ float block_sum(float x, float *red)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
    __syncthreads();
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < NTHREADS / 32; w++) s += red[w];
    __syncthreads();
    return s;
}

/* SS: the block's S and dS' staged in shared memory (rows of ss_ld(V) floats) by cp.async at its start,
 * beside its rows, where they fit without costing an SM its second block (small K x V: sgla_bwd_grads_staged):
 * the products' B fragments and dg's <dS', S> then read shared memory, and the one round trip to global
 * memory of the states is taken with the rows' instead of one in each product's first block and loop */
static __host__ __device__ __forceinline__ int ss_ld(int V) { return 4 * ((V + 3) / 4) + 4; }
/* a thread's float4s (row c, float4 j) of a K x V state, V % 4 == 0, the block's threads side by side:
 * stepped without a division (NTHREADS = dc rows + dj float4s) */
struct F4Walk {
    int v4, dc, dj, c, j;
    __device__ __forceinline__ F4Walk(int V, int tid)
        : v4(V / 4), dc(NTHREADS / v4), dj(NTHREADS - dc * v4), c(tid / v4), j(tid - c * v4) {}
    __device__ __forceinline__ void next()
    {
        c += dc, j += dj;
        if (j >= v4) j -= v4, c++;
    }
};
/* HD: K = V = HD known to the compiler (0: the head size at run time), for the common heads of every dtype:
 * the kernel is bound by issue, and a constant head folds the loops' bounds and tile counts */
template <class E, bool X3, bool SS, int HD>
static __global__ void __launch_bounds__(NTHREADS, 2) grads_kernel(const sgla_bparams p)
{
    extern __shared__ __align__(16) float sm[];
    const int K = HD ? HD : (int)p.K, V = HD ? HD : (int)p.V, lk = K + 1, lv = V + 1, lx = (K > V ? K : V) + 1;
    float *X = sm; /* and state_prod's tile: 16-byte aligned */
    float *Qs = X + x_floats(K, V), *Ks = Qs + BT * lk, *Vs = Ks + BT * lk, *dOs = Vs + BT * lv;
    float *A = dOs + BT * lv, *dP = A + BT * (BT + 1), *dA = dP + BT * (BT + 1);
    double *bc = (double *)(dA + BT * (BT + 1)); /* 8-byte aligned: every term above is a multiple of BT = 32 floats */
    float *rs = (float *)(bc + 32), *wv = rs + 32, *e = wv + 32, *u = e + 32, *red = u + 32;
    /* (SS) 16-byte aligned: so is every term above; a row's float4 at its 8 lanes' stride (4 mod 8) on 32 banks */
    const int lsv = ss_ld(V);
    float *Ss = red + NTHREADS, *dSs = Ss + K * lsv;
    const int tid = threadIdx.x, lane = tid & 31;
    const int64_t h = blockIdx.y;
    /* which sequence and block: the last sequence whose first block is <= blockIdx.x */
    const int64_t gblk = blockIdx.x;
    int64_t n;
    if (p.cu) {
        if (gblk >= p.base[p.N]) return;
        int64_t lo = 0, hi = p.N - 1;
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            if (p.base[mid] <= gblk) lo = mid;
            else hi = mid - 1;
        }
        n = lo;
        while (n + 1 < p.N && p.base[n + 1] <= gblk) n++; /* skip empty sequences */
    } else {
        n = gblk / ((p.T + BT - 1) / BT);
    }
    int64_t b, t0, len, base;
    bwd_seq(p, n, &b, &t0, &len, &base);
    const int64_t blk = gblk - base;
    if (blk < 0 || blk * BT >= len) return;
    const int64_t t = t0 + blk * BT;
    const int L = (int)(len - blk * BT < BT ? len - blk * BT : BT);
    const int64_t kv = (int64_t)K * V;
    const float *S = p.ws_states + (gblk * p.H + h) * kv, *dS = p.ws_dstates + (gblk * p.H + h) * kv;
    const E *q = (const E *)p.q, *k = (const E *)p.k, *v = (const E *)p.v, *dout = (const E *)p.dout;
    /* warp w the rows w + 8 i, a lane every 32nd column (no division by K or V an element); rows past L
     * zero (the tensor-core products sum all 32).  fp32 by cp.async, every copy in flight at once (a
     * load and its shared store had waited a round trip each: 16 % of the kernel's stall samples,
     * docs/perf.md session 45 call 8); 16-bit inputs converted on the way, at a constant head the four
     * rows' raw values of two tensors loaded before the first is converted (one round trip a pair of
     * tensors, not one a row: -1.4 to -2.9 %, session 50; at a run-time head two rows at a time took
     * more spills and ran 6 % slower) */
    if constexpr (sizeof(E) == 2 && HD != 0) {
        constexpr int NC = HD / 32;
        static_assert(NTHREADS / 32 == BT / 4, "a warp's rows w + 8 i, i < 4, cover the block's");
#pragma unroll
        for (int pass = 0; pass < 2; pass++) {
            const E *x0 = pass ? v : q, *x1 = pass ? dout : k;
            float *s0 = pass ? Vs : Qs, *s1 = pass ? dOs : Ks; /* lk = lv: K = V = HD */
            E r0[BT / 8][NC], r1[BT / 8][NC];
#pragma unroll
            for (int i = 0; i < BT / 8; i++) {
                const int r = (tid >> 5) + 8 * i;
                const int64_t g = ((b * p.T + t + r) * p.H + h) * HD;
#pragma unroll
                for (int m = 0; m < NC; m++) {
                    r0[i][m] = r < L ? x0[g + lane + 32 * m] : raw_zero<E>();
                    r1[i][m] = r < L ? x1[g + lane + 32 * m] : raw_zero<E>();
                }
            }
#pragma unroll
            for (int i = 0; i < BT / 8; i++) {
                const int r = (tid >> 5) + 8 * i;
#pragma unroll
                for (int m = 0; m < NC; m++) {
                    s0[r * lk + lane + 32 * m] = f32(r0[i][m]);
                    s1[r * lk + lane + 32 * m] = f32(r1[i][m]);
                }
            }
        }
    } else
    for (int r = tid >> 5; r < BT; r += NTHREADS / 32) {
        const bool in = r < L;
        const int64_t gk = ((b * p.T + t + r) * p.H + h) * K, gv = ((b * p.T + t + r) * p.H + h) * V;
        if constexpr (sizeof(E) == 4) {
            if (in) {
                for (int c = lane; c < K; c += 32) {
                    sgla_cp_async4(sgla_smem_u32(&Qs[r * lk + c]), q + gk + c);
                    sgla_cp_async4(sgla_smem_u32(&Ks[r * lk + c]), k + gk + c);
                }
                for (int c = lane; c < V; c += 32) {
                    sgla_cp_async4(sgla_smem_u32(&Vs[r * lv + c]), v + gv + c);
                    sgla_cp_async4(sgla_smem_u32(&dOs[r * lv + c]), dout + gv + c);
                }
                continue;
            }
        }
        for (int c = lane; c < K; c += 32) {
            Qs[r * lk + c] = in ? f32(q[gk + c]) : 0.f;
            Ks[r * lk + c] = in ? f32(k[gk + c]) : 0.f;
        }
        for (int c = lane; c < V; c += 32) {
            Vs[r * lv + c] = in ? f32(v[gv + c]) : 0.f;
            dOs[r * lv + c] = in ? f32(dout[gv + c]) : 0.f;
        }
    }
    if constexpr (sizeof(E) == 4) sgla_cp_async_commit();
    if constexpr (SS) { /* a group of their own: the scores below wait for the rows alone */
        if (V % 4 == 0) {
            const uint32_t s0 = sgla_smem_u32(Ss), ds = (uint32_t)((dSs - Ss) * sizeof(float));
            for (F4Walk f(V, tid); f.c < K; f.next()) {
                const int so = f.c * lsv + 4 * f.j, go = f.c * V + 4 * f.j;
                sgla_cp_async16(s0 + 4 * so, S + go, 16);
                sgla_cp_async16(s0 + ds + 4 * so, dS + go, 16);
            }
        } else
            for (int i = tid; i < K * V; i += NTHREADS) {
                const int c = i / V, j = i - c * V;
                sgla_cp_async4(sgla_smem_u32(&Ss[c * lsv + j]), S + i);
                sgla_cp_async4(sgla_smem_u32(&dSs[c * lsv + j]), dS + i);
            }
        sgla_cp_async_commit();
    }
    if (tid < 32) { /* (warp 0's gate loads in flight beside the copies) */
        block_logcum(p, b, t, h, L, bc, lane);
        __syncwarp();
        if (lane < L) {
            rs[lane] = p.scale * expf((float)bc[lane]);
            wv[lane] = expf(logdecay(bc, L - 1, lane));
        }
    }
    if constexpr (sizeof(E) == 4) { /* this thread's copies of the rows landed; the barrier publishes */
        if constexpr (SS) sgla_cp_async_wait1();
        else sgla_cp_async_wait0();
    }
    __syncthreads();
    const bool tc = K % 8 == 0 && V % 8 == 0; /* the products on the tensor cores (3xTF32) */
    /* A = scale Gamma ⊙ QK^T, dP = dO V^T, dA = scale Gamma ⊙ dP (j <= i < L; 0 elsewhere, all 32 x 32
     * written).  tc: warp w the m16 x n8 tile (w / 4, w % 4), the two above the diagonal zero.  Else each
     * thread a 2 x 2 tile (rows 2 (tid / 16) + 0, 1, keys 2 (tid % 16) + 0, 1): four loads for four
     * products; each entry's sum over c in order */
    if (tc) {
        const int w = tid >> 5, mt = w >> 2, nt = w & 3, g = lane >> 2, tq = lane & 3;
        float a[4], d[4];
        if (8 * nt <= 16 * mt + 15) {
            score_tile_tc<X3>(Qs, Ks, lk, K, mt, nt, g, tq, a);
            score_tile_tc<X3>(dOs, Vs, lv, V, mt, nt, g, tq, d);
        } else {
            a[0] = a[1] = a[2] = a[3] = d[0] = d[1] = d[2] = d[3] = 0.f;
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = 16 * mt + g + 8 * (e >> 1), j = 8 * nt + 2 * tq + (e & 1);
            float av = 0.f, dv_ = 0.f, dav = 0.f;
            if (j <= i && i < L) {
                const float gm = p.scale * expf(logdecay(bc, i, j));
                av = a[e] * gm, dv_ = d[e], dav = gm * d[e];
            }
            A[i * (BT + 1) + j] = av;
            dP[i * (BT + 1) + j] = dv_;
            dA[i * (BT + 1) + j] = dav;
        }
    } else {
        const int i0 = 2 * (tid >> 4), j0 = 2 * (tid & 15);
        float a[2][2] = {{0.f, 0.f}, {0.f, 0.f}}, d[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
        if (j0 <= i0 + 1 && i0 < L) { /* a tile with an entry on or below the diagonal */
            const int i1 = i0 + 1 < L ? i0 + 1 : i0, j1 = j0 + 1 < L ? j0 + 1 : j0; /* rows past L: never stored */
            for (int c = 0; c < K; c++) {
                const float q0 = Qs[i0 * lk + c], q1 = Qs[i1 * lk + c], k0 = Ks[j0 * lk + c], k1 = Ks[j1 * lk + c];
                a[0][0] = fmaf(q0, k0, a[0][0]), a[0][1] = fmaf(q0, k1, a[0][1]);
                a[1][0] = fmaf(q1, k0, a[1][0]), a[1][1] = fmaf(q1, k1, a[1][1]);
            }
            for (int c = 0; c < V; c++) {
                const float o0 = dOs[i0 * lv + c], o1 = dOs[i1 * lv + c], v0 = Vs[j0 * lv + c], v1 = Vs[j1 * lv + c];
                d[0][0] = fmaf(o0, v0, d[0][0]), d[0][1] = fmaf(o0, v1, d[0][1]);
                d[1][0] = fmaf(o1, v0, d[1][0]), d[1][1] = fmaf(o1, v1, d[1][1]);
            }
        }
#pragma unroll
        for (int x = 0; x < 2; x++)
#pragma unroll
            for (int y = 0; y < 2; y++) {
                const int i = i0 + x, j = j0 + y;
                float av = 0.f, dv_ = 0.f, dav = 0.f;
                if (j <= i && i < L) {
                    const float gm = p.scale * expf(logdecay(bc, i, j));
                    av = a[x][y] * gm, dv_ = d[x][y], dav = gm * d[x][y];
                }
                A[i * (BT + 1) + j] = av;
                dP[i * (BT + 1) + j] = dv_;
                dA[i * (BT + 1) + j] = dav;
            }
    }
    if constexpr (SS) sgla_cp_async_wait0(); /* the states */
    __syncthreads();
    E *dq = (E *)p.dq, *dk = (E *)p.dk, *dv = (E *)p.dv;
    const float *Sm = SS ? Ss : S, *dSm = SS ? dSs : dS; /* the states where the products read them */
    const int64_t lm = SS ? lsv : V;
    /* dQs = rs ⊙ (dO S^T) into X, e = q . dQs; dQ = dQs + dA K */
    state_part<X3>(dOs, lv, Sm, lm, rs, Qs, lk, X, lx, e, L, K, V, tc, tid, lane);
    const int64_t row0 = (b * p.T + t) * p.H + h;
    if (tc) tri_prod_tc<true, X3>(dA, Ks, lk, X, lx, K, L, dq, row0, p.H, tid);
    else tri_prod<true>(dA, Ks, lk, X, lx, K, L, dq, row0, p.H, tid);
    __syncthreads();
    /* dKs = w ⊙ (V dS^T) into X, u = k . dKs; dK = dKs + dA^T Q */
    state_part<X3>(Vs, lv, dSm, lm, wv, Ks, lk, X, lx, u, L, K, V, tc, tid, lane);
    if (tc) tri_prod_tc<false, X3>(dA, Qs, lk, X, lx, K, L, dk, row0, p.H, tid);
    else tri_prod<false>(dA, Qs, lk, X, lx, K, L, dk, row0, p.H, tid);
    __syncthreads();
    /* dV = w ⊙ (K dS) + A^T dO (the dK loop above read X: state_prod's first barrier waits for it) */
    if (tc) state_prod_tc<false, X3>(Ks, lk, dSm, lm, wv, X, lx, V, K, tid);
    else state_prod<false>(Ks, lk, dSm, lm, wv, X, lx, V, K, tid);
    if (tc) tri_prod_tc<false, X3>(A, dOs, lv, X, lx, V, L, dv, row0, p.H, tid);
    else tri_prod<false>(A, dOs, lv, X, lx, V, L, dv, row0, p.H, tid);
    /* the gate: exp(b_L) <dS, S> + sum_{j<r} u_j + sum_{i>=r} e_i + sum_{i>=r, j<r} A_ij dP_ij, by scans
     * over lanes: warp w's rows i = w + 8 y give, through row i's exclusive prefix P_i(r) = sum_{j<r}
     * A_ij dP_ij (lane j holds A_ij dP_ij; zero for j > i and past L), lane r its part sum_{i>=r} P_i(r);
     * warp 0 adds the 8 warps' parts in order and the prefix of u and the suffix of e (zero past L).
     * One lane had summed r (L - r) terms alone. */
    if (p.gmode && p.dg_out) {
        float part = 0.f;
        if constexpr (SS) {
            if (V % 4 == 0) { /* by float4, stepped as the copy */
                for (F4Walk f(V, tid); f.c < K; f.next()) {
                    const int o = f.c * lsv + 4 * f.j;
                    const float4 x = *(const float4 *)&dSs[o], y = *(const float4 *)&Ss[o];
                    part = fmaf(x.x, y.x, part), part = fmaf(x.y, y.y, part);
                    part = fmaf(x.z, y.z, part), part = fmaf(x.w, y.w, part);
                }
            } else {
                for (int c = tid >> 5; c < K; c += NTHREADS / 32)
                    for (int j = lane; j < V; j += 32) part = fmaf(dSs[c * lsv + j], Ss[c * lsv + j], part);
            }
        } else {
            for (int64_t i = tid; i < kv; i += NTHREADS) part = fmaf(dS[i], S[i], part);
        }
        const float t1 = expf((float)bc[L - 1]) * block_sum(part, red); /* ends with a barrier: red is free */
        const int w = tid >> 5;
        float pc = 0.f;
#pragma unroll 1 /* (unrolled, its registers spilled elsewhere in the kernel: 52 bytes against 16) */
        for (int y = 0; y < 4; y++) {
            const int i = w + 8 * y;
            const float m = A[i * (BT + 1) + lane] * dP[i * (BT + 1) + lane];
            float x = m; /* inclusive scan, then shifted one lane: P_i(lane) */
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float z = __shfl_up_sync(0xffffffffu, x, off);
                if (lane >= off) x += z;
            }
            x = __shfl_up_sync(0xffffffffu, x, 1);
            if (lane > 0 && i >= lane && i < L) pc += x;
        }
        red[w * 32 + lane] = pc;
        __syncthreads();
        if (tid < 32) {
            const int r = lane;
            float c = 0.f;
#pragma unroll
            for (int x = 0; x < NTHREADS / 32; x++) c += red[x * 32 + r];
            float up = u[r], es = e[r]; /* u, e zero past L (state_part) */
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float z = __shfl_up_sync(0xffffffffu, up, off), y = __shfl_down_sync(0xffffffffu, es, off);
                if (lane >= off) up += z;
                if (lane + off < 32) es += y;
            }
            up = __shfl_up_sync(0xffffffffu, up, 1); /* sum_{j<r} u_j */
            if (lane == 0) up = 0.f;
            if (r < L) p.dg_out[(b * p.T + t + r) * p.H + h] = t1 + up + es + c;
        }
    }
}

/* ---- 5. dg_gamma[h] = the sum of dg over the head's tokens, in a fixed order ------------ */

static __global__ void dg_gamma_kernel(const float *dg, int64_t BT_all, int64_t H, float *dgg)
{
    __shared__ double red[NTHREADS];
    const int64_t h = blockIdx.x;
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < BT_all; i += NTHREADS) acc += (double)dg[i * H + h];
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int off = NTHREADS / 2; off > 0; off >>= 1) {
        if (threadIdx.x < off) red[threadIdx.x] += red[threadIdx.x + off];
        __syncthreads();
    }
    if (threadIdx.x == 0) dgg[h] = (float)red[0];
}

/* ---- host ------------------------------------------------------------------------------- */

int64_t sgla_bwd_blocks(int64_t B, int64_t T, int64_t N, int varlen)
{
    return varlen ? T / BT + N : B * ((T + BT - 1) / BT);
}

size_t sgla_bwd_grads_smem(int64_t K, int64_t V, int staged)
{
    /* X (with the tile), Qs Ks, Vs dOs, A dP dA, bc (fp64), rs wv e u, red; (staged) S and dS' */
    return (size_t)(x_floats((int)K, (int)V) + 2 * BT * (K + 1) + 2 * BT * (V + 1) + 3 * BT * (BT + 1) + 2 * 32 +
                    4 * 32 + NTHREADS + (staged ? 2 * K * ss_ld((int)V) : 0)) * sizeof(float);
}

int sgla_bwd_grads_staged(int64_t K, int64_t V, int optin)
{
    const size_t plain = sgla_bwd_grads_smem(K, V, 0), staged = sgla_bwd_grads_smem(K, V, 1);
    const size_t per_sm = (size_t)optin + 1024; /* a block's opt-in and the 1 KB the SM keeps for each block */
    if (staged > (size_t)optin) return 0;
    const size_t np = per_sm / (plain + 1024), ns = per_sm / (staged + 1024);
    return ns >= (np < 2 ? np : 2); /* as many blocks an SM as before, up to the registers' two */
}

/* every instance of the gradient kernel (16-bit inputs have no TF32-alone one: SGLA_FLAG_ALLOW_TF32 is
 * for fp32), its shared memory allowed up to bytes */
template <class E, bool X3, bool SS, int HD> static cudaError_t grads_allow1(int bytes)
{
    return cudaFuncSetAttribute(grads_kernel<E, X3, SS, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
template <class E, bool X3> static cudaError_t grads_allow(int bytes)
{
    cudaError_t e;
    if ((e = grads_allow1<E, X3, false, 0>(bytes)) != cudaSuccess ||
        (e = grads_allow1<E, X3, true, 0>(bytes)) != cudaSuccess || (e = grads_allow1<E, X3, true, 64>(bytes)) != cudaSuccess)
        return e;
    return grads_allow1<E, X3, false, 128>(bytes);
}
cudaError_t sgla_bwd_grads_setup(int bytes)
{
    cudaError_t e;
    if ((e = grads_allow<float, true>(bytes)) != cudaSuccess || (e = grads_allow<float, false>(bytes)) != cudaSuccess ||
        (e = grads_allow<__half, true>(bytes)) != cudaSuccess)
        return e;
    return grads_allow<__nv_bfloat16, true>(bytes);
}

/* the gradient kernel's instance: a constant head at K = V = 64 with the states staged and at K = V = 128
 * without (what Hopper's shared memory gives both: the pairs that run, and are tested, here) */
template <class E, bool X3> static void (*grads_pick(const sgla_bparams &p))(const sgla_bparams)
{
    if (p.K == 64 && p.V == 64 && p.ss) return grads_kernel<E, X3, true, 64>;
    if (p.K == 128 && p.V == 128 && !p.ss) return grads_kernel<E, X3, false, 128>;
    return p.ss ? grads_kernel<E, X3, true, 0> : grads_kernel<E, X3, false, 0>;
}

/* the states kernels' instance: a warp's tiles as the head size needs them, and a constant head at K = V =
 * 64 and, for 16-bit rows, 128 (fp32's constant 128 ran slower than its run-time head: docs/perf.md) */
template <class E, bool X3> static void (*states_pick(const sgla_bparams &p))(const sgla_bparams, int)
{
    if (p.K == 64 && p.V == 64) return states_kernel<E, 2, X3, 64>;
    if constexpr (sizeof(E) == 2)
        if (p.K == 128 && p.V == 128) return states_kernel<E, 4, X3, 128>;
    return p.K <= 64 ? states_kernel<E, 2, X3> : p.K <= 128 ? states_kernel<E, 4, X3> : states_kernel<E, MG, X3>;
}

template <class E, bool X3> static sgla_status launch_all(const sgla_bparams &p, int64_t blocks, cudaStream_t st)
{
    cudaError_t e;
    const dim3 sg((unsigned)(p.N * p.H), (unsigned)((p.V + 31) / 32));
    void (*sk)(const sgla_bparams, int) = states_pick<E, X3>(p);
    sk<<<sg, NTHREADS, 0, st>>>(p, 0);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's states: %s", cudaGetErrorString(e));
    sk<<<sg, NTHREADS, 0, st>>>(p, 1);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's state gradients: %s", cudaGetErrorString(e));
    if (blocks > 0) {
        void (*gk)(const sgla_bparams) = grads_pick<E, X3>(p);
        gk<<<dim3((unsigned)blocks, (unsigned)p.H), NTHREADS, sgla_bwd_grads_smem(p.K, p.V, p.ss), st>>>(p);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's gradients: %s", cudaGetErrorString(e));
    }
    return SGLA_OK;
}

sgla_status sgla_bwd_launch(const sgla_bparams *p, sgla_dtype dt, int64_t blocks, cudaStream_t st)
{
    cudaError_t e;
    sgla_status rc;
    if (!p->ws_states) { /* the tensor-core path: no block table, no stored states */
        if ((rc = sgla_bwd_tc_launch(p, dt, p->tc_nst, st)) != SGLA_OK) return rc;
    } else {
        if (p->cu) {
            chunk_base_kernel<<<1, NTHREADS, 0, st>>>(p->cu, p->N, p->T, p->base);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's block table: %s", cudaGetErrorString(e));
        }
        rc = dt == SGLA_BF16 ? launch_all<__nv_bfloat16, true>(*p, blocks, st)
             : dt == SGLA_F16 ? launch_all<__half, true>(*p, blocks, st)
             : p->x3          ? launch_all<float, true>(*p, blocks, st)
                              : launch_all<float, false>(*p, blocks, st);
        if (rc != SGLA_OK) return rc;
    }
    return p->dgg ? sgla_dg_gamma_launch(p->dg_out, p->B * p->T, p->H, p->dgg, st) : SGLA_OK;
}

sgla_status sgla_dg_gamma_launch(const float *dg, int64_t BT_all, int64_t H, float *dgg, cudaStream_t st)
{
    if (BT_all <= 0) return SGLA_OK;
    dg_gamma_kernel<<<(unsigned)H, NTHREADS, 0, st>>>(dg, BT_all, H, dgg);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? SGLA_OK
                            : sgla_fail(SGLA_ERR_CUDA, "launch of the backward's dg_gamma: %s", cudaGetErrorString(e));
}
