/* The GPU tests' check of a CUDA runtime call: a failure is fatal (exit 2),
 * printed with the call and its place. */
#ifndef SGLA_TESTS_GPU_CHECK_H
#define SGLA_TESTS_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuda/cuda_dev.h"

#define CK(call)                                                                                                     \
    do {                                                                                                             \
        cudaError_t e_ = (call);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                     \
            fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));             \
            exit(2);                                                                                                 \
        }                                                                                                            \
    } while (0)

/* The GPUs users own whose facts the tests emulate on this one (sgla_cuda_dev_emulate): compute
 * capability 8.9 with 99 KB a block (RTX 4090, L40S; sm_86 alike), 8.0 with 163 KB (A100) */
typedef struct gpu_emulated {
    int cc, optin;
} gpu_emulated;
static const gpu_emulated GPU_EMULATED[] = {{89, 101376}, {80, 166912}};
#define GPU_NUM_EMULATED ((int)(sizeof GPU_EMULATED / sizeof GPU_EMULATED[0]))

/* from now on the facts of g (its line printed), or the device's own (g NULL) */
static inline void gpu_emulate(const gpu_emulated *g)
{
    sgla_cuda_dev_emulate(g ? g->cc : 0, g ? g->optin : 0);
    if (g) printf("-- as compute capability %d.%d, %d bytes of shared memory a block\n", g->cc / 10, g->cc % 10, g->optin);
}

#endif
