/* The CPU backend gives bitwise identical o and ht whatever the thread
 * count and whichever path runs: per (sequence, head) items, head groups,
 * and the sequence split (chunk states, a scan across chunks, outputs),
 * also forced on.  Each SIMD level in turn; varlen with empty and one-token
 * sequences; in place.  Also: T = 0 leaves o alone and copies h0 to ht;
 * chunk sizes out of range are refused with a message; calls from several
 * host threads at once (sharing the scratch pool, one of them releasing it)
 * give the bits of the same calls made one after another. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "testutil.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

typedef struct bufs {
    float *q, *k, *v, *o, *g, *h0, *ht;
    int64_t *cu;
} bufs;

static void run(const sgla_forward_desc *tmpl, int threads, int split, float *o, float *ht, const float *h0_src,
                int64_t ns, int inplace, sgla_status *st)
{
    sgla_forward_desc d = *tmpl;
    d.threads = threads;
    d.o = o;
    if (inplace) {
        memcpy(ht, h0_src, (size_t)ns * sizeof(float));
        d.h0 = ht;
    }
    d.ht = ht;
    sgla_cpu_force_split(split);
    *st = sgla_forward(&d, SGLA_BACKEND_CPU);
    sgla_cpu_force_split(-1);
}

static void check_case(tu_rng *r, int64_t B, int64_t T, int64_t H, int64_t K, int64_t V, int64_t C, int gate,
                       int64_t nseq, int inplace)
{
    const int64_t Bx = nseq > 0 ? 1 : B, N = nseq > 0 ? nseq : B;
    const int64_t nqk = Bx * T * H * K, nv = Bx * T * H * V, ns = N * H * K * V;
    float *q = malloc((size_t)(nqk + 1) * 4), *k = malloc((size_t)(nqk + 1) * 4), *v = malloc((size_t)(nv + 1) * 4);
    float *g = malloc((size_t)(Bx * T * H + 1) * 4), *gg = malloc((size_t)H * 4), *h0 = malloc((size_t)ns * 4);
    int64_t *cu = NULL;
    tu_fill(r, q, SGLA_F32, nqk, 1.0);
    tu_fill(r, k, SGLA_F32, nqk, 0.2);
    tu_fill(r, v, SGLA_F32, nv, 1.0);
    for (int64_t i = 0; i < Bx * T * H; i++) g[i] = (float)tu_uniform_range(r, -0.3, 0);
    for (int64_t i = 0; i < H; i++) gg[i] = (float)tu_uniform_range(r, -0.1, 0);
    tu_fill(r, h0, SGLA_F32, ns, 0.5);
    if (nseq > 0) {
        cu = malloc((size_t)(nseq + 1) * sizeof(int64_t));
        cu[0] = 0;
        for (int64_t i = 1; i <= nseq; i++) cu[i] = T * i / nseq;
        if (nseq >= 3) { cu[1] = 0; cu[2] = 1; } /* one empty, one single-token sequence */
    }
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q; d.k = k; d.v = v; d.dtype = SGLA_F32;
    d.B = Bx; d.T = T; d.H = H; d.K = K; d.V = V; d.chunk = C;
    d.g = gate == 2 ? g : NULL;
    d.g_gamma = gate == 1 ? gg : NULL;
    d.scale = 0.5f;
    d.h0 = h0;
    d.cu_seqlens = cu;
    d.num_seqs = nseq;

    float *o_ref = malloc((size_t)(nv + 1) * 4), *ht_ref = malloc((size_t)ns * 4);
    float *o = malloc((size_t)(nv + 1) * 4), *ht = malloc((size_t)ns * 4);
    sgla_status st;
    /* both poisoned: the count below means something (ht_ref may reuse a poisoned ht's memory, and a
     * NaN left in both compares equal bit for bit) */
    tu_poison(o_ref, SGLA_F32, nv);
    tu_poison(ht_ref, SGLA_F32, ns);
    run(&d, 1, 0, o_ref, ht_ref, h0, ns, inplace, &st);
    TU_CHECK(st == SGLA_OK, "threads=1: %s", sgla_last_error());
    TU_CHECK(tu_count_poison(o_ref, SGLA_F32, nv) == 0 && tu_count_poison(ht_ref, SGLA_F32, ns) == 0,
             "T=%lld H=%lld: output not fully written or NaN", (long long)T, (long long)H);
    /* 100000 threads: capped to the work and the cores (it used to overflow
     * the OpenMP stacks on the split path), same bits */
    const int threads[] = {1, 2, 3, 4, 7, 100000};
    for (int ti = 0; ti < 6; ti++)
        for (int split = -1; split <= 1; split++) {
            if (threads[ti] == 1 && split != 1) continue;
            tu_poison(o, SGLA_F32, nv);
            tu_poison(ht, SGLA_F32, ns);
            run(&d, threads[ti], split, o, ht, h0, ns, inplace, &st);
            TU_CHECK(st == SGLA_OK, "threads=%d split=%d: %s", threads[ti], split, sgla_last_error());
            TU_CHECK(memcmp(o, o_ref, (size_t)nv * 4) == 0 && memcmp(ht, ht_ref, (size_t)ns * 4) == 0,
                     "isa=%s B=%lld T=%lld H=%lld K=%lld V=%lld C=%lld gate=%d nseq=%lld inplace=%d: threads=%d "
                     "split=%d differs from threads=1",
                     sgla_cpu_isa_name(sgla_cpu_isa_current()), (long long)B, (long long)T, (long long)H,
                     (long long)K, (long long)V, (long long)C, gate, (long long)nseq, inplace, threads[ti], split);
        }
    free(q); free(k); free(v); free(g); free(gg); free(h0); free(cu);
    free(o_ref); free(ht_ref); free(o); free(ht);
}

/* Several host threads calling sgla_forward at once, each on its own buffers. */
enum { CT_THREADS = 6, CT_CALLS = 8, CT_T = 150, CT_H = 3, CT_K = 24, CT_V = 40 };
typedef struct ct_job {
    const float *q, *k, *v, *g;
    float o[CT_T * CT_H * CT_V], ht[CT_H * CT_K * CT_V];
    sgla_status st;
    int release; /* this thread also frees the shared scratch between its calls */
    int errors_ok;
} ct_job;

static void ct_desc(const ct_job *j, sgla_forward_desc *d, float *o, float *ht)
{
    sgla_forward_desc_init(d);
    d->q = j->q, d->k = j->k, d->v = j->v, d->g = j->g, d->o = o, d->ht = ht;
    d->B = 1, d->T = CT_T, d->H = CT_H, d->K = CT_K, d->V = CT_V, d->chunk = 32, d->threads = 2;
}

static void *ct_run(void *arg)
{
    ct_job *j = arg;
    sgla_forward_desc d;
    j->errors_ok = 1;
    for (int c = 0; c < CT_CALLS; c++) {
        ct_desc(j, &d, j->o, j->ht);
        j->st = sgla_forward(&d, SGLA_BACKEND_CPU);
        if (j->st != SGLA_OK) break;
        if (j->release) sgla_release_memory();
        /* a failing call on this thread leaves its own message, whatever the others do */
        d.K = 0;
        if (sgla_forward(&d, SGLA_BACKEND_CPU) != SGLA_ERR_INVALID_SIZE || !strstr(sgla_last_error(), "K = 0"))
            j->errors_ok = 0;
    }
    return NULL;
}

static void concurrent_calls(tu_rng *r)
{
    static float q[CT_THREADS][CT_T * CT_H * CT_K], k[CT_THREADS][CT_T * CT_H * CT_K];
    static float v[CT_THREADS][CT_T * CT_H * CT_V], g[CT_THREADS][CT_T * CT_H];
    static ct_job jobs[CT_THREADS], solo[CT_THREADS];
    pthread_t th[CT_THREADS];
    for (int t = 0; t < CT_THREADS; t++) {
        tu_fill(r, q[t], SGLA_F32, CT_T * CT_H * CT_K, 1.0);
        tu_fill(r, k[t], SGLA_F32, CT_T * CT_H * CT_K, 0.3);
        tu_fill(r, v[t], SGLA_F32, CT_T * CT_H * CT_V, 1.0);
        for (int i = 0; i < CT_T * CT_H; i++) g[t][i] = (float)tu_uniform_range(r, -0.2, 0);
        ct_job *j = &solo[t];
        j->q = q[t], j->k = k[t], j->v = v[t], j->g = g[t];
        sgla_forward_desc d;
        ct_desc(j, &d, j->o, j->ht);
        j->st = sgla_forward(&d, SGLA_BACKEND_CPU); /* one after another: the expected bits */
        jobs[t] = *j;
        jobs[t].release = t == 0;
    }
    int started = 0;
    for (int t = 0; t < CT_THREADS; t++) started += pthread_create(&th[t], NULL, ct_run, &jobs[t]) == 0;
    TU_CHECK(started == CT_THREADS, "only %d threads started", started);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < started; t++) {
        TU_CHECK(solo[t].st == SGLA_OK && jobs[t].st == SGLA_OK, "thread %d: %d / %d", t, (int)solo[t].st,
                 (int)jobs[t].st);
        TU_CHECK(!memcmp(solo[t].o, jobs[t].o, sizeof solo[t].o) && !memcmp(solo[t].ht, jobs[t].ht, sizeof solo[t].ht),
                 "thread %d: concurrent calls gave other bits", t);
        TU_CHECK(jobs[t].errors_ok, "thread %d: its last error was not its own", t);
    }
    sgla_release_memory();
}

/* The split's plan (sgla_cpu_split_plan): every item it runs whole fits whole_max (the backward's
 * per-thread scratch is sized by it), and its plain decisions: one long item split, whole rounds not,
 * decodes not, the hook obeyed, one long sequence among short ones split and the short ones not */
static void split_plan(tu_rng *r)
{
    int64_t cu[66];
    for (int trial = 0; trial < 200; trial++) {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        const int nseq = (int)tu_int(r, 1, 64);
        cu[0] = 0;
        for (int i = 0; i < nseq; i++) cu[i + 1] = cu[i] + (tu_int(r, 0, 3) ? tu_int(r, 0, 200) : tu_int(r, 0, 5000));
        d.B = 1, d.T = cu[nseq], d.H = tu_int(r, 1, 4), d.K = d.V = 64, d.chunk = 64;
        d.cu_seqlens = cu, d.num_seqs = nseq;
        d.threads = (int)tu_int(r, 2, 8);
        const int C = 16 << tu_int(r, 0, 2);
        int64_t sm, wm;
        sgla_cpu_split_plan(&d, C, 1.25, -1, &sm, &wm);
        for (int i = 0; i < nseq; i++) {
            const int64_t c = (cu[i + 1] - cu[i] + C - 1) / C;
            TU_CHECK(c >= sm || c <= wm, "plan: sequence %d of %lld chunks runs whole past whole_max %lld (split_min %lld)",
                     i, (long long)c, (long long)wm, (long long)sm);
        }
        TU_CHECK(sm == INT64_MAX || sm >= 2, "plan: split_min %lld", (long long)sm);
    }
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.K = d.V = 128, d.chunk = 64, d.threads = 2;
    int64_t sm, wm;
    d.B = 1, d.T = 4096, d.H = 1;
    sgla_cpu_split_plan(&d, 64, 1.125, -1, &sm, &wm);
    TU_CHECK(sm == 2, "plan: one item of 64 chunks on 2 threads not split (%lld)", (long long)sm);
    sgla_cpu_split_plan(&d, 64, 1.125, 0, &sm, &wm);
    TU_CHECK(sm == INT64_MAX && wm == 64, "plan: the hook's 0 split (%lld, %lld)", (long long)sm, (long long)wm);
    d.B = 4;
    sgla_cpu_split_plan(&d, 64, 1.125, -1, &sm, &wm);
    TU_CHECK(sm == INT64_MAX, "plan: 4 items in 2 whole rounds split (%lld)", (long long)sm);
    sgla_cpu_split_plan(&d, 64, 1.125, 1, &sm, &wm);
    TU_CHECK(sm == 2 && wm == 1, "plan: the hook's 1 not obeyed (%lld, %lld)", (long long)sm, (long long)wm);
    d.B = 3;
    sgla_cpu_split_plan(&d, 64, 1.125, -1, &sm, &wm);
    TU_CHECK(sm == 2, "plan: 3 items on 2 threads (two rounds whole) not split (%lld)", (long long)sm);
    d.B = 64, d.T = 1;
    sgla_cpu_split_plan(&d, 64, 1.125, 1, &sm, &wm);
    TU_CHECK(sm == INT64_MAX, "plan: decodes split (%lld)", (long long)sm);
    /* 8192 tokens and 63 x 64 in blocks of 32: the long one split, the 2-chunk ones whole */
    d.B = 1, d.H = 1, d.T = 8192 + 63 * 64;
    cu[0] = 0, cu[1] = 8192;
    for (int i = 1; i <= 63; i++) cu[i + 1] = cu[i] + 64;
    d.cu_seqlens = cu, d.num_seqs = 64;
    sgla_cpu_split_plan(&d, 32, 1.33, -1, &sm, &wm);
    TU_CHECK(sm > 2 && sm <= 256 && wm == 2, "plan: one long sequence among short ones: split_min %lld whole_max %lld",
             (long long)sm, (long long)wm);
    printf("split plan: 200 packed layouts, whole items within whole_max; the plain cases as expected\n");
}

int main(void)
{
    uint64_t seed = tu_seed("test_cpu_threads");
    tu_rng r;
    tu_rng_init(&r, seed);
    split_plan(&r);
    const int isas[] = {SGLA_CPU_ISA_SCALAR, SGLA_CPU_ISA_AVX2, SGLA_CPU_ISA_AVX512};
    for (int ii = 0; ii < 3; ii++) {
        if (!sgla_cpu_force_isa(isas[ii])) continue;
        check_case(&r, 1, 300, 1, 16, 24, 32, 2, 0, 0);   /* one item: the split path */
        check_case(&r, 1, 257, 1, 9, 5, 16, 1, 0, 1);     /* in place, partial chunk */
        check_case(&r, 2, 130, 3, 16, 16, 64, 0, 0, 0);   /* few items */
        check_case(&r, 1, 200, 2, 8, 12, 16, 2, 5, 0);    /* varlen: empty, one token, long */
        check_case(&r, 1, 1, 4, 32, 32, 64, 2, 0, 1);     /* decode in place */
        check_case(&r, 3, 1, 5, 16, 8, 64, 1, 0, 1);
        /* >= 4 (sequence, head) pairs: the backend's own smaller block
         * (16 tokens at K, V <= 64, 32 at <= 128), split or not */
        check_case(&r, 2, 100, 2, 80, 72, 64, 2, 0, 0);
        check_case(&r, 1, 90, 4, 20, 20, 128, 1, 0, 0);
        /* the split's chunks in windows of about 1 MiB of states (14 chunks at K = 128, V = 144 rows): several
         * windows, the last partial, the running state carried between them, in place or not */
        check_case(&r, 1, 1000, 1, 128, 128, 16, 2, 0, 0);
        check_case(&r, 1, 777, 1, 128, 96, 16, 1, 0, 1);
        for (int i = 0; i < 4; i++)
            check_case(&r, tu_int(&r, 1, 2), tu_int(&r, 1, 150), tu_int(&r, 1, 4), tu_int(&r, 1, 20),
                       tu_int(&r, 1, 20), 16 << tu_int(&r, 0, 2), (int)tu_int(&r, 0, 2), tu_int(&r, 0, 1) ? 0 : 3,
                       (int)tu_int(&r, 0, 1));
    }
    sgla_cpu_force_isa(SGLA_CPU_ISA_AUTO);

    /* SGLA_CPU_ISA names a level; it is read once (the calls above read it,
     * unset), so setting it now changes nothing */
    {
        TU_CHECK(sgla_cpu_isa_parse("scalar") == SGLA_CPU_ISA_SCALAR, "parse scalar");
        TU_CHECK(sgla_cpu_isa_parse("avx2") == SGLA_CPU_ISA_AVX2, "parse avx2");
        TU_CHECK(sgla_cpu_isa_parse("avx512") == SGLA_CPU_ISA_AVX512, "parse avx512");
        TU_CHECK(sgla_cpu_isa_parse("sse9") == SGLA_CPU_ISA_AUTO && sgla_cpu_isa_parse(NULL) == SGLA_CPU_ISA_AUTO,
                 "parse of an unknown name");
        int want = sgla_cpu_isa_parse(getenv("SGLA_CPU_ISA")); /* as this process started */
        if (want == SGLA_CPU_ISA_AUTO || want > sgla_cpu_isa_detect()) want = sgla_cpu_isa_detect();
        TU_CHECK(sgla_cpu_isa_current() == want, "default level %s, want %s", sgla_cpu_isa_name(sgla_cpu_isa_current()),
                 sgla_cpu_isa_name(want));
        setenv("SGLA_CPU_ISA", want == SGLA_CPU_ISA_SCALAR ? "avx2" : "scalar", 1);
        TU_CHECK(sgla_cpu_isa_current() == want, "SGLA_CPU_ISA read again after the first call");
        TU_CHECK(!sgla_cpu_force_isa(99), "force_isa(99) accepted");
    }
    /* sgla_release_memory frees the scratch kept between calls: the next
     * call allocates again and gives the same bits */
    {
        enum { TT = 200, HH = 3, KK = 32, VV = 48 };
        static float q[TT * HH * KK], k[TT * HH * KK], v[TT * HH * VV], o1[TT * HH * VV], o2[TT * HH * VV];
        tu_fill(&r, q, SGLA_F32, TT * HH * KK, 1.0);
        tu_fill(&r, k, SGLA_F32, TT * HH * KK, 0.3);
        tu_fill(&r, v, SGLA_F32, TT * HH * VV, 1.0);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q; d.k = k; d.v = v; d.o = o1; d.B = 1; d.T = TT; d.H = HH; d.K = KK; d.V = VV;
        sgla_status st1 = sgla_forward(&d, SGLA_BACKEND_CPU);
        sgla_release_memory();
        d.o = o2;
        sgla_status st2 = sgla_forward(&d, SGLA_BACKEND_CPU);
        sgla_release_memory();
        TU_CHECK(st1 == SGLA_OK && st2 == SGLA_OK && memcmp(o1, o2, sizeof o1) == 0,
                 "after sgla_release_memory: %d %d, same bits %d", (int)st1, (int)st2, !memcmp(o1, o2, sizeof o1));
    }
    concurrent_calls(&r);
    /* a thread count far past the cores, with as many items: capped (the OpenMP runtime ends the process
     * when it cannot create them), the forward's and the backward's bits unchanged */
    {
        enum { TT = 2, HH = 60000 };
        float *q = malloc(sizeof(float) * TT * HH), *o1 = malloc(sizeof(float) * TT * HH);
        float *o2 = malloc(sizeof(float) * TT * HH), *d1 = malloc(sizeof(float) * 3 * TT * HH);
        float *d2 = malloc(sizeof(float) * 3 * TT * HH);
        /* poisoned, and counted after: an element neither call writes is the same NaN (or the same
         * zero of fresh pages) in both, and memcmp alone passes it */
        tu_poison(o1, SGLA_F32, TT * HH), tu_poison(o2, SGLA_F32, TT * HH);
        tu_poison(d1, SGLA_F32, 3 * TT * HH), tu_poison(d2, SGLA_F32, 3 * TT * HH);
        tu_fill(&r, q, SGLA_F32, TT * HH, 1.0);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q; d.k = q; d.v = q; d.o = o1; d.B = 1; d.T = TT; d.H = HH; d.K = 1; d.V = 1;
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &d, b.dout = q, b.dq = d1, b.dk = d1 + TT * HH, b.dv = d1 + 2 * TT * HH;
        d.threads = 100000;
        sgla_status f1 = sgla_forward(&d, SGLA_BACKEND_CPU), b1 = sgla_backward(&b, SGLA_BACKEND_CPU);
        d.threads = 1, d.o = o2;
        b.dq = d2, b.dk = d2 + TT * HH, b.dv = d2 + 2 * TT * HH;
        sgla_status f2 = sgla_forward(&d, SGLA_BACKEND_CPU), b2 = sgla_backward(&b, SGLA_BACKEND_CPU);
        TU_CHECK(f1 == SGLA_OK && b1 == SGLA_OK && f2 == SGLA_OK && b2 == SGLA_OK,
                 "100000 threads: forward %d backward %d (%s)", (int)f1, (int)b1, sgla_last_error());
        TU_CHECK(!memcmp(o1, o2, sizeof(float) * TT * HH) && !memcmp(d1, d2, sizeof(float) * 3 * TT * HH),
                 "100000 threads: other bits than one thread");
        TU_CHECK(tu_count_poison(o1, SGLA_F32, TT * HH) == 0 && tu_count_poison(d1, SGLA_F32, 3 * TT * HH) == 0 &&
                     tu_count_poison(o2, SGLA_F32, TT * HH) == 0 && tu_count_poison(d2, SGLA_F32, 3 * TT * HH) == 0,
                 "100000 threads: o %lld / %lld, dq dk dv %lld / %lld elements not written (NaN)",
                 (long long)tu_count_poison(o1, SGLA_F32, TT * HH), (long long)tu_count_poison(o2, SGLA_F32, TT * HH),
                 (long long)tu_count_poison(d1, SGLA_F32, 3 * TT * HH),
                 (long long)tu_count_poison(d2, SGLA_F32, 3 * TT * HH));
        free(q), free(o1), free(o2), free(d1), free(d2);
    }
    /* T = 0: nothing to write in o, ht = h0 */
    {
        float h0[2 * 3 * 4], ht[2 * 3 * 4];
        for (int i = 0; i < 24; i++) h0[i] = (float)i;
        tu_poison(ht, SGLA_F32, 24);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.B = 2; d.T = 0; d.H = 1; d.K = 3; d.V = 4; d.h0 = h0; d.ht = ht;
        sgla_status st = sgla_forward(&d, SGLA_BACKEND_CPU);
        TU_CHECK(st == SGLA_OK, "T=0: %s", sgla_last_error());
        TU_CHECK(memcmp(h0, ht, sizeof h0) == 0, "T=0: ht != h0");
        d.h0 = NULL;
        st = sgla_forward(&d, SGLA_BACKEND_CPU);
        int zero = 1;
        for (int i = 0; i < 24; i++) zero &= ht[i] == 0.0f;
        TU_CHECK(st == SGLA_OK && zero, "T=0 without h0: ht must be 0");
    }
    /* chunk sizes: any in [1, 1024]; outside refused with a message */
    {
        float q[8 * 2] = {0}, k[8 * 2] = {0}, v[8 * 2] = {0}, o[8 * 2];
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q; d.k = k; d.v = v; d.o = o; d.B = 1; d.T = 8; d.H = 1; d.K = 2; d.V = 2;
        d.chunk = 2048;
        sgla_status st = sgla_forward(&d, SGLA_BACKEND_CPU);
        TU_CHECK(st == SGLA_ERR_UNSUPPORTED_CHUNK && strstr(sgla_last_error(), "chunk"), "chunk 2048: %d %s", (int)st,
                 sgla_last_error());
        d.chunk = 3;
        st = sgla_forward(&d, SGLA_BACKEND_CPU);
        TU_CHECK(st == SGLA_OK, "chunk 3: %s", sgla_last_error());
    }
#if defined(__x86_64__) || defined(__i386__)
    /* subnormals: the backend flushes them in its own threads for the call (strong gates make them in bulk,
     * each an assist on x86) and leaves the caller's mode as it found it, FTZ / DAZ off or on; the results
     * with gates in [-8, 0] (pair weights and states in the subnormal band) stay at fp32's bar against
     * ref-a, forward and backward */
    {
        enum { B = 2, T = 150, H = 2, K = 16, V = 16 };
        const int64_t nqk = B * T * H * K, nv = B * T * H * V, ng = B * T * H;
        float *q = malloc(nqk * 4), *k = malloc(nqk * 4), *v = malloc(nv * 4), *g = malloc(ng * 4);
        float *o = malloc(nv * 4), *o_ref = malloc(nv * 4), *dout = malloc(nv * 4);
        float *dq = malloc(nqk * 4), *dk = malloc(nqk * 4), *dv = malloc(nv * 4), *dg = malloc(ng * 4);
        float *dq_ref = malloc(nqk * 4);
        tu_fill(&r, q, SGLA_F32, nqk, 1.0);
        tu_fill(&r, k, SGLA_F32, nqk, 0.3);
        tu_fill(&r, v, SGLA_F32, nv, 1.0);
        tu_fill(&r, dout, SGLA_F32, nv, 1.0);
        for (int64_t i = 0; i < ng; i++) g[i] = (float)tu_uniform_range(&r, -8.0, 0.0);
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q; d.k = k; d.v = v; d.g = g; d.B = B; d.T = T; d.H = H; d.K = K; d.V = V; d.threads = 2;
        sgla_backward_desc bd;
        sgla_backward_desc_init(&bd);
        bd.fwd = &d, bd.dout = dout, bd.dq = dq_ref, bd.dk = dk, bd.dv = dv, bd.dg = dg;
        d.o = o_ref;
        TU_CHECK(sgla_forward(&d, SGLA_BACKEND_REF_A) == SGLA_OK && sgla_backward(&bd, SGLA_BACKEND_REF_A) == SGLA_OK,
                 "ref-a: %s", sgla_last_error());
        const unsigned base = _mm_getcsr() & ~0x8040u, modes[2] = {base, base | 0x8040u};
        for (int m = 0; m < 2; m++) {
            _mm_setcsr(modes[m]);
            d.o = o, bd.dq = dq;
            const sgla_status sf = sgla_forward(&d, SGLA_BACKEND_CPU), sb = sgla_backward(&bd, SGLA_BACKEND_CPU);
            const unsigned after = _mm_getcsr();
            _mm_setcsr(base);
            TU_CHECK(sf == SGLA_OK && sb == SGLA_OK, "strong gates, mode %#x: %s", modes[m], sgla_last_error());
            /* (the control bits: flags the calls raised may be left raised) */
            TU_CHECK((after & ~0x3fu) == (modes[m] & ~0x3fu), "the caller's MXCSR %#x came back as %#x", modes[m], after);
            double num = 0, den = 0, bnum = 0, bden = 0;
            for (int64_t i = 0; i < nv; i++) num += (o[i] - o_ref[i]) * (double)(o[i] - o_ref[i]), den += (double)o_ref[i] * o_ref[i];
            for (int64_t i = 0; i < nqk; i++)
                bnum += (dq[i] - dq_ref[i]) * (double)(dq[i] - dq_ref[i]), bden += (double)dq_ref[i] * dq_ref[i];
            TU_CHECK(sqrt(num / den) <= 1e-5 && sqrt(bnum / bden) <= 2e-6, "strong gates, mode %#x: o rel %.3g, dq rel %.3g",
                     modes[m], sqrt(num / den), sqrt(bnum / bden));
            printf("gates in [-8, 0], caller's MXCSR %#x: kept; o rel %.2e, dq rel %.2e against ref-a\n", modes[m],
                   sqrt(num / den), sqrt(bnum / bden));
        }
        /* the flush is on: a call on the caller's thread alone raises no denormal-operand flag (MXCSR bit 1),
         * which these gates raise in IEEE mode */
        _mm_setcsr(base & ~0x3fu);
        d.threads = 1, d.o = o;
        const sgla_status s1 = sgla_forward(&d, SGLA_BACKEND_CPU);
        const unsigned flags = _mm_getcsr();
        _mm_setcsr(base);
        TU_CHECK(s1 == SGLA_OK && !(flags & 0x2u), "one thread, gates in [-8, 0]: MXCSR %#x after the call (DE set: "
                 "subnormals were computed)", flags);
        {
            volatile float x = 1e-30f;
            x = x * 1e-10f;
            TU_CHECK(x != 0.0f, "the caller's thread flushes subnormals after the calls");
        }
#ifdef _OPENMP
        /* the OpenMP runtime's threads, which the backend's calls share with the caller's own regions */
        d.threads = 2;
        (void)sgla_forward(&d, SGLA_BACKEND_CPU);
        (void)sgla_backward(&bd, SGLA_BACKEND_CPU);
        unsigned leaked = 0;
#pragma omp parallel num_threads(2) reduction(| : leaked)
        leaked |= _mm_getcsr() & 0x8040u;
        TU_CHECK(!leaked, "an OpenMP thread kept FTZ / DAZ after the calls (%#x)", leaked);
#endif
        /* the pool's token recurrence (speculative steps): two sequences of T tokens, a slot per token */
        {
            enum { TP = 4, NS = 2 * TP + 2 };
            float *pool = calloc((size_t)NS * H * K * V, 4);
            int64_t idx[2][TP];
            for (int n = 0; n < 2; n++)
                for (int t = 0; t < TP; t++) idx[n][t] = n * TP + t;
            sgla_state_pool sp;
            memset(&sp, 0, sizeof sp);
            sp.slots = NS, sp.indices = idx, sp.index_bits = 64, sp.t_max = TP, sp.flags = SGLA_POOL_INPLACE;
            sgla_forward_desc dp = d;
            dp.T = TP, dp.h0 = pool, dp.ht = NULL, dp.pool = &sp, dp.o = o, dp.threads = 2;
            const sgla_status sp_st = sgla_forward(&dp, SGLA_BACKEND_CPU);
            const unsigned after = _mm_getcsr();
            _mm_setcsr(base);
            TU_CHECK(sp_st == SGLA_OK, "pool, speculative steps: %s", sgla_last_error());
            TU_CHECK((after & ~0x3fu) == (base & ~0x3fu), "pool: the caller's MXCSR %#x came back as %#x", base, after);
            free(pool);
        }
        free(q), free(k), free(v), free(g), free(o), free(o_ref), free(dout), free(dq), free(dk), free(dv), free(dg);
        free(dq_ref);
    }
#endif
    return tu_finish("test_cpu_threads");
}
