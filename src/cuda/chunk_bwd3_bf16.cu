/* The backward's passes on the chunked forward kernel for bf16 inputs (chunk_bwd3.cu):
 * [0] in time order with o . dotw (dq), [1] in reverse order (dk, dv); one instance per row. */
#include "chunk_fwd.cuh"

static_assert(SGLA_NUM_CHUNK_CONFIGS == 4, "one instance per configuration row");
const sgla_chunk_kernel sgla_chunk_bwd3_bf16[2][SGLA_NUM_CHUNK_CONFIGS] = {
    {chunk_row<ElemBf16, 0, 1>(), chunk_row<ElemBf16, 1, 1>(), chunk_row<ElemBf16, 2, 1>(), chunk_row<ElemBf16, 3, 1>()},
    {chunk_row<ElemBf16, 0, 2>(), chunk_row<ElemBf16, 1, 2>(), chunk_row<ElemBf16, 2, 2>(), chunk_row<ElemBf16, 3, 2>()}};
