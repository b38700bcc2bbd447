/* The GPU tests' check of a CUDA runtime call: a failure is fatal (exit 2),
 * printed with the call and its place. */
#ifndef SGLA_TESTS_GPU_CHECK_H
#define SGLA_TESTS_GPU_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuda/cuda_dev.h"
#include "testutil.h"

#define CK(call)                                                                                                     \
    do {                                                                                                             \
        cudaError_t e_ = (call);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                     \
            fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));             \
            exit(2);                                                                                                 \
        }                                                                                                            \
    } while (0)

/* A call made while st is captured into a graph, instantiated: NULL (the failure recorded) where the
 * call or the capture failed.  The caller launches it and destroys it. */
typedef sgla_status (*gpu_call)(const void *desc);
static inline cudaGraphExec_t gpu_capture(cudaStream_t st, gpu_call call, const void *desc)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const sgla_status s = call(desc);
    const cudaError_t ce = cudaStreamEndCapture(st, &graph);
    TU_CHECK(s == SGLA_OK && ce == cudaSuccess, "capture: %s (%s), %s", sgla_status_string(s), sgla_last_error(),
             cudaGetErrorString(ce));
    if (s == SGLA_OK && ce == cudaSuccess) CK(cudaGraphInstantiate(&exec, graph, 0));
    if (graph) cudaGraphDestroy(graph); /* the instance keeps what it needs */
    return exec;
}
static inline sgla_status gpu_cuda_forward(const void *d) { return sgla_forward((const sgla_forward_desc *)d, SGLA_BACKEND_CUDA); }
static inline sgla_status gpu_cuda_backward(const void *b)
{
    return sgla_backward((const sgla_backward_desc *)b, SGLA_BACKEND_CUDA);
}

/* Whether this build runs the Hopper kernels on this device: the usual plan of a bf16 K = V = 64 forward
 * is a Hopper row (config >= 0).  A build of sm_80 PTX alone (JIT-compiled here), or a GPU before Hopper,
 * plans the mma.sync path, and the Hopper-only paths a test forces are refused there. */
static inline int gpu_hopper_kernels(void)
{
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.dtype = SGLA_BF16, d.B = 1, d.T = 64, d.H = 1, d.K = 64, d.V = 64, d.scale = 0.125f;
    /* the plan reads no data: addresses apart from one another will do */
    d.q = (void *)(uintptr_t)(1ull << 40), d.k = (void *)(uintptr_t)(2ull << 40);
    d.v = (void *)(uintptr_t)(3ull << 40), d.o = (void *)(uintptr_t)(4ull << 40);
    sgla_cuda_plan pl = {-1, 0};
    return sgla_cuda_plan_of(&d, &pl) == SGLA_OK && pl.config >= 0;
}

/* gpu_hopper_kernels(), printed, and checked against SGLA_GPU_EXPECT_HOPPER (1 or 0) where the caller
 * knows the answer (bench/device_run.sh: an sm_90a build on a compute capability 9.0 device), so that
 * the checks it gates cannot go quiet through a plan that stopped taking the Hopper rows */
static inline int gpu_hopper_kernels_checked(const char *suite)
{
    const int h = gpu_hopper_kernels();
    printf("%s: Hopper kernels %s\n", suite, h ? "run here" : "absent (the mma.sync path alone)");
    const char *want = getenv("SGLA_GPU_EXPECT_HOPPER");
    if (want && *want)
        TU_CHECK(h == (atoi(want) != 0), "Hopper kernels %s, SGLA_GPU_EXPECT_HOPPER=%s", h ? "run" : "absent", want);
    return h;
}

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
