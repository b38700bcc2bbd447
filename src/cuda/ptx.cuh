/* Thin inline-PTX wrappers for the Hopper (sm_90a) kernels: shared-memory
 * addresses, ldmatrix / stmatrix, mbarriers, named barriers, the tensor memory
 * accelerator (TMA) and wgmma.  One wrapper per instruction form; the kernels
 * pick among them at compile time (chunk_fwd.cuh).  Device code only. */
#ifndef SGLA_CUDA_PTX_CUH
#define SGLA_CUDA_PTX_CUH

#include <cuda.h> /* CUtensorMap (a type only: the encoder is fetched from the driver at run time) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* ---- addresses, conversions, exp2 ------------------------------------------- */

static __device__ __forceinline__ uint32_t sgla_smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Two floats to a packed 16-bit pair (lo in the low half), round to nearest. */
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

/* 16-bit pair product (round to nearest): per-token weights applied to K in
 * one instruction per pair. */
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

static __device__ __forceinline__ float sgla_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* two rows of 32 values per warp (x0, x1: this lane's): each row's inclusive prefix sums */
static __device__ __forceinline__ void sgla_warp_scan32x2(float &x0, float &x1, int lane)
{
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const float y0 = __shfl_up_sync(0xffffffffu, x0, off), y1 = __shfl_up_sync(0xffffffffu, x1, off);
        if (lane >= off) x0 += y0, x1 += y1;
    }
}

/* 64 values per warp as (x0: row lane, x1: row lane + 32): the inclusive prefix sums */
static __device__ __forceinline__ void sgla_warp_scan64(float &x0, float &x1, int lane)
{
    sgla_warp_scan32x2(x0, x1, lane);
    x1 += __shfl_sync(0xffffffffu, x0, 31);
}

/* 64 values per warp as (x0: row lane, x1: row lane + 32): the exclusive prefix sums, by a shift of
 * the inclusive ones (never inclusive minus the value: a large last value would swamp the sum before
 * it), and the inclusive suffix sums */
static __device__ __forceinline__ void sgla_warp_prefix64_excl(float &x0, float &x1, int lane)
{
    sgla_warp_scan32x2(x0, x1, lane);
    const float tot0 = __shfl_sync(0xffffffffu, x0, 31);
    x0 = __shfl_up_sync(0xffffffffu, x0, 1);
    x1 = __shfl_up_sync(0xffffffffu, x1, 1);
    if (lane == 0) x0 = 0.f, x1 = 0.f;
    x1 += tot0;
}
static __device__ __forceinline__ void sgla_warp_suffix64(float &x0, float &x1, int lane)
{
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const float y0 = __shfl_down_sync(0xffffffffu, x0, off), y1 = __shfl_down_sync(0xffffffffu, x1, off);
        if (lane + off < 32) x0 += y0, x1 += y1;
    }
    x0 += __shfl_sync(0xffffffffu, x1, 0);
}

/* ---- ldmatrix, stmatrix, shared stores --------------------------------------- */

static __device__ __forceinline__ void sgla_ldm_x4_t(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* stmatrix: four 8x8 16-bit tiles from the mma C-fragment layout (lane l
 * addresses row l & 7 of tile l >> 3). */
static __device__ __forceinline__ void sgla_stm_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

static __device__ __forceinline__ uint32_t sgla_ld_shared32(uint32_t addr)
{
    uint32_t x;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(x) : "r"(addr) : "memory");
    return x;
}
static __device__ __forceinline__ void sgla_st_shared16(uint32_t addr, uint4 x)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x.x), "r"(x.y), "r"(x.z), "r"(x.w)
                 : "memory");
}

/* ---- barriers ------------------------------------------------------------------- */

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

static __device__ __forceinline__ void sgla_mbar_arrive_tx(uint32_t mbar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(bytes) : "memory");
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

/* named barrier: arrive without waiting (the other side syncs on the same id and count) */
static __device__ __forceinline__ void sgla_bar_arrive(int id, int n)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

/* named barrier among n threads (a multiple of 32); id 0 is __syncthreads' */
static __device__ __forceinline__ void sgla_bar_sync(int id, int n)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

/* generic-proxy shared stores (st.shared, stmatrix) made visible to the async
 * proxy (wgmma, TMA), and the reverse order before TMA overwrites a tile */
static __device__ __forceinline__ void sgla_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- TMA (cp.async.bulk.tensor) ------------------------------------------------- */

/* box (c0, c1, c2) of a 3-D tensor map into shared memory; completes on mbar */
static __device__ __forceinline__ void sgla_tma_load3(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2,
                                                      uint32_t mbar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(mbar)
                 : "memory");
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
/* ... all but the last group committed */
static __device__ __forceinline__ void sgla_bulk_wait_read1(void)
{
    asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
}

/* this thread's bulk stores are complete */
static __device__ __forceinline__ void sgla_bulk_wait0(void) { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

/* a hint: bytes (a multiple of 16, 16-byte aligned) of global memory brought into L2, with no
 * register held and nothing to wait for */
static __device__ __forceinline__ void sgla_prefetch_l2(const void *src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"((uint64_t)src), "r"(bytes) : "memory");
}

/* ---- cp.async: 16 bytes global -> shared; bytes = 0 fills zeros (rows past a chunk) ---- */
static __device__ __forceinline__ void sgla_cp_async16(uint32_t dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
/* programmatic dependent launch: let the next kernel on the stream launch now / wait for the one before
 * it (its writes visible); no-ops without the launch attribute */
static __device__ __forceinline__ void sgla_griddep_launch(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
static __device__ __forceinline__ void sgla_griddep_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* 4 bytes global -> shared (a row of odd stride: no 16-byte alignment); through L1 */
static __device__ __forceinline__ void sgla_cp_async4(uint32_t dst, const void *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void sgla_cp_async_commit(void) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
static __device__ __forceinline__ void sgla_cp_async_wait0(void) { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
static __device__ __forceinline__ void sgla_cp_async_wait1(void) { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

static __device__ __forceinline__ void sgla_tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)map) : "memory");
}

/* ---- register control -------------------------------------------------------- */

/* setmaxnreg: hand registers between warpgroups (the kernel is launched with a
 * register cap; each warpgroup then asks for its own share) */
template <int R> static __device__ __forceinline__ void sgla_setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R) : "memory");
}
template <int R> static __device__ __forceinline__ void sgla_setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R) : "memory");
}
/* from a warpgroup's share at launch, FROM, to R: up, down, or nothing */
template <int R, int FROM> static __device__ __forceinline__ void sgla_setmaxnreg_to(void)
{
    if constexpr (R > FROM) sgla_setmaxnreg_inc<R>();
    if constexpr (R < FROM) sgla_setmaxnreg_dec<R>();
}

/* keep a register's value where it is until this point (wgmma operands in flight) */
static __device__ __forceinline__ void sgla_pin(float &x) { asm volatile("" : "+f"(x)::"memory"); }
static __device__ __forceinline__ void sgla_pin(uint32_t &x) { asm volatile("" : "+r"(x)::"memory"); }

/* ---- wgmma ---------------------------------------------------------------------
 * Warpgroup-wide D(64 x N, f32) += A(64 x 16) B(16 x N) (PTX ISA, "wgmma.mma_async"):
 *   ss_n{N}<TB>: A and B from shared memory (matrix descriptors), A K-major,
 *       B K-major (TB = 0) or N-major (TB = 1);
 *       (without swizzle either way: lbo the byte step between core matrices along K, sbo along N);
 *   rs_n{N}_t1: A from registers (the mma.sync m16n8k16 A fragment of warp w's
 *       rows 16w..16w+15), B N-major.
 * scale-d is 1 (D += A B): callers zero D where a product starts.
 * D fragment (f32, N/2 registers): thread t of the warpgroup, warp w = t / 32, lane l:
 *   d[4j + 0], d[4j + 1] = D[16w + l/4][8j + 2(l%4) + {0, 1}],  d[4j + 2], d[4j + 3] = same columns, row + 8.
 * Descriptors: bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4,
 * 32-45 stride-dimension byte offset >> 4, bits 62-63 the swizzle (0 none, 1 128-byte). */

static __device__ __forceinline__ uint64_t sgla_wg_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32);
}

/* the same with the 128-byte swizzle (layout type 1): the tile was written by TMA
 * with CU_TENSOR_MAP_SWIZZLE_128B, rows of 128 bytes, 16-byte unit u of row r at (u ^ (r % 8));
 * K-major: sbo = 1024 (8 rows), lbo unused; N-major: lbo = the next 64 columns, sbo = 1024 */
static __device__ __forceinline__ uint64_t sgla_wg_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
    return sgla_wg_desc(saddr, lbo, sbo) | (1ull << 62);
}

static __device__ __forceinline__ void sgla_wg_fence(void) { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

static __device__ __forceinline__ void sgla_wg_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N> static __device__ __forceinline__ void sgla_wg_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

template <int TB> static __device__ __forceinline__ void sgla_wg_ss_n64_bf16(float d[32], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, %34;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "n"(TB)
                 : "memory");
}

template <int TB> static __device__ __forceinline__ void sgla_wg_ss_n128_bf16(float d[64], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, %66;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "n"(TB)
                 : "memory");
}

static __device__ __forceinline__ void sgla_wg_rs_n64_t1_bf16(float d[32], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

static __device__ __forceinline__ void sgla_wg_rs_n128_t1_bf16(float d[64], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

template <int TB> static __device__ __forceinline__ void sgla_wg_ss_n64_f16(float d[32], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, %34;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "n"(TB)
                 : "memory");
}

template <int TB> static __device__ __forceinline__ void sgla_wg_ss_n128_f16(float d[64], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, %66;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "n"(TB)
                 : "memory");
}

static __device__ __forceinline__ void sgla_wg_rs_n64_t1_f16(float d[32], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

static __device__ __forceinline__ void sgla_wg_rs_n128_t1_f16(float d[64], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

/* TF32 (fp32 operands whose low 13 bits the tensor cores ignore: bench/wgmma_tf32_probe.cu), k = 8, A from
 * registers (a0 row g col t, a1 g + 8 t, a2 g t + 4, a3 g + 8 t + 4 of warp w's 16 rows), B K-major from shared
 * memory (TF32 has no N-major form) */
static __device__ __forceinline__ void sgla_wg_rs_n64_tf32(float d[32], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

static __device__ __forceinline__ void sgla_wg_rs_n128_tf32(float d[64], const uint32_t a[4], uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
}

#endif
