/*
 * The CPU backend: the chunked algorithm of SPEC §2 around the micro-kernels
 * of cpu_kernels.h.  This file packs each chunk to fp32 (converting f16/bf16
 * on load), builds the decay weights in the log domain, picks the SIMD level
 * and spreads the work over threads.
 *
 * Per (sequence, head) and chunk of n <= C tokens, with the chunk-local
 * cumulative log-gate b_r = g_1 + ... + g_r (restarting every chunk, summed
 * in double):
 *     A    = (Q Kt) ⊙ G,  G_ij = scale*exp(b_i - b_j) for j <= i, else 0
 *     O    = diag(scale*exp(b)) (Q S) + A V        (S read before update)
 *     S'   = exp(b_n) S + Kt (exp(b_n - b) ⊙ V)    (old state decayed, then added)
 * The last as S' = fma(a, S, D) with D computed from zero, so a chunk's D is
 * the same number whether the chunk runs in the sequential loop or in the
 * split path (D per chunk in parallel, an elementwise scan across chunks,
 * outputs in parallel; a window of chunks at a time, about 1 MiB of states,
 * so that they stay in cache).  Which path runs may depend on the thread
 * count; the result never does.
 *
 * Threads: OpenMP over items of (sequence, group of heads); inside an item
 * chunk by chunk, the group's rows gathered in memory order, head by head.
 * When there are fewer (sequence, head) pairs than threads, each is split
 * along its sequence as above, where that keeps more threads busy
 * (sgla_cpu_split_plan).  A sequence of one token (decode) uses the
 * single-pass recurrent kernel, in place.
 *
 * Every fp32 result is the same number whatever the thread count and the
 * grouping (tests/test_cpu_threads.c); it depends on the SIMD level (exp
 * and summation differ in the last bits) but never by more than fp32
 * rounding.  Weights below FLT_MIN are flushed to 0 (< 1.2e-38 of the
 * largest weight, 1).
 */
#include "cpu_fpmode.h"
#include "cpu_kernels.h"
#include "core/backend.h"

#include <float.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- SIMD level ------------------------------------------------------------ */

/* Test hooks, process-wide: set from one thread while others call, so read and
 * written as relaxed atomics (a plain int there is a data race, which TSan
 * reports); a call that overlaps a change may see either setting. */
static int forced_isa = SGLA_CPU_ISA_AUTO;
static int forced_split = -1;

const char *sgla_cpu_isa_name(int isa)
{
    switch (isa) {
    case SGLA_CPU_ISA_SCALAR: return "scalar";
    case SGLA_CPU_ISA_AVX2: return "avx2";
    case SGLA_CPU_ISA_AVX512: return "avx512";
    }
    return "auto";
}

int sgla_cpu_isa_detect(void)
{
#if defined(SGLA_CPU_X86) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("fma"))
        return SGLA_CPU_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return SGLA_CPU_ISA_AVX2; /* F16C comes with every AVX2 CPU that has FMA */
#endif
    return SGLA_CPU_ISA_SCALAR;
}

int sgla_cpu_force_isa(int isa)
{
    if (isa < SGLA_CPU_ISA_AUTO || isa > SGLA_CPU_ISA_AVX512) return 0;
    if (isa != SGLA_CPU_ISA_AUTO && isa > sgla_cpu_isa_detect()) return 0;
    __atomic_store_n(&forced_isa, isa, __ATOMIC_RELAXED);
    return 1;
}

void sgla_cpu_force_split(int mode) { __atomic_store_n(&forced_split, mode, __ATOMIC_RELAXED); }
int sgla_cpu_forced_split(void) { return __atomic_load_n(&forced_split, __ATOMIC_RELAXED); }

/* The best level of this CPU and the cap SGLA_CPU_ISA=scalar|avx2|avx512
 * puts on it: found once per process. */
static int best_isa, env_isa;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static void find_isa(void)
{
    best_isa = sgla_cpu_isa_detect();
    env_isa = sgla_cpu_isa_parse(getenv("SGLA_CPU_ISA"));
}

int sgla_cpu_isa_parse(const char *name)
{
    if (!name) return SGLA_CPU_ISA_AUTO;
    for (int isa = SGLA_CPU_ISA_SCALAR; isa <= SGLA_CPU_ISA_AVX512; isa++)
        if (!strcmp(name, sgla_cpu_isa_name(isa))) return isa;
    return SGLA_CPU_ISA_AUTO;
}

int sgla_cpu_isa_current(void)
{
    const int forced = __atomic_load_n(&forced_isa, __ATOMIC_RELAXED);
    if (forced != SGLA_CPU_ISA_AUTO) return forced;
    pthread_once(&isa_once, find_isa);
    if (env_isa != SGLA_CPU_ISA_AUTO && env_isa < best_isa) return env_isa;
    return best_isa;
}

static const sgla_cpu_kernels *kernels_for(int isa)
{
#ifdef SGLA_CPU_X86
    if (isa == SGLA_CPU_ISA_AVX512 && sgla_cpu_kernels_avx512.qk) return &sgla_cpu_kernels_avx512;
    if (isa == SGLA_CPU_ISA_AVX2 && sgla_cpu_kernels_avx2.qk) return &sgla_cpu_kernels_avx2;
#endif
    (void)isa;
    return &sgla_cpu_kernels_scalar;
}

const sgla_cpu_kernels *sgla_cpu_kernels_current(void) { return kernels_for(sgla_cpu_isa_current()); }

/* ---- scratch ------------------------------------------------------------ */

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static void *amalloc(size_t bytes)
{
    if (bytes > SIZE_MAX - 63) return NULL;
    return aligned_alloc(64, ((bytes ? bytes : 1) + 63) & ~(size_t)63);
}

/* Everything one thread needs for one chunk. */
typedef struct scratch {
    float *Q, *Kp, *Vp, *O;       /* the current head's slot of the group buffers */
    float *Qg, *Kg, *Vg, *Og;     /* hg slots: [hg][C][K] / [hg][C][ldv] */
    float *Kt, *Vw, *G, *A, *rs, *w, *x, *S;
    double *b;
} scratch;

typedef struct plan {
    const sgla_forward_desc *d;
    const sgla_cpu_kernels *kr;
    sgla_dtype out_dt;
    void *o;
    int C, K, V;
    /* Leading dimensions of the packed operands, padded by 16 floats past a
     * multiple of 16: a power-of-two row stride maps every row of a panel to
     * the same few L1 sets (measured: 512-byte rows evict each other). */
    int ldc;   /* C-wide tables (Kt, G, A) */
    int ldk;   /* K-wide rows (Q, K) */
    int ldv;   /* V-wide rows (V, Vw, O) and the working state [K][ldv] */
    size_t es; /* input element size */
    int gate;  /* 0 none, 1 gamma, 2 g */
    int hg;    /* heads per item (sequential path) */
    int64_t win; /* split path: chunks a window (their states in Sbuf at once) */
    int direct_o; /* fp32 o, rows 64-byte aligned: the out kernel streams into it */
    /* a state pool read and written in place (cpu_pool.c): sequence n starts from
     * slot slot_in[n] of d->h0 and ends in slot slot_out[n] (-1: zeros / not kept);
     * NULL for the usual [N, H, K, V] h0 and ht */
    const int64_t *slot_in, *slot_out;
    int v_first; /* the pool's slots are [V][K] (SGLA_POOL_V_FIRST) */
} plan;

/* row r (V floats) of a state out of h0 / into ht, in the layout of the call (K-first, or a
 * V-first pool slot, where the row is a column: stride K) */
static void row_in(const plan *p, float *dst, const float *h0, int r)
{
    if (!p->v_first) memcpy(dst, h0 + (size_t)r * p->V, (size_t)p->V * sizeof(float));
    else
        for (int c = 0; c < p->V; c++) dst[c] = h0[(size_t)c * p->K + r];
}

static void row_out(const plan *p, float *ht, const float *src, int r)
{
    if (!p->v_first) memcpy(ht + (size_t)r * p->V, src, (size_t)p->V * sizeof(float));
    else
        for (int c = 0; c < p->V; c++) ht[(size_t)c * p->K + r] = src[c];
}

/* a whole state between a V-first slot ([V][K]) and the working layout ([K] rows of lds),
 * in 16 x 16 tiles so that both sides stay in cache */
static void vfirst_in(const plan *p, float *S, size_t lds, const float *h0)
{
    for (int r0 = 0; r0 < p->K; r0 += 16)
        for (int c0 = 0; c0 < p->V; c0 += 16)
            for (int c = c0; c < c0 + 16 && c < p->V; c++)
                for (int r = r0; r < r0 + 16 && r < p->K; r++) S[(size_t)r * lds + c] = h0[(size_t)c * p->K + r];
}

static void vfirst_out(const plan *p, float *ht, const float *S, size_t lds)
{
    for (int r0 = 0; r0 < p->K; r0 += 16)
        for (int c0 = 0; c0 < p->V; c0 += 16)
            for (int c = c0; c < c0 + 16 && c < p->V; c++)
                for (int r = r0; r < r0 + 16 && r < p->K; r++) ht[(size_t)c * p->K + r] = S[(size_t)r * lds + c];
}

/* the entering state of (sequence n, head h), or NULL for zeros */
static const float *seq_h0(const plan *p, int64_t n, int64_t h)
{
    const sgla_forward_desc *d = p->d;
    const size_t kv = (size_t)p->K * p->V;
    const int64_t row = p->slot_in ? p->slot_in[n] : n;
    return d->h0 && row >= 0 ? (const float *)d->h0 + ((size_t)row * d->H + h) * kv : NULL;
}

/* where its final state goes, or NULL */
static float *seq_ht(const plan *p, int64_t n, int64_t h)
{
    const sgla_forward_desc *d = p->d;
    const size_t kv = (size_t)p->K * p->V;
    if (p->slot_out) return p->slot_out[n] >= 0 ? (float *)d->h0 + ((size_t)p->slot_out[n] * d->H + h) * kv : NULL;
    return d->ht ? (float *)d->ht + ((size_t)n * d->H + h) * kv : NULL;
}

static size_t scratch_floats(const plan *p)
{
    size_t C = (size_t)p->C, K = (size_t)p->K, V = (size_t)p->V;
    size_t mx = K > V ? K : V;
    if ((size_t)p->C + 1 > mx) mx = (size_t)p->C + 1;
    const size_t hg = (size_t)p->hg;
    return 2 * hg * C * (size_t)p->ldk + K * (size_t)p->ldc + (2 * hg + 1) * C * (size_t)p->ldv + 2 * C * (size_t)p->ldc +
           2 * round_up((int64_t)C, 16) + round_up((int64_t)mx, 16) + K * (size_t)p->ldv * (size_t)p->hg + 2 * round_up((int64_t)C + 1, 16) +
           16 * 13;
}

/* A few scratch blocks are kept between calls: a fresh block of a megabyte
 * or two would be page-faulted in again on every call (measured: 20% of a
 * half-millisecond call).  A block is taken by one thread at a time. */
#define POOL_MAX 16
static struct {
    float *mem;
    size_t floats;
} pool[POOL_MAX];
static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;

static void lock_pool(void) { pthread_mutex_lock(&pool_mutex); }
static void unlock_pool(void) { pthread_mutex_unlock(&pool_mutex); }

/* fork(): libgomp's threads do not survive it, and in the child of a process
 * that has run a parallel region the next region of two or more threads hangs
 * (measured: for good; Python's multiprocessing and torch's DataLoader fork).
 * So once a process has called the CPU backend, its forked children run every
 * call on one thread: the same bits (they never depend on the thread count),
 * only slower.  The pool's mutex is held across fork, so that no child
 * inherits it locked by a thread it does not have. */
static int forked_child;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_child(void)
{
    __atomic_store_n(&forked_child, 1, __ATOMIC_RELAXED);
    unlock_pool();
}
static void watch_fork(void) { pthread_atfork(lock_pool, unlock_pool, fork_child); }
static void watch_fork_once(void) { pthread_once(&fork_once, watch_fork); }

float *sgla_cpu_scratch_take(size_t floats)
{
    float *m = NULL;
    watch_fork_once();
    lock_pool();
    int best = -1; /* the smallest that fits: a call taking a thread's block and a larger shared one gets each back */
    for (int i = 0; i < POOL_MAX; i++)
        if (pool[i].mem && pool[i].floats >= floats && (best < 0 || pool[i].floats < pool[best].floats)) best = i;
    if (best >= 0) {
        m = pool[best].mem;
        pool[best].mem = NULL;
    }
    unlock_pool();
    if (m) return m;
    /* a 64-byte header before the block holds its size, for the give; 64 bytes of slack after it */
    if (floats > (SIZE_MAX - 128) / sizeof(float)) return NULL;
    char *b = amalloc(floats * sizeof(float) + 128);
    if (!b) return NULL;
    *(size_t *)(void *)b = floats;
    return (float *)(void *)(b + 64);
}

static void scratch_free(float *m)
{
    if (m) free((char *)m - 64);
}

void sgla_cpu_scratch_give(float *m)
{
    if (!m) return;
    const size_t floats = *(const size_t *)(const void *)((const char *)m - 64); /* its own size, not a request's */
    lock_pool();
    int slot = -1;
    for (int i = 0; i < POOL_MAX && slot < 0; i++)
        if (!pool[i].mem) slot = i;
    if (slot < 0) /* full: replace the smallest if this one is larger */
        for (int i = 0; i < POOL_MAX; i++)
            if (pool[i].floats < floats && (slot < 0 || pool[i].floats < pool[slot].floats)) slot = i;
    float *drop = m;
    if (slot >= 0) {
        drop = pool[slot].mem;
        pool[slot].mem = m;
        pool[slot].floats = floats;
    }
    unlock_pool();
    scratch_free(drop);
}

static void cpu_release(void)
{
    lock_pool();
    for (int i = 0; i < POOL_MAX; i++) {
        scratch_free(pool[i].mem);
        pool[i].mem = NULL;
        pool[i].floats = 0;
    }
    unlock_pool();
}

static int scratch_alloc(const plan *p, scratch *s, float **mem)
{
    size_t C = (size_t)p->C, K = (size_t)p->K, V = (size_t)p->V;
    size_t mx = K > V ? K : V;
    if (C + 1 > mx) mx = C + 1;
    float *m = sgla_cpu_scratch_take(scratch_floats(p));
    *mem = m;
    if (!m) return 0;
    size_t off = 0;
#define TAKE(ptr, cnt)                                          \
    do {                                                        \
        ptr = m + off;                                          \
        off += (size_t)round_up((int64_t)(cnt), 16);            \
    } while (0)
    const size_t hg = (size_t)p->hg;
    TAKE(s->Qg, hg * C * (size_t)p->ldk);
    TAKE(s->Kg, hg * C * (size_t)p->ldk);
    TAKE(s->Kt, K * (size_t)p->ldc);
    TAKE(s->Vg, hg * C * (size_t)p->ldv);
    TAKE(s->Vw, C * (size_t)p->ldv);
    TAKE(s->Og, hg * C * (size_t)p->ldv);
    TAKE(s->G, C * (size_t)p->ldc);
    TAKE(s->A, C * (size_t)p->ldc);
    TAKE(s->rs, C);
    TAKE(s->w, C);
    TAKE(s->x, mx);
    TAKE(s->S, K * (size_t)p->ldv * (size_t)p->hg);
    float *bd;
    TAKE(bd, 2 * (C + 1));
    s->b = (double *)(void *)bd;
#undef TAKE
    memset(s->G, 0, C * (size_t)p->ldc * sizeof(float));
    s->Q = s->Qg;
    s->Kp = s->Kg;
    s->Vp = s->Vg;
    s->O = s->Og;
    return 1;
}

/* ---- gates ------------------------------------------------------------------ */

/* Constant gates (none / gamma) give the same G and rs for every chunk of a
 * head: *g_built says the scratch already holds them for this head. */

/* Build G (rows 0..n-1, zero above the diagonal), rs, w and return the carry for a
 * chunk of n tokens starting at token t (batch row bb, head h). */
static sgla_carry chunk_gates(const plan *p, const scratch *s, int64_t bb, int64_t t, int64_t h, int n,
                         const float *etab, int *g_built)
{
    const sgla_forward_desc *d = p->d;
    const float scale = d->scale;
    const int ldc = p->ldc;
    if (p->gate == 0) {
        if (!*g_built) {
            for (int i = 0; i < p->C; i++) {
                float *gr = s->G + (size_t)i * ldc;
                for (int j = 0; j <= i; j++) gr[j] = scale;
                s->rs[i] = scale;
                s->w[i] = 1.0f;
            }
            *g_built = 1;
        }
        return sgla_carry_of(0.0);
    }
    if (p->gate == 1) {
        if (!*g_built) {
            for (int i = 0; i < p->C; i++) {
                float *gr = s->G + (size_t)i * ldc;
                for (int j = 0; j <= i; j++) gr[j] = scale * etab[i - j];
                s->rs[i] = scale * etab[i + 1];
            }
            *g_built = 1;
        }
        for (int i = 0; i < n; i++) s->w[i] = etab[n - 1 - i];
        return sgla_carry_of(sgla_gate_floor((double)((const float *)d->g_gamma)[h]) * n);
    }
    /* data-dependent gate: chunk-local cumulative sum in double */
    const float *g = (const float *)d->g + ((bb * d->T + t) * d->H + h);
    const int64_t gs = d->H;
    double *b = s->b;
    b[0] = 0.0;
    for (int r = 1; r <= n; r++) b[r] = b[r - 1] + sgla_gate_floor((double)g[(int64_t)(r - 1) * gs]);
    return sgla_cpu_gate_weights(p->kr, n, b, scale, s->G, ldc, s->rs, s->w, s->x);
}

sgla_carry sgla_cpu_gate_weights(const sgla_cpu_kernels *kr, int n, const double *b, float scale, float *G, int ldg,
                                 float *rs, float *w, float *x)
{
    /* row i: scale * exp(b_{i+1} - b_{j+1}) for j <= i; the rest stays as it was (0) */
    if (G) kr->gmask(n, b, scale, G, ldg);
    for (int i = 0; i < n; i++) x[i] = (float)b[i + 1];
    kr->vexp(x, rs, n);
    for (int i = 0; i < n; i++) rs[i] *= scale;
    for (int i = 0; i < n; i++) x[i] = (float)(b[n] - b[i + 1]);
    kr->vexp(x, w, n);
    return sgla_carry_of(b[n]);
}

/* ---- packing ------------------------------------------------------------------ */

static const char *in_ptr(const void *base, size_t es, int64_t idx) { return (const char *)base + (size_t)idx * es; }

/* Token t of batch row bb, head h: element offset of q/k (K) or v/o (V). */
static int64_t tok_off(const sgla_forward_desc *d, int64_t bb, int64_t t, int64_t h, int64_t D)
{
    return ((bb * d->T + t) * d->H + h) * D;
}

static void pack_q(const plan *p, const scratch *s, int64_t bb, int64_t t, int64_t h, int n)
{
    const sgla_forward_desc *d = p->d;
    for (int i = 0; i < n; i++)
        p->kr->load(in_ptr(d->q, p->es, tok_off(d, bb, t + i, h, p->K)), d->dtype, s->Q + (size_t)i * p->ldk, p->K);
}

static void pack_kt(const plan *p, const scratch *s, int64_t bb, int64_t t, int64_t h, int n)
{
    const sgla_forward_desc *d = p->d;
    const int K = p->K;
    for (int i = 0; i < n; i++)
        p->kr->load(in_ptr(d->k, p->es, tok_off(d, bb, t + i, h, K)), d->dtype, s->Kp + (size_t)i * p->ldk, K);
    p->kr->trans(n, K, s->Kp, p->ldk, s->Kt, p->ldc);
}

/* Vw = w ⊙ Vp (the write weights), when there is a gate. */
static void weight_v(const plan *p, const scratch *s, int n)
{
    if (!p->gate) return;
    p->kr->wrows(n, p->V, s->w, s->Vp, p->ldv, s->Vw, p->ldv);
}

static void pack_v(const plan *p, const scratch *s, int64_t bb, int64_t t, int64_t h, int n)
{
    const sgla_forward_desc *d = p->d;
    const int V = p->V, ldv = p->ldv;
    for (int i = 0; i < n; i++)
        p->kr->load(in_ptr(d->v, p->es, tok_off(d, bb, t + i, h, V)), d->dtype, s->Vp + (size_t)i * ldv, V);
    weight_v(p, s, n);
}

static void store_o(const plan *p, const scratch *s, int64_t bb, int64_t t, int64_t h, int n)
{
    const sgla_forward_desc *d = p->d;
    const size_t oes = sgla_dtype_size(p->out_dt);
    for (int i = 0; i < n; i++)
        p->kr->store(s->O + (size_t)i * p->ldv, p->out_dt,
                     (char *)p->o + (size_t)tok_off(d, bb, t + i, h, p->V) * oes, p->V);
}

/* One chunk's output from the state S at its start ([K][ldv]). */
static void chunk_output(const plan *p, const scratch *s, const float *S, int n)
{
    p->kr->qk(n, p->K, s->Q, p->ldk, s->Kt, p->ldc, s->G, p->ldc, s->A, p->ldc);
    p->kr->out(n, p->K, p->V, s->Q, p->ldk, s->rs, S, p->ldv, s->A, p->ldc, s->Vp, p->ldv, s->O, p->ldv, 0);
}

/* Working state (ld ldv) <- h0 (ld V) or 0; ht (ld V) <- working state. */
static void state_in(const plan *p, float *S, const float *h0)
{
    if (h0 && p->v_first) {
        vfirst_in(p, S, (size_t)p->ldv, h0);
        return;
    }
    for (int r = 0; r < p->K; r++) {
        if (h0) row_in(p, S + (size_t)r * p->ldv, h0, r);
        else memset(S + (size_t)r * p->ldv, 0, (size_t)p->V * sizeof(float));
    }
}

static void state_out(const plan *p, float *ht, const float *S)
{
    if (p->v_first) vfirst_out(p, ht, S, (size_t)p->ldv);
    else
        for (int r = 0; r < p->K; r++) row_out(p, ht, S + (size_t)r * p->ldv, r);
}

static const float *vw_of(const plan *p, const scratch *s) { return p->gate ? s->Vw : s->Vp; }

/* etab[d] = exp(d * gamma_h), d = 0..C: the exponents in double, the exp
 * in the SIMD level's vexp (called per head and chunk: libm exp was 1.3 us). */
static void build_etab(const plan *p, int64_t h, float *etab)
{
    if (p->gate != 1) return;
    const double gam = sgla_gate_floor((double)((const float *)p->d->g_gamma)[h]);
    for (int i = 0; i <= p->C; i++) etab[i] = (float)(gam * (double)i);
    p->kr->vexp(etab, etab, p->C + 1);
}

/* Point the per-head views at slot j of the group buffers. */
static void use_slot(const plan *p, scratch *s, int64_t j)
{
    const size_t C = (size_t)p->C;
    s->Q = s->Qg + (size_t)j * C * (size_t)p->ldk;
    s->Kp = s->Kg + (size_t)j * C * (size_t)p->ldk;
    s->Vp = s->Vg + (size_t)j * C * (size_t)p->ldv;
    s->O = s->Og + (size_t)j * C * (size_t)p->ldv;
}

/* ---- one item: a sequence and a group of heads, sequential over chunks ----- */

/* Heads [hb, he) of sequence n_seq, chunk by chunk and, inside a chunk, head
 * by head: a token's rows of these heads are contiguous in q, k, v and o,
 * so each chunk reads and writes whole runs of (he - hb) * K elements
 * instead of one row per page.  The arithmetic of each (sequence, head) is
 * the same whatever the grouping. */
static void item_sequential(const plan *p, scratch *s, int64_t n_seq, int64_t hb, int64_t he)
{
    const sgla_forward_desc *d = p->d;
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n_seq, &bb, &t0, &t1);
    const size_t kv = (size_t)p->K * p->V, pkv = (size_t)p->K * p->ldv;
    float etab[1025];
    if (t1 - t0 <= 1) { /* empty, or decode: one pass over each state, in place in ht */
        for (int64_t h = hb; h < he; h++) {
            const float *h0 = seq_h0(p, n_seq, h);
            float *ht = seq_ht(p, n_seq, h);
            /* in place in ht when the layouts agree; a V-first slot goes through the scratch */
            float *S = ht && !p->v_first ? ht : s->S;
            if (!h0)
                memset(S, 0, kv * sizeof(float));
            else if (p->v_first)
                vfirst_in(p, S, (size_t)p->V, h0);
            else if (h0 != S)
                memcpy(S, h0, kv * sizeof(float));
            if (t1 == t0) {
                if (ht && p->v_first) vfirst_out(p, ht, S, (size_t)p->V);
                continue;
            }
            int g_built = 0;
            build_etab(p, h, etab);
            sgla_carry a = chunk_gates(p, s, bb, t0, h, 1, etab, &g_built);
            pack_q(p, s, bb, t0, h, 1);
            p->kr->load(in_ptr(d->k, p->es, tok_off(d, bb, t0, h, p->K)), d->dtype, s->x, p->K);
            p->kr->load(in_ptr(d->v, p->es, tok_off(d, bb, t0, h, p->V)), d->dtype, s->Vp, p->V);
            p->kr->decode(p->K, p->V, s->Q, s->x, s->Vp, s->rs[0], s->G[0], a, S, S, s->O);
            store_o(p, s, bb, t0, h, 1);
            if (ht && p->v_first) vfirst_out(p, ht, S, (size_t)p->V);
        }
        return;
    }
    for (int64_t h = hb; h < he; h++)
        state_in(p, s->S + (size_t)(h - hb) * pkv, seq_h0(p, n_seq, h));

    const sgla_dtype dt = d->dtype;
    const size_t oes = sgla_dtype_size(p->out_dt);
    const int K = p->K, V = p->V, ldv = p->ldv, ldk = p->ldk;
    const size_t CK = (size_t)p->C * ldk, CV = (size_t)p->C * ldv;
    for (int64_t t = t0; t < t1; t += p->C) {
        const int n = (int)(t1 - t < p->C ? t1 - t : p->C);
        /* gather: the group's rows of q, k, v in memory order, so the reads
         * stream through whole runs of (he - hb) * K elements */
        const int rows = (int)(he - hb);
        p->kr->gather(in_ptr(d->q, p->es, tok_off(d, bb, t, hb, K)), dt, d->H * K, n, rows, K, s->Qg, ldk,
                      (int64_t)CK);
        p->kr->gather(in_ptr(d->k, p->es, tok_off(d, bb, t, hb, K)), dt, d->H * K, n, rows, K, s->Kg, ldk,
                      (int64_t)CK);
        p->kr->gather(in_ptr(d->v, p->es, tok_off(d, bb, t, hb, V)), dt, d->H * V, n, rows, V, s->Vg, ldv,
                      (int64_t)CV);
        for (int64_t h = hb; h < he; h++) {
            float *S = s->S + (size_t)(h - hb) * pkv;
            int g_built = 0;
            use_slot(p, s, h - hb);
            build_etab(p, h, etab);
            sgla_carry a = chunk_gates(p, s, bb, t, h, n, etab, &g_built);
            p->kr->trans(n, K, s->Kp, ldk, s->Kt, p->ldc);
            weight_v(p, s, n);
            p->kr->qk(n, K, s->Q, ldk, s->Kt, p->ldc, s->G, p->ldc, s->A, p->ldc);
            if (p->direct_o) /* straight into o with streaming stores */
                p->kr->out(n, K, V, s->Q, ldk, s->rs, S, ldv, s->A, p->ldc, s->Vp, ldv,
                           (float *)p->o + tok_off(d, bb, t, h, V), (int)(d->H * V), 1);
            else
                p->kr->out(n, K, V, s->Q, ldk, s->rs, S, ldv, s->A, p->ldc, s->Vp, ldv, s->O, ldv, 0);
            p->kr->state(n, K, V, s->Kt, p->ldc, vw_of(p, s), ldv, a, S, S, ldv);
        }
        if (p->direct_o) continue;
        /* scatter the outputs in memory order */
        for (int i = 0; i < n; i++)
            for (int64_t h = hb; h < he; h++)
                p->kr->store(s->Og + (size_t)(h - hb) * CV + (size_t)i * ldv, p->out_dt,
                             (char *)p->o + (size_t)tok_off(d, bb, t + i, h, V) * oes, V);
    }
    use_slot(p, s, 0);
    for (int64_t h = hb; h < he; h++) {
        float *ht = seq_ht(p, n_seq, h);
        if (ht) state_out(p, ht, s->S + (size_t)(h - hb) * pkv);
    }
}

/* ---- one item split along the sequence (called inside a parallel region) ---- */

/* The chunks in windows of p->win, one after another, so that their states stay in cache: Sbuf holds a
 * window's states of K*V (first each chunk's D, then, after the scan, the state at the start of each
 * chunk) and after them the running state, carried from window to window; carry[c] is chunk c's carry.
 * Every state element is scanned over the chunks in order, as the sequential path does: the same bits. */
static void item_split(const plan *p, scratch *s, int64_t n_seq, int64_t h, float *Sbuf, sgla_carry *carry)
{
    const sgla_forward_desc *d = p->d;
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n_seq, &bb, &t0, &t1);
    const size_t pkv = (size_t)p->K * p->ldv;
    const int64_t nch = (t1 - t0 + p->C - 1) / p->C;
    const float *h0 = seq_h0(p, n_seq, h);
    float *ht = seq_ht(p, n_seq, h);
    float etab[1025];
    build_etab(p, h, etab);
    int g_built = 0;

    float *run = Sbuf + (size_t)p->win * pkv; /* the running state, row r at run + r ldv */
    for (int64_t w0 = 0; w0 < nch; w0 += p->win) {
        const int64_t w1 = w0 + p->win < nch ? w0 + p->win : nch;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t c = w0; c < w1; c++) {
            int64_t t = t0 + c * p->C;
            int n = (int)(t1 - t < p->C ? t1 - t : p->C);
            carry[c] = chunk_gates(p, s, bb, t, h, n, etab, &g_built);
            pack_kt(p, s, bb, t, h, n);
            pack_v(p, s, bb, t, h, n);
            p->kr->state(n, p->K, p->V, s->Kt, p->ldc, vw_of(p, s), p->ldv, SGLA_CARRY_ONE, NULL,
                         Sbuf + (size_t)(c - w0) * pkv, p->ldv);
        }
        /* implicit barrier; the scan across the window's chunks, elementwise, rows of the state in blocks;
         * per element (s, D_c) -> (fma(a_c, s, D_c), s) */
        const int64_t rblk = 8;
        const int64_t nblk = (p->K + rblk - 1) / rblk;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t ib = 0; ib < nblk; ib++) {
            const int64_t r0 = ib * rblk, r1 = r0 + rblk < p->K ? r0 + rblk : p->K;
            for (int64_t r = r0; r < r1; r++) {
                float *cr = run + (size_t)r * p->ldv;
                if (w0 == 0) {
                    if (h0)
                        row_in(p, cr, h0, (int)r);
                    else
                        memset(cr, 0, (size_t)p->V * sizeof(float));
                }
                for (int64_t c = w0; c < w1; c++)
                    p->kr->scan(p->V, carry[c], cr, Sbuf + (size_t)(c - w0) * pkv + (size_t)r * p->ldv);
                if (ht && w1 == nch) row_out(p, ht, cr, (int)r);
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t c = w0; c < w1; c++) {
            int64_t t = t0 + c * p->C;
            int n = (int)(t1 - t < p->C ? t1 - t : p->C);
            (void)chunk_gates(p, s, bb, t, h, n, etab, &g_built);
            pack_q(p, s, bb, t, h, n);
            pack_kt(p, s, bb, t, h, n);
            pack_v(p, s, bb, t, h, n);
            chunk_output(p, s, Sbuf + (size_t)(c - w0) * pkv, n);
            store_o(p, s, bb, t, h, n);
        }
        /* (implicit barrier: the next window's states overwrite these) */
    }
}

/* ---- entry points --------------------------------------------------------- */

#define CPU_BLOCK_64 16
#define CPU_BLOCK_128 32
#define CPU_BLOCK_MIN_PAIRS 4

static int64_t item_chunks(const sgla_forward_desc *d, int64_t n, int C)
{
    int64_t bb, t0, t1;
    sgla_seq_bounds(d, n, &bb, &t0, &t1);
    return (t1 - t0 + C - 1) / C;
}

int sgla_cpu_default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* In chunk steps of blocks of C tokens.  Items run whole: rounds of items over the threads, each as long
 * as the mean item, and at least the longest item.  Split at a length L (a power of two): the items of L
 * chunks or more one after another, each in rounds of its chunks over the threads, times `cost` (the
 * scans, barriers and any work done twice); the shorter ones whole beside them, as above.  The best L, or
 * none.  Sequences are counted by powers of two of their chunks (a packed batch's one by one, a dense
 * batch's one for all).  Depends on the shape and the thread count only, and changes no bit. */
void sgla_cpu_split_plan(const sgla_forward_desc *d, int C, double cost, int forced, int64_t *split_min,
                         int64_t *whole_max)
{
    const int64_t N = sgla_num_sequences(d), maxc = (sgla_max_seq_len(d) + C - 1) / C;
    *split_min = INT64_MAX;
    *whole_max = maxc;
    if (forced == 0 || maxc < 2 || N * d->H == 0) return;
    if (forced > 0) { /* the test hook: every item of two chunks or more */
        *split_min = 2;
        *whole_max = 1;
        return;
    }
    const int64_t nt = sgla_cpu_threads(d->threads, maxc); /* the split's team; whole items run on it too */
    if (nt < 2) return;
    struct {
        double n, sum, rounds;
        int64_t max;
    } b[64];
    memset(b, 0, sizeof b);
    const double reps = d->cu_seqlens ? (double)d->H : (double)N * (double)d->H; /* items a sequence stands for */
    for (int64_t n = 0; n < (d->cu_seqlens ? N : 1); n++) {
        int64_t bb, t0, t1;
        sgla_seq_bounds(d, n, &bb, &t0, &t1);
        const int64_t c = (t1 - t0 + C - 1) / C;
        if (c < 1) continue;
        const int j = 63 - __builtin_clzll((unsigned long long)c);
        b[j].n += reps;
        b[j].sum += (double)c * reps;
        b[j].rounds += (double)((c + nt - 1) / nt) * reps;
        if (c > b[j].max) b[j].max = c;
    }
    double n_all = 0.0, s_all = 0.0;
    for (int j = 0; j < 64; j++) n_all += b[j].n, s_all += b[j].sum;
    if (n_all == 0.0) return;
    const int64_t nw = sgla_cpu_threads(d->threads, (int64_t)n_all); /* the team without the split */
    double best = ceil(n_all / (double)nw) * (s_all / n_all);
    if (best < (double)maxc) best = (double)maxc;
    double n_w = 0.0, s_w = 0.0;
    int64_t m_w = 0;
    for (int j = 1; j < 63 && ((int64_t)1 << j) <= maxc; j++) {
        n_w += b[j - 1].n, s_w += b[j - 1].sum; /* the items below L = 2^j */
        if (b[j - 1].max > m_w) m_w = b[j - 1].max;
        double split = 0.0;
        for (int k = j; k < 64; k++) split += b[k].rounds * cost;
        double whole = n_w > 0.0 ? ceil(n_w / (double)nt) * (s_w / n_w) : 0.0;
        if (whole < (double)m_w) whole = (double)m_w;
        if (split + whole < best) {
            best = split + whole;
            *split_min = (int64_t)1 << j;
            *whole_max = m_w > 0 ? m_w : 1;
        }
    }
}

int sgla_cpu_threads(int requested, int64_t useful)
{
    watch_fork_once();
    if (__atomic_load_n(&forked_child, __ATOMIC_RELAXED)) return 1; /* see watch_fork */
    int nth = requested > 0 ? requested : sgla_cpu_default_threads();
    if (useful < 1) useful = 1;
    if (nth > useful) nth = (int)useful;
#ifdef _OPENMP
    int cap = 4 * omp_get_num_procs();
    if (cap < 1) cap = 1;
    if (nth > cap) nth = cap;
#endif
    return nth < 1 ? 1 : nth;
}

static sgla_status forward_impl(const sgla_forward_desc *d, sgla_dtype out_dt, void *o_out, const int64_t *slot_in,
                                const int64_t *slot_out, int v_first);

sgla_status sgla_cpu_forward_out(const sgla_forward_desc *d, sgla_dtype out_dt, void *o_out)
{
    return forward_impl(d, out_dt, o_out, NULL, NULL, 0);
}

sgla_status sgla_cpu_forward_slots(const sgla_forward_desc *d, const int64_t *slot_in, const int64_t *slot_out,
                                   int v_first)
{
    return forward_impl(d, d->dtype, d->o, slot_in, slot_out, v_first);
}

sgla_status sgla_cpu_supports(const sgla_forward_desc *d)
{
    if (d->dtype == SGLA_F64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CPU backend: f64 inputs are for the reference backends");
    if (d->chunk < 1 || d->chunk > 1024) /* every chunk length the API accepts works here */
        return sgla_fail(SGLA_ERR_UNSUPPORTED_CHUNK, "CPU backend: chunk = %lld, must be in [1, 1024]",
                         (long long)d->chunk);
    if (d->K > 65536 || d->V > 65536)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_SHAPE, "CPU backend: K = %lld, V = %lld, each must be <= 65536",
                         (long long)d->K, (long long)d->V);
    return SGLA_OK;
}

static sgla_status forward_impl(const sgla_forward_desc *d, sgla_dtype out_dt, void *o_out, const int64_t *slot_in,
                                const int64_t *slot_out, int v_first)
{
    const int C = (int)d->chunk;
    if (out_dt == SGLA_F64)
        return sgla_fail(SGLA_ERR_UNSUPPORTED_DTYPE, "CPU backend: f64 outputs are for the reference backends");
    sgla_status ok = sgla_cpu_supports(d);
    if (ok != SGLA_OK) return ok;
    /* No token and no state to write: nothing to do.  The loop below would
     * still clear a K x V state for every (sequence, head), and an empty
     * input may claim 2^40 heads (a header-only .npy file): hours of work. */
    if (d->B * d->T == 0 && !d->ht && !d->pool) return SGLA_OK;
    plan p;
    memset(&p, 0, sizeof p);
    p.slot_in = slot_in, p.slot_out = slot_out, p.v_first = v_first;
    /* The compute block: the caller's chunk, capped at 16 tokens when K and
     * V are both <= 64 and at 32 when both are <= 128, if the call has at
     * least 4 (sequence, head) pairs.  The C x C products and the C(C+1)/2
     * decay exps per block weigh as much as the K x V ones there; a smaller
     * block does less of that work per token (2026-11-29, 4x2048x16x64:
     * -13 % at 16; 1x16384x8x128: -6 % at 32).  With fewer pairs the
     * sequence is split over the threads, where every block costs a state
     * and a scan step: there the caller's chunk measured faster.  The
     * chunked form is exact for any block length, the gates stay
     * block-local (smaller arguments), and the block depends only on the
     * shape, never on the thread count. */
    const int64_t pairs = sgla_num_sequences(d) * d->H;
    const int cap = pairs < CPU_BLOCK_MIN_PAIRS ? C
                    : d->K <= 64 && d->V <= 64 ? CPU_BLOCK_64
                    : d->K <= 128 && d->V <= 128 ? CPU_BLOCK_128
                                                  : C;
    int Cb = C < cap ? C : cap;
    p.d = d;
    p.kr = kernels_for(sgla_cpu_isa_current());
    p.out_dt = out_dt;
    p.o = o_out;
    p.C = Cb;
    p.K = (int)d->K;
    p.V = (int)d->V;
    p.ldc = (int)round_up(Cb, 16) + 16;
    p.ldk = (int)round_up(p.K, 16) + 16;
    p.ldv = (int)round_up(p.V, 16) + 16;
    p.es = sgla_dtype_size(d->dtype);
    p.gate = d->g ? 2 : d->g_gamma ? 1 : 0;
    p.direct_o = out_dt == SGLA_F32 && ((uintptr_t)o_out & 63) == 0 && p.V % 16 == 0 && d->H * d->V <= INT32_MAX &&
                 (p.kr == &sgla_cpu_kernels_scalar ? 0 : 1);

    const int64_t N = sgla_num_sequences(d);
    const int64_t items = N * d->H;
    /* Split along the sequence where that keeps more threads busy (the items of split_min chunks or more);
     * the split's cost, a third more than its chunks (one item on two threads: 1.30-1.38x the thread time of
     * the whole item, docs/perf-cpu.md, session 53) */
    const int64_t max_chunks = (sgla_max_seq_len(d) + Cb - 1) / Cb;
    int64_t split_min, whole_max;
    sgla_cpu_split_plan(d, Cb, 1.33, sgla_cpu_forced_split(), &split_min, &whole_max);
    int split = split_min != INT64_MAX;
    int nth = sgla_cpu_threads(d->threads, split ? max_chunks : items);
    /* The split keeps a window's states, one K x V state a chunk, about 1 MiB of them, so that they stay in
     * cache between its passes (all of a sequence's at once, 73 MB at 1x65536x1x128, ran slower on two
     * threads than one thread without the split: docs/perf-cpu.md, session 52), and two chunks a thread */
    {
        const double st_bytes = (double)p.K * (double)p.ldv * sizeof(float);
        int64_t w = (int64_t)(1024.0 * 1024 / st_bytes);
        if (w < 2 * (int64_t)nth) w = 2 * (int64_t)nth;
        p.win = w < max_chunks ? w : max_chunks;
    }

    float *Sbuf = NULL;
    sgla_carry *carry = NULL;
    if (split) {
        /* one block from the scratch pool, kept between calls (a fresh one is page-faulted in each call) */
        const size_t sf = (size_t)round_up((int64_t)(p.win + 1) * p.K * p.ldv, 16);
        Sbuf = sgla_cpu_scratch_take(sf + (size_t)max_chunks * (sizeof(sgla_carry) / sizeof(float)));
        carry = Sbuf ? (sgla_carry *)(void *)(Sbuf + sf) : NULL;
        if (!Sbuf) { /* same results without the split, just slower */
            split = 0;
            nth = sgla_cpu_threads(d->threads, items);
        }
    }
    /* Heads per item on the sequential path: as many as keep the group's
     * packed chunk and states in about 1 MiB of cache, fewer while that
     * leaves fewer than two items per thread. */
    const int64_t per_head = 4 * ((int64_t)p.K * p.ldv + 2 * (int64_t)Cb * (p.ldk + p.ldv));
    int64_t hg = (int64_t)1024 * 1024 / per_head;
    if (hg < 1) hg = 1;
    if (hg > d->H) hg = d->H;
    /* fewer heads per item while there are fewer items than threads, or
     * not a multiple of the threads and fewer than two per thread */
    for (;;) {
        const int64_t gi = N * ((d->H + hg - 1) / hg);
        if (hg <= 1 || (gi >= nth && (gi % nth == 0 || gi >= 2 * nth))) break;
        hg = (hg + 1) / 2;
    }
    hg = (d->H + (d->H + hg - 1) / hg - 1) / ((d->H + hg - 1) / hg); /* equal groups */
    if (split || max_chunks < 2) hg = 1; /* decode / short sequences use one slot */
    const int64_t ngroups = (d->H + hg - 1) / hg, gitems = N * ngroups;
    p.hg = (int)hg;
    if (!split && nth > gitems) nth = (int)(gitems > 0 ? gitems : 1);

    int fail = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth) if (nth > 1)
#endif
    {
        const sgla_fpmode fpm = sgla_fpmode_enter();
        scratch s;
        float *mem = NULL;
        int ok = scratch_alloc(&p, &s, &mem);
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            fail = 1;
        }
#ifdef _OPENMP
#pragma omp barrier
#endif
        int go = 1;
#ifdef _OPENMP
#pragma omp atomic read
#endif
        go = fail;
        go = !go;
        if (go) {
            if (split) {
                /* items shorter than split_min run whole */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
                for (int64_t it = 0; it < items; it++)
                    if (item_chunks(d, it / d->H, Cb) < split_min)
                        item_sequential(&p, &s, it / d->H, it % d->H, it % d->H + 1);
                for (int64_t it = 0; it < items; it++)
                    if (item_chunks(d, it / d->H, Cb) >= split_min) item_split(&p, &s, it / d->H, it % d->H, Sbuf, carry);
            } else {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
                for (int64_t it = 0; it < gitems; it++) {
                    const int64_t n = it / ngroups, hb = (it % ngroups) * hg;
                    item_sequential(&p, &s, n, hb, hb + hg < d->H ? hb + hg : d->H);
                }
            }
        }
        sgla_cpu_scratch_give(mem);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* drains streaming stores (mfence on x86) */
        sgla_fpmode_leave(fpm);
    }
    sgla_cpu_scratch_give(Sbuf);
    if (fail) return sgla_fail(SGLA_ERR_OUT_OF_MEMORY, "CPU backend: per-thread scratch of %zu bytes",
                               scratch_floats(&p) * sizeof(float));
    return SGLA_OK;
}

static sgla_status cpu_forward(const sgla_forward_desc *d, sgla_backend kind)
{
    (void)kind;
    if (d->pool) return sgla_cpu_pool_forward(d);
    return sgla_cpu_forward_out(d, d->dtype, d->o);
}

/* The CPU needs no workspace; its queries refuse what its calls would (sgla.h: a query is
 * validated as the call is). */
static sgla_status cpu_workspace(const sgla_forward_desc *d, size_t *bytes)
{
    *bytes = 0;
    return sgla_cpu_supports(d);
}

static sgla_status cpu_backward_workspace(const sgla_backward_desc *b, size_t *bytes)
{
    *bytes = 0;
    return sgla_cpu_supports(b->fwd);
}

const sgla_backend_impl sgla_backend_cpu = {.values_on_host = 1,
                                            .forward = cpu_forward,
                                            .workspace_size = cpu_workspace,
                                            .release = cpu_release,
                                            .backward = sgla_cpu_backward,
                                            .backward_workspace_size = cpu_backward_workspace};
