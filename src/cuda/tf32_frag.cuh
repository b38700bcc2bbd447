/* 3xTF32 on mma.sync m16n8k8: fp32 operands split into two TF32 halves, shared by the fp32 forward
 * (chunk_fwd_tf32.cu) and the fp32 backward's state products (chunk_bwd.cu).  Fragments of
 * m16n8k8.row.col (g = lane / 4, t = lane % 4): A a0 (row g, k t), a1 (g + 8, t), a2 (g, t + 4),
 * a3 (g + 8, t + 4); B b0 (k t, column g), b1 (t + 4, g); C c0, c1 (row g, columns 2 t, 2 t + 1),
 * c2, c3 (row g + 8, the same columns). */
#ifndef SGLA_TF32_FRAG_CUH
#define SGLA_TF32_FRAG_CUH

#include <stdint.h>

namespace {

/* x = hi + lo in TF32 (lo unused, and so not computed, without X3) by integer operations, as the
 * tensor cores read only the top 19 bits of a TF32 operand: hi = x rounded at bit 13 and masked,
 * lo = x - hi exactly, passed whole (the hardware drops its low bits: 2^-21 of x).  Three integer
 * and float operations where two cvt.rna cost more (docs/perf.md, session 7). */
__device__ __forceinline__ void tf32_split(float x, uint32_t &hi, uint32_t &lo)
{
    hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    lo = __float_as_uint(x - __uint_as_float(hi));
}

__device__ __forceinline__ void mma_tf32(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* An operand split in two: A fragments (4 values) and B fragments (2) */
struct FragA {
    uint32_t h[4], l[4];
};
struct FragB {
    uint32_t h[2], l[2];
};
__device__ __forceinline__ void frag_a(FragA &f, float a0, float a1, float a2, float a3)
{
    tf32_split(a0, f.h[0], f.l[0]);
    tf32_split(a1, f.h[1], f.l[1]);
    tf32_split(a2, f.h[2], f.l[2]);
    tf32_split(a3, f.h[3], f.l[3]);
}
__device__ __forceinline__ void frag_b(FragB &f, float b0, float b1)
{
    tf32_split(b0, f.h[0], f.l[0]);
    tf32_split(b1, f.h[1], f.l[1]);
}
/* c += a b: the two small products first, then the large one */
template <bool X3> __device__ __forceinline__ void mma3(float c[4], const FragA &a, const FragB &b)
{
    if constexpr (X3) {
        mma_tf32(c, a.l, b.h[0], b.h[1]);
        mma_tf32(c, a.h, b.l[0], b.l[1]);
    }
    mma_tf32(c, a.h, b.h[0], b.h[1]);
}

} /* namespace */

#endif
