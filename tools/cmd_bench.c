/* `sgla bench`: time a backend on built-in or given shapes.  The CPU side is
 * here; `--backend cuda` hands the parsed arguments to bench_cuda_run(). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "conform.h"
#include "cpu/cpu_kernels.h"
#include "cuda/cuda_dev.h"
#include "ref/ref.h"

double bench_flops(int64_t B, int64_t T, int64_t H, int64_t K, int64_t V, int64_t C)
{
    /* per sequence and head: full chunks of C tokens and one partial chunk
     * of n = T mod C; a chunk of n tokens costs 2*(m*K + m*V + 2*n*K*V) with
     * m = n(n+1)/2, the causal half of Q.K^T and of the scores x V (the
     * kernels skip what lies above the diagonal) */
    if (C < 1) C = 64;
    int64_t full = T / C, rem = T % C;
    double c = (double)C, n = (double)rem, mc = c * (c + 1.0) / 2.0, mn = n * (n + 1.0) / 2.0;
    double per = (double)full * 2.0 * (mc * (double)K + mc * (double)V + 2.0 * c * (double)K * (double)V) +
                 2.0 * (mn * (double)K + mn * (double)V + 2.0 * n * (double)K * (double)V);
    return per * (double)B * (double)H;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sgla bench [--backend cpu|cuda|auto] [--shape B,T,H,K,V]... [--dtype f32|f16|bf16]\n"
            "                  [--gate none|gamma|g] [--threads N] [--iters N] [--warmup N]\n"
            "                  [--chunk C] [--seed N] [--isa scalar|avx2|avx512] [--no-peak] [--check]\n"
            "                  [--config ROW|portable|portable-one-stage|f32-hopper|f32-chunked|f32-recurrent] [--split N]\n"
            "                  (CUDA: force a configuration row, the mma.sync path of GPUs before Hopper (with one\n"
            "                  stage: as on 99 KB blocks), an fp32 path, a split)\n"
            "                  [--blocks N]  (CUDA: -1 a block a (sequence, head), N > 0 a persistent grid of N blocks a V column block)\n"
            "                  [--sub N]  (CUDA: a split's first pass on segments cut in N pieces; 1 none)\n"
            "                  [--cols N]  (CUDA: the mma.sync path's blocks on N = 64 or 128 columns of V)\n"
            "                  [--tf32]  (CUDA, f32: products in TF32 alone, SGLA_FLAG_ALLOW_TF32)\n"
            "                  [--backward]  (also time sgla_backward: dq, dk, dv, dg or dg_gamma)\n"
            "                  [--no-gate-grad]  (the backward without dg or dg_gamma: a gate that is not learned)\n"
            "                  [--bwd-path 0-4]  (CUDA: the backward's path forced, with --split as its split)\n"
            "                  [--bwd-windows N]  (CUDA: the three-pass backward's chunk states a time window at a time, N of 2-64)\n"
            "                  [--bwd-groups N]  (CUDA: the three-pass backward N batch groups at a time; checked on the usual plan)\n"
            "                  [--bwd-half]  (CUDA: the backward with SGLA_FLAG_BWD_HALF_STATES: on Hopper every other\n"
            "                                 chunk's state kept, the plan a workspace cap below the usual one takes)\n"
            "                  [--format table|csv|json] [--varlen N | --varlen L1,L2,...] [--pool]\n"
            "\n"
            "Times one forward per shape (median of --iters runs after --warmup runs) and prints\n"
            "one row per shape.  --shape may be repeated (B,T,H,D means K = V = D); without it a\n"
            "built-in list runs the shapes of docs/perf.md: 1,4096,16,128,128; 1,16384,8,128,128;\n"
            "4,2048,16,64,64; one head of a long sequence (the sequence-split path), and a decode\n"
            "step 64,1,16,128,128 (state in place, ht == h0).  A shape with T = 1 is always run\n"
            "as a decode step in place, twice: `warm` updates one state again and again (it stays in\n"
            "cache when it fits), `cold` rotates over enough states (>= 1 GiB) that each is read\n"
            "from memory, as a server with many sequences sees it.\n"
            "\n"
            "Columns:\n"
            "  ms       median wall time of one sgla_forward call (min ms: the fastest run;\n"
            "           cpu ms: process CPU time per call / threads, a guide when the machine is busy)\n"
            "  GFLOP/s  FLOPs of the chunked algorithm / time, 2 per multiply-add: per head and\n"
            "           chunk of n tokens 2*(m*K [Q.K^T] + m*V [scores x V] + n*K*V [Q.S]\n"
            "           + n*K*V [K^T.V]), m = n(n+1)/2 the causal half that is computed; the last\n"
            "           chunk is partial\n"
            "  %%peak    of the FMA peak measured first: every thread runs independent chains of\n"
            "           vector FMAs of the SIMD level in use (16 x zmm or 12 x ymm)\n"
            "  GB/s     decode rows: bytes of the state read and written once (plus q, k, v, o)\n"
            "           / time; %%copy compares with a measured memcpy (read + written bytes) on all\n"
            "           threads, and x-bound = time / (bytes / copy bandwidth)\n"
            "A row `kernels` times the four per-chunk products alone (C=64, K=V=128, operands\n"
            "in cache) on every thread: the micro-kernels' share of the FMA peak.\n"
            "--pool adds a third decode pass (T = 1 shapes, CPU): the states in one pool of as many\n"
            "slots as the cold pass has states, each call updating another random set of B slots\n"
            "in place (the serving engine's step; sgla.h, experimental).  The other CPU shapes, and\n"
            "every CUDA shape, also run as one step on a pool of 2N fp32 slots (a pass `pool` row;\n"
            "with --varlen a mixed batch: its long sequences on the chunked kernel, given the host\n"
            "copy of cu_seqlens, the rest on the recurrence; floor = states read and written once\n"
            "+ q, k, v, o).\n"
            "--varlen packs each shape (B = 1) into N sequences of random lengths from the seed, or\n"
            "into the given lengths (their sum must be T; LxC: C sequences of L tokens, e.g.\n"
            "2048x4,1x250): a packed batch with cu_seqlens, at most 4096 sequences.  It needs\n"
            "--shape, and every shape's lengths are checked before the first row runs.\n"
            "--format csv (a header line, then one line per row) or json (one array of objects)\n"
            "prints the rows alone on stdout, with the fields backend, B, T, H, K, V, nseq, dtype, gate,\n"
            "pass (fwd, bwd, decode-warm, decode-cold, decode-pool, pool), ms, min_ms, cpu_ms, gflops,\n"
            "peak_pct, row, nseg, gbs, floor_ms, x_floor, workspace_mb, check (empty / null where they\n"
            "do not apply; check is filled on CUDA rows only, the CPU's --check prints to stderr);\n"
            "everything else goes to stderr.\n"
            "\n"
            "--check also runs the backend on fresh inputs of each shape's K, V, dtype and gate\n"
            "(B = 1, at most 2 heads and 256 tokens; CUDA: 2048 tokens and the timed plan; with --varlen\n"
            "a packed batch of at most 8 sequences, no h0 or ht; with --pool also the step through a pool\n"
            "of 2N slots, the slots no sequence owns left bit for bit: at most 8 sequences of the shape's\n"
            "tokens, or with --varlen the batch's first 7 and its longest, each cut to 32 tokens, 256\n"
            "on CUDA) against the fp64 reference\n"
            "(tools/conform.h; fails above 1e-5 / 1e-3 / 8e-3).  CUDA always checks.\n"
            "\n"
            "defaults: --backend cpu --dtype f32 (bf16 with --backend cuda) --gate g --threads 0 (all cores)\n"
            "          --chunk 64 --format table\n"
            "          --iters 10 (50 for decode) --warmup 2 (cuda: --iters 50 --warmup 5, and its own built-in\n"
            "          shapes 8,4096,16,128,128; 4,8192,32,64,64; 2,16384,8,256,256; 64,1024,16,128,128;\n"
            "          1,32768,16,128,128); g ~ U(-0.2, 0), gamma = ln(1 - 2^-(5+h%%8))\n");
}

/* An option's integer value in [lo, hi] into *out (a flag given once); else a message naming what it must be */
static int int_option(cli_seen *seen, const char *flag, int argc, char **argv, int *i, int64_t lo, int64_t hi,
                      const char *what, int *out)
{
    const char *val;
    int64_t x;
    if (!cli_once("bench", seen, flag) || !(val = cli_value("bench", argc, argv, i)) ||
        !cli_parse_i64("bench", flag, val, &x))
        return 0;
    if (x < lo || x > hi) {
        fprintf(stderr, "sgla bench: %s: %lld is not %s\n", flag, (long long)x, what);
        return 0;
    }
    *out = (int)x;
    return 1;
}

static int parse_gate(const char *s, int *out)
{
    if (!strcmp(s, "none")) *out = BENCH_GATE_NONE;
    else if (!strcmp(s, "gamma")) *out = BENCH_GATE_GAMMA;
    else if (!strcmp(s, "g")) *out = BENCH_GATE_G;
    else {
        fprintf(stderr, "sgla bench: --gate: '%s' is not one of none, gamma, g\n", s);
        return 0;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* uniform with the given standard deviation: cheaper than normal for large shapes */
static void fill(ref_rng *s, void *p, sgla_dtype dt, int64_t n, double sd)
{
    for (int64_t i = 0; i < n; i++) {
        double x = (ref_rng_uniform(s) * 2.0 - 1.0) * 1.7320508 * sd;
        switch (dt) {
        case SGLA_F32: ((float *)p)[i] = (float)x; break;
        case SGLA_F16: ((uint16_t *)p)[i] = sgla_f32_to_f16((float)x); break;
        case SGLA_BF16: ((uint16_t *)p)[i] = sgla_f32_to_bf16((float)x); break;
        case SGLA_F64: ((double *)p)[i] = x; break;
        }
    }
}

/* CPU seconds of the whole process (all threads): with other work on the
 * machine, cpu/threads is what the call would take alone, roughly. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *amalloc64(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

typedef struct timing {
    double med, min, cpu; /* seconds per call */
} timing;

/* Time sgla_forward: warm-up calls, then iters calls; with nrot > 1 state
 * buffers (decode) each call updates the next one in turn, so the states
 * are not in cache when they are read. */
static int time_forward(sgla_forward_desc *d, float **st, int nrot, int warm, int iters, timing *out,
                        const sgla_backward_desc *bwd)
{
    double *times = malloc((size_t)iters * sizeof(double));
    if (!times) return 1;
    double cpu_total = 0;
    for (int i = 0; i < warm + iters; i++) {
        if (nrot > 0 && d->pool) ((sgla_state_pool *)d->pool)->indices = ((int64_t **)st)[i % nrot]; /* slot sets */
        else if (nrot > 0) d->h0 = d->ht = st[i % nrot];
        double c0 = cpu_now();
        double t0 = cli_now();
        sgla_status s = bwd ? sgla_backward(bwd, SGLA_BACKEND_CPU) : sgla_forward(d, SGLA_BACKEND_CPU);
        double dt = cli_now() - t0;
        if (i >= warm) cpu_total += cpu_now() - c0;
        if (s != SGLA_OK) {
            fprintf(stderr, "sgla bench: %s failed on %lld,%lld,%lld,%lld,%lld: %s (%s)\n", bwd ? "backward" : "forward",
                    (long long)d->B,
                    (long long)d->T, (long long)d->H, (long long)d->K, (long long)d->V, sgla_status_string(s),
                    sgla_last_error());
            free(times);
            return 1;
        }
        if (i >= warm) times[i - warm] = dt;
    }
    out->med = median(times, iters);
    out->min = times[0]; /* sorted by median() */
    out->cpu = cpu_total / iters;
    free(times);
    return 0;
}

/* The check's sequences: a packed timed call (nseq > 0) is checked packed, into at most
 * BENCH_CHECK_SEQS sequences of drawn lengths (conform_draw: the second empty from three on) */
static int check_seqs(int nseq) { return nseq < BENCH_CHECK_SEQS ? nseq : BENCH_CHECK_SEQS; }

static int check_gate(const bench_args *a)
{
    return a->gate == BENCH_GATE_G       ? CONFORM_GATE_G
           : a->gate == BENCH_GATE_GAMMA ? CONFORM_GATE_GAMMA
                                         : CONFORM_GATE_NONE;
}

/* Case c drawn from a->seed ^ salt, run by the backend (through a state pool where `pool`) in the timed
 * call's mode, judged and printed: 1 when it fails */
static int forward_check(const bench_args *a, const conform_case *c, uint64_t salt, const sgla_cuda_plan *force,
                         int pool)
{
    ref_rng r;
    ref_rng_init(&r, a->seed ^ salt);
    conform_data x;
    sgla_status st = conform_draw(&x, c, &r, SGLA_BACKEND_REF_A);
    if (st != SGLA_OK) {
        fprintf(bench_info(a), "  check: the reference failed: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    conform_result res;
    if (a->tf32 && a->backend == SGLA_BACKEND_CUDA) x.d.flags |= SGLA_FLAG_ALLOW_TF32; /* the timed call's mode */
    if (pool) conform_check_pool(&x, a->backend, &res);
    else conform_check(&x, a->backend, force, &res);
    fprintf(bench_info(a), "  check ");
    conform_print(bench_info(a), &res);
    conform_free(&x);
    return !res.pass;
}

/* The check of a benchmarked shape: the backend (and, for CUDA, the plan)
 * against fp64 through the conformance harness on fresh inputs of the same
 * K, V, dtype and gate, B = 1, at most 2 heads and tmax tokens (decode: the
 * state in place; a packed timed call: packed, with no h0 or ht, since those
 * choose another path on CUDA).  Prints one line; returns 1 when it fails. */
int bench_check(const bench_args *a, const int64_t sh[5], int64_t chunk, int64_t tmax, int nseq,
                const sgla_cuda_plan *force)
{
    const int ns = check_seqs(nseq);
    const conform_case c = {a->dtype, check_gate(a), CONFORM_MILD, 1, sh[1] < tmax ? sh[1] : tmax,
                            sh[2] < 2 ? sh[2] : 2, sh[3], sh[4], sh[1] == 1, !ns, sh[1] == 1, ns, chunk, a->threads};
    return forward_check(a, &c, 0xc4ecull, force, 0);
}

int bench_check_pool(const bench_args *a, const int64_t sh[5], int64_t chunk, int64_t tmax, const int64_t *cu,
                     int nseq)
{
    int64_t cuts[BENCH_CHECK_SEQS + 1];
    const int ns = cu ? check_seqs(nseq) : 0;
    int64_t T = sh[1] < tmax ? sh[1] : tmax;
    if (ns) {
        /* the first sequences, the last of them swapped for the batch's longest where it is further on (a
         * batch that starts with decodes still has its prefill checked on the path that runs it) */
        int64_t longest = 0;
        for (int i = 1; i < nseq; i++)
            if (cu[i + 1] - cu[i] > cu[longest + 1] - cu[longest]) longest = i;
        const int64_t cap = tmax / BENCH_CHECK_SEQS > 1 ? tmax / BENCH_CHECK_SEQS : 1;
        cuts[0] = 0;
        for (int i = 0; i < ns; i++) {
            const int64_t s = i == ns - 1 && longest >= ns ? longest : i, len = cu[s + 1] - cu[s];
            cuts[i + 1] = cuts[i] + (len < cap ? len : cap);
        }
        T = cuts[ns];
    }
    const int64_t B = ns ? 1 : (sh[0] < BENCH_CHECK_SEQS ? sh[0] : BENCH_CHECK_SEQS);
    const conform_case c = {a->dtype, check_gate(a), CONFORM_MILD, B, T, sh[2] < 2 ? sh[2] : 2, sh[3], sh[4], 1, 1, 0, ns,
                            chunk, a->threads, ns ? cuts : NULL};
    return forward_check(a, &c, 0x9001cull, NULL, 1);
}

/* The backward's check: every gradient of backend a->backend against fp64 on
 * fresh inputs shaped like sh (B = 1, at most 2 heads and tmax tokens, h0 and dht; a packed
 * timed call: packed as bench_check's, without h0 and dht as the timed call). */
int bench_check_backward(const bench_args *a, const int64_t sh[5], int64_t tmax, int nseq)
{
    const int ns = check_seqs(nseq);
    const conform_case c = {a->dtype, check_gate(a), CONFORM_MILD, 1, sh[1] < tmax ? sh[1] : tmax,
                            sh[2] < 2 ? sh[2] : 2, sh[3], sh[4], !ns, !ns, 0, ns, 0, a->threads};
    ref_rng r;
    ref_rng_init(&r, a->seed ^ 0xb4cull);
    conform_data x;
    sgla_status st = conform_draw(&x, &c, &r, SGLA_BACKEND_REF_A);
    if (st == SGLA_OK) st = conform_draw_backward(&x, &r);
    if (st != SGLA_OK) {
        fprintf(bench_info(a), "  check: the reference failed: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        conform_free(&x);
        return 1;
    }
    conform_bresult res;
    if (a->backend == SGLA_BACKEND_CUDA) { /* the timed path: the same call and flag */
        conform_bwd_path = a->bwd_path, conform_bwd_nseg = a->split, conform_bwd_tseg = a->bwd_windows;
        if (a->bwd_half) x.d.flags |= SGLA_FLAG_BWD_HALF_STATES;
        if (a->tf32) x.d.flags |= SGLA_FLAG_ALLOW_TF32;
    }
    /* (--bwd-groups: the check's case has one batch row, so it runs the usual plan; test_gpu_backward checks groups) */
    conform_check_backward(&x, a->backend, &res);
    conform_bwd_path = conform_bwd_nseg = conform_bwd_tseg = 0;
    fprintf(bench_info(a), "  check ");
    conform_print_backward(bench_info(a), &res);
    conform_free(&x);
    return !res.pass;
}

int bench_varlen(const bench_args *a, const int64_t sh[5], int64_t *cu, int *n)
{
    *n = 0;
    if (!a->varlen_n && !a->nlens) return 0;
    if (sh[0] != 1 || sh[1] < 2) {
        fprintf(stderr, "sgla bench: --varlen needs B = 1 and T >= 2 (shape %lld,%lld,...)\n", (long long)sh[0],
                (long long)sh[1]);
        return -1;
    }
    cu[0] = 0;
    if (a->nlens) {
        for (int i = 0; i < a->nlens; i++) {
            if (a->lens[i] > sh[1] - cu[i]) { /* (before the sum: lengths near 2^63 wrapped to T) */
                fprintf(stderr, "sgla bench: --varlen lengths sum past the shape's T = %lld (at length %d, %lld)\n",
                        (long long)sh[1], i + 1, (long long)a->lens[i]);
                return -1;
            }
            cu[i + 1] = cu[i] + a->lens[i];
        }
        if (cu[a->nlens] != sh[1]) {
            fprintf(stderr, "sgla bench: --varlen lengths sum to %lld, the shape's T is %lld\n",
                    (long long)cu[a->nlens], (long long)sh[1]);
            return -1;
        }
        *n = a->nlens;
        return 0;
    }
    const int N = a->varlen_n < sh[1] ? a->varlen_n : (int)sh[1];
    /* N - 1 distinct cut points in [1, T - 1], drawn from the seed, sorted */
    ref_rng r;
    ref_rng_init(&r, a->seed ^ 0x5e91e7ull);
    int64_t *cut = cu + 1;
    for (int i = 0; i < N - 1; i++) {
        int64_t c;
        int fresh;
        do {
            c = 1 + (int64_t)(ref_rng_uniform(&r) * (double)(sh[1] - 1));
            fresh = 1;
            for (int j = 0; j < i; j++) fresh &= cut[j] != c;
        } while (!fresh);
        int j = i; /* insertion sort */
        while (j > 0 && cut[j - 1] > c) cut[j] = cut[j - 1], j--;
        cut[j] = c;
    }
    cu[N] = sh[1];
    *n = N;
    return 0;
}

/* A shape the backend refuses (K, V past its limits), found before gigabytes are allocated for it: the
 * same call with no tokens, which reads no data; 1 after a message when it is refused. */
int bench_shape_refused(const bench_args *a, const int64_t sh[5], int64_t chunk, sgla_backend be)
{
    sgla_forward_desc sd;
    sgla_forward_desc_init(&sd);
    sd.B = sh[0], sd.T = 0, sd.H = sh[2], sd.K = sh[3], sd.V = sh[4], sd.dtype = a->dtype;
    if (chunk > 0) sd.chunk = chunk; /* 0: the descriptor's default (the CUDA bench sets none) */
    const sgla_status st = sgla_forward(&sd, be);
    if (st == SGLA_OK) return 0;
    fprintf(stderr, "sgla bench: shape %lld,%lld,%lld,%lld,%lld: %s (%s)\n", (long long)sh[0], (long long)sh[1],
            (long long)sh[2], (long long)sh[3], (long long)sh[4], sgla_status_string(st), sgla_last_error());
    return 1;
}

static int bench_cpu_shape(const bench_args *a, const int64_t *sh, int64_t chunk, double peak, double copy_bw,
                           int nth)
{
    const int64_t B = sh[0], T = sh[1], H = sh[2], K = sh[3], V = sh[4];
    const int decode = T == 1;
    if (bench_shape_refused(a, sh, chunk, SGLA_BACKEND_CPU)) return 1;
    size_t es = sgla_dtype_size(a->dtype);
    int64_t nqk = B * T * H * K, nv = B * T * H * V, ns = B * H * K * V;
    /* 64-byte aligned, as ML frameworks allocate tensors */
    void *q = amalloc64((size_t)nqk * es), *k = amalloc64((size_t)nqk * es), *v = amalloc64((size_t)nv * es);
    void *o = amalloc64((size_t)nv * es);
    float *g = a->gate == BENCH_GATE_G ? malloc((size_t)(B * T * H) * sizeof(float)) : NULL;
    float *gg = a->gate == BENCH_GATE_GAMMA ? malloc((size_t)H * sizeof(float)) : NULL;
    /* decode: enough state buffers to exceed the caches (>= 1 GiB in all) */
    const double sbytes = (double)ns * 4.0;
    int nrot = 0;
    if (decode) {
        nrot = (int)ceil((double)(1u << 30) / sbytes);
        if (nrot < 2) nrot = 2;
        if (nrot > 256) nrot = 256;
    }
    float **st = decode ? calloc((size_t)nrot, sizeof(float *)) : NULL;
    int rc = 0;
    float *pool = NULL; /* --pool */
    int64_t **idx_sets = NULL, *idx_all = NULL;
    int st_ok = !decode || st;
    for (int i = 0; st && i < nrot; i++)
        if (!(st[i] = amalloc64((size_t)ns * sizeof(float)))) st_ok = 0;
    if (!q || !k || !v || !o || (a->gate == BENCH_GATE_G && !g) || (a->gate == BENCH_GATE_GAMMA && !gg) || !st_ok) {
        fprintf(stderr, "sgla bench: out of memory for shape %lld,%lld,%lld,%lld,%lld\n", (long long)B,
                (long long)T, (long long)H, (long long)K, (long long)V);
        rc = 1;
        goto done;
    }
    ref_rng seed;
    ref_rng_init(&seed, a->seed);
    fill(&seed, q, a->dtype, nqk, 1.0);
    fill(&seed, k, a->dtype, nqk, 1.0 / sqrt((double)K));
    fill(&seed, v, a->dtype, nv, 1.0);
    if (g)
        for (int64_t i = 0; i < B * T * H; i++) g[i] = (float)(-0.2 * ref_rng_uniform(&seed));
    if (gg)
        for (int64_t h = 0; h < H; h++) gg[h] = (float)log(1.0 - ldexp(1.0, -(5 + (int)(h % 8))));
    for (int r = 0; r < nrot; r++)
        for (int64_t i = 0; i < ns; i++) st[r][i] = (float)(ref_rng_uniform(&seed) - 0.5);

    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q; d.k = k; d.v = v; d.o = o; d.dtype = a->dtype;
    d.B = B; d.T = T; d.H = H; d.K = K; d.V = V;
    static int64_t cu[BENCH_MAX_SEQS + 1];
    int nseq = 0;
    if (!decode) {
        if (bench_varlen(a, sh, cu, &nseq) < 0) {
            rc = 2;
            goto done;
        }
        if (nseq) d.cu_seqlens = cu, d.num_seqs = nseq;
    }
    d.g = g; d.g_gamma = gg; d.scale = (float)(1.0 / sqrt((double)K));
    d.chunk = chunk; d.threads = a->threads;
    d.flags = SGLA_FLAG_SKIP_VALUE_CHECK;

    int iters = a->iters > 0 ? a->iters : decode ? 50 : 10;
    int warm = a->warmup > 0 ? a->warmup : 2;
    double fl = bench_flops(B, T, H, K, V, chunk);
    char shape[64];
    snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld,%lld", (long long)B, (long long)T, (long long)H,
             (long long)K, (long long)V);
    const char *gname = a->gate == BENCH_GATE_G ? "g" : a->gate == BENCH_GATE_GAMMA ? "gamma" : "none";
    if (a->check && bench_check(a, sh, chunk, 256, nseq, NULL)) rc = 1;
    if (a->check && decode && a->pool && bench_check_pool(a, sh, chunk, 256, NULL, 0)) rc = 1;
    /* --pool: a third decode pass through a state pool of nrot x B slots (as large as the cold
     * pass's states), each call on another random set of B of them, in place */
    sgla_state_pool sp;
    memset(&sp, 0, sizeof sp);
    if (decode && a->pool) {
        pool = amalloc64((size_t)nrot * (size_t)ns * sizeof(float));
        idx_sets = calloc((size_t)nrot, sizeof *idx_sets);
        idx_all = malloc((size_t)nrot * (size_t)B * sizeof *idx_all);
        if (!pool || !idx_sets || !idx_all) {
            fprintf(stderr, "sgla bench: out of memory for the pool\n");
            rc = 1;
            goto done;
        }
        for (size_t i = 0; i < (size_t)nrot * (size_t)ns; i++) pool[i] = (float)(ref_rng_uniform(&seed) - 0.5);
        for (int r = 0; r < nrot; r++) {
            idx_sets[r] = idx_all + (size_t)r * (size_t)B;
            for (int64_t n = 0; n < B; n++) idx_sets[r][n] = (int64_t)r * B + (n * 7919) % B; /* a permutation */
        }
        sp.slots = (int64_t)nrot * B, sp.index_bits = 64, sp.flags = SGLA_POOL_INPLACE, sp.indices = idx_sets[0];
    }
    for (int pass = 0; pass < (decode ? (pool ? 3 : 2) : 1); pass++) {
        timing tm;
        /* decode pass 0: one state, cache-resident (warm); pass 1: rotating (cold); pass 2: the pool */
        if (pass == 2) d.h0 = pool, d.ht = NULL, d.pool = &sp;
        int r = time_forward(&d, pass == 2 ? (float **)idx_sets : st, decode ? (pass == 0 ? 1 : nrot) : 0, warm,
                             iters, &tm, NULL);
        if (pass == 2) d.pool = NULL;
        if (r) {
            rc = r;
            goto done;
        }
        char name[80];
        snprintf(name, sizeof name, "%s%s", shape,
                 decode ? (pass == 0 ? " warm" : pass == 1 ? " cold" : " pool") : nseq ? " varlen" : "");
        bench_record rec = bench_record_init(
            "cpu", sh, sgla_dtype_name(a->dtype), gname,
            decode ? (pass == 0 ? "decode-warm" : pass == 1 ? "decode-cold" : "decode-pool") : "fwd");
        rec.nseq = nseq;
        rec.ms = tm.med * 1e3, rec.min_ms = tm.min * 1e3, rec.cpu_ms = tm.cpu / nth * 1e3;
        rec.gflops = fl / tm.med * 1e-9, rec.peak_pct = peak > 0 ? 100.0 * fl / tm.med * 1e-9 / peak : NAN;
        if (a->format == BENCH_TABLE)
            printf("%-20s %-5s %-6s %9.3f %9.3f %9.3f %9.1f %6.1f%%", name, sgla_dtype_name(a->dtype), gname,
                   tm.med * 1e3, tm.min * 1e3, tm.cpu / nth * 1e3, fl / tm.med * 1e-9,
                   peak > 0 ? 100.0 * fl / tm.med * 1e-9 / peak : 0.0);
        if (decode) {
            double bytes = 2.0 * sbytes + (double)(2 * nqk + 2 * nv) * (double)es;
            double gbs = bytes / tm.med * 1e-9;
            rec.gbs = gbs;
            if (copy_bw > 0) rec.floor_ms = bytes / (copy_bw * 1e9) * 1e3, rec.x_floor = tm.med * 1e3 / rec.floor_ms;
            if (a->format == BENCH_TABLE)
                printf("  %7.1f GB/s %5.1f%% copy  x-bound %.2f", gbs, copy_bw > 0 ? 100.0 * gbs / copy_bw : 0.0,
                       copy_bw > 0 ? tm.med / (bytes / (copy_bw * 1e9)) : 0.0);
        }
        if (a->format == BENCH_TABLE) printf("\n");
        bench_out_row(a, &rec);
        fflush(stdout);
    }
    if (a->backward && !decode) {
        if (a->check && bench_check_backward(a, sh, 128, nseq)) rc = 1;
        /* the gradients of every input: dout random, dg (or dg_gamma) asked for unless --no-gate-grad */
        void *dout = amalloc64((size_t)nv * es), *dq = amalloc64((size_t)nqk * es), *dk = amalloc64((size_t)nqk * es);
        void *dv = amalloc64((size_t)nv * es);
        const int wg = !a->no_gate_grad;
        float *dg = g && wg ? malloc((size_t)(B * T * H) * sizeof(float)) : NULL;
        float *dgg = gg && wg ? malloc((size_t)H * 4) : NULL;
        if (!dout || !dq || !dk || !dv || (g && wg && !dg) || (gg && wg && !dgg)) {
            fprintf(stderr, "sgla bench: out of memory for the backward\n");
            rc = 1;
        } else {
            fill(&seed, dout, a->dtype, nv, 1.0);
            sgla_backward_desc bd;
            sgla_backward_desc_init(&bd);
            bd.fwd = &d, bd.dout = dout, bd.dq = dq, bd.dk = dk, bd.dv = dv, bd.dg = dg, bd.dg_gamma = dgg;
            timing tf, tb;
            int r = time_forward(&d, NULL, 0, warm, iters, &tf, NULL);
            if (!r) r = time_forward(&d, NULL, 0, warm, iters, &tb, &bd);
            if (r) {
                rc = r;
            } else {
                if (a->format == BENCH_TABLE)
                    printf("%-20s %-5s %-6s %9.3f %9.3f %9.3f   backward%s; fwd %.3f ms, fwd+bwd = %.2f x fwd\n", shape,
                           sgla_dtype_name(a->dtype), gname, tb.med * 1e3, tb.min * 1e3, tb.cpu / nth * 1e3,
                           wg ? "" : " (no gate gradient)", tf.med * 1e3, (tf.med + tb.med) / tf.med);
                bench_record rec = bench_record_init("cpu", sh, sgla_dtype_name(a->dtype), gname, wg ? "bwd" : "bwd0");
                rec.nseq = nseq;
                rec.ms = tb.med * 1e3, rec.min_ms = tb.min * 1e3, rec.cpu_ms = tb.cpu / nth * 1e3;
                bench_out_row(a, &rec);
                fflush(stdout);
            }
        }
        free(dout), free(dq), free(dk), free(dv), free(dg), free(dgg);
    }
    if (!decode && a->pool) {
        /* a serving step on a pool of 2N slots: with --varlen a mixed batch (prefills and decodes), given
         * the host copy of cu_seqlens as a CUDA caller would */
        const int64_t N = nseq ? nseq : B, S = 2 * N;
        if (a->check && bench_check_pool(a, sh, chunk, 256, nseq ? cu : NULL, nseq)) rc = 1;
        pool = amalloc64((size_t)(S * H * K * V) * sizeof(float));
        idx_all = malloc((size_t)N * sizeof *idx_all);
        if (!pool || !idx_all) {
            fprintf(stderr, "sgla bench: out of memory for the pool\n");
            rc = 1;
            goto done;
        }
        for (int64_t i = 0; i < S * H * K * V; i++) pool[i] = (float)(0.1 * (ref_rng_uniform(&seed) - 0.5));
        for (int64_t n = 0; n < N; n++) idx_all[n] = 2 * n + (n & 1); /* distinct slots, every other one */
        sp.slots = S, sp.indices = idx_all, sp.index_bits = 64, sp.flags = SGLA_POOL_INPLACE;
        sp.host_cu_seqlens = nseq ? cu : NULL;
        d.h0 = pool, d.ht = NULL, d.pool = &sp;
        timing tm;
        const int r = time_forward(&d, NULL, 0, warm, iters, &tm, NULL);
        d.h0 = NULL, d.pool = NULL;
        if (r) {
            rc = r;
            goto done;
        }
        const double bytes = (double)(N * H * K * V) * 8.0 + (double)(2 * nqk + 2 * nv) * (double)es;
        bench_record rec = bench_record_init("cpu", sh, sgla_dtype_name(a->dtype), gname, "pool");
        rec.nseq = nseq;
        rec.ms = tm.med * 1e3, rec.min_ms = tm.min * 1e3, rec.cpu_ms = tm.cpu / nth * 1e3;
        rec.gbs = bytes / tm.med * 1e-9;
        if (copy_bw > 0) rec.floor_ms = bytes / (copy_bw * 1e9) * 1e3, rec.x_floor = tm.med * 1e3 / rec.floor_ms;
        if (a->format == BENCH_TABLE)
            printf("%-20s %-5s %-6s %9.3f %9.3f %9.3f   pool step: %lld sequence%s on %lld slots, %.1f GB/s\n", shape,
                   sgla_dtype_name(a->dtype), gname, tm.med * 1e3, tm.min * 1e3, tm.cpu / nth * 1e3, (long long)N,
                   N == 1 ? "" : "s", (long long)S, rec.gbs);
        bench_out_row(a, &rec);
        fflush(stdout);
    }
done:
    free(pool), free(idx_sets), free(idx_all);
    free(q); free(k); free(v); free(o); free(g); free(gg);
    for (int i = 0; st && i < nrot; i++) free(st[i]);
    free(st);
    return rc;
}

int sgla_cmd_bench(int argc, char **argv)
{
    bench_args a;
    memset(&a, 0, sizeof a);
    a.backend = SGLA_BACKEND_CPU;
    a.config = -1;
    a.dtype = SGLA_F32;
    int dtype_given = 0;
    a.gate = BENCH_GATE_G;
    a.seed = 1;
    int64_t chunk = 64;
    int isa = SGLA_CPU_ISA_AUTO, no_peak = 0;
    const char *cuda_only = NULL; /* the last option only the CUDA backend takes */
    cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *val;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(s, "--backend")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_backend("bench", val, &a.backend))
                return 2;
            if (a.backend != SGLA_BACKEND_CPU && a.backend != SGLA_BACKEND_CUDA && a.backend != SGLA_BACKEND_AUTO) {
                fprintf(stderr, "sgla bench: --backend: only cpu and cuda are benchmarked (got '%s')\n", val);
                return 2;
            }
            if (a.backend == SGLA_BACKEND_AUTO) /* as run and grad read it (sgla.h) */
                a.backend = sgla_backend_available(SGLA_BACKEND_CUDA) ? SGLA_BACKEND_CUDA : SGLA_BACKEND_CPU;
        } else if (!strcmp(s, "--pool")) {
            a.pool = 1;
        } else if (!strcmp(s, "--tf32")) {
            a.tf32 = 1, cuda_only = s;
        } else if (!strcmp(s, "--varlen")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i))) return 2;
            a.varlen_n = 0, a.nlens = 0;
            if (!strchr(val, ',') && !strchr(val, 'x')) {
                int64_t x;
                if (!cli_parse_i64("bench", "--varlen", val, &x)) return 2;
                if (x < 1 || x > BENCH_MAX_SEQS) {
                    fprintf(stderr, "sgla bench: --varlen: %lld is not a count of sequences in [1, %d]\n", (long long)x,
                            BENCH_MAX_SEQS);
                    return 2;
                }
                a.varlen_n = (int)x;
            } else { /* L1,L2,... where LxC stands for C sequences of L tokens */
                /* field by field, not strtok: it skipped empty fields ("1,,2" read as 1,2) */
                for (const char *p = val;;) {
                    const char *comma = strchr(p, ',');
                    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
                    char tok[64];
                    if (len == 0) {
                        fprintf(stderr, "sgla bench: --varlen: '%s' has an empty field (lengths are separated by "
                                "single commas)\n", val);
                        return 2;
                    }
                    if (len >= sizeof tok) {
                        fprintf(stderr, "sgla bench: --varlen: '%.*s' is too long to be a length\n", (int)len, p);
                        return 2;
                    }
                    memcpy(tok, p, len);
                    tok[len] = 0;
                    int64_t x, reps = 1;
                    char *times = strchr(tok, 'x');
                    if (times) {
                        *times = 0;
                        if (!cli_parse_i64("bench", "--varlen", times + 1, &reps)) return 2;
                    }
                    if (!cli_parse_i64("bench", "--varlen", tok, &x)) return 2;
                    if (x < 1 || reps < 1 || reps > BENCH_MAX_SEQS - a.nlens) {
                        fprintf(stderr, "sgla bench: --varlen: lengths must be >= 1, at most %d of them\n",
                                BENCH_MAX_SEQS);
                        return 2;
                    }
                    while (reps--) a.lens[a.nlens++] = x;
                    if (!comma) break;
                    p = comma + 1;
                }
            }
        } else if (!strcmp(s, "--format")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i))) return 2;
            if (!strcmp(val, "table")) a.format = BENCH_TABLE;
            else if (!strcmp(val, "csv")) a.format = BENCH_CSV;
            else if (!strcmp(val, "json")) a.format = BENCH_JSON;
            else {
                fprintf(stderr, "sgla bench: --format: '%s' is not one of table, csv, json\n", val);
                return 2;
            }
        } else if (!strcmp(s, "--shape")) {
            if (!(val = cli_value("bench", argc, argv, &i))) return 2;
            if (a.nshapes >= 32) {
                fprintf(stderr, "sgla bench: at most 32 --shape options\n");
                return 2;
            }
            if (!cli_parse_shape("bench", val, a.shapes[a.nshapes])) return 2;
            const int64_t *sh = a.shapes[a.nshapes];
            if (sh[0] < 1 || sh[1] < 1 || sh[2] < 1 || sh[3] < 1 || sh[4] < 1) {
                fprintf(stderr, "sgla bench: --shape '%s': B, T, H, K, V must all be >= 1\n", val);
                return 2;
            }
            /* the buffers' sizes must fit before anything is allocated: q, k, v, o (and the
             * backward's six) in 8-byte elements, the states in 4 */
            int64_t x, y;
            const int64_t mx = sh[3] > sh[4] ? sh[3] : sh[4];
            if (!sgla_mul_ok(sh[0], sh[1], &x) || !sgla_mul_ok(x, sh[2], &x) || !sgla_mul_ok(x, mx, &x) ||
                !sgla_mul_ok(x, 8, &x) || !sgla_mul_ok(sh[0], sh[2], &y) || !sgla_mul_ok(y, sh[3], &y) ||
                !sgla_mul_ok(y, sh[4], &y) || !sgla_mul_ok(y, 4, &y) || x > ((int64_t)1 << 48) ||
                y > ((int64_t)1 << 48)) {
                fprintf(stderr, "sgla bench: --shape '%s': its buffers would exceed 2^48 bytes\n", val);
                return 2;
            }
            a.nshapes++;
        } else if (!strcmp(s, "--dtype")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_dtype("bench", val, &a.dtype))
                return 2;
            dtype_given = 1;
        } else if (!strcmp(s, "--gate")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !parse_gate(val, &a.gate))
                return 2;
        } else if (!strcmp(s, "--threads") || !strcmp(s, "--iters") || !strcmp(s, "--warmup") ||
                   !strcmp(s, "--chunk")) {
            int64_t x;
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_i64("bench", s + 2, val, &x))
                return 2;
            int64_t lo = !strcmp(s, "--threads") ? 0 : 1, hi = !strcmp(s, "--chunk") ? 1024 : 100000;
            if (x < lo || x > hi) {
                fprintf(stderr, "sgla bench: %s: %lld is out of range [%lld, %lld]\n", s, (long long)x,
                        (long long)lo, (long long)hi);
                return 2;
            }
            if (!strcmp(s, "--threads")) a.threads = (int)x;
            else if (!strcmp(s, "--iters")) a.iters = (int)x;
            else if (!strcmp(s, "--warmup")) a.warmup = (int)x;
            else chunk = x;
        } else if (!strcmp(s, "--seed")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_u64("bench", "--seed", val, &a.seed))
                return 2;
        } else if (!strcmp(s, "--isa")) {
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i))) return 2;
            isa = !strcmp(val, "scalar") ? SGLA_CPU_ISA_SCALAR
                  : !strcmp(val, "avx2") ? SGLA_CPU_ISA_AVX2
                  : !strcmp(val, "avx512") ? SGLA_CPU_ISA_AVX512
                                           : -1;
            if (isa < 0) {
                fprintf(stderr, "sgla bench: --isa: '%s' is not one of scalar, avx2, avx512\n", val);
                return 2;
            }
        } else if (!strcmp(s, "--no-peak")) {
            no_peak = 1;
        } else if (!strcmp(s, "--check")) {
            a.check = 1;
        } else if (!strcmp(s, "--backward")) {
            a.backward = 1;
        } else if (!strcmp(s, "--no-gate-grad")) {
            a.no_gate_grad = 1;
        } else if (!strcmp(s, "--bwd-half")) {
            a.bwd_half = 1, cuda_only = s;
        } else if (!strcmp(s, "--bwd-path")) {
            cuda_only = s;
            int64_t x;
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_i64("bench", s, val, &x))
                return 2;
            if (x < 0 || x > 4) {
                fprintf(stderr, "sgla bench: --bwd-path: %lld is not 0 (usual), 1 (CUDA cores), 2 (mma.sync), 3 "
                        "(three passes) or 4 (mma.sync, one stage)\n", (long long)x);
                return 2;
            }
            a.bwd_path = (int)x;
        } else if (!strcmp(s, "--bwd-windows")) {
            cuda_only = s;
            if (!int_option(&seen, s, argc, argv, &i, 2, 64, "in 2..64", &a.bwd_windows)) return 2;
        } else if (!strcmp(s, "--bwd-groups")) {
            cuda_only = s;
            if (!int_option(&seen, s, argc, argv, &i, 2, 1 << 20, "2 or more", &a.bwd_groups)) return 2;
        } else if (!strcmp(s, "--blocks")) {
            cuda_only = s;
            if (!int_option(&seen, s, argc, argv, &i, -1, 0x7fffffff, "-1 or a count of blocks", &a.blocks)) return 2;
        } else if (!strcmp(s, "--sub")) {
            cuda_only = s;
            if (!int_option(&seen, s, argc, argv, &i, 1, 4096, "a count of pieces (1: none)", &a.sub)) return 2;
        } else if (!strcmp(s, "--cols")) {
            cuda_only = s;
            int64_t x;
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i)) ||
                !cli_parse_i64("bench", s, val, &x))
                return 2;
            if (x != 64 && x != 128) {
                fprintf(stderr, "sgla bench: --cols: %lld is not 64 or 128\n", (long long)x);
                return 2;
            }
            a.cols = (int)x;
        } else if (!strcmp(s, "--config") || !strcmp(s, "--split")) {
            int64_t x;
            cuda_only = s;
            if (!cli_once("bench", &seen, s) || !(val = cli_value("bench", argc, argv, &i))) return 2;
            static const struct {
                const char *name;
                int config;
            } named[] = {{"portable", SGLA_CUDA_CONFIG_PORTABLE},
                         {"portable-one-stage", SGLA_CUDA_CONFIG_PORTABLE_ONE_STAGE},
                         {"f32-chunked", SGLA_CUDA_CONFIG_F32_CHUNKED},
                         {"f32-hopper", SGLA_CUDA_CONFIG_F32_HOPPER},
                         {"f32-recurrent", SGLA_CUDA_CONFIG_F32_RECURRENT}};
            const int nnamed = (int)(sizeof named / sizeof named[0]);
            int k = 0;
            while (k < nnamed && !(!strcmp(s, "--config") && !strcmp(val, named[k].name))) k++;
            if (k < nnamed) {
                a.config = named[k].config;
                continue;
            }
            if (!cli_parse_i64("bench", s, val, &x)) return 2;
            if (x < 0 || x > 64) {
                fprintf(stderr, "sgla bench: %s: %lld is out of range\n", s, (long long)x);
                return 2;
            }
            if (!strcmp(s, "--config")) a.config = (int)x;
            else a.split = (int)x;
        } else {
            fprintf(stderr, "sgla bench: unknown option '%s' (see sgla bench --help)\n", s);
            return 2;
        }
    }
    /* options the run would not use are refused, not ignored */
    if (cuda_only && a.backend != SGLA_BACKEND_CUDA) {
        fprintf(stderr, "sgla bench: %s is an option of the CUDA backend (--backend cuda)\n", cuda_only);
        return 2;
    }
    if (a.no_gate_grad && !a.backward) {
        fprintf(stderr, "sgla bench: --no-gate-grad times the backward: it needs --backward\n");
        return 2;
    }
    if (a.bwd_half && (!a.backward || a.bwd_path || a.bwd_windows || a.bwd_groups || a.split)) {
        fprintf(stderr, "sgla bench: --bwd-half times the usual backward with SGLA_FLAG_BWD_HALF_STATES: it needs "
                "--backward and no --bwd-path, --bwd-windows, --bwd-groups or --split\n");
        return 2;
    }
    /* the dtype users run on each backend: bf16 on the GPU, fp32 on the CPU */
    if (!dtype_given && a.backend == SGLA_BACKEND_CUDA) a.dtype = SGLA_BF16;
    /* --varlen's lengths against every shape before the first line is printed (the CPU's T = 1 shapes are
     * decode steps: no packed batch) */
    if (a.varlen_n || a.nlens) {
        if (!a.nshapes) {
            fprintf(stderr, "sgla bench: --varlen needs --shape (B = 1; the default shapes have other batches)\n");
            return 2;
        }
        static int64_t cu[BENCH_MAX_SEQS + 1];
        for (int i = 0, n; i < a.nshapes; i++)
            if ((a.backend == SGLA_BACKEND_CUDA || a.shapes[i][1] != 1) && bench_varlen(&a, a.shapes[i], cu, &n) < 0)
                return 2;
    }
    bench_out_begin(&a);
    if (a.backend == SGLA_BACKEND_CUDA) {
        const int rc = bench_cuda_run(&a);
        bench_out_end(&a);
        return rc;
    }

    if (isa != SGLA_CPU_ISA_AUTO && !sgla_cpu_force_isa(isa)) {
        fprintf(stderr, "sgla bench: --isa %s: this CPU cannot run it\n", sgla_cpu_isa_name(isa));
        return 1;
    }
    /* the library's own count (its default, or the request up to its cap): this file may be built without
     * OpenMP while the library runs on every thread, and the peak must be measured on as many */
    int nth = sgla_cpu_threads(a.threads, INT64_MAX);
    int cur = sgla_cpu_isa_current();
    double peak = 0, copy_bw = 0;
    if (!no_peak) {
        peak = sgla_cpu_bench_fma_peak(nth, cur == SGLA_CPU_ISA_SCALAR ? sgla_cpu_isa_detect() : cur);
        copy_bw = sgla_cpu_bench_copy_bw(nth, (size_t)512 << 20);
    }
    fprintf(bench_info(&a), "sgla bench: backend cpu, isa %s, %d thread%s, chunk %lld; FMA peak %.1f GFLOP/s, copy %.1f GB/s\n",
           sgla_cpu_isa_name(cur), nth, nth == 1 ? "" : "s", (long long)chunk, peak, copy_bw);
    fprintf(bench_info(&a), "%-20s %-5s %-6s %9s %9s %9s %9s %7s\n", "B,T,H,K,V", "dtype", "gate", "ms", "min ms", "cpu ms", "GFLOP/s",
           "%peak");
    int rc = 0;
    if (a.nshapes == 0) {
        static const int64_t def[][5] = {{1, 4096, 16, 128, 128}, {1, 16384, 8, 128, 128}, {4, 2048, 16, 64, 64},
                                         {1, 8192, 1, 128, 128},  {64, 1, 16, 128, 128}};
        for (size_t i = 0; i < sizeof def / sizeof def[0]; i++) {
            int r = bench_cpu_shape(&a, def[i], chunk, peak, copy_bw, nth);
            if (r > rc) rc = r;
        }
        /* the per-chunk products alone */
        int reps = 200;
        double t = sgla_cpu_bench_kernels(64, 128, 128, nth, reps);
        double fl = bench_flops(1, 64, 1, 128, 128, 64) * reps * nth;
        fprintf(bench_info(&a), "%-20s %-5s %-6s %9.3f %9s %9s %9.1f %6.1f%%\n", "kernels C=64 K=V=128", "f32", "-",
                t * 1e3 / reps, "", "", fl / t * 1e-9, peak > 0 ? 100.0 * fl / t * 1e-9 / peak : 0.0);
    } else {
        for (int i = 0; i < a.nshapes; i++) {
            int r = bench_cpu_shape(&a, a.shapes[i], chunk, peak, copy_bw, nth);
            if (r > rc) rc = r;
        }
    }
    bench_out_end(&a);
    return rc;
}
