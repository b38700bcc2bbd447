/* The hook between `sgla verify` (tools/cmd_verify.c, levels 1-3 on the
 * CPU) and the GPU levels 4-5 (tools/verify_cuda.c). */
#ifndef SGLA_VERIFY_H
#define SGLA_VERIFY_H

#include <stdint.h>

/* Run verification levels 4 (CUDA kernel against the fp64 reference on
 * fresh random inputs drawn from seed) and 5 (latency by CUDA events),
 * printing their tables and PASS/FAIL lines.  quick != 0 asks for a
 * shorter run.  Returns the number of failed checks, or -1 when the levels
 * were skipped (no CUDA build or no device), after printing why. */
int verify_cuda_levels(uint64_t seed, int quick);

#endif
