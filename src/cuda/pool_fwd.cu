/* The state pool on CUDA (sgla.h, experimental): the token recurrence with
 * each sequence's state read from, and written back to, its slot.  One block
 * per (sequence, head), one thread per column j of V owning that column of
 * the K x V state in registers: per token S[:, j] = a S[:, j] + k v_j and
 * o_j = scale q . S[:, j], a sum inside the thread, so a token costs no
 * synchronisation beyond loading q and k.  The state is read and written
 * once per call (the decode floor); long prefills through a pool run the same
 * recurrence (correct, not fast: the chunked kernels do not take a pool yet).
 *
 * Device memory is trusted as the CUDA contract says, with one guard: a slot
 * outside [0, slots) is treated as a padded row (read nothing, write nothing,
 * o = 0), so a bad index never touches memory outside the pool.  A slot one
 * sequence reads and another writes in the same call is a race here (the host
 * check cannot see device indices): callers keep them apart, as engines do. */
#include <stdint.h>

#include "cuda_backend.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, int64_t i, float x) { p[i] = x; }
__device__ __forceinline__ void st(__half *p, int64_t i, float x) { p[i] = __float2half_rn(x); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, int64_t i, float x) { p[i] = __float2bfloat16_rn(x); }

__device__ __forceinline__ int64_t pool_index(const sgla_poolparams &pp, int64_t n, int64_t t)
{
    const int64_t i = pp.t_max ? n * pp.t_max + t : n;
    return pp.bits == 32 ? (int64_t)((const int32_t *)pp.indices)[i] : ((const int64_t *)pp.indices)[i];
}

template <class E, int KD>
__global__ void __launch_bounds__(256) pool_recurrent(const sgla_kparams p, const sgla_poolparams pp)
{
    __shared__ float qs[KD], ks[KD];
    const int64_t n = blockIdx.x / p.H, h = blockIdx.x - n * p.H;
    const int j = threadIdx.x;
    const bool col = j < p.V;
    int64_t b, t0, t1;
    sgla_seq_range(&p, n, &b, &t0, &t1);
    int64_t a = 1;
    if (pp.t_max && pp.num_accepted)
        a = pp.bits == 32 ? (int64_t)((const int32_t *)pp.num_accepted)[n] : ((const int64_t *)pp.num_accepted)[n];
    if (a < 1 || (pp.t_max && a > pp.t_max)) a = 1; /* out of range: the guard reads index 0 */
    int64_t r = pool_index(pp, n, pp.t_max ? a - 1 : 0);
    E *o = (E *)p.o;
    if (r < 0 || r >= pp.slots) { /* a padded row (or an index outside the pool) */
        for (int64_t t = t0; t < t1; t++)
            if (col) st(o, ((b * p.T + t) * p.H + h) * p.V + j, 0.f);
        return;
    }
    const int64_t kv = (int64_t)KD * p.V;
    float *pool = (float *)p.h0; /* the pool (sgla_kparams' h0 slot) */
    float S[KD];
    const bool fresh = pp.has_initial_state && !pp.has_initial_state[n];
    /* column j of a slot: element i at base[i * stride] */
    const int64_t stride = pp.v_first ? 1 : p.V, off = pp.v_first ? (int64_t)j * KD : j;
    const float *src = pool + (r * p.H + h) * kv + off;
#pragma unroll
    for (int i = 0; i < KD; i++) S[i] = col && !fresh ? src[i * stride] : 0.f;
    const E *q = (const E *)p.q, *k = (const E *)p.k, *v = (const E *)p.v;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t row = (b * p.T + t) * p.H + h;
        __syncthreads(); /* the previous token's q, k are read */
        for (int i = j; i < KD; i += blockDim.x) {
            qs[i] = ld(q, row * KD + i);
            ks[i] = ld(k, row * KD + i);
        }
        __syncthreads();
        const float g = p.gmode == SGLA_GATE_G ? p.g[row] : p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] : 0.f;
        const float e = g * SGLA_LOG2E, em1 = expm1f(g), ex = expf(g);
        const float vj = col ? ld(v, row * p.V + j) : 0.f;
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < KD; i++) {
            S[i] = sgla_carry_mul(S[i], e, em1, ex) + ks[i] * vj;
            acc = fmaf(qs[i], S[i], acc);
        }
        if (col) st(o, row * p.V + j, p.scale * acc);
        if (pp.inplace && pp.t_max && t - t0 < pp.t_max) { /* speculative: the state after each token */
            const int64_t w = pool_index(pp, n, t - t0);
            if (col && w >= 0 && w < pp.slots) {
                float *dst = pool + (w * p.H + h) * kv + off;
#pragma unroll
                for (int i = 0; i < KD; i++) dst[i * stride] = S[i];
            }
        }
    }
    if (pp.inplace && !pp.t_max && col) { /* the final state, into the slot it came from */
        float *dst = pool + (r * p.H + h) * kv + off;
#pragma unroll
        for (int i = 0; i < KD; i++) dst[i * stride] = S[i];
    }
}

typedef void (*pool_fn)(const sgla_kparams, const sgla_poolparams);

template <int KD> pool_fn pick(sgla_dtype dt)
{
    return dt == SGLA_BF16 ? pool_recurrent<__nv_bfloat16, KD>
           : dt == SGLA_F16 ? pool_recurrent<__half, KD>
                            : pool_recurrent<float, KD>;
}

} /* namespace */

int sgla_pool_supported(int64_t K, int64_t V) { return (K == 64 || K == 128) && V >= 1 && V <= 256; }

sgla_status sgla_pool_launch(const sgla_kparams *p, const sgla_poolparams *pp, sgla_dtype dt, cudaStream_t st)
{
    if (!sgla_pool_supported(p->K, p->V))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA state pool: K = %lld, V = %lld (it takes K in {64, 128}, "
                         "V <= 256)", (long long)p->K, (long long)p->V);
    const pool_fn f = p->K == 64 ? pick<64>(dt) : pick<128>(dt);
    const unsigned threads = (unsigned)((p->V + 31) / 32 * 32), blocks = (unsigned)(p->N * p->H);
    if (blocks == 0) return SGLA_OK;
    f<<<blocks, threads, 0, st>>>(*p, *pp);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "launch of the state-pool recurrence: %s", cudaGetErrorString(e));
    return SGLA_OK;
}
