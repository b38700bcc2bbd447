/* Device-side helpers shared by the CUDA kernel versions: the kernel
 * parameter block and thin inline-PTX wrappers (cp.async, ldmatrix,
 * mma.sync).  CUDA C style: plain structs and functions. */
#ifndef SGLA_DEV_CUH
#define SGLA_DEV_CUH

#include <cuda.h> /* CUtensorMap (a type only: the encoder is fetched from the driver at run time) */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "sgla_internal.h"

#define SGLA_LOG2E 1.4426950408889634f

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
     * tokens [s*seg_len, (s+1)*seg_len) of each sequence; blockIdx.x = nh*nseg + s.
     * mode 0: plain; 1: local end state of each segment from zero into
     * seg_buf[s] and its total log2 decay into seg_ld[s] (no outputs);
     * 2: outputs, entering state read from seg_buf[s] (filled by the scan). */
    int nseg, mode;
    int64_t seg_len;
    float *seg_buf;        /* [nseg][N*H][K][V] */
    float *seg_ld;         /* [nseg][N*H] */
} sgla_kparams;

/* TMA descriptors of q, k, v, o for the versions that copy with the tensor memory
 * accelerator (v11-v13): each tensor seen as 4-D (feature, head, token, batch), boxes
 * of 64 features x 1 head x 64 tokens x 1 batch, 128-byte swizzle.  Passed as a
 * __grid_constant__ kernel parameter (the TMA unit reads it from parameter space). */
typedef struct sgla_tmaps {
    CUtensorMap q, k, v, o;
} sgla_tmaps;

/* Host-side launchers, one per kernel family (C linkage inside the backend). */
#ifdef __cplusplus
extern "C" {
#endif
sgla_status sgla_cuda_launch_tc(const sgla_kparams *p, sgla_dtype dt, int version, cudaStream_t st);
sgla_status sgla_cuda_launch_f32(const sgla_kparams *p, cudaStream_t st);
#ifdef __cplusplus
}
#endif

/* A CUDA call that must succeed; on failure record the call and the error. */
#define SGLA_CUDA_TRY(call)                                                         \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess)                                                      \
            return sgla_fail(SGLA_ERR_CUDA, "%s failed: %s (%s:%d)", #call,        \
                             cudaGetErrorString(e_), __FILE__, __LINE__);           \
    } while (0)

#ifdef __CUDACC__

static __device__ __forceinline__ uint32_t sgla_smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte async copy; src_bytes = 0 zero-fills the destination. */
static __device__ __forceinline__ void sgla_cp16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}
static __device__ __forceinline__ void sgla_cp4(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}
static __device__ __forceinline__ void sgla_cp_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
#define SGLA_CP_WAIT(n) asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory")

static __device__ __forceinline__ void sgla_ldm_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
static __device__ __forceinline__ void sgla_ldm_x4_t(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* D += A(16x16, row) * B(16x8, col); fp32 accumulators. */
static __device__ __forceinline__ void sgla_mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void sgla_mma_f16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Two floats to a packed pair (lo in the low half), and back. */
static __device__ __forceinline__ uint32_t sgla_pack_bf16(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&h;
}
static __device__ __forceinline__ uint32_t sgla_pack_f16(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&h;
}
static __device__ __forceinline__ float2 sgla_unpack_bf16(uint32_t x)
{
    __nv_bfloat162 h = *(__nv_bfloat162 *)&x;
    return __bfloat1622float2(h);
}
static __device__ __forceinline__ float2 sgla_unpack_f16(uint32_t x)
{
    __half2 h = *(__half2 *)&x;
    return __half22float2(h);
}

static __device__ __forceinline__ float sgla_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Sequence n's batch row and token range [t0, t1), clamped so that a bad
 * cu_seqlens can never address outside the tensors. */
static __device__ __forceinline__ void sgla_seq_range(const sgla_kparams *p, int64_t n, int64_t *b,
                                                      int64_t *t0, int64_t *t1)
{
    if (p->cu) {
        int64_t a = p->cu[n], e = p->cu[n + 1];
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

/* 16-bit pair product (bf16x2 or f16x2, round to nearest): the state update's
 * per-token weights applied to K in one instruction per pair. */
static __device__ __forceinline__ uint32_t sgla_mul2_bf16(uint32_t a, uint32_t b)
{
    __nv_bfloat162 r = __hmul2(*(__nv_bfloat162 *)&a, *(__nv_bfloat162 *)&b);
    return *(uint32_t *)&r;
}
static __device__ __forceinline__ uint32_t sgla_mul2_f16(uint32_t a, uint32_t b)
{
    __half2 r = __hmul2(*(__half2 *)&a, *(__half2 *)&b);
    return *(uint32_t *)&r;
}
/* stmatrix: four 8x8 16-bit tiles from mma C-fragment layout (lane l addresses
 * row l & 7 of tile l >> 3). */
static __device__ __forceinline__ void sgla_stm_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

/* mbarrier (shared::cta) and the async-copy hooks on it, for producer/consumer stages */
static __device__ __forceinline__ void sgla_mbar_init(uint32_t mbar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mbar), "r"(count) : "memory");
}
static __device__ __forceinline__ void sgla_mbar_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
static __device__ __forceinline__ void sgla_mbar_arrive(uint32_t mbar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mbar) : "memory");
}
/* wait until the phase with parity `parity` has completed */
static __device__ __forceinline__ void sgla_mbar_wait(uint32_t mbar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "SGLA_MBAR_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra SGLA_MBAR_WAIT;\n"
                 "}\n" ::"r"(mbar),
                 "r"(parity)
                 : "memory");
}
/* the mbarrier gets one arrival when all of this thread's earlier cp.async have landed
 * (noinc: the arrival is part of the count the barrier was initialised with) */
static __device__ __forceinline__ void sgla_cp_mbar_arrive(uint32_t mbar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(mbar) : "memory");
}
/* named barrier: arrive without waiting (the other side calls sgla_bar_sync with the same n) */
static __device__ __forceinline__ void sgla_bar_arrive(int id, int n)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

/* named barrier among n threads (a multiple of 32); id 0 is __syncthreads' */
static __device__ __forceinline__ void sgla_bar_sync(int id, int n)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

static __device__ __forceinline__ void sgla_st_shared16(uint32_t addr, uint4 x)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x.x), "r"(x.y), "r"(x.z), "r"(x.w)
                 : "memory");
}

/* ---- TMA (cp.async.bulk.tensor) and its mbarrier transaction count ---- */
/* one arrival that also expects `bytes` more of asynchronous transactions this phase */
static __device__ __forceinline__ void sgla_mbar_arrive_tx(uint32_t mbar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(bytes) : "memory");
}
/* box (c0, c1, c2, c3) of a 4-D tensor map into shared memory; completes on mbar */
static __device__ __forceinline__ void sgla_tma_load4(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2,
                                                      int c3, uint32_t mbar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mbar)
                 : "memory");
}
/* shared memory into box (c0, c1, c2, c3); elements outside the tensor are not written */
static __device__ __forceinline__ void sgla_tma_store4(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2,
                                                       int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(
                     (uint64_t)map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
                 : "memory");
}
static __device__ __forceinline__ void sgla_bulk_commit(void) { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* this thread's bulk stores have read their shared memory (it may be rewritten) */
static __device__ __forceinline__ void sgla_bulk_wait_read0(void)
{
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
/* this thread's bulk stores are complete */
static __device__ __forceinline__ void sgla_bulk_wait0(void) { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
static __device__ __forceinline__ void sgla_tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)map) : "memory");
}

#endif /* __CUDACC__ */
#endif
