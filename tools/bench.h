/* `sgla bench`: shared between the CPU bench (cmd_bench.c) and the CUDA
 * bench (bench_cuda.c). */
#ifndef SGLA_BENCH_H
#define SGLA_BENCH_H

#include <stdint.h>
#include "cuda/cuda_dev.h"
#include "sgla.h"

#include <stdio.h>

enum { BENCH_GATE_NONE = 0, BENCH_GATE_GAMMA = 1, BENCH_GATE_G = 2 };
enum { BENCH_TABLE = 0, BENCH_CSV = 1, BENCH_JSON = 2 };
enum { BENCH_MAX_SEQS = 4096 }; /* sequences of a --varlen batch */

typedef struct bench_args {
    sgla_backend backend;
    int nshapes;
    int64_t shapes[32][5];  /* B, T, H, K, V */
    sgla_dtype dtype;
    int gate;               /* BENCH_GATE_* */
    int threads;            /* CPU only; 0 = default */
    int warmup, iters;      /* 0 = the bench's own default */
    uint64_t seed;
    int check;              /* also check against the fp64 reference (tools/conform.h) */
    int config, split;      /* CUDA: force a configuration row (-1: none) and a split (0: none) */
    int blocks;             /* CUDA: force the blocks a column (cuda_dev.h: sgla_cuda_plan.blocks; 0: the usual) */
    int sub;                /* CUDA: force a split's first-pass pieces a segment (sgla_cuda_plan.sub; 0: the usual) */
    int cols;               /* CUDA: force the mma.sync path's columns a block (sgla_cuda_plan.cols; 0: the usual) */
    int bwd_path;           /* CUDA backward: force a path (sgla_cuda_backward_forced; 0: the usual one) */
    int bwd_windows;        /* CUDA backward: the three passes in N time windows (sgla_cuda_backward_windows; 0: none) */
    int bwd_groups;         /* ... in N batch groups (sgla_cuda_backward_groups; 0: none) */
    int bwd_half;           /* ... with SGLA_FLAG_BWD_HALF_STATES (Hopper: every other chunk's state, as under a cap) */
    int backward;           /* also time the backward */
    int no_gate_grad;       /* --no-gate-grad: the backward without dg / dg_gamma (a gate that is not learned) */
    int tf32;               /* --tf32: SGLA_FLAG_ALLOW_TF32 (CUDA, fp32) */
    int format;             /* BENCH_TABLE, BENCH_CSV, BENCH_JSON */
    int pool;               /* --pool: decode (CPU) or every step (CUDA) through a state pool too */
    int varlen_n;           /* --varlen N: N sequences of random lengths (0: none) */
    int nlens;              /* --varlen a,b,...: the given lengths */
    int64_t lens[BENCH_MAX_SEQS];
} bench_args;

/* The cu_seqlens of a shape under --varlen (B must be 1): N + 1 offsets into cu
 * (at most BENCH_MAX_SEQS + 1), *n = N; 0 without --varlen, -1 after a message when the shape
 * cannot take it (tools/cmd_bench.c). */
int bench_varlen(const bench_args *a, const int64_t sh[5], int64_t *cu, int *n);

/* One measured row for --format csv / json (tools/bench_out.c); NaN where a
 * field does not apply. */
typedef struct bench_record {
    const char *backend, *dtype, *gate, *pass, *check; /* pass: fwd, bwd, decode-warm, decode-cold */
    int64_t B, T, H, K, V;
    int nseq;                                          /* packed sequences (--varlen), 0: none */
    double ms, min_ms, cpu_ms, gflops, peak_pct, row, nseg, gbs, floor_ms, x_floor, workspace_mb;
} bench_record;
bench_record bench_record_init(const char *backend, const int64_t sh[5], const char *dtype, const char *gate,
                               const char *pass);
void bench_out_begin(const bench_args *a);
void bench_out_row(const bench_args *a, const bench_record *r); /* nothing in table format */
void bench_out_end(const bench_args *a);
/* where the lines that are not rows go: stdout for the table, stderr otherwise */
FILE *bench_info(const bench_args *a);

/* FLOPs of the chunked algorithm for one forward (counted as 2 per MAC):
 * per chunk of C tokens and head, Q.K^T (C*C*K, half of it masked but
 * computed), A.V (C*C*V), Q.S (C*K*V), K^T.V (C*K*V). */
double bench_flops(int64_t B, int64_t T, int64_t H, int64_t K, int64_t V, int64_t C);

/* 1 after a message when the backend refuses the shape (a call with T = 0, before any allocation; chunk 0:
 * the default) */
int bench_shape_refused(const bench_args *a, const int64_t sh[5], int64_t chunk, sgla_backend be);
int bench_cuda_run(const bench_args *a); /* tools/bench_cuda.c */

/* The backend (CUDA: with the plan `force`, or NULL) against fp64 on fresh
 * inputs shaped like sh (B = 1, at most 2 heads and tmax tokens; nseq > 0, the
 * timed call's packed batch: packed too, into at most BENCH_CHECK_SEQS
 * sequences, without h0 and ht as the timed call); prints one line, returns 1
 * when it fails (tools/cmd_bench.c). */
#define BENCH_CHECK_SEQS 8
int bench_check(const bench_args *a, const int64_t sh[5], int64_t chunk, int64_t tmax, int nseq,
                const sgla_cuda_plan *force);
int bench_check_backward(const bench_args *a, const int64_t sh[5], int64_t tmax, int nseq);
/* A pool step's check (conform_check_pool): with cu (the timed batch's cu_seqlens, nseq > 0) its first
 * BENCH_CHECK_SEQS sequences, the last of them swapped for the batch's longest where that one comes later,
 * each cut to tmax / BENCH_CHECK_SEQS tokens (decodes stay decodes); else at most BENCH_CHECK_SEQS
 * sequences of at most tmax tokens */
int bench_check_pool(const bench_args *a, const int64_t sh[5], int64_t chunk, int64_t tmax, const int64_t *cu,
                     int nseq);

#endif
