/* The chunked forward for fp16 inputs: one instance per row of chunk_fwd_config.cuh. */
#include "chunk_fwd.cuh"

static_assert(SGLA_NUM_CHUNK_CONFIGS == 4, "one instance per configuration row");
const sgla_chunk_kernel sgla_chunk_fwd_f16[SGLA_NUM_CHUNK_CONFIGS] = {
    chunk_row<ElemF16, 0>(), chunk_row<ElemF16, 1>(), chunk_row<ElemF16, 2>(), chunk_row<ElemF16, 3>()};
