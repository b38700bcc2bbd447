/* The chunked forward's configurations: one row per (K, V) range, each with
 * the reason for its tile.  The kernels are instantiated from these rows
 * (chunk_fwd_bf16.cu, chunk_fwd_f16.cu) and the host picks a row from them
 * (cuda_backend.cu), so this table is the only place a tile size is written.
 *
 * Every row: chunks of 64 tokens; one block per (sequence, head, BV columns
 * of V), or a persistent grid that walks them (sgla_persist_tokens); a
 * producer warpgroup that loads each chunk's Q, K, V by TMA into a
 * ring of `stages` buffers; `out_wgs` output warpgroups (alternate chunks)
 * and one state warpgroup.  Measured in docs/perf.md (v12 / v13 there).
 * CUDA C++ only (constexpr). */
#ifndef SGLA_CUDA_CHUNK_FWD_CONFIG_H
#define SGLA_CUDA_CHUNK_FWD_CONFIG_H

#include <stdint.h>

typedef struct sgla_chunk_config {
    int K;           /* head dimension of q and k */
    int v_min, v_max; /* the V this row serves */
    int bv;          /* V columns per block (grid.x = V / bv) */
    int stages;      /* TMA stages in flight */
    int out_wgs;     /* output warpgroups (1 or 2) */
    const char *why;
} sgla_chunk_config;

constexpr sgla_chunk_config sgla_chunk_configs[] = {
    {64, 64, 512, 64, 6, 2,
     "the output side is the critical path at K = 64 (weighting 64 x 64 scores per 64 x 64 state): two output "
     "warpgroups take alternate chunks; 24 KB stages, six in flight"},
    {128, 64, 64, 64, 4, 1,
     "V = 64 is one 64-column block; four 40 KB stages in flight"},
    {128, 128, 512, 128, 3, 1,
     "128 columns per block halve the Q.K^T recomputed per V block; three 48 KB stages fill shared memory"},
    {256, 64, 512, 64, 2, 1,
     "a 256 x 64 state is 128 fp32 registers a thread; two 72 KB stages are all that fit"},
};
/* gate g: the rows whose instances read b, the chunk-local cumulative log2 gate, made beforehand by
 * gate_b.cu (a row per head, token-contiguous, in the workspace): a block reads 256 contiguous bytes a
 * chunk where g's layout [B,T,H] puts each token on its own line, and no warp scans (but K = 64's forward
 * where g can be a TMA source: sgla_row_gate_tma below).  The forward's
 * K = 128 producer scans g itself (PS in chunk_fwd.cuh), where gate_b's own launch and bytes would not
 * pay.  The backward's passes read it at every K (three passes share one b; chunk_fwd.cuh's GateB
 * keeps one instance on its scan). */
constexpr bool sgla_row_reads_b(int K, bool backward) { return backward || K != 128; }
/* The forward's row whose producer loads gate g by TMA and scans it itself, where g can be a TMA source (H a
 * multiple of 4, g 16-byte aligned) and the call does not split (kparams.gtma), instead of reading gate_b's
 * b: K = 64, where gate_b's launch and its b were 5-9 % of the call (docs/perf.md, session 35) */
constexpr bool sgla_row_gate_tma(int K) { return K == 64; }
/* The rows with a persistent-grid instance (PT in chunk_fwd.cuh: a block an SM walks the (sequence, head)
 * pairs of its V columns) and the longest sequences the plan gives it: 0 where the row has none.
 * K = 64: a block's set-up and drain cost a few chunks, so short sequences gain (-25 % at 256 tokens,
 * -8 % at 1024, -2 % at 2048) and at 4096 it lost 0.5-4.5 %.  K = 256: a block a pair with a pair's
 * column blocks adjacent in the grid (block_item) was 1-9 % faster than the persistent grid at 512-8192
 * tokens; the persistent grid's earlier -12 to -14 % had been that order of columns.  K = 128: the
 * producer's loop spills at its 40 registers (the block's other 464 a thread are the consumers') and the
 * instance ran 5 % slower even with one pair a block, 8 % at 16x2048x32 (docs/perf.md, sessions 19-20). */
constexpr int64_t sgla_persist_tokens(int K) { return K == 64 ? 2048 : 0; }
constexpr bool sgla_row_persists(int K) { return sgla_persist_tokens(K) > 0; }

constexpr int SGLA_NUM_CHUNK_CONFIGS = (int)(sizeof sgla_chunk_configs / sizeof sgla_chunk_configs[0]);

#endif
