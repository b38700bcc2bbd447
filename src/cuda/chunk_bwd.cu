/* The CUDA backward, first version: the chunked form of src/ref/ref_bwd.c
 * (reference B) on CUDA cores in fp32, deterministic (no atomics: every sum
 * has one order), any input dtype, K <= 256, any V.  Blocks of BT = 32 tokens
 * (the chunked form is exact for any block length).  Five launches:
 *
 *   1. (cu_seqlens only) chunk_base: the first block of every sequence;
 *   2. states:  per (sequence, head, 32 columns of V), the entering state S of
 *      every block, in order            -> workspace [blocks][H][K][V]
 *   3. dstates: the same in reverse, dS' (the gradient of each block's end
 *      state) from dht, and dh0          -> workspace [blocks][H][K][V]
 *   4. grads:   per (block, head), independent of each other: with S and dS'
 *      of that block, dq, dk, dv and dg (sgla_cpu_backward's products, written
 *      as tiled dot products through shared memory);
 *   5. (g_gamma) dg_gamma: dg summed per head in a fixed order.
 *
 * Memory: two fp32 states per block of 32 tokens, 2 x blocks x H x K x V x 4
 * bytes, plus dg when only dg_gamma is asked for.  The tensor-core version of
 * launch 4 and a smaller workspace are the next steps (docs/perf.md). */
#include <stdint.h>

#include "cuda_backend.cuh"
#include "ptx.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

constexpr int BT = 32;         /* tokens per block */
constexpr int NTHREADS = 256;  /* every kernel */
constexpr int MAXK = 256;

static __device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
static __device__ __forceinline__ float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
static __device__ __forceinline__ float ld(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
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
static __device__ __forceinline__ void block_logcum(const sgla_bparams &p, int64_t b, int64_t t, int64_t h, int len,
                                                    double *bc, int lane)
{
    double x = lane < len ? (double)gate_of(p, b, t + lane, h) : 0.0;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x += y;
    }
    bc[lane] = x;
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

/* thread: warp w owns rows w, w + 8, ... (at most 32), lane the column */
template <class E>
static __global__ void __launch_bounds__(NTHREADS) states_kernel(const sgla_bparams p, int reverse)
{
    __shared__ float a_s[BT][MAXK]; /* k rows (forward) or rs-weighted q rows (reverse) */
    __shared__ float b_s[BT][32];   /* v columns (forward) or dout columns (reverse) */
    __shared__ double bc[32];
    __shared__ float wv[32];
    const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31;
    const int64_t nh = blockIdx.x, n = nh / p.H, h = nh - n * p.H;
    const int64_t c = (int64_t)blockIdx.y * 32 + lane;
    const int K = (int)p.K;
    const bool col = c < p.V;
    int64_t b, t0, len, base;
    bwd_seq(p, n, &b, &t0, &len, &base);
    const int64_t nb = (len + BT - 1) / BT;
    const E *A = (const E *)(reverse ? p.q : p.k);
    const E *Bm = (const E *)(reverse ? p.dout : p.v);
    float S[MAXK / 8];
    const int64_t kv = (int64_t)K * p.V;
    /* the start: h0 (forward) or dht (reverse) */
    const float *init = reverse ? p.dht : p.h0;
#pragma unroll
    for (int m = 0; m < MAXK / 8; m++) {
        const int r = w + 8 * m;
        S[m] = init && col && r < K ? init[nh * kv + (int64_t)r * p.V + c] : 0.f;
    }
    for (int64_t i = 0; i < nb; i++) {
        const int64_t blk = reverse ? nb - 1 - i : i;
        const int64_t t = t0 + blk * BT;
        const int L = (int)(len - blk * BT < BT ? len - blk * BT : BT);
        /* the block's state: S entering it (forward), dS' of its end (reverse) */
        float *out = (reverse ? p.ws_dstates : p.ws_states) + ((base + blk) * p.H + h) * kv;
#pragma unroll
        for (int m = 0; m < MAXK / 8; m++) {
            const int r = w + 8 * m;
            if (col && r < K) out[(int64_t)r * p.V + c] = S[m];
        }
        __syncthreads(); /* the previous block's reads of a_s, b_s are done */
        if (w == 0) {
            block_logcum(p, b, t, h, L, bc, lane);
            __syncwarp();
            /* forward: w_r = exp(b_L - b_r); reverse: rs_r = scale exp(b_r) */
            if (lane < L) wv[lane] = reverse ? p.scale * expf((float)bc[lane]) : expf(logdecay(bc, L - 1, lane));
        }
        __syncthreads();
        for (int idx = tid; idx < L * K; idx += NTHREADS) {
            const int r = idx / K, q = idx - r * K;
            a_s[r][q] = wv[r] * ld(A, ((b * p.T + t + r) * p.H + h) * K + q);
        }
        for (int idx = tid; idx < L * 32; idx += NTHREADS) {
            const int r = idx >> 5, cc = idx & 31;
            const int64_t col2 = (int64_t)blockIdx.y * 32 + cc;
            b_s[r][cc] = col2 < p.V ? ld(Bm, ((b * p.T + t + r) * p.H + h) * p.V + col2) : 0.f;
        }
        __syncthreads();
        const float bl = (float)bc[L - 1], ce = bl * SGLA_LOG2E, cm1 = expm1f(bl), ca = expf(bl); /* the carry */
#pragma unroll
        for (int m = 0; m < MAXK / 8; m++) {
            const int r = w + 8 * m;
            if (r >= K) break;
            float acc = 0.f;
            for (int j = 0; j < L; j++) acc = fmaf(a_s[j][r], b_s[j][lane], acc);
            S[m] = sgla_carry_mul(S[m], ce, cm1, ca) + acc;
        }
    }
    if (reverse && p.dh0) {
#pragma unroll
        for (int m = 0; m < MAXK / 8; m++) {
            const int r = w + 8 * m;
            if (col && r < K) p.dh0[nh * kv + (int64_t)r * p.V + c] = S[m];
        }
    }
}

/* ---- 4. the gradients of one block of tokens ------------------------------------------- */

/* The state part of dQ or dK for the block's L rows: X[i][c] = w[i] sum_j
 * R[i][j] M[c][j] (R in shared memory, ld lr; M a K x V state in global
 * memory, a warp sharing its row c); then, by warp 0, dot[i] = sum_c
 * P[i][c] X[i][c], the row's term of the gate gradient.  X is complete (a
 * barrier) before warp 0 reads it. */
static __device__ __forceinline__ void state_part(const float *R, int lr, const float *M, const float *w,
                                                  const float *P, int lp, float *X, int mx, float *dot, int L, int K,
                                                  int V, int tid, int lane)
{
    for (int idx = tid; idx < L * K; idx += NTHREADS) {
        const int c = idx / L, i = idx - c * L;
        float acc = 0.f;
        for (int j = 0; j < V; j++) acc = fmaf(R[i * lr + j], M[(int64_t)c * V + j], acc);
        X[i * mx + c] = w[i] * acc;
    }
    __syncthreads();
    if (tid < 32) {
        float s = 0.f;
        if (lane < L)
            for (int c = 0; c < K; c++) s = fmaf(P[lane * lp + c], X[lane * mx + c], s);
        dot[lane] = s;
    }
}

/* block sum of x over NTHREADS threads in a fixed order (every thread gets it) */
static __device__ __forceinline__ float block_sum(float x, float *red)
{
    red[threadIdx.x] = x;
    __syncthreads();
    for (int off = NTHREADS / 2; off > 0; off >>= 1) {
        if (threadIdx.x < off) red[threadIdx.x] += red[threadIdx.x + off];
        __syncthreads();
    }
    const float s = red[0];
    __syncthreads();
    return s;
}

template <class E> static __global__ void __launch_bounds__(NTHREADS) grads_kernel(const sgla_bparams p)
{
    extern __shared__ float sm[];
    const int K = (int)p.K, V = (int)p.V, lk = K + 1, lv = V + 1, mx = K > V ? K : V;
    float *Qs = sm, *Ks = Qs + BT * lk, *Vs = Ks + BT * lk, *dOs = Vs + BT * lv, *X = dOs + BT * lv;
    float *A = X + BT * mx, *dP = A + BT * (BT + 1), *dA = dP + BT * (BT + 1);
    double *bc = (double *)(dA + BT * (BT + 1)); /* 8-byte aligned: every term above is a multiple of BT = 32 floats */
    float *rs = (float *)(bc + 32), *wv = rs + 32, *e = wv + 32, *u = e + 32, *red = u + 32;
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
    for (int idx = tid; idx < L * K; idx += NTHREADS) {
        const int r = idx / K, c = idx - r * K;
        const int64_t g = ((b * p.T + t + r) * p.H + h) * K + c;
        Qs[r * lk + c] = ld(q, g);
        Ks[r * lk + c] = ld(k, g);
    }
    for (int idx = tid; idx < L * V; idx += NTHREADS) {
        const int r = idx / V, c = idx - r * V;
        const int64_t g = ((b * p.T + t + r) * p.H + h) * V + c;
        Vs[r * lv + c] = ld(v, g);
        dOs[r * lv + c] = ld(dout, g);
    }
    if (tid < 32) {
        block_logcum(p, b, t, h, L, bc, lane);
        __syncwarp();
        if (lane < L) {
            rs[lane] = p.scale * expf((float)bc[lane]);
            wv[lane] = expf(logdecay(bc, L - 1, lane));
        }
    }
    __syncthreads();
    /* A = scale Gamma ⊙ QK^T, dP = dO V^T, dA = scale Gamma ⊙ dP (j <= i; 0 above) */
    for (int idx = tid; idx < L * L; idx += NTHREADS) {
        const int i = idx / L, j = idx - i * L;
        float a = 0.f, d = 0.f, da = 0.f;
        if (j <= i) {
            const float gm = p.scale * expf(logdecay(bc, i, j));
            for (int c = 0; c < K; c++) a = fmaf(Qs[i * lk + c], Ks[j * lk + c], a);
            for (int c = 0; c < V; c++) d = fmaf(dOs[i * lv + c], Vs[j * lv + c], d);
            a *= gm;
            da = gm * d;
        }
        A[i * (BT + 1) + j] = a;
        dP[i * (BT + 1) + j] = d;
        dA[i * (BT + 1) + j] = da;
    }
    __syncthreads();
    E *dq = (E *)p.dq, *dk = (E *)p.dk, *dv = (E *)p.dv;
    /* dQs = rs ⊙ (dO S^T) into X, e = q . dQs; dQ = dQs + dA K */
    state_part(dOs, lv, S, rs, Qs, lk, X, mx, e, L, K, V, tid, lane);
    for (int idx = tid; idx < L * K; idx += NTHREADS) {
        const int i = idx / K, c = idx - i * K;
        float acc = X[i * mx + c];
        for (int j = 0; j <= i; j++) acc = fmaf(dA[i * (BT + 1) + j], Ks[j * lk + c], acc);
        st(dq, ((b * p.T + t + i) * p.H + h) * K + c, acc);
    }
    __syncthreads();
    /* dKs = w ⊙ (V dS^T) into X, u = k . dKs; dK = dKs + dA^T Q */
    state_part(Vs, lv, dS, wv, Ks, lk, X, mx, u, L, K, V, tid, lane);
    for (int idx = tid; idx < L * K; idx += NTHREADS) {
        const int j = idx / K, c = idx - j * K;
        float acc = X[j * mx + c];
        for (int i = j; i < L; i++) acc = fmaf(dA[i * (BT + 1) + j], Qs[i * lk + c], acc);
        st(dk, ((b * p.T + t + j) * p.H + h) * K + c, acc);
    }
    __syncthreads();
    /* dV = w ⊙ (K dS) + A^T dO */
    for (int idx = tid; idx < L * V; idx += NTHREADS) {
        const int c = idx / L, j = idx - c * L; /* a warp shares dS's column c */
        float acc = 0.f;
        for (int m = 0; m < K; m++) acc = fmaf(Ks[j * lk + m], dS[(int64_t)m * V + c], acc);
        acc *= wv[j];
        for (int i = j; i < L; i++) acc = fmaf(A[i * (BT + 1) + j], dOs[i * lv + c], acc);
        st(dv, ((b * p.T + t + j) * p.H + h) * V + c, acc);
    }
    /* the gate: exp(b_L) <dS, S> + sum_{j<r} u_j + sum_{i>=r} e_i + sum_{i>=r, j<r} A_ij dP_ij */
    if (p.gmode && p.dg_out) {
        float part = 0.f;
        for (int64_t i = tid; i < kv; i += NTHREADS) part = fmaf(dS[i], S[i], part);
        const float t1 = expf((float)bc[L - 1]) * block_sum(part, red);
        if (tid < 32) {
            const int r = lane;
            float acc = t1;
            for (int j = 0; j < r && j < L; j++) acc += u[j];
            for (int i = r; i < L; i++) {
                acc += e[i];
                for (int j = 0; j < r; j++) acc = fmaf(A[i * (BT + 1) + j], dP[i * (BT + 1) + j], acc);
            }
            if (r < L) p.dg_out[(b * p.T + t + r) * p.H + h] = acc;
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

size_t sgla_bwd_grads_smem(int64_t K, int64_t V)
{
    const int64_t mx = K > V ? K : V; /* Qs Ks, Vs dOs, X, A dP dA, bc (fp64), rs wv e u, red */
    return (size_t)(2 * BT * (K + 1) + 2 * BT * (V + 1) + BT * mx + 3 * BT * (BT + 1) + 2 * 32 + 4 * 32 + NTHREADS) *
           sizeof(float);
}

template <class E> static const void *grads_fn(void) { return (const void *)grads_kernel<E>; }

const void *sgla_bwd_grads_kernel(sgla_dtype dt)
{
    return dt == SGLA_BF16 ? grads_fn<__nv_bfloat16>() : dt == SGLA_F16 ? grads_fn<__half>() : grads_fn<float>();
}

template <class E> static sgla_status launch_all(const sgla_bparams &p, int64_t blocks, cudaStream_t st)
{
    cudaError_t e;
    const dim3 sg((unsigned)(p.N * p.H), (unsigned)((p.V + 31) / 32));
    states_kernel<E><<<sg, NTHREADS, 0, st>>>(p, 0);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's states: %s", cudaGetErrorString(e));
    states_kernel<E><<<sg, NTHREADS, 0, st>>>(p, 1);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of the backward's state gradients: %s", cudaGetErrorString(e));
    if (blocks > 0) {
        grads_kernel<E><<<dim3((unsigned)blocks, (unsigned)p.H), NTHREADS, sgla_bwd_grads_smem(p.K, p.V), st>>>(p);
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
        rc = dt == SGLA_BF16 ? launch_all<__nv_bfloat16>(*p, blocks, st)
             : dt == SGLA_F16 ? launch_all<__half>(*p, blocks, st)
                              : launch_all<float>(*p, blocks, st);
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
