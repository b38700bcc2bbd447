/* Every validation status of sgla.h with an input that triggers it, through
 * sgla_validate, sgla_forward and sgla_reference; on every error the outputs
 * must be untouched (poisoned before, compared byte for byte after).
 *
 * Not triggered here: SGLA_ERR_OUT_OF_MEMORY (no portable way to make
 * malloc fail; under ASan a huge request aborts instead of returning NULL),
 * SGLA_ERR_CUDA and SGLA_ERR_INTERNAL (no bad input reaches them), and
 * SGLA_ERR_UNSUPPORTED_SHAPE unless a CUDA device is present. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

enum { B = 1, T = 6, H = 2, K = 3, V = 3 };
#define NQK (B * T * H * K)
#define NV (B * T * H * V)
#define NS (B * H * K * V)

static float q[NQK], k[NQK], v[NV], g[B * T * H], gg[H], h0[NS];
static float o[NV], ht[NS];
static unsigned char o_snap[sizeof o], ht_snap[sizeof ht];

static void base(sgla_forward_desc *d)
{
    sgla_forward_desc_init(d);
    d->q = q, d->k = k, d->v = v, d->o = o, d->ht = ht, d->h0 = h0;
    d->B = B, d->T = T, d->H = H, d->K = K, d->V = V;
    d->chunk = 4;
}

static void poison(void)
{
    tu_poison(o, SGLA_F32, NV);
    tu_poison(ht, SGLA_F32, NS);
    memcpy(o_snap, o, sizeof o);
    memcpy(ht_snap, ht, sizeof ht);
}

static int untouched(void) { return !memcmp(o_snap, o, sizeof o) && !memcmp(ht_snap, ht, sizeof ht); }

/* Expect `want` from sgla_validate (host values), sgla_forward on a
 * reference and the CPU backend, and sgla_reference; outputs untouched. */
static void expect(const char *what, const sgla_forward_desc *d, sgla_status want)
{
    static const sgla_backend backends[] = {SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_D, SGLA_BACKEND_CPU,
                                            SGLA_BACKEND_AUTO};
    sgla_status st = sgla_validate(d, 1);
    TU_CHECK(st == want, "%s: sgla_validate gave %d (%s), want %d", what, (int)st, sgla_status_string(st), (int)want);
    if (want != SGLA_OK) TU_CHECK(sgla_last_error()[0] != '\0', "%s: no detail in sgla_last_error()", what);
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        poison();
        st = sgla_forward(d, backends[i]);
        TU_CHECK(st == want, "%s: sgla_forward(%s) gave %d (%s), want %d", what, sgla_backend_name(backends[i]),
                 (int)st, sgla_status_string(st), (int)want);
        if (want != SGLA_OK) TU_CHECK(untouched(), "%s: sgla_forward(%s) wrote an output", what,
                                      sgla_backend_name(backends[i]));
    }
    /* sgla_reference ignores d->o and d->ht (it writes o64/ht64), so an
     * overlap of those with the inputs is no error for it. */
    sgla_status want_ref = want == SGLA_ERR_OVERLAP ? SGLA_OK : want;
    double o64[NV], ht64[4 * NS]; /* varlen cases here have up to 3 sequences */
    for (int i = 0; i < NV; i++) o64[i] = -7.0;
    st = sgla_reference(d, SGLA_BACKEND_REF_B, o64, ht64);
    TU_CHECK(st == want_ref, "%s: sgla_reference gave %d, want %d", what, (int)st, (int)want_ref);
    want = want_ref;
    if (want != SGLA_OK) {
        int same = 1;
        for (int i = 0; i < NV; i++) same &= o64[i] == -7.0;
        TU_CHECK(same, "%s: sgla_reference wrote o64", what);
    }
}

static void statuses(void)
{
    sgla_forward_desc d;
    int64_t cu[4];

    base(&d);
    expect("valid", &d, SGLA_OK);

    poison();
    TU_CHECK(sgla_validate(NULL, 1) == SGLA_ERR_NULL_POINTER, "NULL desc: validate");
    TU_CHECK(sgla_forward(NULL, SGLA_BACKEND_REF_A) == SGLA_ERR_NULL_POINTER, "NULL desc: forward");
    TU_CHECK(sgla_reference(NULL, SGLA_BACKEND_REF_A, NULL, NULL) == SGLA_ERR_NULL_POINTER, "NULL desc: reference");
    TU_CHECK(untouched(), "NULL desc: outputs written");

    base(&d), d.q = NULL, expect("q NULL", &d, SGLA_ERR_NULL_POINTER);
    base(&d), d.k = NULL, expect("k NULL", &d, SGLA_ERR_NULL_POINTER);
    base(&d), d.v = NULL, expect("v NULL", &d, SGLA_ERR_NULL_POINTER);
    base(&d), d.o = NULL;
    TU_CHECK(sgla_validate(&d, 1) == SGLA_ERR_NULL_POINTER, "o NULL");
    base(&d);
    {
        double ht64[NS];
        TU_CHECK(sgla_reference(&d, SGLA_BACKEND_REF_A, NULL, ht64) == SGLA_ERR_NULL_POINTER, "o64 NULL");
    }
    /* T = 0 needs no data pointers at all */
    base(&d), d.T = 0, d.q = d.k = d.v = NULL, d.o = NULL, d.g = NULL;
    expect("T = 0 without data", &d, SGLA_OK);

    base(&d), d.B = -1, expect("B = -1", &d, SGLA_ERR_INVALID_SIZE);
    base(&d), d.T = -1, expect("T = -1", &d, SGLA_ERR_INVALID_SIZE);
    base(&d), d.H = -2, expect("H = -2", &d, SGLA_ERR_INVALID_SIZE);
    base(&d), d.K = -3, expect("K < 0", &d, SGLA_ERR_INVALID_SIZE);
    base(&d), d.V = 0, expect("V = 0", &d, SGLA_ERR_INVALID_SIZE);

    base(&d), d.B = d.T = d.H = d.K = (int64_t)1 << 20;
    expect("B*T*H*K overflows", &d, SGLA_ERR_SIZE_OVERFLOW);
    base(&d), d.T = (int64_t)1 << 40, d.K = (int64_t)1 << 22;
    expect("byte size overflows", &d, SGLA_ERR_SIZE_OVERFLOW);
    base(&d), d.T = 0, d.B = 1 << 10, d.K = d.V = (int64_t)1 << 31, d.H = 1;
    expect("state size overflows", &d, SGLA_ERR_SIZE_OVERFLOW);
    { /* a state that fits (2^53 doubles) with T = 0: the chunked references' scratch of C K is refused by
       * its size, not computed in int64 (C K overflowed: UB under UBSan) */
        double ht64w[4];
        base(&d), d.T = 0, d.q = d.k = d.v = NULL, d.o = NULL, d.h0 = NULL, d.ht = NULL, d.g = d.g_gamma = NULL;
        d.H = 1, d.K = (int64_t)1 << 53, d.V = 1, d.chunk = 1024;
        for (int kind = SGLA_BACKEND_REF_B; kind <= SGLA_BACKEND_REF_D; kind++) {
            const sgla_status st = sgla_reference(&d, (sgla_backend)kind, NULL, ht64w);
            TU_CHECK(st == SGLA_ERR_OUT_OF_MEMORY, "K = 2^53, chunk 1024, %s: %s (%s)",
                     sgla_backend_name((sgla_backend)kind), sgla_status_string(st), sgla_last_error());
        }
        /* the same with a token: sgla_reference writes the caller's o64, which a refusal leaves as it was
         * (it was zeroed before the scratch was sized).  q, k, v far above any user address: never read,
         * and their 2^55 bytes overlap no buffer here */
        double o64w[1];
        void *far = (void *)(uintptr_t)0xff00000000000000ull;
        d.T = 1, d.q = d.k = d.v = far;
        for (int kind = SGLA_BACKEND_REF_B; kind <= SGLA_BACKEND_REF_D; kind++) {
            o64w[0] = 42.0;
            const sgla_status st = sgla_reference(&d, (sgla_backend)kind, o64w, ht64w);
            TU_CHECK(st == SGLA_ERR_OUT_OF_MEMORY && o64w[0] == 42.0, "K = 2^53, T = 1, %s: %s (%s), o64[0] = %g",
                     sgla_backend_name((sgla_backend)kind), sgla_status_string(st), sgla_last_error(), o64w[0]);
        }
    }

    base(&d), d.g = g, d.g_gamma = gg, expect("both gates", &d, SGLA_ERR_BOTH_GATES);

    base(&d), d.g = g, g[5] = 0.25f, expect("positive g", &d, SGLA_ERR_POSITIVE_GATE), g[5] = -0.1f;
    base(&d), d.g_gamma = gg, gg[1] = 1e-6f, expect("positive g_gamma", &d, SGLA_ERR_POSITIVE_GATE), gg[1] = -0.2f;
    base(&d), d.g = g, g[0] = NAN, expect("NaN g", &d, SGLA_ERR_NONFINITE_GATE), g[0] = -0.1f;
    base(&d), d.g = g, g[T * H - 1] = -INFINITY, expect("-inf g", &d, SGLA_ERR_NONFINITE_GATE), g[T * H - 1] = -0.1f;
    base(&d), d.g_gamma = gg, gg[0] = INFINITY, expect("inf g_gamma", &d, SGLA_ERR_NONFINITE_GATE), gg[0] = -0.2f;
    /* the value checks can be skipped on purpose (hot paths) */
    base(&d), d.g = g, g[2] = 0.5f, d.flags = SGLA_FLAG_SKIP_VALUE_CHECK;
    TU_CHECK(sgla_validate(&d, 1) == SGLA_OK, "SKIP_VALUE_CHECK skips the gate values");
    g[2] = -0.1f;

    base(&d), d.scale = NAN, expect("NaN scale", &d, SGLA_ERR_INVALID_SCALE);
    base(&d), d.scale = -INFINITY, expect("inf scale", &d, SGLA_ERR_INVALID_SCALE);

    base(&d), d.dtype = (sgla_dtype)7, expect("dtype 7", &d, SGLA_ERR_UNSUPPORTED_DTYPE);
    base(&d), d.dtype = (sgla_dtype)-1, expect("dtype -1", &d, SGLA_ERR_UNSUPPORTED_DTYPE);

    base(&d), d.chunk = 0, expect("chunk 0", &d, SGLA_ERR_UNSUPPORTED_CHUNK);
    base(&d), d.chunk = 1025, expect("chunk 1025", &d, SGLA_ERR_UNSUPPORTED_CHUNK);
    base(&d), d.chunk = 1024, expect("chunk 1024", &d, SGLA_OK);

    cu[0] = 0, cu[1] = 2, cu[2] = 2, cu[3] = T;
    base(&d), d.cu_seqlens = cu, d.num_seqs = 3, d.ht = NULL, d.h0 = NULL;
    expect("valid varlen", &d, SGLA_OK);
    base(&d), d.cu_seqlens = cu, d.num_seqs = 3, d.B = 2, d.ht = NULL, d.h0 = NULL;
    expect("cu_seqlens with B = 2", &d, SGLA_ERR_CU_SEQLENS_BATCH);
    base(&d), d.cu_seqlens = cu, d.num_seqs = 0, expect("num_seqs 0", &d, SGLA_ERR_INVALID_NUM_SEQS);
    base(&d), d.cu_seqlens = cu, d.num_seqs = -2, expect("num_seqs < 0", &d, SGLA_ERR_INVALID_NUM_SEQS);
    base(&d), d.cu_seqlens = cu, d.num_seqs = 3, d.ht = NULL, d.h0 = NULL;
    cu[0] = 1, expect("cu_seqlens[0] = 1", &d, SGLA_ERR_CU_SEQLENS_START), cu[0] = 0;
    cu[2] = 1, expect("cu_seqlens decreasing", &d, SGLA_ERR_CU_SEQLENS_DECREASING), cu[2] = 2;
    cu[3] = T - 1, expect("cu_seqlens end != T", &d, SGLA_ERR_CU_SEQLENS_END), cu[3] = T;

    base(&d), d.flags = SGLA_FLAG_CHECK_FINITE;
    expect("finite inputs with CHECK_FINITE", &d, SGLA_OK);
    q[4] = NAN, expect("NaN q", &d, SGLA_ERR_NONFINITE_INPUT), q[4] = 0.5f;
    k[NQK - 1] = INFINITY, expect("inf k", &d, SGLA_ERR_NONFINITE_INPUT), k[NQK - 1] = 0.5f;
    v[0] = -INFINITY, expect("inf v", &d, SGLA_ERR_NONFINITE_INPUT), v[0] = 0.5f;
    h0[3] = NAN, expect("NaN h0", &d, SGLA_ERR_NONFINITE_INPUT);
    d.flags = 0;
    TU_CHECK(sgla_validate(&d, 1) == SGLA_OK, "NaN h0 passes without CHECK_FINITE");
    h0[3] = 0.0f;

    base(&d), d.threads = -1, expect("threads -1", &d, SGLA_ERR_INVALID_ARGUMENT);
    base(&d), d.flags = 0x80u, expect("unknown flag", &d, SGLA_ERR_INVALID_ARGUMENT);
    base(&d), d.flags = 0x20u, expect("the first unknown flag", &d, SGLA_ERR_INVALID_ARGUMENT);
    base(&d), d.flags = SGLA_FLAG_BWD_HALF_STATES, expect("BWD_HALF_STATES (the forward ignores it)", &d, SGLA_OK);

    /* Overlaps: o on an input, ht on o, ht partly on h0; ht == h0 is allowed. */
    base(&d), d.o = (void *)q, expect("o == q", &d, SGLA_ERR_OVERLAP);
    base(&d), d.o = (void *)(v + 5), d.v = v, expect("o overlaps v", &d, SGLA_ERR_OVERLAP);
    {
        static float big[NV + NS];
        base(&d), d.o = big, d.ht = big + NV - 1;
        TU_CHECK(sgla_validate(&d, 1) == SGLA_ERR_OVERLAP, "ht overlaps o");
    }
    base(&d), d.ht = h0 + 1, expect("ht partly overlaps h0", &d, SGLA_ERR_OVERLAP);
    /* the workspace is written: on an input or an output it is an overlap too (sgla_reference checks
     * the descriptor's workspace fields as a call's, as for workspace_bytes without one, against the
     * inputs: it ignores o) */
    for (int w = 0; w < 2; w++) {
        const char *what = w ? "workspace in o" : "workspace on q";
        base(&d), d.workspace = w ? (void *)(o + NV - 2) : (void *)(q + 3), d.workspace_bytes = 8;
        TU_CHECK(sgla_validate(&d, 1) == SGLA_ERR_OVERLAP, "%s: sgla_validate", what);
        poison();
        TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CPU) == SGLA_ERR_OVERLAP && untouched(), "%s: sgla_forward(cpu)", what);
        TU_CHECK(sgla_forward(&d, SGLA_BACKEND_REF_A) == SGLA_ERR_OVERLAP && untouched(), "%s: sgla_forward(ref-a)", what);
        double o64w[NV];
        TU_CHECK(sgla_reference(&d, SGLA_BACKEND_REF_A, o64w, NULL) == (w ? SGLA_OK : SGLA_ERR_OVERLAP),
                 "%s: sgla_reference", what);
    }
    {
        static float wsb[16];
        base(&d), d.workspace = wsb, d.workspace_bytes = sizeof wsb, expect("workspace apart", &d, SGLA_OK);
        /* an end past the address space (SIZE_MAX bytes from just before q): still an overlap */
        static float arena[16 + NQK];
        memcpy(arena + 16, q, sizeof q);
        base(&d), d.q = arena + 16, d.workspace = arena, d.workspace_bytes = SIZE_MAX;
        TU_CHECK(sgla_validate(&d, 1) == SGLA_ERR_OVERLAP, "a workspace of SIZE_MAX bytes before q: %s",
                 sgla_last_error());
    }
    /* ht == h0 in place, where h0 is another input too: ht still may not overlap it (the CPU backend
     * wrote the state over q while reading it) */
    {
        float qsnap[NQK];
        memcpy(qsnap, q, sizeof q);
        base(&d), d.h0 = q, d.ht = q, expect("ht == h0 == q", &d, SGLA_ERR_OVERLAP);
        TU_CHECK(!memcmp(qsnap, q, sizeof q), "ht == h0 == q: q written");
        static float sh[NS];
        for (int i = 0; i < NS; i++) sh[i] = -0.5f;
        base(&d), d.g_gamma = sh, d.h0 = sh, d.ht = sh, expect("ht == h0 on g_gamma", &d, SGLA_ERR_OVERLAP);
        int same = 1;
        for (int i = 0; i < NS; i++) same &= sh[i] == -0.5f;
        TU_CHECK(same, "ht == h0 on g_gamma: written");
    }
    /* o and ht against the other inputs too: a backend reads gates, offsets
     * and h0 while it writes. */
    {
        static float buf[NV + NS + B * T * H];
        base(&d), d.h0 = buf, d.o = buf + 1, expect("o overlaps h0", &d, SGLA_ERR_OVERLAP);
        base(&d), d.g = buf + NV - 1, d.o = buf, expect("o overlaps g", &d, SGLA_ERR_OVERLAP);
        base(&d), d.g_gamma = buf + 2, d.o = buf, expect("o overlaps g_gamma", &d, SGLA_ERR_OVERLAP);
        base(&d), d.g = buf + 4, d.ht = buf, expect("ht overlaps g", &d, SGLA_ERR_OVERLAP);
        static int64_t cubuf[64];
        memset(buf, 0, sizeof buf);
        cubuf[0] = 0, cubuf[1] = T;
        base(&d), d.cu_seqlens = cubuf, d.num_seqs = 1, d.o = (float *)cubuf,
            expect("o overlaps cu_seqlens", &d, SGLA_ERR_OVERLAP);
    }
    /* Misaligned elements. */
    base(&d), d.q = (const char *)q + 2, expect("q misaligned", &d, SGLA_ERR_INVALID_ARGUMENT);
    base(&d), d.h0 = (const float *)((const char *)h0 + 1), expect("h0 misaligned", &d, SGLA_ERR_INVALID_ARGUMENT);
    /* SKIP_VALUE_CHECK trusts gates and offsets, not q/k/v/h0: CHECK_FINITE still scans. */
    base(&d), d.flags = SGLA_FLAG_CHECK_FINITE | SGLA_FLAG_SKIP_VALUE_CHECK;
    q[2] = NAN, expect("NaN q with CHECK_FINITE | SKIP_VALUE_CHECK", &d, SGLA_ERR_NONFINITE_INPUT), q[2] = 0.5f;

    /* Backends */
    base(&d);
    poison();
    TU_CHECK(sgla_forward(&d, (sgla_backend)42) == SGLA_ERR_INVALID_BACKEND, "backend 42");
    TU_CHECK(sgla_forward(&d, (sgla_backend)-1) == SGLA_ERR_INVALID_BACKEND, "backend -1");
    {
        double o64[NV];
        TU_CHECK(sgla_reference(&d, SGLA_BACKEND_CPU, o64, NULL) == SGLA_ERR_INVALID_BACKEND, "reference kind cpu");
    }
    TU_CHECK(untouched(), "invalid backend: outputs written");
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CUDA) == SGLA_ERR_BACKEND_UNAVAILABLE, "CUDA unavailable");
        TU_CHECK(untouched(), "CUDA unavailable: outputs written");
        printf("test_validate: no CUDA device: SGLA_ERR_UNSUPPORTED_SHAPE not reachable, skipped\n");
    } else {
        /* K = 3 is no CUDA shape; the backend must refuse before touching memory. */
        TU_CHECK(sgla_forward(&d, SGLA_BACKEND_CUDA) == SGLA_ERR_UNSUPPORTED_SHAPE, "CUDA K = 3");
    }
}

static void strings(void)
{
    const char *seen[SGLA_ERR_POOL_CONFLICT + 1];
    for (int s = 0; s <= SGLA_ERR_POOL_CONFLICT; s++) {
        seen[s] = sgla_status_string((sgla_status)s);
        TU_CHECK(seen[s] && seen[s][0], "status %d has no string", s);
        for (int t = 0; t < s; t++) TU_CHECK(strcmp(seen[s], seen[t]) != 0, "statuses %d and %d share a string", s, t);
    }
    TU_CHECK(strstr(sgla_status_string((sgla_status)999), "unknown") != NULL, "unknown status code");
    sgla_forward_desc d;
    base(&d);
    d.K = 0;
    sgla_validate(&d, 1);
    TU_CHECK(strstr(sgla_last_error(), "K") != NULL, "last error names K: '%s'", sgla_last_error());
    base(&d);
    sgla_validate(&d, 1);
    TU_CHECK(sgla_last_error()[0] == '\0', "last error cleared on success");
}

/* The descriptor's size field: what an older or newer caller's header, or an
 * uninitialised descriptor, gets; the workspace fields; the queries that must
 * not touch the last error. */
static void abi(void)
{
    sgla_forward_desc d;
    base(&d);
    TU_CHECK(d.size == sizeof d, "sgla_forward_desc_init sets size = %zu", d.size);
    d.size = 0;
    expect("descriptor size 0", &d, SGLA_ERR_INVALID_ARGUMENT);
    TU_CHECK(strstr(sgla_last_error(), "sgla_forward_desc_init") != NULL, "size error says how: '%s'", sgla_last_error());
    d.size = offsetof(sgla_forward_desc, pool) - 8;
    expect("descriptor one field short of 0.2's layout", &d, SGLA_ERR_INVALID_ARGUMENT);
    d.size = offsetof(sgla_forward_desc, pool); /* a caller built against 0.2: no pool field, read as NULL */
    expect("descriptor of 0.2's layout", &d, SGLA_OK);
    d.size = offsetof(sgla_forward_desc, pool) + 4; /* between the layouts: would read half of pool */
    expect("descriptor size inside a field", &d, SGLA_ERR_INVALID_ARGUMENT);
    d.size = (size_t)-1;
    expect("descriptor size garbage", &d, SGLA_ERR_INVALID_ARGUMENT);

    /* a newer header's descriptor: extra fields at zero are read as absent */
    struct {
        sgla_forward_desc d;
        unsigned char extra[24];
    } newer;
    memset(&newer, 0, sizeof newer);
    base(&newer.d);
    newer.d.size = sizeof newer;
    expect("newer descriptor, extra fields zero", &newer.d, SGLA_OK);
    poison();
    TU_CHECK(sgla_forward(&newer.d, SGLA_BACKEND_CPU) == SGLA_OK && !untouched(), "newer descriptor: o written");
    newer.extra[5] = 1;
    expect("newer descriptor, an unknown field set", &newer.d, SGLA_ERR_INVALID_ARGUMENT);

    base(&d);
    d.workspace_bytes = 64;
    expect("workspace_bytes without workspace", &d, SGLA_ERR_INVALID_ARGUMENT);
    base(&d);
    size_t ws = 123;
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_OK && ws == 0, "CPU workspace %zu", ws);
    ws = 123;
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_REF_B, &ws) == SGLA_OK && ws == 0, "ref-b workspace %zu", ws);
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, NULL) == SGLA_ERR_NULL_POINTER, "workspace size into NULL");
    d.K = 0;
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_ERR_INVALID_SIZE, "workspace size validates");
    /* a query reads no data (sgla.h): bad gate values are the call's error, not the query's */
    base(&d), d.g = g, g[0] = NAN;
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_OK, "workspace size read g: %s", sgla_last_error());
    expect("NaN g, the call after the query", &d, SGLA_ERR_NONFINITE_GATE);
    g[0] = -0.1f;
    /* a query may size a call before its tensors exist; the call itself needs them */
    base(&d), d.q = d.k = d.v = NULL, d.o = NULL;
    TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_OK && ws == 0, "query without tensors: %s",
             sgla_last_error());
    expect("the call without tensors", &d, SGLA_ERR_NULL_POINTER);
    TU_CHECK(sgla_workspace_size(&d, (sgla_backend)42, &ws) == SGLA_ERR_INVALID_BACKEND, "workspace size backend 42");
    /* the backward's query the same, and a CPU query refuses what the CPU's call refuses */
    {
        base(&d), d.q = d.k = d.v = NULL, d.o = NULL;
        sgla_backward_desc bq;
        sgla_backward_desc_init(&bq);
        bq.fwd = &d;
        ws = 123;
        TU_CHECK(sgla_backward_workspace_size(&bq, SGLA_BACKEND_CPU, &ws) == SGLA_OK && ws == 0,
                 "backward query without tensors: %s", sgla_last_error());
        TU_CHECK(sgla_backward(&bq, SGLA_BACKEND_CPU) == SGLA_ERR_NULL_POINTER, "the backward call without tensors");
        base(&d), d.K = 65537, d.q = d.k = d.v = NULL, d.o = NULL, d.h0 = NULL, d.ht = NULL, d.g = NULL;
        TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_ERR_UNSUPPORTED_SHAPE, "CPU query at K = 65537: %s",
                 sgla_last_error());
        TU_CHECK(sgla_backward_workspace_size(&bq, SGLA_BACKEND_CPU, &ws) == SGLA_ERR_UNSUPPORTED_SHAPE,
                 "CPU backward query at K = 65537");
        base(&d), d.dtype = SGLA_F64, d.q = d.k = d.v = NULL, d.o = NULL;
        TU_CHECK(sgla_workspace_size(&d, SGLA_BACKEND_CPU, &ws) == SGLA_ERR_UNSUPPORTED_DTYPE, "CPU query in f64");
    }
    /* sgla_validate_backward: the backward's checks alone, values read only when asked (the CLI runs
     * it on host copies before a CUDA call, which reads none) */
    {
        static float dout[NV], dq[NQK], dk[NQK], dv[NV];
        base(&d), d.flags = SGLA_FLAG_CHECK_FINITE;
        sgla_backward_desc bv;
        sgla_backward_desc_init(&bv);
        bv.fwd = &d, bv.dout = dout, bv.dq = dq, bv.dk = dk, bv.dv = dv;
        TU_CHECK(sgla_validate_backward(&bv, 1) == SGLA_OK, "validate_backward: %s", sgla_last_error());
        dout[3] = NAN;
        TU_CHECK(sgla_validate_backward(&bv, 1) == SGLA_ERR_NONFINITE_INPUT && strstr(sgla_last_error(), "dout[3]"),
                 "validate_backward, NaN in dout: %s", sgla_last_error());
        TU_CHECK(sgla_validate_backward(&bv, 0) == SGLA_OK, "validate_backward without reading values");
        dout[3] = 0.0f;
        bv.dq = NULL;
        TU_CHECK(sgla_validate_backward(&bv, 0) == SGLA_ERR_NULL_POINTER, "validate_backward without dq");
        TU_CHECK(sgla_validate_backward(NULL, 0) == SGLA_ERR_NULL_POINTER, "validate_backward(NULL)");
    }

    /* sgla_backend_available keeps the last error */
    base(&d);
    d.K = 0;
    sgla_validate(&d, 1);
    char before[256];
    snprintf(before, sizeof before, "%s", sgla_last_error());
    for (int b = SGLA_BACKEND_AUTO; b <= SGLA_BACKEND_CUDA + 1; b++) (void)sgla_backend_available((sgla_backend)b);
    TU_CHECK(before[0] && !strcmp(before, sgla_last_error()), "sgla_backend_available changed the last error: '%s' -> '%s'",
             before, sgla_last_error());

    /* sgla_reference: fp64 ht64 written over the fp32 h0 is refused (a head's state would
     * overwrite the next head's h0 before it is read) */
    base(&d);
    double o64[NV];
    TU_CHECK(sgla_reference(&d, SGLA_BACKEND_REF_A, o64, (double *)(void *)h0) == SGLA_ERR_OVERLAP,
             "sgla_reference with ht64 == h0 accepted");
    /* its outputs are doubles: aligned to 8 bytes, their extent as doubles, named as themselves */
    {
        static double o64b[NV + 1], ht64b[NS + 1];
        base(&d);
        sgla_status st = sgla_reference(&d, SGLA_BACKEND_REF_A, (double *)(void *)((char *)o64b + 4), ht64b);
        TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "sgla_reference with o64 4 bytes off a double: %s",
                 sgla_status_string(st));
        st = sgla_reference(&d, SGLA_BACKEND_REF_A, o64b, (double *)(void *)((char *)ht64b + 4));
        TU_CHECK(st == SGLA_ERR_INVALID_ARGUMENT, "sgla_reference with ht64 4 bytes off a double: %s",
                 sgla_status_string(st));
        static double qd[NQK]; /* q's floats in a double-aligned buffer, which o64 then overlaps */
        memcpy(qd, q, sizeof q);
        base(&d), d.q = qd;
        st = sgla_reference(&d, SGLA_BACKEND_REF_A, qd, NULL);
        TU_CHECK(st == SGLA_ERR_OVERLAP && strstr(sgla_last_error(), "o64"),
                 "sgla_reference with o64 over q: %s (%s)", sgla_status_string(st), sgla_last_error());
        TU_CHECK(!memcmp(qd, q, sizeof q), "sgla_reference with o64 over q: q written");
    }
    /* a workspace query that fails (in the backend: the CPU takes no f64) writes no size */
    base(&d), d.dtype = SGLA_F64, d.q = d.k = d.v = NULL, d.o = NULL, d.h0 = NULL, d.ht = NULL;
    {
        size_t nb = 12345;
        const sgla_status st = sgla_workspace_size(&d, SGLA_BACKEND_CPU, &nb);
        TU_CHECK(st == SGLA_ERR_UNSUPPORTED_DTYPE && nb == 12345, "failed workspace query: %s, bytes %zu",
                 sgla_status_string(st), nb);
    }
}

/* B = 0 or H = 0: no (sequence, head) pair.  Every call is valid without data pointers and writes
 * nothing (a state's buffer beside it stays as poisoned), workspace queries give 0, and the backward
 * writes dg_gamma's zeros when H > 0; negative sizes are still refused (statuses above). */
static void empty_pairs(void)
{
    static const sgla_backend bes[] = {SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B, SGLA_BACKEND_CPU, SGLA_BACKEND_AUTO};
    const int64_t shapes[2][2] = {{0, H}, {2, 0}}; /* (B, H) */
    for (int si = 0; si < 2; si++)
        for (size_t bi = 0; bi < sizeof bes / sizeof bes[0]; bi++) {
            const char *bn = sgla_backend_name(bes[bi]);
            const int64_t b = shapes[si][0], hh = shapes[si][1];
            sgla_forward_desc d;
            base(&d);
            d.B = b, d.H = hh, d.q = d.k = d.v = NULL, d.o = NULL, d.g = NULL;
            d.ht = ht, d.h0 = h0; /* [N, H, K, V] of no element: neither read nor written */
            poison();
            sgla_status st = sgla_forward(&d, bes[bi]);
            TU_CHECK(st == SGLA_OK && untouched(), "B = %lld, H = %lld, forward on %s: %s, outputs %s", (long long)b,
                     (long long)hh, bn, sgla_status_string(st), untouched() ? "untouched" : "written");
            size_t nb = 12345;
            st = sgla_workspace_size(&d, bes[bi], &nb);
            TU_CHECK(st == SGLA_OK && nb == 0, "B = %lld, H = %lld, workspace on %s: %s, %zu bytes", (long long)b,
                     (long long)hh, bn, sgla_status_string(st), nb);
            double canary64 = -7.0;
            st = sgla_reference(&d, SGLA_BACKEND_REF_B, NULL, &canary64);
            TU_CHECK(st == SGLA_OK && canary64 == -7.0, "B = %lld, H = %lld, sgla_reference: %s", (long long)b,
                     (long long)hh, sgla_status_string(st));
            /* the backward with g_gamma: dg_gamma [H] = 0; with g: nothing */
            for (int gate = 0; gate < 2; gate++) {
                float dgg[H], dh0[NS];
                tu_poison(dgg, SGLA_F32, H);
                tu_poison(dh0, SGLA_F32, NS);
                unsigned char dh0_snap[sizeof dh0];
                memcpy(dh0_snap, dh0, sizeof dh0);
                d.g = gate ? g : NULL, d.g_gamma = gate ? NULL : gg;
                sgla_backward_desc bd;
                sgla_backward_desc_init(&bd);
                bd.fwd = &d, bd.dht = h0, bd.dh0 = dh0, bd.dg_gamma = gate ? NULL : dgg;
                st = sgla_backward(&bd, bes[bi]);
                int zeros = 1;
                for (int i = 0; i < hh && !gate; i++) zeros &= dgg[i] == 0.0f;
                TU_CHECK(st == SGLA_OK && zeros && !memcmp(dh0, dh0_snap, sizeof dh0),
                         "B = %lld, H = %lld, backward (%s) on %s: %s, dg_gamma %s, dh0 %s", (long long)b, (long long)hh,
                         gate ? "g" : "g_gamma", bn, sgla_status_string(st), zeros ? "0" : "not 0",
                         memcmp(dh0, dh0_snap, sizeof dh0) ? "written" : "untouched");
                if (hh == 0 && !gate) { /* H = 0: dg_gamma has no element either */
                    float snap[H];
                    tu_poison(dgg, SGLA_F32, H);
                    memcpy(snap, dgg, sizeof dgg);
                    st = sgla_backward(&bd, bes[bi]);
                    TU_CHECK(st == SGLA_OK && !memcmp(snap, dgg, sizeof dgg), "H = 0, backward on %s wrote dg_gamma", bn);
                }
                nb = 12345;
                st = sgla_backward_workspace_size(&bd, bes[bi], &nb);
                TU_CHECK(st == SGLA_OK && nb == 0, "B = %lld, H = %lld, backward workspace on %s: %s, %zu bytes",
                         (long long)b, (long long)hh, bn, sgla_status_string(st), nb);
            }
        }
    /* a pool call with no request: no index array needed, the pool untouched */
    {
        sgla_forward_desc d;
        base(&d);
        d.B = 0, d.q = d.k = d.v = NULL, d.o = NULL, d.ht = NULL;
        sgla_state_pool pool;
        memset(&pool, 0, sizeof pool);
        pool.slots = 1, pool.index_bits = 32, pool.flags = SGLA_POOL_INPLACE;
        d.pool = &pool;
        float snap[NS];
        memcpy(snap, h0, sizeof snap);
        for (int i = 0; i < 3; i++) {
            const sgla_backend be = i == 0 ? SGLA_BACKEND_REF_A : i == 1 ? SGLA_BACKEND_CPU : SGLA_BACKEND_AUTO;
            const sgla_status st = sgla_forward(&d, be);
            TU_CHECK(st == SGLA_OK && !memcmp(snap, h0, sizeof snap), "a pool call with B = 0 on %s: %s (%s)",
                     sgla_backend_name(be), sgla_status_string(st), sgla_last_error());
        }
    }
}

int main(void)
{
    uint64_t seed = tu_seed("test_validate");
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_fill(&r, q, SGLA_F32, NQK, 1.0);
    tu_fill(&r, k, SGLA_F32, NQK, 1.0);
    tu_fill(&r, v, SGLA_F32, NV, 1.0);
    tu_fill(&r, h0, SGLA_F32, NS, 1.0);
    for (int i = 0; i < B * T * H; i++) g[i] = (float)-tu_uniform(&r);
    for (int i = 0; i < H; i++) gg[i] = -0.2f;
    statuses();
    empty_pairs();
    strings();
    abi();
    return tu_finish("test_validate");
}
