/* Gate g for the chunked kernel's rows that read b (sgla_row_reads_b): b, the chunk-local inclusive
 * cumulative log2 gate (floored), of every token and head, into rows of the workspace, one per head
 * and token-contiguous (gb[h gb_ld + b T + t]).  Each block takes chunks of one sequence: their 64 x H
 * gates read whole lines (g is [B,T,H]), transposed through shared memory, each head's 64 scanned by a
 * warp with the kernel's own scan (chunk_gate_b): b of every row is the in-kernel scan's bits; past a
 * partial chunk's end the kernel takes its last b, where the scan of zeros could differ in the last bit. */
#include "cuda_backend.cuh"
#include "chunk_fwd.cuh"

namespace {

constexpr int GB_WARPS = 8, GB_HEADS = 32; /* a block's warps; heads a pass of the tile */

__global__ void __launch_bounds__(GB_WARPS * 32) gate_b_kernel(const sgla_kparams p)
{
    __shared__ float tile[64][GB_HEADS + 1]; /* + 1: a warp reads a column */
    sgla_griddep_launch(); /* the chunked kernel's blocks set up meanwhile; its producer waits for b */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int64_t bidx, t0, t1;
    sgla_seq_range(&p, p.n0 + blockIdx.x, &bidx, &t0, &t1); /* n0: a pool's first prefill */
    const int64_t len = t1 - t0, nch = (len + 63) / 64;
    for (int64_t c = blockIdx.y; c < nch; c += gridDim.y) {
        const int64_t r0 = bidx * p.T + t0 + 64 * c; /* the chunk's first token row */
        const int cl = chunk_rows(len, (int)c);
        for (int64_t h0 = 0; h0 < p.H; h0 += GB_HEADS) {
            const int hw = p.H - h0 < GB_HEADS ? (int)(p.H - h0) : GB_HEADS;
            for (int r = warp; r < 64; r += GB_WARPS)
                tile[r][lane] = r < cl && lane < hw ? __ldg(p.g + (r0 + r) * p.H + h0 + lane) : 0.f;
            __syncthreads();
            for (int hh = warp; hh < hw; hh += GB_WARPS) {
                float x0 = tile[lane][hh], x1 = tile[lane + 32][hh];
                chunk_gate_b(x0, x1, lane);
                float *dst = (float *)p.gb + (h0 + hh) * p.gb_ld + r0;
                if (lane < cl) dst[lane] = x0;
                if (lane + 32 < cl) dst[lane + 32] = x1;
            }
            __syncthreads(); /* the tile is read before the next heads overwrite it */
        }
    }
}

} // namespace

sgla_status sgla_gate_b_launch(const sgla_kparams *p, int sms, cudaStream_t st)
{
    /* a block a chunk where the sequences have that many; about four blocks an SM in all */
    const int64_t chunks = (p->T + 63) / 64, want = 4 * (int64_t)sms;
    int64_t z = (want + p->N - 1) / p->N;
    if (z > chunks) z = chunks;
    if (z > 65535) z = 65535;
    if (z < 1) z = 1;
    if (p->N > 0x7fffffffLL)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "gate b: %lld sequences exceed the grid", (long long)p->N);
    gate_b_kernel<<<dim3((unsigned)p->N, (unsigned)z), GB_WARPS * 32, 0, st>>>(*p);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return sgla_fail(SGLA_ERR_CUDA, "launch of the gate's b: %s", cudaGetErrorString(e));
    return SGLA_OK;
}
