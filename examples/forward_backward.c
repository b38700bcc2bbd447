/* sgla from C: one forward and its backward on the host, each checked against
 * the fp64 reference of the library itself.  Build it with the library
 * (CMake target `example_forward_backward`, or: cc forward_backward.c -lsgla -lm) and run it
 * as it is; it prints what it did and exits 0 when both agree to fp32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sgla.h"

enum { B = 2, T = 300, H = 4, K = 64, V = 64 };

static double frand(unsigned *s) /* uniform in [-1, 1) from a small LCG: no dependencies */
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

static double rel_l2(const float *x, const double *ref, long n)
{
    double num = 0, den = 0;
    for (long i = 0; i < n; i++) num += (x[i] - ref[i]) * (x[i] - ref[i]), den += ref[i] * ref[i];
    return sqrt(num / den);
}

int main(void)
{
    const long nqk = (long)B * T * H * K, nv = (long)B * T * H * V, ng = (long)B * T * H, ns = (long)B * H * K * V;
    float *q = malloc(nqk * 4), *k = malloc(nqk * 4), *v = malloc(nv * 4), *g = malloc(ng * 4);
    float *o = malloc(nv * 4), *ht = malloc(ns * 4), *dout = malloc(nv * 4);
    float *dq = malloc(nqk * 4), *dk = malloc(nqk * 4), *dv = malloc(nv * 4), *dg = malloc(ng * 4);
    double *o64 = malloc(nv * 8), *ht64 = malloc(ns * 8);
    if (!q || !k || !v || !g || !o || !ht || !dout || !dq || !dk || !dv || !dg || !o64 || !ht64) return 1;
    unsigned s = 12345;
    for (long i = 0; i < nqk; i++) q[i] = (float)frand(&s), k[i] = (float)frand(&s);
    for (long i = 0; i < nv; i++) v[i] = (float)frand(&s), dout[i] = (float)frand(&s);
    for (long i = 0; i < ng; i++) g[i] = (float)(-0.05 * (1.0 + frand(&s))); /* log decays in (-0.1, 0] */

    /* the forward: o = scale q^T S_t with S_t = exp(g_t) S_{t-1} + k_t v_t^T */
    sgla_forward_desc d;
    sgla_forward_desc_init(&d);
    d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.ht = ht;
    d.dtype = SGLA_F32, d.B = B, d.T = T, d.H = H, d.K = K, d.V = V;
    d.scale = 1.0f / sqrtf((float)K);
    sgla_status st = sgla_forward(&d, SGLA_BACKEND_AUTO); /* host pointers: the CPU backend */
    if (st != SGLA_OK) {
        fprintf(stderr, "sgla_forward: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    /* the same call through the fp64 recurrence (reference A) */
    st = sgla_reference(&d, SGLA_BACKEND_REF_A, o64, ht64);
    if (st != SGLA_OK) {
        fprintf(stderr, "sgla_reference: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    const double eo = rel_l2(o, o64, nv), eh = rel_l2(ht, ht64, ns);
    printf("forward  B=%d T=%d H=%d K=%d V=%d, gate g: o rel L2 %.2e, ht %.2e against fp64\n", B, T, H, K, V, eo, eh);

    /* the backward: the gradients of <o, dout> */
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &d, b.dout = dout, b.dq = dq, b.dk = dk, b.dv = dv, b.dg = dg;
    if ((st = sgla_backward(&b, SGLA_BACKEND_AUTO)) != SGLA_OK) {
        fprintf(stderr, "sgla_backward: %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    /* ... and through reference A with fp64 copies of the inputs (SGLA_F64 descriptors) */
    double *b64[9];
    const long cnt[9] = {nqk, nqk, nv, ng, nv, nqk, nqk, nv, ng};
    const float *src[5] = {q, k, v, g, dout};
    for (int i = 0; i < 9; i++)
        if (!(b64[i] = malloc(cnt[i] * 8))) return 1;
    for (int i = 0; i < 5; i++)
        for (long j = 0; j < cnt[i]; j++) b64[i][j] = src[i][j];
    sgla_forward_desc d64 = d;
    d64.q = b64[0], d64.k = b64[1], d64.v = b64[2], d64.g = b64[3], d64.o = NULL, d64.ht = NULL;
    d64.dtype = SGLA_F64;
    sgla_backward_desc b64d;
    sgla_backward_desc_init(&b64d);
    b64d.fwd = &d64, b64d.dout = b64[4], b64d.dq = b64[5], b64d.dk = b64[6], b64d.dv = b64[7], b64d.dg = b64[8];
    if ((st = sgla_backward(&b64d, SGLA_BACKEND_REF_A)) != SGLA_OK) {
        fprintf(stderr, "sgla_backward (ref-a): %s (%s)\n", sgla_status_string(st), sgla_last_error());
        return 1;
    }
    const double e[4] = {rel_l2(dq, b64[5], nqk), rel_l2(dk, b64[6], nqk), rel_l2(dv, b64[7], nv),
                         rel_l2(dg, b64[8], ng)};
    printf("backward dq %.2e, dk %.2e, dv %.2e, dg %.2e against fp64\n", e[0], e[1], e[2], e[3]);
    const int ok = eo < 1e-5 && eh < 1e-5 && e[0] < 1e-5 && e[1] < 1e-5 && e[2] < 1e-5 && e[3] < 1e-5;
    printf("%s (sgla %s)\n", ok ? "ok: both agree with fp64 to fp32 accuracy" : "FAIL", sgla_version());
    for (int i = 0; i < 9; i++) free(b64[i]);
    free(q), free(k), free(v), free(g), free(o), free(ht), free(dout), free(dq), free(dk), free(dv), free(dg);
    free(o64), free(ht64);
    return ok ? 0 : 1;
}
