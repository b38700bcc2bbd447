/* What a backend gives the dispatch (src/dispatch.c): one table entry each.
 * A backend is called only with a descriptor that sgla_check_desc passed,
 * with values read from host memory when values_on_host is set. */
#ifndef SGLA_BACKEND_H
#define SGLA_BACKEND_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sgla_backend_impl {
    /* 1: g, g_gamma, cu_seqlens (and with SGLA_FLAG_CHECK_FINITE q, k, v, h0)
     * are host memory, checked before the call */
    int values_on_host;
    /* 1 when the backend can run here; else 0 and a sentence in why[0..n).
     * Must not touch sgla_last_error().  NULL: always available. */
    int (*probe)(char *why, size_t n);
    /* o (and ht) for kind (the reference kinds share one entry) */
    sgla_status (*forward)(const sgla_forward_desc *d, sgla_backend kind);
    /* device or host scratch the caller may pass in d->workspace; NULL: none */
    sgla_status (*workspace_size)(const sgla_forward_desc *d, size_t *bytes);
    /* the gradients (sgla_backward); NULL: the backend has none */
    sgla_status (*backward)(const sgla_backward_desc *b, sgla_backend kind);
    sgla_status (*backward_workspace_size)(const sgla_backward_desc *b, size_t *bytes);
    /* free what the backend keeps between calls; NULL: nothing */
    void (*release)(void);
} sgla_backend_impl;

extern const sgla_backend_impl sgla_backend_ref;  /* src/ref: kinds REF_A..REF_D */
extern const sgla_backend_impl sgla_backend_cpu;  /* src/cpu */
#ifdef SGLA_HAVE_CUDA
extern const sgla_backend_impl sgla_backend_cuda; /* src/cuda */
#endif

#ifdef __cplusplus
}
#endif

#endif
