/* The backward's passes on the chunked forward kernel for f16 inputs (chunk_bwd3.cu), one instance
 * per row: [0] in time order with the side outputs (dq), [1] in reverse (dv), [2] in reverse with the
 * side outputs and X_c (dk), [3] dk and dv in one reverse pass (rows with K = bv), [4] [0] with q as a fourth tile. */
#include "chunk_fwd.cuh"

static_assert(SGLA_NUM_CHUNK_CONFIGS == 4, "one instance per configuration row");
const sgla_chunk_kernel sgla_chunk_bwd3_f16[5][SGLA_NUM_CHUNK_CONFIGS] = {
    {chunk_row<ElemF16, 0, 1>(), chunk_row<ElemF16, 1, 1>(), chunk_row<ElemF16, 2, 1>(), chunk_row<ElemF16, 3, 1>()},
    {chunk_row<ElemF16, 0, 2>(), chunk_row<ElemF16, 1, 2>(), chunk_row<ElemF16, 2, 2>(), chunk_row<ElemF16, 3, 2>()},
    {chunk_row<ElemF16, 0, 3>(), chunk_row<ElemF16, 1, 3>(), chunk_row<ElemF16, 2, 3>(), chunk_row<ElemF16, 3, 3>()},
    {chunk_row_merged<ElemF16, 0>(), chunk_row_merged<ElemF16, 1>(), chunk_row_merged<ElemF16, 2>(), chunk_row_merged<ElemF16, 3>()},
    {chunk_row_qtile<ElemF16, 0>(), chunk_row_qtile<ElemF16, 1>(), chunk_row_qtile<ElemF16, 2>(), chunk_row_qtile<ElemF16, 3>()}};
