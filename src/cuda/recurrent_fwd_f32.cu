/* fp32 inputs — correct, not fast: CUDA cores, the token recurrence of the
 * definition in fp32 (S_t = exp(g_t) S_{t-1} + k_t v_t^T, o_t = scale q_t^T S_t).
 *
 * Block = (sequence x head, 32 V columns), 256 threads = 8 K-groups x 32
 * columns; each thread keeps K/8 (<= 32) state entries of one column in
 * registers.  Tensor cores would round operands to 16 bits (or tf32, ~3e-4)
 * and miss the fp32 bar of 1e-5, hence this path. */
#include "cuda_backend.cuh"

constexpr int F32_KG = 8;  /* K groups of a block */
constexpr int F32_VC = 32; /* V columns of a block */

__global__ void __launch_bounds__(256) fwd_f32_recurrent(const sgla_kparams p)
{
    __shared__ float q_s[256], k_s[256], v_s[F32_VC], red[F32_KG][F32_VC + 1];
    __shared__ float a_s, am1_s, e_s;
    const int tid = threadIdx.x, vc = tid & 31, kg = tid >> 5;
    const int64_t nh = blockIdx.x, n = nh / p.H, h = nh - n * p.H;
    const int v0 = blockIdx.y * F32_VC;
    const int K = (int)p.K, kper = K / F32_KG;
    int64_t bidx, t0, t1;
    sgla_seq_range(&p, n, &bidx, &t0, &t1);
    float S[32];
    const float *h0p = p.h0 ? p.h0 + nh * p.K * p.V + v0 + vc : (const float *)0;
#pragma unroll
    for (int i = 0; i < 32; i++)
        S[i] = (i < kper && h0p) ? h0p[(int64_t)(kg * kper + i) * p.V] : 0.f;
    /* the decay a and a - 1 (sgla_carry_mul: near 1 as S + (a - 1) S) */
    const float gg = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] : 0.f;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t row = (bidx * p.T + t) * p.H + h;
        const float *qg = (const float *)p.q + row * p.K, *kg_ = (const float *)p.k + row * p.K;
        for (int i = tid; i < K; i += 256) {
            q_s[i] = qg[i];
            k_s[i] = kg_[i];
        }
        if (tid < F32_VC) v_s[tid] = ((const float *)p.v)[row * p.V + v0 + tid];
        if (tid == 0) {
            const float g = p.gmode == SGLA_GATE_G ? p.g[row] : gg;
            a_s = expf(g), am1_s = expm1f(g), e_s = g * SGLA_LOG2E;
        }
        __syncthreads();
        const float a = a_s, am1 = am1_s, e = e_s, vv = v_s[vc];
        float part = 0.f;
#pragma unroll
        for (int i = 0; i < 32; i++)
            if (i < kper) {
                const int kk = kg * kper + i;
                S[i] = e > -1.f ? S[i] + fmaf(am1, S[i], k_s[kk] * vv) : fmaf(a, S[i], k_s[kk] * vv);
                part = fmaf(q_s[kk], S[i], part);
            }
        red[kg][vc] = part;
        __syncthreads();
        if (kg == 0) {
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < F32_KG; j++) sum += red[j][vc];
            ((float *)p.o)[row * p.V + v0 + vc] = p.scale * sum;
        }
        /* the next token's loads overwrite q_s/k_s/v_s/red only after this barrier */
        __syncthreads();
    }
    if (p.ht) {
        float *htp = p.ht + nh * p.K * p.V + v0 + vc;
#pragma unroll
        for (int i = 0; i < 32; i++)
            if (i < kper) htp[(int64_t)(kg * kper + i) * p.V] = S[i];
    }
}

sgla_status sgla_recurrent_fwd_f32(const sgla_kparams *p, cudaStream_t st)
{
    dim3 grid((unsigned)(p->N * p->H), (unsigned)(p->V / F32_VC));
    fwd_f32_recurrent<<<grid, 256, 0, st>>>(*p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of fwd_f32_recurrent (grid %u x %u): %s", grid.x, grid.y,
                         cudaGetErrorString(e));
    return SGLA_OK;
}
