/* sgla from a C inference engine: decode steps on a state pool (sgla.h,
 * experimental).  Requests hold one slot each; every step packs the live
 * requests into one call (a new request prefills its prompt in the same call
 * as the others decode one token), -1 pads the rows of finished requests, and
 * a finished request's slot goes to the next one.  Each request's outputs are
 * checked at the end against a run of that request alone.  Build it with the
 * library (CMake target `example_serving_pool`, or cc serving_pool.c -DSGLA_EXPERIMENTAL_API
 * -lsgla -lm) and run it as it is. */
#define SGLA_EXPERIMENTAL_API
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgla.h"

enum { H = 2, K = 32, V = 32, SLOTS = 4, REQUESTS = 10, MAXTOK = 64 };

static unsigned rs = 7;
static float frand(void) /* uniform in [-1, 1) */
{
    rs = rs * 1664525u + 1013904223u;
    return (float)((double)(rs >> 8) / (double)(1u << 23) - 1.0);
}

typedef struct request {
    int prompt, gen, done, slot; /* slot -1: waiting or finished */
    float q[MAXTOK][H][K], k[MAXTOK][H][K], v[MAXTOK][H][V], g[MAXTOK][H], o[MAXTOK][H][V];
} request;

static void draw_token(request *r, int t)
{
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < K; i++) r->q[t][h][i] = frand(), r->k[t][h][i] = 0.2f * frand();
        for (int j = 0; j < V; j++) r->v[t][h][j] = frand();
        r->g[t][h] = -0.05f * (1.0f + frand());
    }
}

int main(void)
{
    static request req[REQUESTS];
    static float pool[SLOTS][H][K][V];
    int free_slots[SLOTS], nfree = SLOTS, next = 0, finished = 0, steps = 0;
    for (int s = 0; s < SLOTS; s++) free_slots[s] = SLOTS - 1 - s;
    for (int i = 0; i < REQUESTS; i++) {
        req[i].prompt = 1 + (int)((frand() + 1.0f) * 12.0f);
        req[i].gen = 1 + (int)((frand() + 1.0f) * 8.0f);
        req[i].slot = -1;
        for (int t = 0; t < req[i].prompt + req[i].gen; t++) draw_token(&req[i], t);
    }
    /* the step's packed batch: at most SLOTS sequences */
    static float q[MAXTOK * SLOTS][H][K], k[MAXTOK * SLOTS][H][K], v[MAXTOK * SLOTS][H][V], g[MAXTOK * SLOTS][H];
    static float o[MAXTOK * SLOTS][H][V];
    while (finished < REQUESTS) {
        while (next < REQUESTS && nfree > 0) req[next++].slot = free_slots[--nfree]; /* admit */
        int64_t cu[SLOTS + 1] = {0}, idx[SLOTS];
        unsigned char fresh[SLOTS];
        int who[SLOTS], n = 0;
        for (int i = 0; i < next; i++) {
            request *r = &req[i];
            if (r->slot < 0) continue;
            const int len = r->done == 0 ? r->prompt : 1; /* prefill, then one token a step */
            for (int t = 0; t < len; t++) {
                const int64_t row = cu[n] + t;
                memcpy(q[row], r->q[r->done + t], sizeof q[row]), memcpy(k[row], r->k[r->done + t], sizeof k[row]);
                memcpy(v[row], r->v[r->done + t], sizeof v[row]), memcpy(g[row], r->g[r->done + t], sizeof g[row]);
            }
            idx[n] = r->slot, fresh[n] = r->done > 0, who[n] = i;
            cu[n + 1] = cu[n] + len;
            n++;
        }
        sgla_state_pool sp = {SLOTS, idx, 64, 0, fresh, NULL, SGLA_POOL_INPLACE};
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = q, d.k = k, d.v = v, d.g = g, d.o = o, d.h0 = pool, d.pool = &sp;
        d.B = 1, d.T = cu[n], d.H = H, d.K = K, d.V = V, d.scale = 1.0f / sqrtf((float)K);
        d.cu_seqlens = cu, d.num_seqs = n;
        const sgla_status st = sgla_forward(&d, SGLA_BACKEND_AUTO);
        if (st != SGLA_OK) {
            fprintf(stderr, "step %d: %s (%s)\n", steps, sgla_status_string(st), sgla_last_error());
            return 1;
        }
        for (int j = 0; j < n; j++) { /* outputs back to their requests; finished ones free their slots */
            request *r = &req[who[j]];
            const int len = (int)(cu[j + 1] - cu[j]);
            memcpy(r->o[r->done], o[cu[j]], (size_t)len * sizeof o[0]);
            r->done += len;
            if (r->done == r->prompt + r->gen) free_slots[nfree++] = r->slot, r->slot = -1, finished++;
        }
        steps++;
    }
    /* every request alone, from zero, against what the engine produced */
    double worst = 0;
    for (int i = 0; i < REQUESTS; i++) {
        request *r = &req[i];
        static float o1[MAXTOK][H][V];
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.q = r->q, d.k = r->k, d.v = r->v, d.g = r->g, d.o = o1;
        d.B = 1, d.T = r->done, d.H = H, d.K = K, d.V = V, d.scale = 1.0f / sqrtf((float)K);
        if (sgla_forward(&d, SGLA_BACKEND_REF_A) != SGLA_OK) return 1;
        double num = 0, den = 0;
        for (int t = 0; t < r->done; t++)
            for (int h = 0; h < H; h++)
                for (int j = 0; j < V; j++) {
                    const double e = r->o[t][h][j] - o1[t][h][j];
                    num += e * e, den += (double)o1[t][h][j] * o1[t][h][j];
                }
        worst = fmax(worst, sqrt(num / den));
    }
    printf("%d requests over %d slots in %d steps; worst rel error against a run alone %.2e\n", REQUESTS, SLOTS,
           steps, worst);
    printf(worst < 1e-5 ? "ok\n" : "FAIL\n");
    return worst < 1e-5 ? 0 : 1;
}
