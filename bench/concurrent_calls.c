/* Throughput of CPU forwards from P host threads at once, each call with
 * `threads` = t (0: the OpenMP default, all cores): every calling thread gets
 * its own OpenMP team, so P x cores threads with t = 0.
 *   cc -O2 -Iinclude bench/concurrent_calls.c build/libsgla.a -fopenmp -lm -lpthread
 *   ./a.out P t [calls] */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sgla.h"

enum { T = 512, H = 4, K = 64, V = 64 };
static int threads, calls;

static void *run(void *arg)
{
    (void)arg;
    float *q = calloc(T * H * K, 4), *k = calloc(T * H * K, 4), *v = calloc(T * H * V, 4), *o = malloc(T * H * V * 4);
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.o = o, d.B = 1, d.T = T, d.H = H, d.K = K, d.V = V, d.threads = threads;
    for (int i = 0; i < calls; i++)
        if (sgla_forward(&d, SGLA_BACKEND_CPU) != SGLA_OK) abort();
    free(q), free(k), free(v), free(o);
    return NULL;
}

int main(int argc, char **argv)
{
    const int P = argc > 1 ? atoi(argv[1]) : 4;
    threads = argc > 2 ? atoi(argv[2]) : 0;
    calls = argc > 3 ? atoi(argv[3]) : 200;
    pthread_t th[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < P; i++) pthread_create(&th[i], NULL, run, NULL);
    for (int i = 0; i < P; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("P=%d threads=%d: %.0f calls/s\n", P, threads, P * calls / s);
    return 0;
}
