/* The state pool on CUDA (sgla.h, experimental): the token recurrence for
 * decode and speculative steps, each sequence's state read from, and written
 * back to, its slot.  Sequences of a mixed batch long enough for the chunked
 * kernel (pp.chunk_from) are left to it (chunk_fwd.cuh reads and writes the
 * pool too); this kernel takes the rest.
 *
 * One block per (sequence, head, PV columns of V): 128 threads and 32 columns
 * (Narrow), or 256 threads and whole 128-column rows where V is a multiple of
 * 128, K <= 128 and the slots are [K][V] (Wide: at V = 128 a block's part
 * of a slot is then one contiguous run).  The block's K x PV part of the slot is contiguous rows of
 * 4 PV bytes ([K][V]) or one contiguous run ([V][K], state_v_first); thread t
 * owns float4 number t + PT r of it (r < R, R = K / NRG rounded up to a power
 * of two), so every load and store is a full 16 bytes and a warp's are
 * coalesced.  The part stays in registers, or for K <= 128 in shared memory,
 * where cp.async stages it: loads in flight then hold no registers, so nine
 * blocks share an SM instead of five.  Per token S = a S + k v^T, then
 * o_j = scale q . S[:, j]:
 * each thread's part over its rows, then a fixed-order sum in shared memory
 * (deterministic: a graph replay gives the eager bits).
 *
 * Device memory is trusted as the CUDA contract says, with one guard: a slot
 * outside [0, slots) is a padded row (nothing read or written, o = 0), so a
 * bad index never touches memory outside the pool.  A slot one sequence reads
 * and another writes in the same call is a race here (the host check cannot
 * see device indices): callers keep them apart, as engines do. */
#include <stdint.h>
#include <string.h>

#include "cuda_backend.cuh"
#include "ptx.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

/* A block's shape: PV columns of V, PT threads in NRG row groups of PV / 4 float4 columns, MINB
 * blocks an SM for the staged instances, which stage up to RS float4 a thread.
 *   Narrow: 32 columns, 128 threads, nine blocks (56 registers, no spills; ten spill and run slower;
 *           16, and 64 or 128 with the state in registers, measured slower: docs/perf.md)
 *   Wide:   a whole 128-column state row, 256 threads, three blocks: each block reads and writes
 *           one contiguous 64 KB (K = 128), 192 KB in flight an SM against Narrow's 144 */
template <int PV_, int PT_, int MINB_, int RS_, bool DYN_> struct PoolShape {
    static constexpr int PV = PV_, PT = PT_, MINB = MINB_, RS = RS_;
    static constexpr bool DYN = DYN_; /* shared memory dynamic (over 48 KB: the attribute sgla_pool_setup sets) */
    static constexpr int NRG = PT / (PV / 4);
    static_assert(PV % 4 == 0 && PT % (PV / 4) == 0 && PT >= PV, "whole row groups; a thread per column to sum o");
};
using Narrow = PoolShape<32, 128, 9, 8, false>;
using Wide = PoolShape<128, 256, 3, 16, true>;

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, int64_t i, float x) { p[i] = x; }
__device__ __forceinline__ void st(__half *p, int64_t i, float x) { p[i] = __float2half_rn(x); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, int64_t i, float x) { p[i] = __float2bfloat16_rn(x); }

/* AS: the block's part of the slot is staged in shared memory by cp.async (R <= RS, K <= 128),
 * so the loads in flight do not hold registers and more blocks share an SM; larger K keeps it in
 * registers */
template <class Sh, int R> struct AsyncState {
    static constexpr bool on = R <= Sh::RS;
};

template <class Sh, int R, bool VF> struct PoolSmem {
    float4 st[AsyncState<Sh, R>::on ? Sh::PT * R : 1];
    float q[Sh::NRG * R], k[Sh::NRG * R], v[Sh::PV];
    /* the parts of o: [NRG row groups][PV columns] ([K][V]) or one per float4 ([V][K]) */
    float part[VF ? Sh::PT * R : Sh::NRG * Sh::PV];
};

/* Wide's shared memory (dynamic: over 48 KB); Narrow keeps a static struct (as it was measured) */
extern __shared__ __align__(16) unsigned char pool_dyn_smem[];

/* thread tid's float4 number r of the block's part of a slot: its (K row, V column) of
 * the first of its four elements, and whether it is inside the state */
template <bool VF> struct Elem {
    int i, j, ok;
};
template <int PV, bool VF> __device__ __forceinline__ Elem<VF> elem(int f, int K, int vb)
{
    Elem<VF> e;
    if (VF) { /* [PV rows of V][K]: float4 f covers K columns 4 (f % (K/4)) .. + 3 of row f / (K/4) */
        const int kq = K >> 2;
        e.j = f / kq, e.i = 4 * (f - e.j * kq), e.ok = e.j < vb;
    } else { /* [K rows][PV columns]: float4 f covers columns 4 (f % (PV/4)) .. + 3 of row f / (PV/4) */
        e.i = f / (PV / 4), e.j = 4 * (f % (PV / 4)), e.ok = e.i < K && e.j < vb;
    }
    return e;
}

/* the float offset of float4 f in the block's part of a slot; -1 outside the state */
template <int PV, bool VF> __device__ __forceinline__ int offset(int f, int K, int V, int vb)
{
    const Elem<VF> e = elem<PV, VF>(f, K, vb);
    return !e.ok ? -1 : VF ? 4 * f : e.i * V + e.j;
}

/* a float4 of the state back to its slot: plain stores where the loads were staged, evict-first
 * ones where they went to registers (each measured the faster of the two: docs/perf.md) */
template <bool AS> __device__ __forceinline__ void store_state(float *dst, float4 x)
{
    if (AS) *(float4 *)dst = x;
    else __stcs((float4 *)dst, x);
}

__device__ __forceinline__ int64_t pool_index(const sgla_poolparams &pp, int64_t n, int64_t t)
{
    const int64_t i = pp.t_max ? n * pp.t_max + t : n;
    return pp.bits == 32 ? (int64_t)((const int32_t *)pp.indices)[i] : ((const int64_t *)pp.indices)[i];
}

__device__ __forceinline__ float4 carry4(float4 s, float e, float em1, float ex)
{
    return make_float4(sgla_carry_mul(s.x, e, em1, ex), sgla_carry_mul(s.y, e, em1, ex),
                       sgla_carry_mul(s.z, e, em1, ex), sgla_carry_mul(s.w, e, em1, ex));
}

template <class E, class Sh, int R, bool VF>
__global__ void __launch_bounds__(Sh::PT, AsyncState<Sh, R>::on ? Sh::MINB : 1) pool_recurrent(const sgla_kparams p,
                                                                                               const sgla_poolparams pp)
{
    constexpr int PV = Sh::PV, PT = Sh::PT;
    PoolSmem<Sh, R, VF> *smp;
    if constexpr (Sh::DYN) {
        smp = reinterpret_cast<PoolSmem<Sh, R, VF> *>(pool_dyn_smem);
    } else { /* declared here, not in a helper returning a reference: Narrow's machine code stays main's */
        __shared__ PoolSmem<Sh, R, VF> s;
        smp = &s;
    }
    PoolSmem<Sh, R, VF> &sm = *smp;
    /* the column blocks of one state are neighbours in the grid: their parts of the slot are too */
    const int nsl = (int)((p.V + PV - 1) / PV);
    const int64_t nh = blockIdx.x / nsl, n = nh / p.H, h = nh - n * p.H;
    const int tid = threadIdx.x, K = (int)p.K, j0 = (int)(blockIdx.x - nh * nsl) * PV;
    const int vb = p.V - j0 < PV ? (int)(p.V - j0) : PV;
    int64_t b, t0, t1;
    sgla_seq_range(&p, n, &b, &t0, &t1);
    int64_t a = 1;
    if (pp.t_max && pp.num_accepted)
        a = pp.bits == 32 ? (int64_t)((const int32_t *)pp.num_accepted)[n] : ((const int64_t *)pp.num_accepted)[n];
    if (a < 1 || (pp.t_max && a > pp.t_max)) a = 1; /* out of range: the guard reads index 0 */
    const int64_t r0 = pool_index(pp, n, pp.t_max ? a - 1 : 0);
    const bool padded = r0 < 0 || r0 >= pp.slots;
    if (!padded && pp.chunk_from > 0 && t1 - t0 >= pp.chunk_from) return; /* the chunked kernel's */
    E *o = (E *)p.o;
    if (padded) {
        for (int64_t t = t0; t < t1; t++)
            if (tid < vb) st(o, ((b * p.T + t) * p.H + h) * p.V + j0 + tid, 0.f);
        return;
    }
    const int64_t kv = (int64_t)K * p.V;
    /* float4 f of the block in a slot: base + 4 f' (f' the float4's place in the slot) */
    const int64_t blk = VF ? (int64_t)j0 * K : j0;
    float *pool = (float *)p.h0; /* the pool (sgla_kparams' h0 slot) */
    const bool fresh = pp.has_initial_state && !pp.has_initial_state[n];
    constexpr bool AS = AsyncState<Sh, R>::on;
    float4 S[AS ? 1 : R] = {}; /* every element put before it is read; the staged instances never touch it */
    /* float4 r of the thread's part of the state: a thread reads back only what it staged itself */
    const auto get = [&](int r) -> float4 {
        if constexpr (AS) return sm.st[tid + PT * r];
        else return S[r];
    };
    const auto put = [&](int r, float4 x) {
        if constexpr (AS) sm.st[tid + PT * r] = x;
        else S[r] = x;
    };
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int at = offset<PV, VF>(tid + PT * r, K, (int)p.V, vb);
        const float4 *src = (const float4 *)(pool + (r0 * p.H + h) * kv + blk + at);
        if (AS && at >= 0 && !fresh) sgla_cp_async16(sgla_smem_u32(&sm.st[tid + PT * r]), src, 16);
        else put(r, at >= 0 && !fresh ? __ldcs(src) : make_float4(0.f, 0.f, 0.f, 0.f));
    }
    if (AS) sgla_cp_async_commit();
    const E *q = (const E *)p.q, *k = (const E *)p.k, *v = (const E *)p.v;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t row = (b * p.T + t) * p.H + h;
        __syncthreads(); /* the previous token's q, k, v and parts are read */
        for (int i = tid; i < K; i += PT) sm.q[i] = ld(q, row * K + i), sm.k[i] = ld(k, row * K + i);
        if (tid < vb) sm.v[tid] = ld(v, row * p.V + j0 + tid);
        const float g = p.gmode == SGLA_GATE_G ? p.g[row] : p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] : 0.f;
        const float e = g * SGLA_LOG2E, em1 = expm1f(g), ex = expf(g);
        if (AS) sgla_cp_async_wait0(); /* the state's float4s this thread staged (nothing after the first token) */
        __syncthreads();
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f); /* [K][V]: the parts of its four columns */
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int f = tid + PT * r;
            const Elem<VF> el = elem<PV, VF>(f, K, vb);
            if (!el.ok) {
                if (VF) sm.part[f] = 0.f;
                continue;
            }
            float4 s = carry4(get(r), e, em1, ex);
            if (VF) { /* one v_j, four k_i */
                const float vj = sm.v[el.j];
                s.x = fmaf(sm.k[el.i + 0], vj, s.x), s.y = fmaf(sm.k[el.i + 1], vj, s.y);
                s.z = fmaf(sm.k[el.i + 2], vj, s.z), s.w = fmaf(sm.k[el.i + 3], vj, s.w);
                sm.part[f] = sm.q[el.i] * s.x + sm.q[el.i + 1] * s.y + sm.q[el.i + 2] * s.z + sm.q[el.i + 3] * s.w;
            } else { /* one k_i, four v_j */
                const float ki = sm.k[el.i], qi = sm.q[el.i];
                s.x = fmaf(ki, sm.v[el.j + 0], s.x), s.y = fmaf(ki, sm.v[el.j + 1], s.y);
                s.z = fmaf(ki, sm.v[el.j + 2], s.z), s.w = fmaf(ki, sm.v[el.j + 3], s.w);
                acc.x = fmaf(qi, s.x, acc.x), acc.y = fmaf(qi, s.y, acc.y);
                acc.z = fmaf(qi, s.z, acc.z), acc.w = fmaf(qi, s.w, acc.w);
            }
            put(r, s);
        }
        if (!VF) *(float4 *)&sm.part[(tid / (PV / 4)) * PV + 4 * (tid % (PV / 4))] = acc; /* its row group */
        __syncthreads();
        if (tid < vb) {
            float sum = 0.f;
            if (VF) {
                const int kq = K >> 2;
                for (int m = 0; m < kq; m++) sum += sm.part[tid * kq + m];
            } else {
#pragma unroll
                for (int m = 0; m < Sh::NRG; m++) sum += sm.part[m * PV + tid];
            }
            st(o, row * p.V + j0 + tid, p.scale * sum);
        }
        if (pp.inplace && pp.t_max && t - t0 < pp.t_max) { /* speculative: the state after each token */
            const int64_t w = pool_index(pp, n, t - t0);
            if (w >= 0 && w < pp.slots) {
                float *dst = pool + (w * p.H + h) * kv + blk;
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const int at = offset<PV, VF>(tid + PT * r, K, (int)p.V, vb);
                    if (at >= 0) store_state<AS>(dst + at, get(r));
                }
            }
        }
    }
    if (AS) sgla_cp_async_wait0(); /* a sequence of no token has not waited for its staged state */
    if (pp.inplace && !pp.t_max) { /* the final state, into the slot it came from */
        float *dst = pool + (r0 * p.H + h) * kv + blk;
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int at = offset<PV, VF>(tid + PT * r, K, (int)p.V, vb);
            if (at >= 0) store_state<AS>(dst + at, get(r));
        }
    }
}

typedef void (*pool_fn_t)(const sgla_kparams, const sgla_poolparams);
typedef struct pool_fn {
    pool_fn_t fn;
    unsigned smem;    /* dynamic shared memory (Wide) */
    int threads, pv;  /* a block's threads and columns of V */
} pool_fn;

template <class E, class Sh, int R> pool_fn pick_layout(int v_first)
{
    const unsigned sm = Sh::DYN ? (unsigned)(v_first ? sizeof(PoolSmem<Sh, R, true>) : sizeof(PoolSmem<Sh, R, false>)) : 0;
    return {v_first ? pool_recurrent<E, Sh, R, true> : pool_recurrent<E, Sh, R, false>, sm, Sh::PT, Sh::PV};
}
template <class Sh, int R> pool_fn pick_dtype(sgla_dtype dt, int v_first)
{
    return dt == SGLA_BF16  ? pick_layout<__nv_bfloat16, Sh, R>(v_first)
           : dt == SGLA_F16 ? pick_layout<__half, Sh, R>(v_first)
                            : pick_layout<float, Sh, R>(v_first);
}
/* R: float4 a thread, K / NRG rounded up to a power of two */
template <class Sh> pool_fn pick_r(int64_t K, sgla_dtype dt, int v_first)
{
    const int64_t rr = (K + Sh::NRG - 1) / Sh::NRG;
    if (rr <= 1) return pick_dtype<Sh, 1>(dt, v_first);
    if (rr <= 2) return pick_dtype<Sh, 2>(dt, v_first);
    if (rr <= 4) return pick_dtype<Sh, 4>(dt, v_first);
    if (rr <= 8) return pick_dtype<Sh, 8>(dt, v_first);
    if constexpr (Sh::DYN) {
        return pick_dtype<Sh, 16>(dt, v_first); /* K <= 128 (wide) */
    } else {
        return rr <= 16 ? pick_dtype<Sh, 16>(dt, v_first) : pick_dtype<Sh, 32>(dt, v_first);
    }
}
/* Wide where whole 128-column rows fill it, the state is staged (K <= 128), the slots are [K][V] (a
 * [V][K] block's o parts would take 16 KB more: two blocks an SM) and the caller allows it (wide_ok:
 * Hopper, the attribute taken, enough blocks to fill the SMs) */
pool_fn pick(int64_t K, int64_t V, sgla_dtype dt, int v_first, int wide_ok)
{
    const bool wide = wide_ok && !v_first && V % Wide::PV == 0 && K <= 128;
    return wide ? pick_r<Wide>(K, dt, v_first) : pick_r<Narrow>(K, dt, v_first);
}

} /* namespace */

int sgla_pool_supported(int64_t K, int64_t V) { return K >= 4 && K <= 512 && K % 4 == 0 && V >= 4 && V % 4 == 0; }

cudaError_t sgla_pool_setup(int optin, int *wide_ok)
{
    /* the staged instances are held by shared memory: ask for all of it (a preference); Wide's
     * instances need their dynamic shared memory allowed (where the device has it) */
    const sgla_dtype dts[3] = {SGLA_F32, SGLA_F16, SGLA_BF16};
    cudaError_t e = cudaSuccess;
    int w = 1;
    for (int i = 0; i < 3; i++)
        for (int vf = 0; vf < 2; vf++)
            for (int64_t K = 16; K <= 128; K *= 2) {
                const pool_fn n = pick(K, 64, dts[i], vf, 0), x = pick(K, 128, dts[i], 0, 1);
                if (e == cudaSuccess)
                    e = cudaFuncSetAttribute(n.fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared);
                if (w && ((int)x.smem > optin ||
                          cudaFuncSetAttribute(x.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)x.smem) !=
                              cudaSuccess ||
                          cudaFuncSetAttribute(x.fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                               cudaSharedmemCarveoutMaxShared) != cudaSuccess))
                    w = 0;
            }
    (void)cudaGetLastError(); /* a refused attribute leaves the error state clean */
    *wide_ok = w;
    return e;
}

sgla_status sgla_pool_launch(const sgla_kparams *p, const sgla_poolparams *pp, sgla_dtype dt, int after_chunked,
                             int wide_ok, cudaStream_t st)
{
    if (!sgla_pool_supported(p->K, p->V))
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA state pool: K = %lld, V = %lld (it takes multiples of 4, "
                         "K <= 512)", (long long)p->K, (long long)p->V);
    const pool_fn f = pick(p->K, p->V, dt, pp->v_first, wide_ok);
    const int64_t blocks = p->N * p->H * ((p->V + f.pv - 1) / f.pv);
    if (blocks > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA state pool: %lld blocks exceed the grid", (long long)blocks);
    const dim3 grid((unsigned)blocks);
    if (blocks == 0) return SGLA_OK;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid, cfg.blockDim = dim3(f.threads), cfg.dynamicSmemBytes = f.smem, cfg.stream = st;
    cudaLaunchAttribute la[1];
    la[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    la[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = la, cfg.numAttrs = after_chunked ? 1 : 0;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, f.fn, *p, *pp);
    if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "launch of the state-pool recurrence: %s", cudaGetErrorString(e));
    return SGLA_OK;
}
