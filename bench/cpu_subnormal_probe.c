/* The CPU backend's time with strong gates (docs/perf-cpu.md, session 52): a forward or a backward at
 * 1x4096x16x128 fp32 with g uniform in [-gmax, 0], the best of three calls after one.  Gates of a few
 * units a token make subnormals in bulk, which cost an x86 core a microcode assist each unless they are
 * flushed (the backend sets FTZ / DAZ in its threads; `ftz` 1 also sets them in the caller's).
 * Build from the repository root after a CPU build in build-cpu/:
 *   cc -O2 -std=gnu11 -Iinclude bench/cpu_subnormal_probe.c build-cpu/libsgla.a -lm -lgomp -lpthread -ldl \
 *      -o /tmp/cpu_subnormal_probe
 *   /tmp/cpu_subnormal_probe GMAX [FTZ 0|1] [BACKWARD 0|1]
 * (add -L/usr/local/cuda/lib64 -lcudart where the library was built with CUDA). */
#include "sgla.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xmmintrin.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s GMAX [FTZ] [BACKWARD]\n", argv[0]);
        return 2;
    }
    double gmax = atof(argv[1]);
    int ftz = argc > 2 ? atoi(argv[2]) : 0;
    int bwd = argc > 3 ? atoi(argv[3]) : 0;
    if (ftz) _mm_setcsr(_mm_getcsr() | 0x8040);
    const int64_t B = 1, T = 4096, H = 16, K = 128, V = 128;
    size_t nq = B * T * H * K, nv = B * T * H * V, ng = B * T * H;
    float *q = malloc(nq * 4), *k = malloc(nq * 4), *v = malloc(nv * 4), *o = malloc(nv * 4), *g = malloc(ng * 4);
    float *dout = malloc(nv * 4), *dq = malloc(nq * 4), *dk = malloc(nq * 4), *dv = malloc(nv * 4),
          *dg = malloc(ng * 4);
    srand(1);
    for (size_t i = 0; i < nq; i++) {
        q[i] = rand() / (float)RAND_MAX - 0.5f;
        k[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.1f;
    }
    for (size_t i = 0; i < nv; i++) {
        v[i] = rand() / (float)RAND_MAX - 0.5f;
        dout[i] = rand() / (float)RAND_MAX - 0.5f;
    }
    for (size_t i = 0; i < ng; i++)
        g[i] = -(float)(gmax * rand() / (double)RAND_MAX);
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q;
    d.k = k;
    d.v = v;
    d.o = o;
    d.g = g;
    d.dtype = SGLA_F32;
    d.B = B;
    d.T = T;
    d.H = H;
    d.K = K;
    d.V = V;
    d.scale = 1 / sqrtf(K);
    sgla_backward_desc bd;
    sgla_backward_desc_init(&bd);
    bd.fwd = &d;
    bd.dout = dout;
    bd.dq = dq;
    bd.dk = dk;
    bd.dv = dv;
    bd.dg = dg;
    double best = 1e9;
    for (int r = 0; r < 4; r++) {
        double t0 = now();
        sgla_status s = bwd ? sgla_backward(&bd, SGLA_BACKEND_CPU) : sgla_forward(&d, SGLA_BACKEND_CPU);
        double t = now() - t0;
        if (s) {
            printf("err %s\n", sgla_last_error());
            return 1;
        }
        if (r && t < best) best = t;
    }
    printf("gmax %.2f ftz %d %s: %.2f ms\n", gmax, ftz, bwd ? "bwd" : "fwd", best * 1e3);
    return 0;
}
