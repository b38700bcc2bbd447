/* Development hooks of the CUDA backend, for the benchmarks and the tests:
 * not installed and not exported (tools and tests link the static library).
 * Plain C. */
#ifndef SGLA_CUDA_DEV_H
#define SGLA_CUDA_DEV_H

#include "sgla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A row of the chunked forward's configuration table (chunk_fwd_config.cuh). */
typedef struct sgla_cuda_config_info {
    int K, v_min, v_max; /* the shapes the row serves */
    int bv, stages, out_wgs;
    unsigned smem;       /* dynamic shared memory of a block, bytes */
    int threads;
    const char *why;
    int persists;        /* 1: the row has a persistent-grid instance (sgla_cuda_plan.blocks) */
} sgla_cuda_config_info;

int sgla_cuda_num_configs(void);
/* 1 and *out filled for a row in [0, sgla_cuda_num_configs()), else 0. */
int sgla_cuda_config(int row, sgla_cuda_config_info *out);

/* What a call chooses, or is forced to: the configuration row
 * (SGLA_CUDA_CONFIG_PORTABLE for the mma.sync path of GPUs before Hopper; with
 * fp32 inputs SGLA_CUDA_CONFIG_F32_HOPPER or SGLA_CUDA_CONFIG_F32_CHUNKED, the chunked form on TF32 tensor
 * cores by wgmma (Hopper) or mma.sync, or SGLA_CUDA_CONFIG_F32_RECURRENT, the token recurrence on CUDA cores)
 * and the number of time segments (1: no split). */
typedef struct sgla_cuda_plan {
    int config;
    int nseg;
    /* blocks along the (sequence, head) axis: 0 the usual choice, -1 one block each, n > 0 a persistent
     * grid of n blocks that walk them (fewer where there are fewer pairs; a row with a persistent
     * instance, no cu_seqlens, no split).  sgla_cuda_plan_of gives 0 or the persistent grid's n. */
    int blocks;
    /* a split's first pass (each segment's local state; only the segments before the last need one):
     * its segments a segment, so that its blocks fill the SMs: 0 the usual choice, 1 the segments
     * themselves, n > 1 forced (a divisor of a segment's 64-token chunks; the Hopper rows' forward).
     * sgla_cuda_plan_of gives the usual one. */
    int sub;
    /* the mma.sync path's columns of V a block (64 or 128; 0 the usual choice, which
     * sgla_cuda_plan_of gives; 0 on the other paths) */
    int cols;
} sgla_cuda_plan;

/* The plan sgla_forward(d, SGLA_BACKEND_CUDA) would run on the current device. */
sgla_status sgla_cuda_plan_of(const sgla_forward_desc *d, sgla_cuda_plan *plan);

/* sgla_forward(d, SGLA_BACKEND_CUDA) with the plan forced: force->config a
 * row (-1: the usual one) that serves d's K and V, or SGLA_CUDA_CONFIG_PORTABLE
 * (the mma.sync path of GPUs before Hopper: bf16 / fp16, K in {64, 128, 256}),
 * force->nseg 0 (the usual split), 1 (none) or the number of segments (not
 * with cu_seqlens; not for fp32), force->blocks, force->sub and force->cols as above.  A plan that cannot serve d is
 * SGLA_ERR_INVALID_ARGUMENT. */
#define SGLA_CUDA_CONFIG_PORTABLE (-2)
#define SGLA_CUDA_CONFIG_F32_CHUNKED (-3)   /* fp32: K in {64, 128}, V a multiple of 64, 16-byte aligned */
#define SGLA_CUDA_CONFIG_F32_RECURRENT (-4) /* fp32: every shape */
#define SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE (-5) /* the mma.sync path with one stage of q, k, v (small blocks) */
#define SGLA_CUDA_CONFIG_F32_HOPPER (-6) /* fp32 on wgmma (sm_90a): the shapes of SGLA_CUDA_CONFIG_F32_CHUNKED */
sgla_status sgla_cuda_forward_forced(const sgla_forward_desc *d, const sgla_cuda_plan *force);

/* sgla_backward(b, SGLA_BACKEND_CUDA) on a chosen path: 0 the usual one, 1
 * the CUDA-core kernels, 2 the mma.sync tensor-core kernels, 3 the three
 * passes of the chunked forward kernel (Hopper), 4 the mma.sync kernels with
 * one stage of tiles (as on smaller blocks) (SGLA_ERR_INVALID_ARGUMENT
 * where they cannot serve b: dtype, K, V or alignment); nseg 0 the usual
 * sequence split, 1 none, up to 64 segments (paths 2 and 3 without
 * cu_seqlens; fewer when T is short; path 3 splits each pass in nseg).  A forced plan's workspace can differ
 * from sgla_backward_workspace_size's: pass none (the stream-ordered
 * allocator serves it). */
sgla_status sgla_cuda_backward_forced(const sgla_backward_desc *b, int path, int nseg);
/* The workspace sgla_cuda_backward_forced(b, path, nseg) needs (its tensors may be NULL, as for
 * sgla_backward_workspace_size; the plan then takes them as 16-byte aligned). */
sgla_status sgla_cuda_backward_forced_workspace(const sgla_backward_desc *b, int path, int nseg, size_t *bytes);
/* The three-pass backward in tseg (2..64) time windows (bwd3_run_windows), or 1: the whole sequence,
 * every other chunk's state kept (as under a workspace cap; windows and groups keep them so too):
 * bytes NULL runs it, else the workspace it needs goes there (tensors may then be NULL) */
sgla_status sgla_cuda_backward_windows(const sgla_backward_desc *b, int tseg, size_t *bytes);
/* ... in batch groups (2 or more; bwd3_run_groups), where each group keeps twice the SMs' (sequence,
 * head) pairs */
sgla_status sgla_cuda_backward_groups(const sgla_backward_desc *b, int groups, size_t *bytes);

/* From now on every device's facts as those of a GPU of compute capability cc (10 major + minor,
 * e.g. 89) whose blocks hold at most optin bytes of shared memory (sm_86 / sm_89: 101376; sm_80:
 * 166912): the Hopper kernels are left out below 90, and each kernel is taken only where its
 * shared memory fits, as on that GPU.  cc 0: the device's own again.  For the tests on an H200;
 * call with no work in flight (the facts are looked up again on the next call). */
void sgla_cuda_dev_emulate(int cc, int optin);

#ifdef __cplusplus
}
#endif

#endif
