/* The CPU backend's floating-point mode: subnormals flushed to zero (on x86 MXCSR's FTZ and DAZ bits),
 * set by every thread of a call for its own part and restored after, so the caller's mode is untouched.
 * An x86 core takes a microcode assist for each subnormal operand or result, and strong gates make
 * them in bulk (pair weights and decayed states below 1.2e-38): a whole call ran several times slower
 * (docs/perf-cpu.md, session 52).  Anything below fp32's normal range counts as 0, products of
 * normal inputs included (docs/numerics.md §6), as in the CUDA kernels (--use_fast_math); the fp64
 * references keep IEEE's subnormals. */
#ifndef SGLA_CPU_FPMODE_H
#define SGLA_CPU_FPMODE_H

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
typedef unsigned sgla_fpmode;
static inline sgla_fpmode sgla_fpmode_enter(void)
{
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
    return saved;
}
/* the two bits back as they were; exception flags the call raised stay raised, as any function's */
static inline void sgla_fpmode_leave(sgla_fpmode saved) { _mm_setcsr((_mm_getcsr() & ~0x8040u) | (saved & 0x8040u)); }
#else /* elsewhere subnormals cost no more than other values on the cores we target */
typedef int sgla_fpmode;
static inline sgla_fpmode sgla_fpmode_enter(void) { return 0; }
static inline void sgla_fpmode_leave(sgla_fpmode saved) { (void)saved; }
#endif

#endif
