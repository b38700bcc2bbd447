/* The CPU backend's speculative pool step (docs/perf-cpu.md, session 53): N sequences of t_max tokens,
 * H heads, K = V, fp32, gate g, every token's state written to its own slot of a pool of 4 N t_max slots
 * (SGLA_POOL_INPLACE, all tokens accepted); the median of 9 calls.
 * Build from the repository root after a CPU build in build-cpu/:
 *   cc -O2 -std=gnu11 -Iinclude bench/cpu_spec_probe.c build-cpu/libsgla.a -lm -lgomp -lpthread -ldl \
 *      -o /tmp/cpu_spec_probe
 *   /tmp/cpu_spec_probe N T_MAX H K THREADS
 * (add -L/usr/local/cuda/lib64 -lcudart where the library was built with CUDA). */
#define SGLA_EXPERIMENTAL_API 1
#include "sgla.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s N T_MAX H K THREADS\n", argv[0]);
        return 2;
    }
    const int64_t N = atoll(argv[1]), tm = atoll(argv[2]), H = atoll(argv[3]), K = atoll(argv[4]), V = K;
    const int threads = atoi(argv[5]);
    const int64_t T = N * tm, S = 4 * N * tm;
    const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), np = (size_t)(S * H * K * V);
    float *q = malloc(nq * 4), *k = malloc(nq * 4), *v = malloc(nv * 4), *o = malloc(nv * 4);
    float *g = malloc((size_t)(T * H) * 4), *pool = malloc(np * 4);
    int64_t *cu = malloc((size_t)(N + 1) * 8), *idx = malloc((size_t)(N * tm) * 8), *acc = malloc((size_t)N * 8);
    if (!q || !k || !v || !o || !g || !pool || !cu || !idx || !acc) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    srand(1);
    for (size_t i = 0; i < nq; i++) q[i] = rand() / (float)RAND_MAX - 0.5f, k[i] = rand() / (float)RAND_MAX - 0.5f;
    for (size_t i = 0; i < nv; i++) v[i] = rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < T * H; i++) g[i] = -0.05f;
    for (size_t i = 0; i < np; i++) pool[i] = 0.01f;
    for (int64_t n = 0; n <= N; n++) cu[n] = n * tm;
    for (int64_t n = 0; n < N; n++) {
        acc[n] = tm;
        for (int64_t t = 0; t < tm; t++) idx[n * tm + t] = (n * tm + t) * 3 % S; /* distinct slots */
    }
    sgla_state_pool p = {S, idx, 64, tm, NULL, acc, SGLA_POOL_INPLACE, cu};
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.h0 = pool, d.pool = &p;
    d.B = 1, d.T = T, d.H = H, d.K = K, d.V = V, d.cu_seqlens = cu, d.num_seqs = N, d.threads = threads;
    double t[9];
    for (int r = 0; r < 9; r++) {
        const double t0 = now();
        const sgla_status st = sgla_forward(&d, SGLA_BACKEND_CPU);
        t[r] = now() - t0;
        if (st != SGLA_OK) {
            fprintf(stderr, "%s\n", sgla_last_error());
            return 1;
        }
    }
    for (int i = 0; i < 9; i++)
        for (int j = i + 1; j < 9; j++)
            if (t[j] < t[i]) {
                const double x = t[i];
                t[i] = t[j], t[j] = x;
            }
    const double bytes = (double)(N * H * K * V) * 4 * (1 + tm); /* entering states read, every token's written */
    printf("%lld x %lld tokens x %lld heads, K = V = %lld: %.3f ms (states %.0f MB read and written: %.1f GB/s)\n",
           (long long)N, (long long)tm, (long long)H, (long long)K, t[4] * 1e3, bytes / 1e6, bytes / t[4] / 1e9);
    return 0;
}
