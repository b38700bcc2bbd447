/* The top of the library: the table of backends and the public entries that
 * route a call to one.  Every entry reads the caller's descriptor once
 * (sgla_desc_read), validates it, then hands the backend its own copy. */
#include "dispatch.h"
#include "ref/ref.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef SGLA_HAVE_CUDA
static int cuda_absent(char *why, size_t n)
{
#ifndef SGLA_CUDA_WHY
#define SGLA_CUDA_WHY "not configured"
#endif
    /* the configure step's reason: no nvcc, SGLA_ENABLE_CUDA=OFF, or a sanitizer build */
    snprintf(why, n, "this build has no CUDA backend: %s", SGLA_CUDA_WHY);
    return 0;
}
static const sgla_backend_impl sgla_backend_cuda = {.probe = cuda_absent};
#endif

/* backward: the kind has one (the references share one entry, and only ref-a and ref-b
 * have a backward form) */
static const struct {
    const char *name;
    const sgla_backend_impl *impl;
    int backward;
} backends[] = {
    [SGLA_BACKEND_AUTO] = {"auto", &sgla_backend_cpu, 1},
    [SGLA_BACKEND_REF_A] = {"ref-a", &sgla_backend_ref, 1},
    [SGLA_BACKEND_REF_B] = {"ref-b", &sgla_backend_ref, 1},
    [SGLA_BACKEND_REF_C] = {"ref-c", &sgla_backend_ref, 0},
    [SGLA_BACKEND_REF_D] = {"ref-d", &sgla_backend_ref, 0},
    [SGLA_BACKEND_CPU] = {"cpu", &sgla_backend_cpu, 1},
    [SGLA_BACKEND_CUDA] = {"cuda", &sgla_backend_cuda, 1},
};
enum { NUM_BACKENDS = (int)(sizeof backends / sizeof backends[0]) };

static int valid_backend(sgla_backend b) { return (int)b >= 0 && (int)b < NUM_BACKENDS; }

const char *sgla_backend_name(sgla_backend b) { return valid_backend(b) ? backends[b].name : "unknown"; }

int sgla_backend_probe(sgla_backend b, char *why, size_t n)
{
    if (!valid_backend(b)) {
        snprintf(why, n, "backend %d is not a value of sgla_backend", (int)b);
        return 0;
    }
    const sgla_backend_impl *be = backends[b].impl;
    if (!be->probe || be->probe(why, n)) {
        snprintf(why, n, "available");
        return 1;
    }
    return 0;
}

int sgla_backend_available(sgla_backend b)
{
    char why[256];
    return sgla_backend_probe(b, why, sizeof why);
}

/* SGLA_BACKEND_AUTO for a call (sgla.h): the CPU backend, or reference B for
 * fp64 inputs, which only the references take */
static sgla_backend resolve(sgla_backend b, const sgla_forward_desc *d)
{
    if (b != SGLA_BACKEND_AUTO) return b;
    return d->dtype == SGLA_F64 ? SGLA_BACKEND_REF_B : SGLA_BACKEND_CPU;
}

/* Read and validate d for backend *b (AUTO resolved in place); the backend's own
 * checks come after.  read_values: a call (the values of g, g_gamma, cu_seqlens
 * checked where the backend reads them on the host); 0 for a workspace query,
 * which reads no data (sgla.h). */
static sgla_status prepare(const sgla_forward_desc *user, sgla_backend *bp, sgla_forward_desc *d, int read_values)
{
    sgla_clear_error();
    if (!valid_backend(*bp))
        return sgla_fail(SGLA_ERR_INVALID_BACKEND, "backend %d is not a value of sgla_backend", (int)*bp);
    sgla_status st = sgla_desc_read(user, d);
    if (st != SGLA_OK) return st;
    const sgla_backend b = *bp = resolve(*bp, d);
    if (d->pool && b != SGLA_BACKEND_REF_A && b != SGLA_BACKEND_CPU && b != SGLA_BACKEND_CUDA)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE,
                         "the %s backend does not take a state pool (ref-a, cpu and cuda do)", backends[b].name);
    const sgla_backend_impl *be = backends[b].impl;
    st = read_values ? sgla_check_desc(d, be->values_on_host) : sgla_check_query(d);
    if (st != SGLA_OK) return st;
    char why[256];
    if (be->probe && !be->probe(why, sizeof why))
        return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "%s backend: %s", backends[b].name, why);
    return SGLA_OK;
}

/* A call with no (sequence, head) pair, B = 0 or H = 0: every output but dg_gamma [H] is empty, so no
 * backend runs (validated as any call; sgla.h) */
static int no_pairs(const sgla_forward_desc *d) { return d->B == 0 || d->H == 0; }

sgla_status sgla_forward(const sgla_forward_desc *user, sgla_backend backend)
{
    sgla_forward_desc d;
    sgla_status st = prepare(user, &backend, &d, 1);
    if (st != SGLA_OK || no_pairs(&d)) return st;
    return backends[backend].impl->forward(&d, backend);
}

sgla_status sgla_workspace_size(const sgla_forward_desc *user, sgla_backend backend, size_t *bytes)
{
    sgla_forward_desc d;
    if (!bytes) {
        sgla_clear_error();
        return sgla_fail(SGLA_ERR_NULL_POINTER, "bytes is NULL");
    }
    sgla_status st = prepare(user, &backend, &d, 0);
    if (st != SGLA_OK) return st;
    const sgla_backend_impl *be = backends[backend].impl;
    size_t n = 0; /* *bytes only on success: no output written on a failure */
    if (be->workspace_size && !no_pairs(&d) && (st = be->workspace_size(&d, &n)) != SGLA_OK) return st;
    *bytes = n;
    return SGLA_OK;
}

void sgla_release_memory(void)
{
    for (int i = 0; i < NUM_BACKENDS; i++)
        if (backends[i].impl->release && (i == 0 || backends[i].impl != backends[i - 1].impl))
            backends[i].impl->release();
}

/* Read and validate a backward descriptor for backend *b (AUTO resolved in place);
 * read_values as for prepare. */
static sgla_status prepare_backward(const sgla_backward_desc *user, sgla_backend *bp, sgla_backward_desc *bd,
                                    sgla_forward_desc *fwd, int read_values)
{
    sgla_clear_error();
    if (!valid_backend(*bp))
        return sgla_fail(SGLA_ERR_INVALID_BACKEND, "backend %d is not a value of sgla_backend", (int)*bp);
    sgla_status st = sgla_backward_desc_read(user, bd, fwd);
    if (st != SGLA_OK) return st;
    const sgla_backend b = *bp = resolve(*bp, fwd);
    const sgla_backend_impl *be = backends[b].impl;
    st = read_values ? sgla_check_backward(bd, be->values_on_host) : sgla_check_backward_query(bd);
    if (st != SGLA_OK) return st;
    char why[256];
    if (be->probe && !be->probe(why, sizeof why))
        return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "%s backend: %s", backends[b].name, why);
    if (!be->backward || !backends[b].backward)
        return sgla_fail(SGLA_ERR_BACKEND_UNAVAILABLE, "%s has no backward: the backends with one are ref-a, ref-b, "
                         "cpu and cuda", backends[b].name);
    return SGLA_OK;
}

sgla_status sgla_backward(const sgla_backward_desc *user, sgla_backend backend)
{
    sgla_backward_desc bd;
    sgla_forward_desc fwd;
    sgla_status st = prepare_backward(user, &backend, &bd, &fwd, 1);
    if (st != SGLA_OK) return st;
    if (no_pairs(&fwd)) {
        if (!fwd.H || !bd.dg_gamma) return SGLA_OK;
        /* B = 0 with g_gamma: dg_gamma is a sum over no token, zeros written where the caller's memory is,
         * by the backend's call of one empty sequence (T = 0, no state) */
        sgla_forward_desc f0 = fwd;
        f0.B = 1, f0.T = 0, f0.h0 = NULL, f0.ht = NULL, f0.cu_seqlens = NULL, f0.num_seqs = 0;
        sgla_backward_desc b0 = bd;
        b0.fwd = &f0, b0.dht = NULL, b0.dh0 = NULL;
        return backends[backend].impl->backward(&b0, backend);
    }
    return backends[backend].impl->backward(&bd, backend);
}

sgla_status sgla_backward_workspace_size(const sgla_backward_desc *user, sgla_backend backend, size_t *bytes)
{
    sgla_backward_desc bd;
    sgla_forward_desc fwd;
    if (!bytes) {
        sgla_clear_error();
        return sgla_fail(SGLA_ERR_NULL_POINTER, "bytes is NULL");
    }
    sgla_status st = prepare_backward(user, &backend, &bd, &fwd, 0);
    if (st != SGLA_OK) return st;
    const sgla_backend_impl *be = backends[backend].impl;
    size_t n = 0;
    if (be->backward_workspace_size && !no_pairs(&fwd) && (st = be->backward_workspace_size(&bd, &n)) != SGLA_OK)
        return st;
    *bytes = n;
    return SGLA_OK;
}

sgla_status sgla_reference(const sgla_forward_desc *user, sgla_backend kind, double *o64, double *ht64)
{
    sgla_clear_error();
    sgla_forward_desc d;
    sgla_status st = sgla_desc_read(user, &d);
    if (st != SGLA_OK) return st;
    /* o and ht of the descriptor are ignored here: o64 and ht64 are the outputs, doubles (its workspace
     * fields are checked as a call's: sgla_validate's rules, by sgla_check_query) */
    d.o = NULL;
    d.ht = NULL;
    if (d.pool) return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "sgla_reference does not take a state pool (sgla_forward on ref-a does)");
    st = sgla_check_query(&d); /* the shape and the inputs (no data read yet) */
    if (st != SGLA_OK) return st;
    if ((uintptr_t)o64 % sizeof(double) || (uintptr_t)ht64 % sizeof(double))
        return sgla_fail(SGLA_ERR_INVALID_ARGUMENT, "o64 and ht64 must be aligned to a double (8 bytes)");
    size_t nv = (size_t)(d.B * d.T * d.H * d.V), ns = (size_t)(sgla_num_sequences(&d) * d.H * d.K * d.V);
    if (nv > SIZE_MAX / 8 || ns > SIZE_MAX / 8)
        return sgla_fail(SGLA_ERR_SIZE_OVERFLOW, "fp64 outputs of %zu and %zu doubles overflow", nv, ns);
    if (!o64 && nv > 0) return sgla_fail(SGLA_ERR_NULL_POINTER, "o64 is NULL"); /* (B T H = 0: no output) */
    if (ht64 && (const void *)ht64 == (const void *)d.h0) /* never in place (fp64 over fp32 where h0 is fp32) */
        return sgla_fail(SGLA_ERR_OVERLAP, "ht64 is h0: sgla_reference does not write the state in place");
    st = sgla_check_outputs(&d, o64, nv * 8, "o64", ht64, ns * 8, "ht64");
    if (st == SGLA_OK) st = sgla_check_host_values(&d); /* gates, offsets, finite where asked */
    if (st != SGLA_OK) return st;
    if (kind < SGLA_BACKEND_REF_A || kind > SGLA_BACKEND_REF_D)
        return sgla_fail(SGLA_ERR_INVALID_BACKEND, "kind %d is not a reference (ref-a..ref-d)", (int)kind);
    return no_pairs(&d) ? SGLA_OK : sgla_ref_forward64(&d, kind, o64, ht64);
}
