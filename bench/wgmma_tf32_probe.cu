/* Questions a wgmma TF32 forward for fp32 inputs (issue 14's 3xTF32 row) depends on, answered on the device:
 *   1. what the tensor cores do with an fp32 operand's low 13 bits (read as TF32 by truncation, or rounded):
 *      if truncated, the "hi" half of 3xTF32 can be the raw fp32 tile as TMA wrote it, and only "lo" needs
 *      a copy in shared memory;
 *   2. the register fragment of A for .tf32 (m64nNk8): checked against a host reference;
 *   3. the rate one SM sustains on m64n{64,128}k8 TF32, A from shared memory and from registers, beside
 *      bf16 m64n64k16 (the FLOP floor of 3xTF32 is three TF32 products at that rate).
 * Stand-alone (the library's ptx.cuh for descriptors and fences):
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc/cuda -Iinclude -Isrc -o /tmp/wgtf32 bench/wgmma_tf32_probe.cu && /tmp/wgtf32 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.cuh"

static void ck(cudaError_t e, int line)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "wgmma_tf32_probe.cu:%d %s\n", line, cudaGetErrorString(e));
    exit(1);
}

/* D(64 x 64) += A(64 x 8) B(8 x 64), TF32, A and B K-major from shared memory */
static __device__ __forceinline__ void wg_ss_n64_tf32(float d[32], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
}
static __device__ __forceinline__ void wg_ss_n128_tf32(float d[64], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
}

/* A (64 x 8) and B (64 x 8, n x k) K-major without swizzle: core matrix (8 rows x 4 floats, 128 bytes) of
 * rows 8i.., k 4j.. at (2i + j) x 128 bytes: the step along K (lbo) 128, along M / N (sbo) 256 */
static __host__ __device__ int core_off(int r, int k) { return ((r / 8) * 2 + k / 4) * 32 + (r % 8) * 4 + k % 4; }

/* 1, 2: one warpgroup, D = A B^T (A 64 x 8, B 64 x 8) by the SS and the RS form */
__global__ void layout_kernel(const float *A, const float *B, float *Dss, float *Drs)
{
    __shared__ __align__(128) float sa[64 * 8], sb[64 * 8];
    const int t = threadIdx.x, w = t / 32, l = t % 32;
    for (int i = t; i < 64 * 8; i += 128) {
        sa[core_off(i / 8, i % 8)] = A[i];
        sb[core_off(i / 8, i % 8)] = B[i];
    }
    sgla_fence_proxy_async();
    __syncthreads();
    const uint64_t da = sgla_wg_desc(sgla_smem_u32(sa), 128, 256), db = sgla_wg_desc(sgla_smem_u32(sb), 128, 256);
    float d[32], e[32];
    for (int i = 0; i < 32; i++) d[i] = e[i] = 0.f;
    /* the fragment under test: a0 (row g, col t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) of warp w's 16 rows */
    const int g = l / 4, c = l % 4, r0 = 16 * w + g;
    uint32_t a[4] = {__float_as_uint(A[r0 * 8 + c]), __float_as_uint(A[(r0 + 8) * 8 + c]),
                     __float_as_uint(A[r0 * 8 + c + 4]), __float_as_uint(A[(r0 + 8) * 8 + c + 4])};
    sgla_wg_fence();
    wg_ss_n64_tf32(d, da, db);
    sgla_wg_rs_n64_tf32(e, a, db);
    sgla_wg_commit();
    sgla_wg_wait<0>();
    for (int j = 0; j < 8; j++)
        for (int h = 0; h < 2; h++)
            for (int x = 0; x < 2; x++) {
                const int row = r0 + 8 * h, col = 8 * j + 2 * c + x;
                Dss[row * 64 + col] = d[4 * j + 2 * h + x];
                Drs[row * 64 + col] = e[4 * j + 2 * h + x];
            }
}

/* 3: the rate.  Each warpgroup issues n products into one accumulator (the form a kernel's chain has) */
template <int MODE> __global__ void __launch_bounds__(256, 1) rate_kernel(float *sink, int n)
{
    __shared__ __align__(1024) float s[2 * 64 * 32 + 128 * 32];
    const int t = threadIdx.x;
    for (int i = t; i < (int)(sizeof s / 4); i += blockDim.x) s[i] = 1e-3f * (float)(i % 7);
    sgla_fence_proxy_async();
    __syncthreads();
    const uint32_t base = sgla_smem_u32(s) + (t / 128) * 64 * 32 * 4;
    const uint64_t da = sgla_wg_desc(base, 128, 256), db = sgla_wg_desc(base + 4096, 128, 256);
    float d[64];
    for (int i = 0; i < 64; i++) d[i] = 0.f;
    uint32_t a[4] = {__float_as_uint(1.f), __float_as_uint(2.f), __float_as_uint(3.f), __float_as_uint(4.f)};
    sgla_wg_fence();
    for (int i = 0; i < n; i++) {
        if (MODE == 0) wg_ss_n64_tf32(d, da, db);
        if (MODE == 1) sgla_wg_rs_n64_tf32(d, a, db);
        if (MODE == 2) wg_ss_n128_tf32(d, da, db);
        if (MODE == 3) sgla_wg_ss_n64_bf16<0>(d, da, db);
        if ((i & 7) == 7) sgla_wg_commit();
    }
    sgla_wg_commit();
    sgla_wg_wait<0>();
    float x = 0.f;
    for (int i = 0; i < 64; i++) x += d[i];
    if (x == 12345.f) sink[t] = x; /* keeps the chain */
}

static float tf32_trunc(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u &= 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}
static float tf32_round(float x) /* to nearest, ties away (cvt.rna.tf32.f32) */
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

int main(void)
{
    int dev = 0;
    cudaDeviceProp pr;
    ck(cudaGetDeviceProperties(&pr, dev), __LINE__);
    printf("device: %s, %d SMs\n", pr.name, pr.multiProcessorCount);
    /* 1, 2 */
    const int NA = 64 * 8;
    float hA[NA], hB[NA], hss[64 * 64], hrs[64 * 64];
    srand(20261205);
    for (int i = 0; i < NA; i++) {
        hA[i] = 1.f + (float)rand() / RAND_MAX; /* [1, 2): every low bit in play */
        hB[i] = ((rand() & 1) ? 1.f : -1.f) * (1.f + (float)rand() / RAND_MAX);
    }
    float *dA, *dB, *dss, *drs;
    ck(cudaMalloc(&dA, sizeof hA), __LINE__);
    ck(cudaMalloc(&dB, sizeof hB), __LINE__);
    ck(cudaMalloc(&dss, sizeof hss), __LINE__);
    ck(cudaMalloc(&drs, sizeof hrs), __LINE__);
    ck(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice), __LINE__);
    ck(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice), __LINE__);
    layout_kernel<<<1, 128>>>(dA, dB, dss, drs);
    ck(cudaGetLastError(), __LINE__);
    ck(cudaMemcpy(hss, dss, sizeof hss, cudaMemcpyDeviceToHost), __LINE__);
    ck(cudaMemcpy(hrs, drs, sizeof hrs, cudaMemcpyDeviceToHost), __LINE__);
    double e_t = 0, e_r = 0, e_x = 0, e_rs = 0, nrm = 0;
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < 64; n++) {
            double st = 0, sr = 0, sx = 0;
            for (int k = 0; k < 8; k++) {
                st += (double)tf32_trunc(hA[m * 8 + k]) * tf32_trunc(hB[n * 8 + k]);
                sr += (double)tf32_round(hA[m * 8 + k]) * tf32_round(hB[n * 8 + k]);
                sx += (double)hA[m * 8 + k] * hB[n * 8 + k];
            }
            const double y = hss[m * 64 + n];
            e_t = fmax(e_t, fabs(y - st)), e_r = fmax(e_r, fabs(y - sr)), e_x = fmax(e_x, fabs(y - sx));
            e_rs = fmax(e_rs, fabs((double)hrs[m * 64 + n] - y));
            nrm = fmax(nrm, fabs(sx));
        }
    printf("1. operands' low bits: max |D - model| (|D| up to %.1f): truncated %.3g, rounded %.3g, fp32 exact %.3g -> %s\n",
           nrm, e_t, e_r, e_x, e_t < e_r && e_t < 1e-4 ? "TRUNCATED" : e_r < e_t && e_r < 1e-4 ? "ROUNDED" : "NEITHER");
    printf("2. A from registers (a0 g,t  a1 g+8,t  a2 g,t+4  a3 g+8,t+4) against A from shared memory: max diff %.3g -> %s\n",
           e_rs, e_rs == 0 ? "PASS" : "FAIL");
    /* 3 */
    float *sink;
    ck(cudaMalloc(&sink, 256 * 4), __LINE__);
    const char *names[4] = {"tf32 m64n64k8 SS", "tf32 m64n64k8 RS", "tf32 m64n128k8 SS", "bf16 m64n64k16 SS"};
    const double flop1[4] = {2.0 * 64 * 64 * 8, 2.0 * 64 * 64 * 8, 2.0 * 64 * 128 * 8, 2.0 * 64 * 64 * 16};
    cudaEvent_t e0, e1;
    ck(cudaEventCreate(&e0), __LINE__);
    ck(cudaEventCreate(&e1), __LINE__);
    for (int mode = 0; mode < 4; mode++)
        for (int wgs = 1; wgs <= 2; wgs++) {
            const int n = 1 << 14, blocks = pr.multiProcessorCount;
            float best = 1e30f;
            for (int rep = 0; rep < 4; rep++) {
                ck(cudaEventRecord(e0), __LINE__);
                if (mode == 0) rate_kernel<0><<<blocks, 128 * wgs>>>(sink, n);
                if (mode == 1) rate_kernel<1><<<blocks, 128 * wgs>>>(sink, n);
                if (mode == 2) rate_kernel<2><<<blocks, 128 * wgs>>>(sink, n);
                if (mode == 3) rate_kernel<3><<<blocks, 128 * wgs>>>(sink, n);
                ck(cudaEventRecord(e1), __LINE__);
                ck(cudaEventSynchronize(e1), __LINE__);
                ck(cudaGetLastError(), __LINE__);
                float ms;
                ck(cudaEventElapsedTime(&ms, e0, e1), __LINE__);
                if (rep > 0 && ms < best) best = ms;
            }
            const double tf = flop1[mode] * n * blocks * wgs / (best * 1e-3) / 1e12;
            printf("3. %-18s %d warpgroup(s) an SM: %7.1f TFLOP/s (%.3f ms)\n", names[mode], wgs, tf, best);
        }
    return 0;
}
