/* Calls from several host threads at once (engines call one per request or
 * replica, Python with the GIL released).  Each worker thread owns a few
 * random calls: CPU forward / backward / state pool and now and then ref-a /
 * ref-b; varlen, h0 / ht (in place too), gates g and g_gamma, f32 / bf16 /
 * f16, threads 1, 0 (the OpenMP default) and 3.  Every result is compared bit
 * for bit with the same call made serially beforehand.  Meanwhile one thread
 * calls sgla_release_memory() and refills the scratch pool with NaN-filled
 * blocks (a call that read scratch it had not written would change bits), and
 * every worker makes a failing call of its own between the others:
 * sgla_last_error() must name that thread's own argument, and "" after a call
 * that succeeded.  And the process forks while they run: the child (whose
 * OpenMP threads did not survive the fork) repeats every call, within 30
 * seconds and with the same bits.
 *
 * SGLA_STRESS_ROUNDS (default 3) rounds of SGLA_STRESS_THREADS (default 6)
 * workers, SGLA_STRESS_REPS (default 6) passes over their calls each;
 * SGLA_STRESS_CALL_THREADS=n gives every call threads = n (1 for a
 * ThreadSanitizer run over an OpenMP build: libgomp is not instrumented);
 * SGLA_SEED replays a draw. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/cpu_kernels.h"
#include "testutil.h"

enum { OP_FWD, OP_BWD, OP_POOL, OP_REF_FWD, OP_REF_BWD, NUM_OPS };
enum { MAX_OUT = 8, CALLS_PER_THREAD = 6, MAX_THREADS = 32 };

typedef struct out_buf {
    void *p;
    size_t bytes;
    const void *init; /* copied in before the call (in-place states, the pool); NULL: poisoned */
    unsigned char *expect;
} out_buf;

typedef struct call {
    int op, threads;
    sgla_backend backend;
    sgla_forward_desc d;
    sgla_backward_desc b;
    sgla_state_pool sp;
    int64_t cu[8], idx[8 * 4], acc[8];
    unsigned char fresh[8];
    void *mem[32];
    int nmem;
    out_buf out[MAX_OUT];
    int nout;
} call;

typedef struct worker {
    int id;
    call calls[CALLS_PER_THREAD];
    int reps;
    uint64_t seed;
    int bad_bits, bad_error, bad_status;
    char first[200];
} worker;

static void *take(call *c, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort();
    c->mem[c->nmem++] = p;
    return p;
}

static void *input(call *c, tu_rng *r, sgla_dtype dt, int64_t n, double sd)
{
    void *p = take(c, (size_t)n * sgla_dtype_size(dt));
    tu_fill(r, p, dt, n, sd);
    return p;
}

static void *output(call *c, size_t bytes, const void *init)
{
    out_buf *o = &c->out[c->nout++];
    o->p = take(c, bytes);
    o->bytes = bytes;
    o->init = init;
    o->expect = take(c, bytes);
    return o->p;
}

static float *gates(call *c, tu_rng *r, int64_t n)
{
    float *g = take(c, (size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) g[i] = (float)tu_uniform_range(r, -0.3, 0.0);
    return g;
}

/* A random call; its inputs are its own (read-only), its outputs too. */
static int call_threads; /* SGLA_STRESS_CALL_THREADS: every call's `threads` (the TSan run: 1) */

static void make_call(call *c, tu_rng *r)
{
    static const int64_t dims[] = {4, 8, 16, 20, 32, 48, 64};
    static const int64_t chunks[] = {1, 16, 32, 64, 100};
    static const sgla_dtype dts[] = {SGLA_F32, SGLA_BF16, SGLA_F16};
    static const int thr[] = {1, 0, 3};
    memset(c, 0, sizeof *c);
    const int pick = (int)tu_int(r, 0, 19);
    c->op = pick < 7 ? OP_FWD : pick < 13 ? OP_BWD : pick < 17 ? OP_POOL : pick < 19 ? OP_REF_FWD : OP_REF_BWD;
    c->threads = thr[tu_int(r, 0, 2)];
    if (call_threads) c->threads = call_threads;
    c->backend = c->op >= OP_REF_FWD ? (tu_int(r, 0, 1) ? SGLA_BACKEND_REF_A : SGLA_BACKEND_REF_B) : SGLA_BACKEND_CPU;
    sgla_forward_desc *d = &c->d;
    sgla_forward_desc_init(d);
    d->dtype = dts[tu_int(r, 0, 2)];
    d->H = tu_int(r, 1, 4), d->K = dims[tu_int(r, 0, 6)], d->V = dims[tu_int(r, 0, 6)];
    d->chunk = chunks[tu_int(r, 0, 4)];
    d->threads = c->threads;
    d->scale = 0.25f;
    const int refs = c->op >= OP_REF_FWD;
    const int64_t tmax = refs ? 40 : 260;
    const int varlen = c->op == OP_POOL || tu_int(r, 0, 2) == 0;
    /* a pool's speculative steps now and then: every sequence 1 to t_max = 4 tokens */
    const int spec = c->op == OP_POOL && tu_int(r, 0, 3) == 0;
    if (varlen) {
        const int64_t N = tu_int(r, 1, 6);
        d->B = 1, d->num_seqs = N, d->cu_seqlens = c->cu;
        c->cu[0] = 0;
        for (int64_t n = 0; n < N; n++) {
            const int64_t kind = tu_int(r, 0, 3); /* decode tokens, empty and long sequences */
            c->cu[n + 1] = c->cu[n] + (spec ? tu_int(r, 1, 4)
                                       : kind == 0 ? 1 : kind == 1 ? tu_int(r, 0, 3) : tu_int(r, 1, tmax));
        }
        d->T = c->cu[N];
    } else {
        d->B = tu_int(r, 1, 3), d->T = tu_int(r, 0, tmax);
    }
    const int64_t N = sgla_num_sequences(d), BT = d->B * d->T, H = d->H, K = d->K, V = d->V;
    const int64_t st = N * H * K * V;
    d->q = input(c, r, d->dtype, BT * H * K, 1.0);
    d->k = input(c, r, d->dtype, BT * H * K, 0.3);
    d->v = input(c, r, d->dtype, BT * H * V, 1.0);
    const int gate = (int)tu_int(r, 0, 2);
    if (gate == 1) d->g_gamma = gates(c, r, H);
    if (gate == 2) d->g = gates(c, r, BT * H);
    const size_t es = sgla_dtype_size(d->dtype);

    if (c->op == OP_POOL) {
        sgla_state_pool *p = &c->sp;
        p->index_bits = 64, p->indices = c->idx;
        p->flags = (tu_int(r, 0, 3) ? SGLA_POOL_INPLACE : 0) | (tu_int(r, 0, 2) == 0 ? SGLA_POOL_V_FIRST : 0);
        if (spec) {
            p->t_max = 4, p->num_accepted = c->acc;
            for (int64_t n = 0; n < N; n++) c->acc[n] = tu_int(r, 1, 4);
        }
        /* distinct slots (a slot written twice is refused), -1 pads a row now and then */
        const int64_t per = p->t_max ? p->t_max : 1;
        p->slots = N * per + tu_int(r, 0, 3);
        int64_t *perm = take(c, (size_t)p->slots * sizeof *perm);
        for (int64_t s = 0; s < p->slots; s++) perm[s] = s;
        for (int64_t s = p->slots - 1; s > 0; s--) {
            const int64_t j = tu_int(r, 0, s), t = perm[s];
            perm[s] = perm[j], perm[j] = t;
        }
        for (int64_t i = 0; i < N * per; i++) c->idx[i] = tu_int(r, 0, 7) == 0 ? -1 : perm[i];
        for (int64_t n = 0; n < N; n++) c->fresh[n] = (unsigned char)tu_int(r, 0, 1);
        p->has_initial_state = c->fresh;
        d->pool = p;
        const int64_t ps = p->slots * H * K * V;
        d->h0 = output(c, (size_t)ps * sizeof(float), input(c, r, SGLA_F32, ps, 0.5));
        d->o = output(c, (size_t)(d->T * H * V) * es, NULL);
        return;
    }
    const int h0 = (int)tu_int(r, 0, 1), ht = (int)tu_int(r, 0, 1);
    const float *h0v = h0 ? input(c, r, SGLA_F32, st, 0.5) : NULL;
    if (c->op == OP_FWD || c->op == OP_REF_FWD) {
        d->o = output(c, (size_t)(BT * H * V) * es, NULL);
        if (h0 && ht && tu_int(r, 0, 1)) { /* ht == h0: the state updated in place */
            d->ht = output(c, (size_t)st * sizeof(float), h0v);
            d->h0 = d->ht;
        } else {
            d->h0 = h0v;
            if (ht) d->ht = output(c, (size_t)st * sizeof(float), NULL);
        }
        return;
    }
    sgla_backward_desc *b = &c->b;
    sgla_backward_desc_init(b);
    d->h0 = h0v;
    b->fwd = d;
    b->dout = input(c, r, d->dtype, BT * H * V, 1.0);
    const float *dht = ht ? input(c, r, SGLA_F32, st, 0.5) : NULL;
    b->dq = output(c, (size_t)(BT * H * K) * es, NULL);
    b->dk = output(c, (size_t)(BT * H * K) * es, NULL);
    b->dv = output(c, (size_t)(BT * H * V) * es, NULL);
    if (d->g) b->dg = output(c, (size_t)(BT * H) * sizeof(float), NULL);
    if (d->g_gamma) b->dg_gamma = output(c, (size_t)H * sizeof(float), NULL);
    if (h0 && dht && tu_int(r, 0, 1)) { /* dh0 == dht: in place */
        b->dh0 = output(c, (size_t)st * sizeof(float), dht);
        b->dht = b->dh0;
    } else {
        b->dht = dht;
        if (h0) b->dh0 = output(c, (size_t)st * sizeof(float), NULL);
    }
}

static sgla_status run_call(call *c)
{
    for (int i = 0; i < c->nout; i++) {
        if (c->out[i].init) memcpy(c->out[i].p, c->out[i].init, c->out[i].bytes);
        else memset(c->out[i].p, 0xFF, c->out[i].bytes); /* NaN in f32, bf16 and f16 */
    }
    return c->op == OP_BWD || c->op == OP_REF_BWD ? sgla_backward(&c->b, c->backend) : sgla_forward(&c->d, c->backend);
}

/* a failing call whose message names this thread (its chunk, or its backend number) */
static int bad_call(const worker *w, int which, char *want, size_t n)
{
    sgla_forward_desc d = w->calls[0].d;
    sgla_status st, expect;
    if (which == 0) {
        d.chunk = 2000 + w->id;
        expect = SGLA_ERR_UNSUPPORTED_CHUNK;
        snprintf(want, n, "chunk = %d, must be in [1, 1024]", 2000 + w->id);
        st = sgla_forward(&d, SGLA_BACKEND_CPU);
    } else {
        expect = SGLA_ERR_INVALID_BACKEND;
        snprintf(want, n, "backend %d is not a value of sgla_backend", 100 + w->id);
        st = sgla_forward(&d, (sgla_backend)(100 + w->id));
    }
    return st == expect;
}

static void note(worker *w, const char *fmt, int a, int b)
{
    if (!w->first[0]) snprintf(w->first, sizeof w->first, fmt, w->id, a, b);
}

static void *work(void *arg)
{
    worker *w = arg;
    tu_rng r;
    tu_rng_init(&r, w->seed);
    char want[128];
    for (int rep = 0; rep < w->reps; rep++)
        for (int k = 0; k < CALLS_PER_THREAD; k++) {
            call *c = &w->calls[tu_int(&r, 0, CALLS_PER_THREAD - 1)];
            const sgla_status st = run_call(c);
            if (st != SGLA_OK) {
                w->bad_status++;
                note(w, "thread %d: status %d, op %d", (int)st, c->op);
                continue;
            }
            if (sgla_last_error()[0]) {
                w->bad_error++;
                note(w, "thread %d: a successful call left an error (op %d %d)", c->op, 0);
            }
            for (int i = 0; i < c->nout; i++)
                if (memcmp(c->out[i].p, c->out[i].expect, c->out[i].bytes)) {
                    w->bad_bits++;
                    note(w, "thread %d: other bits in output %d of op %d", i, c->op);
                }
            if (tu_int(&r, 0, 2) == 0) {
                if (!bad_call(w, (int)tu_int(&r, 0, 1), want, sizeof want)) w->bad_status++;
                if (strcmp(sgla_last_error(), want)) {
                    w->bad_error++;
                    note(w, "thread %d: last error not its own (%d %d)", 0, 0);
                    if (w->bad_error == 1) fprintf(stderr, "  want \"%s\", got \"%s\"\n", want, sgla_last_error());
                }
            }
        }
    return NULL;
}

/* The disturber: frees the kept scratch, and fills the pool with NaN blocks a call may take next. */
static volatile int stop;
static void *disturb(void *arg)
{
    tu_rng r;
    tu_rng_init(&r, *(uint64_t *)arg);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (tu_int(&r, 0, 3) == 0) sgla_release_memory();
        else {
            const size_t n = (size_t)1 << tu_int(&r, 8, 20);
            float *m = sgla_cpu_scratch_take(n);
            if (m) {
                memset(m, 0xFF, n * sizeof(float));
                sgla_cpu_scratch_give(m);
            }
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ASan's allocator (GCC 12's libsanitizer) does not hold its locks across fork: a child forked while
 * another thread was inside malloc or free waits on that lock for good (seen here: the child's first
 * free, in ASan's quarantine).  That is any program under that runtime, not sgla's locks, so under
 * ASan the fork comes once the workers and the disturber have stopped. */
#if defined(__SANITIZE_ADDRESS__)
#define FORK_WHILE_RUNNING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_WHILE_RUNNING 0
#endif
#endif
#ifndef FORK_WHILE_RUNNING
#define FORK_WHILE_RUNNING 1
#endif

/* The thread ids of this process, at most cap of them (Linux: /proc/self/task); -1 elsewhere. */
static int task_ids(long *ids, int cap)
{
#ifdef __linux__
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.' && n < cap) ids[n++] = strtol(e->d_name, NULL, 10);
    closedir(dir);
    return n;
#else
    (void)ids, (void)cap;
    return -1;
#endif
}

enum { MAX_TASKS = 256 };

/* Joined workers are not the last of their threads: each worker that ran a call on several threads
 * owned an OpenMP pool, whose threads leave (freeing their memory) after it exits.  Under ASan a fork
 * while one of them frees would hang the child as above (the likely cause of a hang seen once, round 2
 * of seed 156668415, which replays did not repeat), so the fork waits until no thread is left but
 * those of `before` (the ids taken before the workers started; at most 10 s). */
static void settle_threads(const long *before, int nb)
{
    for (int i = 0; i < 10000 && nb > 0; i++) {
        long now[MAX_TASKS];
        const int n = task_ids(now, MAX_TASKS);
        int extra = 0;
        for (int a = 0; a < n; a++) {
            int known = 0;
            for (int b = 0; b < nb && !known; b++) known = now[a] == before[b];
            extra += !known;
        }
        if (n < 0 || !extra) return;
        const struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* fork while the workers run (see above); the child makes all their calls again (a hang fails by
 * SIGALRM) */
static int fork_check(worker *ws, int nw)
{
    const pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        alarm(30);
        int bad = 0;
        for (int t = 0; t < nw; t++)
            for (int k = 0; k < CALLS_PER_THREAD; k++) {
                call *c = &ws[t].calls[k];
                bad |= run_call(c) != SGLA_OK;
                for (int i = 0; i < c->nout; i++) bad |= memcmp(c->out[i].p, c->out[i].expect, c->out[i].bytes) != 0;
            }
        _exit(bad);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return 0;
    if (!WIFEXITED(st)) fprintf(stderr, "  forked child: %s\n", WIFSIGNALED(st) ? "killed (a hang?)" : "?");
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : dflt;
}

/* The scratch pool (one thread): the smallest kept block that fits is handed out, and a block given back
 * keeps its own size, whatever the request that took it */
static void pool_fit(void)
{
    sgla_release_memory();
    float *a = sgla_cpu_scratch_take(1000), *b = sgla_cpu_scratch_take((size_t)1 << 20);
    TU_CHECK(a && b, "pool: take failed");
    sgla_cpu_scratch_give(b);
    sgla_cpu_scratch_give(a);
    float *x = sgla_cpu_scratch_take(1000), *y = sgla_cpu_scratch_take((size_t)1 << 20);
    TU_CHECK(x == a && y == b, "pool: the small request did not get the small block (%p %p for %p %p)", (void *)x,
             (void *)y, (void *)a, (void *)b);
    sgla_cpu_scratch_give(x);
    sgla_cpu_scratch_give(y);
    sgla_release_memory();
    float *c = sgla_cpu_scratch_take((size_t)1 << 20);
    TU_CHECK(c != NULL, "pool: take failed");
    sgla_cpu_scratch_give(c);
    float *d = sgla_cpu_scratch_take(100);
    TU_CHECK(d == c, "pool: the one kept block was not handed out");
    memset(d, 0, ((size_t)1 << 20) * sizeof(float)); /* all of it is there (ASan would say otherwise) */
    sgla_cpu_scratch_give(d);
    float *e = sgla_cpu_scratch_take((size_t)1 << 20);
    TU_CHECK(e == c, "pool: a block given back after a small request lost its size");
    sgla_cpu_scratch_give(e);
    sgla_release_memory();
}

int main(void)
{
    const uint64_t seed = tu_seed("test_concurrency");
    pool_fit();
    const int rounds = env_int("SGLA_STRESS_ROUNDS", 3), reps = env_int("SGLA_STRESS_REPS", 6);
    int nw = env_int("SGLA_STRESS_THREADS", 6);
    call_threads = env_int("SGLA_STRESS_CALL_THREADS", 0);
    if (nw > MAX_THREADS) nw = MAX_THREADS;
    tu_rng r;
    tu_rng_init(&r, seed);
    static worker ws[MAX_THREADS];
    for (int round = 0; round < rounds; round++) {
        int serial_ok = 1;
        for (int t = 0; t < nw; t++) {
            worker *w = &ws[t];
            memset(w, 0, sizeof *w);
            w->id = t, w->reps = reps, w->seed = tu_next(&r);
            for (int k = 0; k < CALLS_PER_THREAD; k++) {
                call *c = &w->calls[k];
                make_call(c, &r);
                /* the expected bits: this call alone */
                const sgla_status st = run_call(c);
                TU_CHECK(st == SGLA_OK, "round %d thread %d call %d (op %d): serial status %d: %s", round, t, k,
                         c->op, (int)st, sgla_last_error());
                serial_ok &= st == SGLA_OK;
                for (int i = 0; i < c->nout; i++) memcpy(c->out[i].expect, c->out[i].p, c->out[i].bytes);
                /* and the CPU's bits do not depend on the thread count */
                if (c->op <= OP_POOL && st == SGLA_OK && !call_threads) {
                    c->d.threads = c->threads == 1 ? 3 : 1;
                    run_call(c);
                    c->d.threads = c->threads;
                    for (int i = 0; i < c->nout; i++)
                        TU_CHECK(!memcmp(c->out[i].expect, c->out[i].p, c->out[i].bytes),
                                 "round %d thread %d call %d (op %d): threads %d and %d differ in output %d", round, t,
                                 k, c->op, c->threads, c->threads == 1 ? 3 : 1, i);
                }
            }
        }
        if (!serial_ok) break;
        pthread_t th[MAX_THREADS], dt;
        uint64_t dseed = tu_next(&r);
        long tasks[MAX_TASKS];
        const int ntasks = task_ids(tasks, MAX_TASKS);
        __atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
        TU_CHECK(pthread_create(&dt, NULL, disturb, &dseed) == 0, "disturber not started");
        for (int t = 0; t < nw; t++) TU_CHECK(pthread_create(&th[t], NULL, work, &ws[t]) == 0, "thread %d", t);
        if (FORK_WHILE_RUNNING)
            TU_CHECK(fork_check(ws, nw), "round %d: a forked child's calls failed, hung or gave other bits", round);
        for (int t = 0; t < nw; t++) pthread_join(th[t], NULL);
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        pthread_join(dt, NULL);
        if (!FORK_WHILE_RUNNING) {
            settle_threads(tasks, ntasks);
            TU_CHECK(fork_check(ws, nw), "round %d: a forked child's calls failed, hung or gave other bits", round);
        }
        for (int t = 0; t < nw; t++) {
            const worker *w = &ws[t];
            TU_CHECK(!w->bad_bits && !w->bad_error && !w->bad_status,
                     "round %d: %d calls gave other bits, %d wrong last errors, %d wrong statuses (first: %s)",
                     round, w->bad_bits, w->bad_error, w->bad_status, w->first);
            for (int k = 0; k < CALLS_PER_THREAD; k++)
                for (int i = 0; i < ws[t].calls[k].nmem; i++) free(ws[t].calls[k].mem[i]);
        }
    }
    sgla_release_memory();
    return tu_finish("test_concurrency");
}
