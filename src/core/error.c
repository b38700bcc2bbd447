/* Status strings and the per-thread detail of the last error. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[256];

sgla_status sgla_fail(sgla_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

void sgla_clear_error(void) { last_error[0] = '\0'; }

const char *sgla_last_error(void) { return last_error; }

const char *sgla_version(void) { return SGLA_VERSION_STRING; }

const char *sgla_status_string(sgla_status s)
{
    switch (s) {
    case SGLA_OK: return "success";
    case SGLA_ERR_NULL_POINTER: return "a required pointer is NULL";
    case SGLA_ERR_INVALID_SIZE: return "invalid size: K, V must be >= 1 and B, T, H >= 0";
    case SGLA_ERR_SIZE_OVERFLOW: return "sizes overflow a 64-bit element count or byte size";
    case SGLA_ERR_BOTH_GATES: return "both g and g_gamma given: pass at most one gate";
    case SGLA_ERR_POSITIVE_GATE: return "a log-gate is positive (alpha > 1): gates must be <= 0";
    case SGLA_ERR_NONFINITE_GATE: return "a log-gate is NaN or infinite";
    case SGLA_ERR_INVALID_SCALE: return "scale is NaN or infinite";
    case SGLA_ERR_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case SGLA_ERR_UNSUPPORTED_CHUNK: return "unsupported chunk size";
    case SGLA_ERR_CU_SEQLENS_BATCH: return "cu_seqlens requires B == 1";
    case SGLA_ERR_CU_SEQLENS_START: return "cu_seqlens must start at 0";
    case SGLA_ERR_CU_SEQLENS_DECREASING: return "cu_seqlens must be non-decreasing";
    case SGLA_ERR_CU_SEQLENS_END: return "cu_seqlens must end at T";
    case SGLA_ERR_INVALID_NUM_SEQS: return "num_seqs must be >= 1 when cu_seqlens is given";
    /* the backward's dout and dht too: the detail names the tensor and element */
    case SGLA_ERR_NONFINITE_INPUT: return "an input holds a NaN or infinity";
    case SGLA_ERR_UNSUPPORTED_SHAPE: return "shape not supported by this backend";
    case SGLA_ERR_BACKEND_UNAVAILABLE: return "backend not available in this build or on this machine";
    case SGLA_ERR_INVALID_BACKEND: return "not a valid backend";
    case SGLA_ERR_INVALID_ARGUMENT: return "invalid argument";
    case SGLA_ERR_OVERLAP: return "an output buffer overlaps an input, another output or the workspace";
    case SGLA_ERR_OUT_OF_MEMORY: return "out of memory";
    case SGLA_ERR_CUDA: return "CUDA runtime error";
    case SGLA_ERR_INTERNAL: return "internal error";
    case SGLA_ERR_POOL_INDEX: return "a state-pool index is out of range";
    case SGLA_ERR_POOL_CONFLICT: return "two writes name the same state-pool slot";
    }
    return "unknown status code";
}
