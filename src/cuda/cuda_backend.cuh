/* Shared by the CUDA backend's translation units (host side): the kernel
 * parameter block and the launchers that are plain functions. */
#ifndef SGLA_CUDA_BACKEND_CUH
#define SGLA_CUDA_BACKEND_CUH

#include <cuda_runtime.h>

#include "core/core.h"
#include "fwd_params.cuh"

/* The sequence split's scan over segments (cuda_backend.cu): buf [nseg][nh_count][kv] holds each
 * segment's local state from zero; on exit the state entering each segment from init (reverse = 0),
 * or the gradient of the state leaving it from init (reverse = 1); ld [nseg][nh_count] the
 * segments' total log2 decays. */
sgla_status sgla_seg_scan(float *buf, const float *ld, const float *init, int nseg, int64_t nh_count, int64_t kv,
                          int reverse, cudaStream_t st);

/* fp32 inputs: the token recurrence on CUDA cores (recurrent_fwd_f32.cu). */
sgla_status sgla_recurrent_fwd_f32(const sgla_kparams *p, cudaStream_t st);

/* fp32 inputs on TF32 tensor cores (chunk_fwd_tf32.cu): K in {64, 128}, V a multiple of 64,
 * 16-byte aligned tensors; x3: 3xTF32 (fp32's accuracy), else TF32 alone. */
int sgla_fwd_tf32_supported(int64_t K, int64_t V);
/* a block's shared memory with nst stages of q, k, v (two: K = 64 on sm_80, K = 128 on Hopper; one: K = 128
 * on sm_80, K = 64 on sm_86 / sm_89) */
size_t sgla_fwd_tf32_smem(int64_t K, int nst);
size_t sgla_fwd_wgtf32_smem(int64_t K); /* the Hopper (wgmma) kernel's block */
cudaError_t sgla_fwd_tf32_setup(int optin); /* the shared-memory opt-in of every instance that fits optin */
/* tm: the Hopper kernel (sm_90a), which loads whole chunks of q, k and v by its maps (fp32, 128-byte boxes);
 * NULL: the mma.sync one with nst (1, 2) stages */
sgla_status sgla_fwd_tf32_launch(const sgla_kparams *p, const sgla_tmaps *tm, int x3, int nst, cudaStream_t st);

/* gate g at the rows that read b (sgla_row_reads_b): p->gb (gb_ld) from p->g for the chunked kernel's forward and backward passes (gate_b.cu);
 * sms: the device's, for the grid */
sgla_status sgla_gate_b_launch(const sgla_kparams *p, int sms, cudaStream_t st);

/* The state pool (pool_fwd.cu): sgla_kparams' h0 is the pool. */
typedef struct sgla_poolparams {
    const void *indices;                    /* [N] or [N][t_max], int32 or int64 */
    const void *num_accepted;               /* [N] or NULL */
    const unsigned char *has_initial_state; /* [N] or NULL */
    int64_t slots, t_max;
    int64_t chunk_from; /* > 0: sequences this long in a valid slot are the chunked kernel's */
    int bits, inplace, v_first;
} sgla_poolparams;
int sgla_pool_supported(int64_t K, int64_t V);
/* after_chunked: launched as a programmatic dependent of the chunked kernel just launched on st;
 * wide_ok: sgla_pool_setup's answer for this device */
sgla_status sgla_pool_launch(const sgla_kparams *p, const sgla_poolparams *pp, sgla_dtype dt, int after_chunked,
                             int wide_ok, cudaStream_t st);
/* once per device: the staged instances' shared-memory carveout (a preference) and whether the
 * whole-row blocks' shared memory is allowed (*wide_ok; optin: the device's bytes a block) */
cudaError_t sgla_pool_setup(int optin, int *wide_ok);

/* The chunked forward on mma.sync / cp.async (chunk_fwd_mma.cu): bf16 / fp16, K in {64, 128, 256},
 * V a multiple of the block's cols columns (64 or 128; 64 alone at K = 256), 16-byte aligned
 * tensors, one launch (a split: three, and its workspace). */
int sgla_fwd_mma_supported(sgla_dtype dt, int64_t K, int cols);
/* a block's shared memory with nst stages of q, k, v (2, or 1 where two do not fit); 0: no instance */
size_t sgla_fwd_mma_smem(sgla_dtype dt, int64_t K, int cols, int nst);
cudaError_t sgla_fwd_mma_setup(int optin); /* the shared-memory opt-in of every instance that fits optin bytes */
sgla_status sgla_fwd_mma_launch(const sgla_kparams *p, sgla_dtype dt, int cols, int nst, cudaStream_t st);

/* The backward's parameter block (chunk_bwd.cu). */
typedef struct sgla_bparams {
    const void *q, *k, *v, *dout;      /* the call's dtype */
    const float *g, *g_gamma, *h0, *dht;
    const int64_t *cu;
    void *dq, *dk, *dv;
    float *dg_out;                     /* dg, or the workspace's copy when only dg_gamma is asked for, or NULL */
    float *dgg, *dh0;
    int64_t B, T, H, K, V, N;
    float scale;
    int gmode;                         /* SGLA_GATE_* */
    int64_t *base;                     /* [N + 1] (cu_seqlens): the first block of every sequence */
    float *ws_states, *ws_dstates;     /* [blocks][H][K][V] (CUDA-core path) */
    void *ws_S;                        /* [slots][H][K][V] 16-bit (tensor-core path, dg): S of every chunk */
    /* sequence split (tensor-core path, no cu_seqlens; few (sequence, head) pairs): segment s of nseg
     * covers tokens [s seg_len, (s + 1) seg_len), blockIdx.x = nh nseg + s.  Two state passes give
     * each segment its entering state (seg_S) and its leaving state's gradient (seg_dS), from the
     * local states from zero and each segment's total log2 decay (seg_ld) */
    int nseg;
    int64_t seg_len;
    float *seg_S, *seg_dS, *seg_ld;    /* [nseg][N*H][K][V], the same, [nseg][N*H] */
    int tc_nst;                        /* tensor-core path: its stages of q, k, v, dO (2, or 1 on smaller blocks) */
    int x3;                            /* CUDA-core path, fp32: products in 3xTF32 (1) or TF32 alone (0:
                                        * SGLA_FLAG_ALLOW_TF32); 16-bit inputs always 1 */
    int ss;                            /* CUDA-core path: the gradient kernel stages S and dS' in shared
                                        * memory (sgla_bwd_grads_staged) */
} sgla_bparams;

/* The backward works in blocks of this many tokens; how many blocks a call has at most. */
int64_t sgla_bwd_blocks(int64_t B, int64_t T, int64_t N, int varlen);
/* Dynamic shared memory of the gradient kernel (staged: with its block's two states), whether a call
 * stages them on a device of optin bytes a block, and every instance's opt-in set to bytes. */
size_t sgla_bwd_grads_smem(int64_t K, int64_t V, int staged);
int sgla_bwd_grads_staged(int64_t K, int64_t V, int optin);
cudaError_t sgla_bwd_grads_setup(int bytes);
/* Every launch of the backward on stream st; blocks = sgla_bwd_blocks(...). */
sgla_status sgla_bwd_launch(const sgla_bparams *p, sgla_dtype dt, int64_t blocks, cudaStream_t st);

/* dg_gamma[h] = the sum of dg [BT_all][H] over its rows (or of per-chunk sums [slots][H]), in a fixed order (chunk_bwd.cu) */
sgla_status sgla_dg_gamma_launch(const float *dg, int64_t BT_all, int64_t H, float *dgg, cudaStream_t st);

/* The backward as three passes of the chunked forward kernel (chunk_bwd3.cu): the pieces around
 * them.  dst [nhc][dr][dc] = mul x src [nhc][sr][sc], transposed (trans: dst (r, c) = src (c, r)) or
 * not, zero where src has no element (a padded copy) and src's elements past dst left out (a crop). */
sgla_status sgla_state_copy(float *dst, int64_t dr, int64_t dc, const float *src, int64_t sr, int64_t sc, int64_t nhc,
                            int trans, float mul, cudaStream_t st);
/* dg from the passes' fp32 side outputs (chunk_bwd3.cu): e, ei (dq pass: q.dq through the state and
 * the chunk's own part) [nyq][ld], u, ui (dk pass, k.dk) [nyk][ld], xc [chunk slots][H][nyk][SGLA_XC_STRIDE]. */
typedef struct sgla_dg3params {
    const float *e, *ei, *u, *ui, *xc;
    int nyq, nyk;
    int64_t ld;
    const int64_t *cu;
    int64_t T, H, N;
    float *dg;  /* dg [B T H], or NULL */
    float *dgc; /* g_gamma: each chunk's sum of dg at [slot][H] (sgla_bwd_tc_slots), or NULL */
} sgla_dg3params;
sgla_status sgla_dg3_launch(const sgla_dg3params *p, cudaStream_t st);

/* The tensor-core backward (chunk_bwd_tc.cu): bf16 / fp16, K and V in {64, 128},
 * 16-byte aligned tensors; two launches (six with a split); workspace with dg or
 * dg_gamma: the 16-bit state of every chunk (sgla_bwd_tc_slots x H x K x V) and dg
 * for dg_gamma; with a split, the segments' states (seg_S, seg_dS, seg_ld). */
int sgla_bwd_tc_supported(sgla_dtype dt, int64_t K, int64_t V);
int64_t sgla_bwd_tc_slots(int64_t B, int64_t T, int64_t N);
/* a block's shared memory at its largest for (dt, K, V); 0 where no instance serves it */
size_t sgla_bwd_tc_smem(sgla_dtype dt, int64_t K, int64_t V, int nst); /* nst stages of q, k, v, dO: 2 or 1 */
cudaError_t sgla_bwd_tc_setup(int optin); /* the shared-memory opt-in of every instance that fits optin bytes */
sgla_status sgla_bwd_tc_launch(const sgla_bparams *p, sgla_dtype dt, int nst, cudaStream_t st);

#endif
