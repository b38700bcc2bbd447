/* Memory-path probe for the forward kernels' access pattern (no math): one block
 * per head streams its rows chunk by chunk (64 tokens x 256 bytes of q, k and v
 * read, 64 x 256 bytes of o written, rows H * 256 bytes apart), as the kernels do
 * at B x T x H x 128.  It times two ways of filling the shared-memory stages:
 *   cpasync: every thread issues 16-byte cp.async (what v1-v8 do), ST stages;
 *   bulk:    one warp issues cp.async.bulk row copies (256 bytes each) that
 *            complete on a per-stage mbarrier (transaction count), ST stages.
 * Question it answers: is ~2.1 TB/s (what v5 and v8 reach) a limit of the
 * 16-byte cp.async path with one 256-thread block per SM?
 * Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -o stream_probe bench/stream_probe.cu
 * Run:   ./stream_probe [B T H]   (default 8 4096 16) */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

#define ROWB 256                 /* bytes of one token row of one head (K = 128, bf16) */
#define TILE (64 * ROWB)         /* one tensor's chunk */
#define STAGE (3 * TILE)         /* q, k, v */

static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

template <int ST>
__global__ void __launch_bounds__(256, 1) probe_cpasync(const char *q, const char *k, const char *v, char *o,
                                                         int T, int H, int *sink)
{
    extern __shared__ __align__(128) char sm[];
    const int tid = threadIdx.x, b = blockIdx.x / H, h = blockIdx.x % H;
    const int64_t rs = (int64_t)H * ROWB;
    const char *base[3] = {q + ((int64_t)b * T * H + h) * ROWB, k + ((int64_t)b * T * H + h) * ROWB,
                           v + ((int64_t)b * T * H + h) * ROWB};
    char *ob = o + ((int64_t)b * T * H + h) * ROWB;
    const int nch = T / 64;
    int acc = 0;
    auto load = [&](int c, int s) {
        for (int t = 0; t < 3; t++)
            for (int i = tid; i < TILE / 16; i += 256) {
                const int r = i / (ROWB / 16), cb = (i % (ROWB / 16)) * 16;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(sm + s * STAGE + t * TILE + r * ROWB + cb)),
                             "l"(base[t] + ((int64_t)c * 64 + r) * rs + cb)
                             : "memory");
            }
    };
    for (int i = 0; i < ST - 1; i++) {
        if (i < nch) load(i, i);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (int c = 0; c < nch; c++) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(ST - 2) : "memory");
        __syncthreads();
        if (c + ST - 1 < nch) load(c + ST - 1, (c + ST - 1) % ST);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        const char *st = sm + (c % ST) * STAGE;
        acc += st[tid * 4] + st[TILE + tid * 4] + st[2 * TILE + tid * 4];
        /* o: the q tile written back (one 16-byte store per thread per 4 KB) */
        for (int i = tid; i < TILE / 16; i += 256) {
            const int r = i / (ROWB / 16), cb = (i % (ROWB / 16)) * 16;
            *(uint4 *)(ob + ((int64_t)c * 64 + r) * rs + cb) = *(const uint4 *)(st + r * ROWB + cb);
        }
    }
    if (acc == 0x7fffffff) *sink = acc;
}

template <int ST>
__global__ void __launch_bounds__(256, 1) probe_bulk(const char *q, const char *k, const char *v, char *o, int T,
                                                      int H, int *sink)
{
    extern __shared__ __align__(128) char sm[];
    __shared__ __align__(8) uint64_t full[ST];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, b = blockIdx.x / H, h = blockIdx.x % H;
    const int64_t rs = (int64_t)H * ROWB;
    const char *base[3] = {q + ((int64_t)b * T * H + h) * ROWB, k + ((int64_t)b * T * H + h) * ROWB,
                           v + ((int64_t)b * T * H + h) * ROWB};
    char *ob = o + ((int64_t)b * T * H + h) * ROWB;
    const int nch = T / 64;
    if (tid == 0) {
        for (int s = 0; s < ST; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(&full[s])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto load = [&](int c, int s) { /* warp 0: lane l copies rows l and l + 32 of each tensor */
        if (lane == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(&full[s])),
                         "r"(STAGE)
                         : "memory");
        __syncwarp();
        for (int t = 0; t < 3; t++)
            for (int r = lane; r < 64; r += 32)
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                                 smem_u32(sm + s * STAGE + t * TILE + r * ROWB)),
                             "l"(base[t] + ((int64_t)c * 64 + r) * rs), "r"(ROWB), "r"(smem_u32(&full[s]))
                             : "memory");
    };
    if (warp == 0)
        for (int i = 0; i < ST - 1 && i < nch; i++) load(i, i);
    int acc = 0;
    for (int c = 0; c < nch; c++) {
        const int s = c % ST;
        const uint32_t par = (uint32_t)((c / ST) & 1);
        uint32_t done = 0;
        while (!done)
            asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done)
                         : "r"(smem_u32(&full[s])), "r"(par)
                         : "memory");
        __syncthreads(); /* everyone is past chunk c - 1: its stage may be refilled */
        if (warp == 0 && c + ST - 1 < nch) load(c + ST - 1, (c + ST - 1) % ST);
        const char *st = sm + s * STAGE;
        acc += st[tid * 4] + st[TILE + tid * 4] + st[2 * TILE + tid * 4];
        for (int i = tid; i < TILE / 16; i += 256) {
            const int r = i / (ROWB / 16), cb = (i % (ROWB / 16)) * 16;
            *(uint4 *)(ob + ((int64_t)c * 64 + r) * rs + cb) = *(const uint4 *)(st + r * ROWB + cb);
        }
    }
    if (acc == 0x7fffffff) *sink = acc;
}

template <typename F>
static void timeit(const char *name, F kern, int st, const char *q, const char *k, const char *v, char *o, int B,
                   int T, int H, int *sink)
{
    const size_t smem = (size_t)st * STAGE;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f, tot = 0.f;
    const int reps = 20;
    for (int r = 0; r < reps + 3; r++) {
        CK(cudaEventRecord(e0));
        kern<<<B * H, 256, smem>>>(q, k, v, o, T, H, sink);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) {
            tot += ms;
            if (ms < best) best = ms;
        }
    }
    const double bytes = 4.0 * B * T * H * ROWB;
    printf("%-10s ST=%d  blocks %5d  best %.4f ms  mean %.4f ms  %.2f TB/s (q, k, v read + o written)\n", name, st,
           B * H, best, tot / reps, bytes / (best * 1e-3) / 1e12);
}

int main(int argc, char **argv)
{
    const int B = argc > 3 ? atoi(argv[1]) : 8, T = argc > 3 ? atoi(argv[2]) : 4096, H = argc > 3 ? atoi(argv[3]) : 16;
    const size_t n = (size_t)B * T * H * ROWB;
    char *q, *k, *v, *o;
    int *sink;
    CK(cudaMalloc(&q, n));
    CK(cudaMalloc(&k, n));
    CK(cudaMalloc(&v, n));
    CK(cudaMalloc(&o, n));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(q, 1, n));
    CK(cudaMemset(k, 2, n));
    CK(cudaMemset(v, 3, n));
    printf("B=%d T=%d H=%d, rows of %d bytes %lld bytes apart; %.1f MB moved\n", B, T, H, ROWB,
           (long long)H * ROWB, 4.0 * n / 1e6);
    timeit("cpasync", probe_cpasync<2>, 2, q, k, v, o, B, T, H, sink);
    timeit("cpasync", probe_cpasync<3>, 3, q, k, v, o, B, T, H, sink);
    timeit("bulk", probe_bulk<2>, 2, q, k, v, o, B, T, H, sink);
    timeit("bulk", probe_bulk<3>, 3, q, k, v, o, B, T, H, sink);
    timeit("bulk", probe_bulk<4>, 4, q, k, v, o, B, T, H, sink);
    CK(cudaFree(q));
    CK(cudaFree(k));
    CK(cudaFree(v));
    CK(cudaFree(o));
    return 0;
}
