/*
 * sgla.h — scalar-gated linear attention: the one public header.
 *
 * Stability: every declaration here is stable within a minor series (0.2.x):
 * values of the enums and flags never change meaning, and sgla_forward_desc
 * only grows at its end (its `size` field tells the library which fields the
 * caller knows, so a program built against an older header keeps working
 * with a newer library).  Declarations inside `#ifdef SGLA_EXPERIMENTAL_API`
 * may change in any release.  libsgla exports these functions and nothing
 * else.
 *
 * Per sequence and head, with q_t, k_t in R^K, v_t in R^V and a natural-log
 * gate g_t = ln(alpha_t) <= 0:
 *
 *     S_t = exp(g_t) * S_{t-1} + k_t v_t^T      (S is K x V, fp32 or wider)
 *     o_t = scale * (q_t^T S_t)
 *
 * S_0 is h0 (zero when absent); ht receives S_T.  Layouts follow
 * flash-linear-attention: q, k [B,T,H,K]; v, o [B,T,H,V]; g [B,T,H];
 * g_gamma [H]; h0, ht [N,H,K,V] fp32 (fp64 with SGLA_F64), row-major and
 * contiguous.
 *
 * Every function returns an sgla_status; the library never aborts or prints.
 * On any error no output has been written.  sgla_last_error() gives a
 * thread-local sentence naming the argument at fault.
 */
#ifndef SGLA_H
#define SGLA_H

#include <stddef.h>
#include <stdint.h>

/* SGLA_API marks what the library exports.  Building libsgla defines
 * SGLA_BUILDING; everything else in the library has hidden visibility. */
#if defined(_WIN32) && defined(SGLA_SHARED)
#if defined(SGLA_BUILDING)
#define SGLA_API __declspec(dllexport)
#else
#define SGLA_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(SGLA_BUILDING)
#define SGLA_API __attribute__((visibility("default")))
#else
#define SGLA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SGLA_VERSION_MAJOR 0
#define SGLA_VERSION_MINOR 2
#define SGLA_VERSION_PATCH 0
#define SGLA_VERSION_STRING "0.2.0"

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
SGLA_API const char *sgla_version(void);

typedef enum sgla_status {
    SGLA_OK = 0,
    SGLA_ERR_NULL_POINTER = 1,        /* desc, q, k, v or o is NULL (when B T H > 0) */
    SGLA_ERR_INVALID_SIZE = 2,        /* K or V < 1, or B, T or H < 0 */
    SGLA_ERR_SIZE_OVERFLOW = 3,       /* an element count or byte size overflows int64/size_t */
    SGLA_ERR_BOTH_GATES = 4,          /* g and g_gamma both given */
    SGLA_ERR_POSITIVE_GATE = 5,       /* a log-gate > 0 (alpha > 1) */
    SGLA_ERR_NONFINITE_GATE = 6,      /* a log-gate is NaN or +-inf */
    SGLA_ERR_INVALID_SCALE = 7,       /* scale is NaN or +-inf */
    SGLA_ERR_UNSUPPORTED_DTYPE = 8,   /* dtype not one of sgla_dtype, or not supported by the backend */
    SGLA_ERR_UNSUPPORTED_CHUNK = 9,   /* chunk out of [1, 1024], or not supported by the backend */
    SGLA_ERR_CU_SEQLENS_BATCH = 10,   /* cu_seqlens given with B != 1 */
    SGLA_ERR_CU_SEQLENS_START = 11,   /* cu_seqlens[0] != 0 */
    SGLA_ERR_CU_SEQLENS_DECREASING = 12, /* cu_seqlens[i+1] < cu_seqlens[i] */
    SGLA_ERR_CU_SEQLENS_END = 13,     /* cu_seqlens[N] != T */
    SGLA_ERR_INVALID_NUM_SEQS = 14,   /* num_seqs < 1 with cu_seqlens */
    SGLA_ERR_NONFINITE_INPUT = 15,    /* NaN/inf in q, k, v, h0 (the backward: dout, dht too; only
                                         with SGLA_FLAG_CHECK_FINITE) */
    SGLA_ERR_UNSUPPORTED_SHAPE = 16,  /* the backend cannot do this shape (CUDA: K, V <= 512
                                         (the backward K, V <= 256), T < 2^31; CPU: K, V <= 65536) */
    SGLA_ERR_BACKEND_UNAVAILABLE = 17,/* backend not compiled in, no device present, or (the
                                         backward on ref-c / ref-d) no such pass */
    SGLA_ERR_INVALID_BACKEND = 18,    /* not a value of sgla_backend */
    SGLA_ERR_INVALID_ARGUMENT = 19,   /* threads < 0, unknown flag bits, a pointer not aligned to its
                                         element, a descriptor size the library cannot place, a
                                         workspace smaller than sgla_workspace_size */
    SGLA_ERR_OVERLAP = 20,            /* an output overlaps an input, another output or the workspace */
    SGLA_ERR_OUT_OF_MEMORY = 21,
    SGLA_ERR_CUDA = 22,               /* the CUDA runtime reported an error; see sgla_last_error() */
    SGLA_ERR_INTERNAL = 23,
    SGLA_ERR_POOL_INDEX = 24,         /* a state-pool slot index outside [-1, slots), or a number of
                                         accepted tokens outside [1, t_max] (host pointers) */
    SGLA_ERR_POOL_CONFLICT = 25       /* two writes of one call name the same pool slot */
} sgla_status;

/* A fixed sentence for each status (never NULL; unknown codes say so). */
SGLA_API const char *sgla_status_string(sgla_status s);
/* The detail of the last error on this thread ("q is NULL", ...); "" if none. */
SGLA_API const char *sgla_last_error(void);

typedef enum sgla_dtype {
    SGLA_F32 = 0,
    SGLA_F16 = 1,
    SGLA_BF16 = 2,
    SGLA_F64 = 3  /* the reference backends only (gradient checks): every tensor of the call
                     is then fp64, the gates and states too (g, g_gamma, h0, ht, and the
                     backward's dht, dg, dg_gamma, dh0) */
} sgla_dtype;

/* Bytes per element of a dtype, 0 for an unknown one. */
SGLA_API size_t sgla_dtype_size(sgla_dtype dt);
SGLA_API const char *sgla_dtype_name(sgla_dtype dt);

typedef enum sgla_backend {
    /* AUTO: the fastest backend for the call's memory.  In the C API (host pointers)
     * the CPU backend, or REF_B for SGLA_F64 inputs, which only the references take.
     * The `sgla` tool, whose inputs are on the host and which copies them to a GPU
     * itself, reads auto as CUDA when a CUDA device is usable, else as the C API
     * does; Python reads backend="auto" (and None) as CUDA for CUDA tensors and as
     * the C API does for host arrays. */
    SGLA_BACKEND_AUTO = 0,
    SGLA_BACKEND_REF_A = 1, /* fp64 token recurrence (the definition) */
    SGLA_BACKEND_REF_B = 2, /* fp64 chunked, vectorised, three weight positions */
    SGLA_BACKEND_REF_C = 3, /* fp64 mirror of the GPU kernel's control flow */
    SGLA_BACKEND_REF_D = 4, /* fp64 factorised intra-chunk form: shows the hazard */
    SGLA_BACKEND_CPU = 5,   /* chunked, SIMD, multi-threaded */
    SGLA_BACKEND_CUDA = 6   /* tensor-core kernels; every pointer is a device pointer */
} sgla_backend;

SGLA_API const char *sgla_backend_name(sgla_backend b);
/* 1 when the backend is compiled in and (for CUDA) a device is present.
 * Leaves sgla_last_error() as it was. */
SGLA_API int sgla_backend_available(sgla_backend b);

/* Flags for sgla_forward_desc.flags. */
#define SGLA_FLAG_CHECK_FINITE 0x1u  /* scan q, k, v, h0 (and dout, dht) for NaN/inf first (host pointers) */
#define SGLA_FLAG_SKIP_VALUE_CHECK 0x2u /* trust g, g_gamma, cu_seqlens values and a pool's
                                           indices and accepted counts (hot paths: a bad value
                                           is then undefined behaviour) */
#define SGLA_FLAG_CHECK_DEVICE_VALUES 0x4u /* CUDA: copy g/g_gamma/cu_seqlens to the host and
                                              check them (synchronises the stream) */
#define SGLA_FLAG_ALLOW_TF32 0x8u  /* CUDA, fp32 inputs, forward and backward: products in TF32
                                      alone (relative error ~4e-4 against fp64; fla's TF32
                                      ~1.5e-3), as torch's allow_tf32, instead of 3xTF32 (~1e-6);
                                      other backends and dtypes ignore it */
#define SGLA_FLAG_BWD_HALF_STATES 0x10u /* CUDA backward on Hopper with dg or dg_gamma: keep every
                                           other chunk's 16-bit state (half that workspace, ~10 %
                                           faster; dg's relative error 1.5-1.9x: docs/numerics.md
                                           section 8), as a workspace_limit below the usual plan
                                           does; the forward and other paths ignore it */
#define SGLA_FLAG_ALL_ 0x1Fu

/*
 * One forward call.  Fill it with sgla_forward_desc_init() and set what you
 * need.  Either g or g_gamma or neither (no decay); a constant alpha is
 * g_gamma[h] = ln(alpha) for every h.
 *
 * Varlen: B = 1, cu_seqlens[num_seqs + 1] int64 offsets into T; each
 * sequence has its own state, so h0/ht are [num_seqs, H, K, V].  Without
 * cu_seqlens, N = B.
 *
 * Empty calls: T = 0 moves no state (ht = h0, or zeros); B = 0 or H = 0 (no
 * sequence or no head: a server's step with no request) is a valid call with
 * no element to read or write, so q, k, v, o (and with a pool its indices)
 * may be NULL, nothing is written, the workspace queries give 0, and the
 * backward writes only dg_gamma's zeros (B = 0, H > 0: a sum over no token).
 *
 * ht may equal h0 (state updated in place: the decode step with T = 1); it
 * must still not overlap any other input (h0 = ht = q is SGLA_ERR_OVERLAP).
 * A workspace, which the call writes, overlaps no tensor of the call either.
 *
 * `size` must hold sizeof(sgla_forward_desc) as the caller's header had it:
 * sgla_forward_desc_init() sets it.  The library reads only the fields that
 * fit in `size` (later fields take their defaults) and refuses a size it
 * cannot place (SGLA_ERR_INVALID_ARGUMENT), e.g. an uninitialised descriptor.
 */
typedef struct sgla_forward_desc {
    size_t size;            /* sizeof(sgla_forward_desc), set by sgla_forward_desc_init */
    const void *q;          /* [B,T,H,K] */
    const void *k;          /* [B,T,H,K] */
    const void *v;          /* [B,T,H,V] */
    void *o;                /* [B,T,H,V], same dtype as q, k, v */
    sgla_dtype dtype;       /* of q, k, v, o */
    int64_t B, T, H, K, V;
    /* g, g_gamma, h0, ht: fp32 (float *), or fp64 when dtype is SGLA_F64 */
    const void *g;          /* [B,T,H] natural-log gates <= 0, or NULL */
    const void *g_gamma;    /* [H] per-head constant log-decay <= 0, or NULL */
    float scale;            /* multiplies q^T S; default 1 */
    const void *h0;         /* [N,H,K,V] initial state, or NULL (zero) */
    void *ht;               /* [N,H,K,V] final state out, or NULL */
    const int64_t *cu_seqlens; /* [num_seqs+1], or NULL */
    int64_t num_seqs;       /* N when cu_seqlens is given */
    int64_t chunk;          /* chunk length C; default 64.  The CPU backend may compute in
                               shorter blocks (the chunked form is exact for any length) */
    int threads;            /* CPU threads; 0 = default (all cores) */
    void *stream;           /* CUDA: a cudaStream_t; NULL = the legacy default stream */
    unsigned flags;         /* SGLA_FLAG_* */
    void *workspace;        /* CUDA: device scratch of workspace_bytes for this call, or NULL */
    size_t workspace_bytes;
    /* 0.3: a state pool for serving, or NULL (the experimental API below) */
    const struct sgla_state_pool *pool;
} sgla_forward_desc;

#ifdef SGLA_EXPERIMENTAL_API
/*
 * Experimental (define SGLA_EXPERIMENTAL_API before including sgla.h): a pool
 * of recurrent states, one slot per live request, as a serving engine keeps
 * them.  With d->pool set, d->h0 is the pool, fp32 [slots, H, K, V] (or
 * [slots, H, V, K] with SGLA_POOL_V_FIRST), and d->ht must be NULL.
 * Sequence n of the batch (cu_seqlens may mix prefills and single decode
 * tokens) starts from slot r = indices[n] (indices [N]), or r =
 * indices[n][num_accepted[n] - 1] (indices [N][t_max], speculative steps:
 * num_accepted NULL means 1):
 *   - r == -1: a padded row; it reads and writes nothing and its o is 0;
 *   - has_initial_state[n] == 0: it starts from zeros, not from the slot;
 *   - with SGLA_POOL_INPLACE its final state is written to slot indices[n],
 *     or (indices [N][t_max]) the state after each of its tokens t to slot
 *     indices[n][t] (-1 entries skipped); a sequence is at most t_max long.
 *     The pool is then an output: no other tensor of the call, nor the
 *     pool's own index arrays, may overlap it (SGLA_ERR_OVERLAP).
 * Slots outside [-1, slots) and accepted counts outside [1, t_max] are
 * SGLA_ERR_POOL_INDEX, two writes to one slot SGLA_ERR_POOL_CONFLICT (both
 * checked on host pointers).  Backends: ref-a, cpu and cuda; refs B-D and the
 * backward refuse a pool (SGLA_ERR_UNSUPPORTED_SHAPE).  CUDA (device pointers,
 * indices too, so unchecked; the pool 16-byte aligned): K and V multiples of
 * 4, K <= 512.  Decodes, speculative steps and short sequences run a token
 * recurrence that reads and writes each state once; sequences of 4 tokens or
 * more run the chunked kernel on their slots when it serves the call (Hopper,
 * bf16 or fp16, K in {64, 128, 256} and V in {64, 128, 256, 512}, q, k, v and
 * o 16-byte aligned, a [K][V] pool, no t_max), in the same call
 * (a mixed batch), else the recurrence (correct, not fast for long prompts).
 * chunk = 1 asks for the recurrence alone (a decode-only step: no chunked
 * launch whose blocks would all find their sequence too short).
 * On CUDA a slot outside [0, slots) is taken as a padded row, never touched
 * (the host backends refuse it, or with SGLA_FLAG_SKIP_VALUE_CHECK trust it); a slot
 * one sequence reads and another writes in one call is a race (keep them
 * apart); no allocation, so a step can be graph-captured.
 */
#define SGLA_POOL_INPLACE 0x1u  /* write the final (or per-token) states into the pool */
#define SGLA_POOL_V_FIRST 0x2u  /* the pool is [slots, H, V, K] (SGLang, flashinfer) */
typedef struct sgla_state_pool {
    int64_t slots;                    /* rows of the pool */
    const void *indices;              /* int32 or int64 (index_bits) [N] or [N][t_max] */
    int index_bits;                   /* 32 or 64 */
    int64_t t_max;                    /* 0: indices are [N] */
    const unsigned char *has_initial_state; /* [N], or NULL: every sequence continues its slot */
    const void *num_accepted;         /* [N], same integer type as indices, or NULL */
    unsigned flags;                   /* SGLA_POOL_* */
    /* [N + 1] host copy of cu_seqlens, or NULL (fla's cu_seqlens_cpu): checked like
     * cu_seqlens; it must hold the same values (compared where cu_seqlens is on the
     * host too: ref-a and the CPU backend; trusted on CUDA).  CUDA launches the chunked kernel
     * over the sequences long enough for it only (none in a decode-only step). */
    const int64_t *host_cu_seqlens;
} sgla_state_pool;
#endif

/*
 * The CUDA backend (SGLA_BACKEND_CUDA):
 *
 * - Device.  The calling thread's current device (cudaSetDevice) at the time
 *   of the call; every pointer (cu_seqlens too) must be memory of that device
 *   and `stream` one of its streams.  Compute capability 8.0 or newer: Hopper
 *   (sm_90a) runs the wgmma / TMA kernels; other GPUs the mma.sync path (bf16 /
 *   fp16 with K in {64, 128, 256} and V up to 512 after padding, K above 256
 *   as two halves; split along time as Hopper's rows are where few (sequence,
 *   head) pairs leave SMs idle; one stage of tiles where a block's shared
 *   memory cannot hold two: K = 128 on sm_86 / sm_89, 99 KB a block, K = 256
 *   on sm_80, 163 KB; sm_86 / sm_89 cannot take K = 256).  Each kernel is taken where its shared memory fits the
 *   device; a shape none fits is SGLA_ERR_UNSUPPORTED_SHAPE with the bytes
 *   it needs.  Run so far on an H200 and an H100 only: forced, with the
 *   facts of an sm_80 and an sm_89 emulated, and as sm_80 PTX JIT-compiled
 *   on the H100.
 * - Shapes.  K, V <= 512 (the backward: K, V <= 256); 64, 128, 256
 *   and V = 512 run natively, other sizes rounded up to the next of those
 *   (16-bit inputs on Hopper with K, V multiples of 8 in place, the tensor
 *   loads filling the missing features with zeros; otherwise, and on the
 *   mma.sync path, on zero-padded copies, which are workspace and cost
 *   their bytes; sgla_workspace_size counts them unless the descriptor it
 *   is given runs in place: q, k, v, o present and aligned, so query with
 *   the tensors of the call, or without any to count the copies), K above 256
 *   as two calls on its halves whose outputs are summed (the same
 *   function).  chunk 16, 32 or 64 (each computed
 *   in chunks of 64: the same function, rounded differently), T < 2^31,
 *   q/k/v/o 16-byte and h0/ht 8-byte aligned at the native sizes (else
 *   SGLA_ERR_UNSUPPORTED_SHAPE / _CHUNK / SGLA_ERR_INVALID_ARGUMENT).  fp32
 *   inputs run on TF32 tensor cores as 3xTF32 where K is 64 or 128 (wgmma
 *   on Hopper, mma.sync before it; TF32 alone with SGLA_FLAG_ALLOW_TF32),
 *   else the CUDA-core token recurrence.
 * - Asynchrony.  The call only enqueues work on `stream` and returns; it never
 *   synchronises the host (except with SGLA_FLAG_CHECK_DEVICE_VALUES).  Every
 *   buffer (inputs, outputs, workspace) must stay allocated and unchanged
 *   until that work completes; a host-side descriptor may be reused at once.
 *   g, g_gamma and cu_seqlens values on the device are trusted unless
 *   SGLA_FLAG_CHECK_DEVICE_VALUES is set.  Errors of the launch are reported
 *   by the call; faults of the kernels surface at the next synchronisation.
 * - Memory.  Long sequences with few heads are split along time, head sizes
 *   other than 64, 128, 256 are padded, a packed batch (cu_seqlens, 2 to
 *   4096 sequences) without h0 and ht is ordered longest sequence first, and
 *   gate g at K = 64 and 256 (16-bit inputs, Hopper) has its chunk-local
 *   cumulative gate made beforehand (4 bytes a token and head; not at K = 64
 *   where H is a multiple of 4, g is 16-byte aligned and the call does not
 *   split along time: the kernel then loads g itself by TMA); each needs a
 *   device workspace (sgla_workspace_size says how much; 0 otherwise).  With
 *   workspace == NULL the call takes it from the stream-ordered allocator
 *   (cudaMallocAsync / cudaFreeAsync on `stream`); a workspace passed in is
 *   used instead (it must be at least the size returned and 16-byte aligned,
 *   the backward's 256-byte aligned, else SGLA_ERR_INVALID_ARGUMENT).  Nothing else is allocated per call.  Per
 *   device the library keeps a few attributes (SM count, kernel limits),
 *   filled on first use.
 * - CUDA graphs.  A call with its workspace passed in does nothing that
 *   stream capture forbids.
 */

/*
 * Threads.  Every function may be called from several threads at once.
 * Concurrent calls may share descriptors and inputs (only read); an output
 * (o, ht, the gradients, a pool with SGLA_POOL_INPLACE, a workspace) must
 * not be read or written by another call meanwhile.  A call's result does not
 * depend on the others: the same call gives the same bits (on the CPU
 * whatever `threads` is; it depends on the SIMD level, which SGLA_CPU_ISA,
 * read at the first call, can cap).  sgla_last_error() is per thread: read it
 * on the thread of the failing call, before its next call (each call that
 * returns a status clears it).  sgla_release_memory() frees the CPU scratch
 * idle at that moment; a running call keeps its own and returns it after.
 * The CPU backend runs an OpenMP team inside a call, one team per calling
 * thread: with `threads` = 0 (every core) P concurrent calls run P x cores
 * threads; give each call its share instead (cores / P; 1 with a thread per
 * request).  After fork() the child of a process that has called the CPU
 * backend runs each call on one thread (the OpenMP runtime's threads are
 * gone; same bits, slower).  On x86 the CPU backend computes with
 * subnormals flushed to zero (MXCSR's FTZ and DAZ, set in each of its threads
 * for the call and put back as the caller had them), as the CUDA kernels do,
 * where strong gates would otherwise cost an assist per subnormal: an input,
 * product or partial sum below fp32's 1.2e-38 counts as 0, so an output made
 * only of such products is 0 (q = k = 1e-20, v = 1e20: o = 0 where ref-a
 * gives 4e-20); inputs of ordinary size see no change.  Elsewhere, and in the
 * reference backends, subnormals are IEEE's.  CUDA: the calling thread's current device, and
 * `stream` orders the work (calls on one stream run one after another).
 */

/* Zero everything, then size = sizeof *d, scale = 1, chunk = 64, dtype = SGLA_F32. */
SGLA_API void sgla_forward_desc_init(sgla_forward_desc *d);

/* Number of sequences N (B, or num_seqs with cu_seqlens). */
SGLA_API int64_t sgla_num_sequences(const sgla_forward_desc *d);

/*
 * The validation every backend runs first: sizes, overflow, pointers, dtype,
 * chunk, gate exclusivity, scale; and unless SGLA_FLAG_SKIP_VALUE_CHECK, the
 * values of g, g_gamma and cu_seqlens (read from host memory: pass
 * values_on_host = 0 for device pointers and they are not read).
 */
SGLA_API sgla_status sgla_validate(const sgla_forward_desc *d, int values_on_host);

/* Compute o (and ht) with the chosen backend. */
SGLA_API sgla_status sgla_forward(const sgla_forward_desc *d, sgla_backend backend);

/* Bytes of workspace the backend needs for this call (the descriptor's
 * shape and, for CUDA, the current device); 0 when it needs none.  The
 * descriptor is validated as by sgla_forward, except that no data is read
 * (the values of g, g_gamma, cu_seqlens, a pool's host_cu_seqlens and the
 * tensors are not checked) and
 * q, k, v, o may be NULL (a call's size before its tensors exist; on CUDA the
 * padded copies are then counted, see Shapes).  *bytes is written only when
 * the status is SGLA_OK. */
SGLA_API sgla_status sgla_workspace_size(const sgla_forward_desc *d, sgla_backend backend, size_t *bytes);

/* The CPU backend keeps a few scratch blocks between calls (a fresh block
 * would be page-faulted in on every call).  This frees them; the next call
 * allocates again.  Safe to call at any time, from any thread. */
SGLA_API void sgla_release_memory(void);

/*
 * The fp64 reference family, with fp64 outputs: o64 [B,T,H,V] (required),
 * ht64 [N,H,K,V] (optional), each 8-byte aligned and overlapping no input
 * nor the other.  Inputs are read in d->dtype; o and ht in d are ignored.
 * kind is one of SGLA_BACKEND_REF_A..REF_D.
 */
SGLA_API sgla_status sgla_reference(const sgla_forward_desc *d, sgla_backend kind,
                                    double *o64, double *ht64);

/*
 * The backward: gradients of L = <o, dout> + <ht, dht> with respect to every
 * input of a forward call.  Per sequence and head, in reverse time, with
 * a_t = exp(g_t) and dS the gradient of the state:
 *
 *     dS  = a_{t+1} dS + scale q_t dout_t^T   (dS starts at dht, or 0)
 *     dq_t = scale S_t dout_t,   dk_t = dS v_t,   dv_t = dS^T k_t,
 *     dg_t = a_t <dS, S_{t-1}>,  dg_gamma[h] = sum over b, t of dg[b, t, h],
 *     dh0  = dS at the start.
 *
 * `fwd` describes the forward call whose gradients are wanted (its o and ht
 * are not read; its stream, threads, flags and chunk apply).  dq, dk, dv are
 * in fwd->dtype; dht, dg, dg_gamma, dh0 are fp32 (fp64 with SGLA_F64).  The
 * optional outputs are computed when given and must be absent when their input
 * is (dg needs fwd->g, dg_gamma fwd->g_gamma, dh0 fwd->h0).  No output may
 * overlap an input or another output, except dh0 == dht exactly (in place;
 * dht then must not overlap another input).
 * The CUDA backend takes the same contract as the forward's (device pointers,
 * asynchronous on fwd->stream; workspace from sgla_backward_workspace_size,
 * passed here, or else taken from the stream-ordered allocator).  It is
 * deterministic (the same call gives the same bits).  Its workspace, by path:
 * on Hopper, bf16 (fp16 without dg / dg_gamma) with K and V up to 256,
 * multiples of 8, and 16-byte aligned tensors: three passes of the forward's
 * kernel on K and V rounded up to 64, 128 or 256 (the tensors read in place);
 * with dg or dg_gamma one 16-bit K x V state per 64 tokens and head (about
 * B T H K V / 32 bytes; under workspace_limit one per 128 tokens, and if
 * that does not fit those of one batch group, or of one time window of W,
 * plus W s + 1 fp32 states a sequence and head, s the passes' split along
 * time), a few
 * fp32 values per token and head (4 at
 * K = V = 128, 16 at 256) and, where K is rounded up, a copy of q (then k) on
 * the rounded K; with gate g the chunk-local cumulative gate (4 bytes a token
 * and head); with h0 or dht their fp32 copies (on the rounded sizes, and
 * dh0 through one); a long sequence
 * with few (sequence, head) pairs is split along time as the forward is (one
 * fp32 K x V state per segment and head).  Elsewhere bf16 / fp16 with K and V in {64, 128} run on the tensor
 * cores (mma.sync): with dg or dg_gamma the same 16-bit states; the split (T
 * >= 1024, no cu_seqlens) two fp32 K x V states per segment and head (one
 * stage of tiles where a block cannot hold two: K = V = 128 on sm_80; of
 * these, sm_86 / sm_89 hold K = V = 64 only).  Everything else (fp32, other
 * head sizes, the shapes those blocks cannot hold) runs the first backward,
 * two fp32 states per 32 tokens, its products on the tensor cores in 3xTF32
 * (fp32's accuracy; TF32 alone with SGLA_FLAG_ALLOW_TF32, ~4e-4 and ~12 %
 * faster; the gradient kernel's where K and V are multiples of 8, else on
 * CUDA cores), where its block fits (before Hopper not K = V = 256; on 99 KB
 * blocks K, V up to 128).
 */
typedef struct sgla_backward_desc {
    size_t size;                   /* sizeof(sgla_backward_desc), set by sgla_backward_desc_init */
    const sgla_forward_desc *fwd;  /* the forward call's inputs */
    const void *dout;              /* [B,T,H,V] gradient of o, fwd->dtype */
    const void *dht;               /* [N,H,K,V] gradient of ht, or NULL (zero) */
    void *dq;                      /* [B,T,H,K] */
    void *dk;                      /* [B,T,H,K] */
    void *dv;                      /* [B,T,H,V] */
    void *dg;                      /* [B,T,H], or NULL */
    void *dg_gamma;                /* [H], or NULL */
    void *dh0;                     /* [N,H,K,V], or NULL */
    void *workspace;               /* CUDA: device scratch of workspace_bytes for this call, or NULL */
    size_t workspace_bytes;
    /* CUDA: 0, the usual plan; else the plan whose workspace is at most this many bytes:
     * with dg or dg_gamma on the three passes (Hopper) first every other chunk's 16-bit
     * state kept instead of every chunk's (half the bytes and ~10 % faster, but dg's
     * error 1.5-1.9x: an odd chunk's term through the next chunk's state, docs/numerics.md
     * section 8), then with it (dense batches) the states made and used a batch group at a
     * time (where each group keeps twice the SMs' (sequence, head) pairs), else a time
     * window at a time (K of 64, 128 or 256), slower by the launches this takes (4-15 % at
     * the caps docs/perf.md measured, more with more windows).  Other paths' plans must
     * fit as they are.
     * SGLA_ERR_UNSUPPORTED_SHAPE, with the least it can take, where none fits.
     * sgla_backward_workspace_size honours it.  (Added in 0.2.x: a descriptor whose size
     * the caller set without it reads 0; sgla_backward_desc_init writes this header's
     * size, so a program built against the older header is rebuilt.) */
    size_t workspace_limit;
} sgla_backward_desc;

/* Zero everything, then size = sizeof *d. */
SGLA_API void sgla_backward_desc_init(sgla_backward_desc *d);

/* The gradients with the chosen backend: ref-a, ref-b (both in fp64, rounded
 * into the outputs), cpu or cuda; ref-c and ref-d have none
 * (SGLA_ERR_BACKEND_UNAVAILABLE). */
SGLA_API sgla_status sgla_backward(const sgla_backward_desc *d, sgla_backend backend);

/* Bytes of workspace sgla_backward needs for this call; 0 when none.  Validated
 * as sgla_backward validates, except that no data is read and the tensors
 * (q, k, v, dout, dq, dk, dv) may be NULL, as for sgla_workspace_size. */
SGLA_API sgla_status sgla_backward_workspace_size(const sgla_backward_desc *d, sgla_backend backend,
                                                  size_t *bytes);

/* The validation sgla_backward runs first: sgla_validate's on d->fwd, then dout,
 * dht and the gradients (pointers, sizes, overlaps); values_on_host as for
 * sgla_validate (with SGLA_FLAG_CHECK_FINITE, dout and dht are scanned too).
 * For device pointers, a caller with host copies of the inputs can run it
 * on those first: the CUDA backend reads no values on the host. */
SGLA_API sgla_status sgla_validate_backward(const sgla_backward_desc *d, int values_on_host);

/* IEEE binary16 and bfloat16 conversions: round to nearest even, subnormals,
 * inf and NaN handled (NaN stays NaN). */
SGLA_API uint16_t sgla_f32_to_f16(float x);
SGLA_API float sgla_f16_to_f32(uint16_t h);
SGLA_API uint16_t sgla_f32_to_bf16(float x);
SGLA_API float sgla_bf16_to_f32(uint16_t b);
/* Direct double -> half rounding (no double rounding through float). */
SGLA_API uint16_t sgla_f64_to_f16(double x);
SGLA_API uint16_t sgla_f64_to_bf16(double x);

#ifdef __cplusplus
}
#endif

#endif /* SGLA_H */
