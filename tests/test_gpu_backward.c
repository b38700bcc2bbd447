/* The CUDA backward against fp64 through the conformance harness (every
 * gradient; fresh inputs from the printed seed; outputs poisoned and checked
 * written): every dtype and gate form, h0 / dht, varlen with empty sequences,
 * K != V, partial blocks; fp32 also with SGLA_FLAG_ALLOW_TF32; then bit-identical repeats (no
 * atomics), a workspace passed in, one too small, and the call captured in a CUDA graph.
 * SGLA_GPU_SMALL=1 runs a few small cases (for compute-sanitizer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "conform.h"
#include "gpu_check.h"
#include "testutil.h"

static void run_case(const conform_case *c, tu_rng *r)
{
    conform_data x;
    sgla_status st = conform_draw(&x, c, r, SGLA_BACKEND_REF_A);
    if (st == SGLA_OK) st = conform_draw_backward(&x, r);
    TU_CHECK(st == SGLA_OK, "draw: %s (%s)", sgla_status_string(st), sgla_last_error());
    if (st == SGLA_OK) {
        conform_bresult res;
        conform_check_backward(&x, SGLA_BACKEND_CUDA, &res);
        conform_print_backward(stdout, &res);
        TU_CHECK(res.pass, "%s", res.label);
        /* fp32 with the products in TF32 alone (SGLA_FLAG_ALLOW_TF32) on the same inputs: judged at
         * TF32's bar (tools/conform.c) and required to differ from 3xTF32 (else the flag did nothing).
         * Some gradient always shows it with h0: dh0 comes through the reverse states kernel's
         * products (dq, dk, dv need not: sequences of one block with head sizes off the multiples of 8
         * use no tensor core for them) */
        if (c->dtype == SGLA_F32 && c->T > 0) {
            conform_data y = x;
            y.d.flags |= SGLA_FLAG_ALLOW_TF32;
            conform_check_backward(&y, SGLA_BACKEND_CUDA, &res);
            conform_print_backward(stdout, &res);
            TU_CHECK(res.pass, "%s", res.label);
            double most = 0.0;
            for (int i = 0; i < CONFORM_NGRAD; i++)
                if (res.present[i] && res.rel[i] > most) most = res.rel[i];
            TU_CHECK(!c->h0 || most > 2e-6, "%s: every gradient within %.2e, as exact as 3xTF32 (the flag did not "
                     "reach the kernels?)", res.label, most);
        }
    }
    conform_free(&x);
}

static void *dalloc(size_t n)
{
    void *p = NULL;
    CK(cudaMalloc(&p, n ? n : 16));
    return p;
}

/* same bits twice; a workspace passed in (poisoned) gives them too; one byte short is refused; a graph
 * replays them.  gamma: g_gamma and dg_gamma (whose per-chunk sums leave some of the workspace's slots
 * to its memset: 2 x 130 tokens), else gate g and dg */
static void repeats_workspace_graph(tu_rng *r, int gamma)
{
    const int64_t B = 2, T = gamma ? 130 : 300, H = 3, K = 64, V = 128, nqk = B * T * H * K, nv = B * T * H * V,
                  ng = gamma ? H : B * T * H;
    uint16_t *hq = malloc((size_t)nqk * 2), *hv = malloc((size_t)nv * 2);
    float *hg = malloc((size_t)ng * 4);
    void *q = dalloc((size_t)nqk * 2), *k = dalloc((size_t)nqk * 2), *v = dalloc((size_t)nv * 2), *dout = dalloc((size_t)nv * 2);
    void *dq = dalloc((size_t)nqk * 2), *dk = dalloc((size_t)nqk * 2), *dv = dalloc((size_t)nv * 2);
    float *g = dalloc((size_t)ng * 4), *dg = dalloc((size_t)ng * 4);
    tu_fill(r, hq, SGLA_BF16, nqk, 1.0);
    CK(cudaMemcpy(q, hq, (size_t)nqk * 2, cudaMemcpyHostToDevice));
    tu_fill(r, hq, SGLA_BF16, nqk, 1.0);
    CK(cudaMemcpy(k, hq, (size_t)nqk * 2, cudaMemcpyHostToDevice));
    tu_fill(r, hv, SGLA_BF16, nv, 1.0);
    CK(cudaMemcpy(v, hv, (size_t)nv * 2, cudaMemcpyHostToDevice));
    tu_fill(r, hv, SGLA_BF16, nv, 1.0);
    CK(cudaMemcpy(dout, hv, (size_t)nv * 2, cudaMemcpyHostToDevice));
    for (int64_t i = 0; i < ng; i++) hg[i] = (float)-tu_uniform_range(r, gamma ? 0.01 : 0, gamma ? 0.15 : 0.3);
    CK(cudaMemcpy(g, hg, (size_t)ng * 4, cudaMemcpyHostToDevice));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize());
    sgla_forward_desc f;
    sgla_forward_desc_init(&f);
    f.q = q, f.k = k, f.v = v, f.dtype = SGLA_BF16, f.stream = st;
    if (gamma) f.g_gamma = g;
    else f.g = g;
    f.B = B, f.T = T, f.H = H, f.K = K, f.V = V, f.scale = 0.125f;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f, b.dout = dout, b.dq = dq, b.dk = dk, b.dv = dv;
    if (gamma) b.dg_gamma = dg;
    else b.dg = dg;
    /* every gradient poisoned before each call, written in full, and the same bits each time */
    void *const outs[4] = {dq, dk, dv, dg};
    const sgla_dtype odt[4] = {SGLA_BF16, SGLA_BF16, SGLA_BF16, SGLA_F32};
    const int64_t on[4] = {nqk, nqk, nv, ng};
    char *first[4], *again[4];
    for (int i = 0; i < 4; i++) first[i] = malloc((size_t)on[i] * 4), again[i] = malloc((size_t)on[i] * 4);
    for (int rep = 0; rep < 2; rep++) {
        char *const *to = rep ? again : first;
        for (int i = 0; i < 4; i++) CK(cudaMemset(outs[i], 0xff, (size_t)on[i] * sgla_dtype_size(odt[i])));
        TU_CHECK(sgla_backward(&b, SGLA_BACKEND_CUDA) == SGLA_OK, "backward (call %d): %s", rep + 1, sgla_last_error());
        CK(cudaStreamSynchronize(st));
        for (int i = 0; i < 4; i++) {
            CK(cudaMemcpy(to[i], outs[i], (size_t)on[i] * sgla_dtype_size(odt[i]), cudaMemcpyDeviceToHost));
            TU_CHECK(tu_count_poison(to[i], odt[i], on[i]) == 0, "call %d: gradient %d not fully written", rep + 1, i);
        }
    }
    for (int i = 0; i < 4; i++)
        TU_CHECK(!memcmp(first[i], again[i], (size_t)on[i] * sgla_dtype_size(odt[i])),
                 "a repeated backward gave other bits (gradient %d of dq, dk, dv, dg or dg_gamma)", i);
    size_t need = 0;
    TU_CHECK(sgla_backward_workspace_size(&b, SGLA_BACKEND_CUDA, &need) == SGLA_OK && need > 0, "workspace size %zu",
             need);
    printf("backward workspace at 2x%lldx3, K=64, V=128, %s: %zu bytes\n", (long long)T, gamma ? "g_gamma" : "g", need);
    {   /* the queries without q, k, v, dout, dq, dk, dv (g and dg say which gate and gradient): the same
         * bytes (the plan takes NULL as aligned) */
        sgla_forward_desc fq = f;
        sgla_backward_desc bq = b;
        fq.q = fq.k = fq.v = NULL;
        bq.fwd = &fq, bq.dout = NULL, bq.dq = bq.dk = bq.dv = NULL;
        size_t nq = 0, nf = 0, nt = 0;
        TU_CHECK(sgla_backward_workspace_size(&bq, SGLA_BACKEND_CUDA, &nq) == SGLA_OK && nq == need,
                 "workspace query without tensors: %zu bytes, %zu with them (%s)", nq, need, sgla_last_error());
        TU_CHECK(sgla_cuda_backward_forced_workspace(&b, 0, 0, &nt) == SGLA_OK && nt == need,
                 "forced workspace query, path 0: %zu bytes, %zu usual (%s)", nt, need, sgla_last_error());
        TU_CHECK(sgla_cuda_backward_forced_workspace(&bq, 0, 0, &nf) == SGLA_OK && nf == nt,
                 "forced workspace query without tensors: %zu bytes, %zu with them (%s)", nf, nt, sgla_last_error());
    }
    b.workspace = dalloc(need);
    b.workspace_bytes = need - 1;
    TU_CHECK(sgla_backward(&b, SGLA_BACKEND_CUDA) == SGLA_ERR_INVALID_ARGUMENT, "workspace one byte short accepted");
    b.workspace_bytes = need;
    CK(cudaMemset(b.workspace, 0xff, need)); /* NaN: what a pass reads (gate g's b) is written first */
    for (int i = 0; i < 4; i++) CK(cudaMemset(outs[i], 0xff, (size_t)on[i] * sgla_dtype_size(odt[i])));
    CK(cudaDeviceSynchronize());
    cudaGraphExec_t exec = gpu_capture(st, gpu_cuda_backward, &b);
    if (exec) {
        CK(cudaGraphLaunch(exec, st));
        CK(cudaStreamSynchronize(st));
        for (int i = 0; i < 4; i++) {
            CK(cudaMemcpy(again[i], outs[i], (size_t)on[i] * sgla_dtype_size(odt[i]), cudaMemcpyDeviceToHost));
            TU_CHECK(!memcmp(first[i], again[i], (size_t)on[i] * sgla_dtype_size(odt[i])),
                     "graph replay (workspace passed in) gave other bits (gradient %d of dq, dk, dv, dg or dg_gamma)", i);
        }
        cudaGraphExecDestroy(exec);
    }
    cudaFree(b.workspace);
    cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(dout), cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(g),
        cudaFree(dg);
    CK(cudaStreamDestroy(st));
    free(hq), free(hv), free(hg);
    for (int i = 0; i < 4; i++) free(first[i]), free(again[i]);
}

/* workspace_limit below the usual plan's workspace (Hopper's three passes, gate g with dg, h0 and dht):
 * the query honours it.  One byte under the usual plan's, the call keeps every other chunk's state
 * (half the blob): dq, dk, dv, dh0 in the same bits as without a limit, dg within 1e-2 (an odd chunk's
 * X_c through the next chunk's copy).  One byte under that, it takes time windows as well
 * (sgla_cuda_backward_windows' bytes or fewer): dk, dv, dh0 (no state kept for them) in the same bits,
 * dq and dg (their entering states now from the scan) within 1e-3 of the half blob's.  A limit nothing
 * fits is refused with the outputs untouched. */
static void workspace_limit(tu_rng *r)
{
    /* Two windows save (T - T/2) / 128 slots of 16-bit chunk states a sequence and add three fp32 states a
     * (sequence, head): they pay where T > ~1536 and no pass splits along time (a split multiplies the
     * windows' states); 264 (sequence, head) pairs fill the SMs without a split */
    const int64_t B = 8, T = 2048, H = 33, K = 64, V = 128, nqk = B * T * H * K, nv = B * T * H * V, ng = B * T * H,
                  ns = B * H * K * V;
    uint16_t *hx = malloc((size_t)nv * 2);
    float *hf = malloc((size_t)(ng > ns ? ng : ns) * 4);
    void *in[4], *out[4];
    const int64_t n16[4] = {nqk, nqk, nv, nv};
    for (int i = 0; i < 4; i++) {
        in[i] = dalloc((size_t)n16[i] * 2), out[i] = dalloc((size_t)n16[i] * 2);
        tu_fill(r, hx, SGLA_BF16, n16[i], 1.0);
        CK(cudaMemcpy(in[i], hx, (size_t)n16[i] * 2, cudaMemcpyHostToDevice));
    }
    float *g = dalloc((size_t)ng * 4), *dg = dalloc((size_t)ng * 4), *h0 = dalloc((size_t)ns * 4),
          *dht = dalloc((size_t)ns * 4), *dh0 = dalloc((size_t)ns * 4);
    for (int64_t i = 0; i < ng; i++) hf[i] = (float)-tu_uniform_range(r, 0, 0.1);
    CK(cudaMemcpy(g, hf, (size_t)ng * 4, cudaMemcpyHostToDevice));
    tu_fill(r, hf, SGLA_F32, ns, 0.5);
    CK(cudaMemcpy(h0, hf, (size_t)ns * 4, cudaMemcpyHostToDevice));
    tu_fill(r, hf, SGLA_F32, ns, 0.5);
    CK(cudaMemcpy(dht, hf, (size_t)ns * 4, cudaMemcpyHostToDevice));
    sgla_forward_desc f;
    sgla_forward_desc_init(&f);
    f.q = in[0], f.k = in[1], f.v = in[2], f.g = g, f.h0 = h0, f.dtype = SGLA_BF16;
    f.B = B, f.T = T, f.H = H, f.K = K, f.V = V, f.scale = 0.125f;
    sgla_backward_desc b;
    sgla_backward_desc_init(&b);
    b.fwd = &f, b.dout = in[3], b.dht = dht, b.dq = out[0], b.dk = out[1], b.dv = out[2], b.dg = dg, b.dh0 = dh0;
    void *const o[5] = {out[0], out[1], out[2], dg, dh0};
    const sgla_dtype odt[5] = {SGLA_BF16, SGLA_BF16, SGLA_BF16, SGLA_F32, SGLA_F32};
    const int64_t on[5] = {nqk, nqk, nv, ng, ns};
    double *res[3][5]; /* the gradients of passes 0 (no limit), 1 (half the blob), 2 (and windows) */
    char *raw[5];
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 3; j++) res[j][i] = malloc((size_t)on[i] * 8);
        raw[i] = malloc((size_t)on[i] * 4);
    }
    size_t full = 0, win = 0, half = 0;
    TU_CHECK(sgla_backward_workspace_size(&b, SGLA_BACKEND_CUDA, &full) == SGLA_OK, "workspace: %s", sgla_last_error());
    TU_CHECK(sgla_cuda_backward_windows(&b, 2, &win) == SGLA_OK && win < full, "two windows: %zu bytes against %zu (%s)",
             win, full, sgla_last_error());
    { /* one window (the half blob) is for calls with the gate's gradient: without dg it is refused */
        size_t w1 = 0;
        b.dg = NULL;
        TU_CHECK(sgla_cuda_backward_windows(&b, 1, &w1) == SGLA_ERR_INVALID_ARGUMENT &&
                     strstr(sgla_last_error(), "half blob"), "one window without dg: %s", sgla_last_error());
        b.dg = dg;
        TU_CHECK(sgla_cuda_backward_windows(&b, 1, &w1) == SGLA_OK && w1 < full, "one window: %zu bytes against %zu (%s)",
                 w1, full, sgla_last_error());
    }
    for (int pass = 0; pass < 4; pass++) { /* no limit; one byte under the usual plan's; under the half blob's; 1 byte */
        b.workspace_limit = pass == 0 ? 0 : pass == 1 ? full - 1 : pass == 2 ? half - 1 : 1;
        for (int i = 0; i < 5; i++) CK(cudaMemset(o[i], 0xff, (size_t)on[i] * sgla_dtype_size(odt[i])));
        size_t need = 0;
        const sgla_status qs = sgla_backward_workspace_size(&b, SGLA_BACKEND_CUDA, &need);
        const sgla_status st = sgla_backward(&b, SGLA_BACKEND_CUDA);
        CK(cudaDeviceSynchronize());
        if (pass == 3) {
            TU_CHECK(qs == SGLA_ERR_UNSUPPORTED_SHAPE && st == SGLA_ERR_UNSUPPORTED_SHAPE,
                     "workspace_limit 1: query %d, call %d (%s)", (int)qs, (int)st, sgla_last_error());
        } else {
            TU_CHECK(qs == SGLA_OK && st == SGLA_OK, "workspace_limit %zu: query %d, call %d (%s)", b.workspace_limit,
                     (int)qs, (int)st, sgla_last_error());
            if (pass == 1) { /* the blob: 8 x 2048 / 64 chunks (+ 9 slots) x 33 heads x 64 x 128 x 2 bytes; ~half goes */
                half = need;
                TU_CHECK(need <= b.workspace_limit && full - need >= (size_t)(B * T / 64 * H * K * V * 2) * 45 / 100,
                         "workspace_limit %zu: the plan takes %zu (%zu without a limit)", b.workspace_limit, need, full);
            }
            if (pass == 2)
                TU_CHECK(need <= b.workspace_limit && need <= win, "workspace_limit %zu: the plan takes %zu (two windows %zu)",
                         b.workspace_limit, need, win);
            if (pass)
                printf("backward workspace at %lldx%lldx%lld, K=%lld, V=%lld, g, h0, dht: %zu bytes, %zu under a limit of %zu\n",
                       (long long)B, (long long)T, (long long)H, (long long)K, (long long)V, full, need, b.workspace_limit);
        }
        for (int i = 0; i < 5; i++) {
            CK(cudaMemcpy(raw[i], o[i], (size_t)on[i] * sgla_dtype_size(odt[i]), cudaMemcpyDeviceToHost));
            const int64_t left = tu_count_poison(raw[i], odt[i], on[i]);
            if (pass < 3) TU_CHECK(left == 0, "workspace_limit pass %d: gradient %d has %lld unwritten", pass, i, (long long)left);
            else TU_CHECK(left == on[i], "workspace_limit 1 (refused): gradient %d written", i);
            if (pass < 3) tu_to_double(raw[i], odt[i], on[i], res[pass][i]);
        }
        if (pass == 1 || pass == 2)
            for (int i = 0; i < 5; i++) {
                const double *ref = res[pass - 1][i], *got = res[pass][i];
                const double e = tu_rel_l2(got, ref, on[i]);
                /* dk, dv, dh0: no kept state on their way; dq: the half blob changes dg alone */
                const int exact = i == 1 || i == 2 || i == 4 || (pass == 1 && i == 0);
                const double bar = pass == 1 ? 1e-2 : 1e-3;
                TU_CHECK(exact ? !memcmp(got, ref, (size_t)on[i] * 8) : e <= bar,
                         "%s: gradient %d (dq, dk, dv, dg, dh0) %s the %s plan's (rel %.2e)",
                         pass == 1 ? "half the blob" : "time windows", i, exact ? "not bit for bit" : "far from",
                         pass == 1 ? "plain" : "half blob", e);
                if (pass == 1 && i == 3) printf("dg, half the blob against every chunk's state: rel %.2e\n", e);
            }
    }
    { /* SGLA_FLAG_BWD_HALF_STATES without a limit: the half blob's plan, the same bits as pass 1 */
        b.workspace_limit = 0;
        f.flags = SGLA_FLAG_BWD_HALF_STATES;
        for (int i = 0; i < 5; i++) CK(cudaMemset(o[i], 0xff, (size_t)on[i] * sgla_dtype_size(odt[i])));
        size_t need = 0;
        const sgla_status qs = sgla_backward_workspace_size(&b, SGLA_BACKEND_CUDA, &need);
        const sgla_status st = sgla_backward(&b, SGLA_BACKEND_CUDA);
        CK(cudaDeviceSynchronize());
        TU_CHECK(qs == SGLA_OK && st == SGLA_OK && need == half, "BWD_HALF_STATES: query %d, call %d, %zu bytes (the "
                 "half blob's %zu) (%s)", (int)qs, (int)st, need, half, sgla_last_error());
        for (int i = 0; i < 5; i++) {
            CK(cudaMemcpy(raw[i], o[i], (size_t)on[i] * sgla_dtype_size(odt[i]), cudaMemcpyDeviceToHost));
            tu_to_double(raw[i], odt[i], on[i], res[2][i]);
            TU_CHECK(!memcmp(res[2][i], res[1][i], (size_t)on[i] * 8), "BWD_HALF_STATES: gradient %d (dq, dk, dv, dg, "
                     "dh0) not bit for bit the half blob's under a cap", i);
        }
        f.flags = 0;
    }
    for (int i = 0; i < 4; i++) cudaFree(in[i]), cudaFree(out[i]);
    cudaFree(g), cudaFree(dg), cudaFree(h0), cudaFree(dht), cudaFree(dh0);
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 3; j++) free(res[j][i]);
        free(raw[i]);
    }
    free(hx), free(hf);
}

/* The plain call on the GPUs users own, emulated on this one (sgla_cuda_dev_emulate): 8.9 with
 * 99 KB a block (RTX 4090, L40S) takes the mma.sync kernels with one stage at K = V = 64 and the
 * CUDA-core kernels above; 8.0 with 163 KB (A100) the mma.sync kernels up to K = V = 128 (one stage
 * there); K = V = 256 fits neither: refused with its reason. */
static void emulated_gpus(tu_rng *r, int small)
{
    static const conform_case cases[] = {
        {SGLA_BF16, CONFORM_GATE_G, CONFORM_MILD, 1, 200, 2, 128, 128, 1, 1, 0, 0},
        {SGLA_F16, CONFORM_GATE_GAMMA, CONFORM_MILD, 1, 150, 2, 64, 64, 1, 1, 0, 2},
        {SGLA_BF16, CONFORM_GATE_G, CONFORM_MIX30, 1, 130, 2, 128, 64, 1, 1, 0, 0},
        {SGLA_F32, CONFORM_GATE_G, CONFORM_MILD, 1, 100, 2, 64, 96, 1, 1, 0, 0},
    };
    const int ncases = small ? 2 : (int)(sizeof cases / sizeof cases[0]);
    for (int gi = 0; gi < GPU_NUM_EMULATED; gi++) {
        const gpu_emulated *gpu = &GPU_EMULATED[gi];
        gpu_emulate(gpu);
        for (int i = 0; i < ncases; i++) run_case(&cases[i], r);
        if (!small) {
            const conform_case big = {SGLA_BF16, CONFORM_GATE_G, CONFORM_MILD, 1, 64, 1, 256, 256, 0, 0, 0, 0};
            conform_data x;
            sgla_status st = conform_draw(&x, &big, r, SGLA_BACKEND_REF_A);
            if (st == SGLA_OK) st = conform_draw_backward(&x, r);
            if (st == SGLA_OK) {
                conform_bresult res;
                conform_check_backward(&x, SGLA_BACKEND_CUDA, &res);
                TU_CHECK(res.status == SGLA_ERR_UNSUPPORTED_SHAPE && strstr(sgla_last_error(), "neither path fits"),
                         "cc %d, K = V = 256: got %s (%s)", gpu->cc, sgla_status_string(res.status), sgla_last_error());
            }
            conform_free(&x);
        }
    }
    gpu_emulate(NULL);
}

/* B = 0 or H = 0 on device memory: the forward and the backward succeed without data pointers, write
 * no state (a canary beside them keeps its bytes), and the backward's dg_gamma [H] is zeros (B = 0) */
static void no_pairs(void)
{
    enum { H = 3, K = 64, V = 64 };
    float gg_h[H] = {-0.1f, -0.2f, -0.3f}, out[H];
    unsigned char canary[64], back[64];
    memset(canary, 0x5a, sizeof canary);
    float *gg = (float *)dalloc(sizeof gg_h), *dgg = (float *)dalloc(sizeof gg_h);
    void *state = dalloc(sizeof canary);
    CK(cudaMemcpy(gg, gg_h, sizeof gg_h, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(state, canary, sizeof canary, cudaMemcpyHostToDevice));
    for (int bh = 0; bh < 2; bh++) {
        sgla_forward_desc d;
        sgla_forward_desc_init(&d);
        d.dtype = SGLA_BF16, d.B = bh ? 2 : 0, d.T = 64, d.H = bh ? 0 : H, d.K = K, d.V = V;
        d.g_gamma = gg, d.h0 = state, d.ht = state; /* [N, H, K, V] of no element */
        sgla_status st = sgla_forward(&d, SGLA_BACKEND_CUDA);
        TU_CHECK(st == SGLA_OK, "B = %lld, H = %lld, CUDA forward: %s (%s)", (long long)d.B, (long long)d.H,
                 sgla_status_string(st), sgla_last_error());
        CK(cudaMemset(dgg, 0xff, sizeof gg_h)); /* NaN */
        sgla_backward_desc b;
        sgla_backward_desc_init(&b);
        b.fwd = &d, b.dg_gamma = dgg, b.dh0 = state;
        d.ht = NULL;
        st = sgla_backward(&b, SGLA_BACKEND_CUDA);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(out, dgg, sizeof out, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(back, state, sizeof back, cudaMemcpyDeviceToHost));
        int zeros = 1, nan = 1;
        for (int h = 0; h < H; h++) zeros &= out[h] == 0.0f, nan &= out[h] != out[h];
        TU_CHECK(st == SGLA_OK && (bh ? nan : zeros) && !memcmp(back, canary, sizeof back),
                 "B = %lld, H = %lld, CUDA backward: %s (%s), dg_gamma %s, state %s", (long long)d.B, (long long)d.H,
                 sgla_status_string(st), sgla_last_error(), zeros ? "0" : nan ? "untouched" : "other",
                 memcmp(back, canary, sizeof back) ? "written" : "untouched");
    }
    CK(cudaFree(gg));
    CK(cudaFree(dgg));
    CK(cudaFree(state));
}

int main(void)
{
    if (!sgla_backend_available(SGLA_BACKEND_CUDA)) {
        printf("test_gpu_backward: no CUDA device; skipped\n");
        return 77;
    }
    uint64_t seed = tu_seed("test_gpu_backward");
    tu_rng r;
    tu_rng_init(&r, seed);
    const int small = getenv("SGLA_GPU_SMALL") != NULL;
    const int hopper = gpu_hopper_kernels_checked("test_gpu_backward"); /* (path 3 is Hopper's alone) */
    const sgla_dtype BF = SGLA_BF16, HF = SGLA_F16, F32 = SGLA_F32;
    enum { NONE = CONFORM_GATE_NONE, GAMMA = CONFORM_GATE_GAMMA, ALPHA = CONFORM_GATE_ALPHA, G = CONFORM_GATE_G };
    enum { MILD = CONFORM_MILD, NEAR0 = CONFORM_NEAR0, NEG30 = CONFORM_NEG30, MIX30 = CONFORM_MIX30 };
    static const conform_case all[] = {
        /* dt, gate, range, B, T, H, K, V, h0, ht(dht), inplace, nseq */
        {BF, G, MILD, 2, 1, 2, 64, 64, 1, 1, 0, 0},
        {BF, G, MILD, 2, 200, 2, 128, 128, 1, 1, 0, 0},
        {BF, G, MIX30, 1, 300, 2, 64, 128, 1, 1, 0, 4},
        {BF, GAMMA, MILD, 2, 130, 3, 128, 64, 0, 1, 0, 0},
        {BF, NONE, MILD, 1, 97, 2, 256, 256, 1, 0, 0, 0},
        {BF, G, NEG30, 1, 64, 2, 64, 64, 1, 1, 0, 3},
        {HF, G, NEAR0, 1, 500, 2, 128, 128, 1, 1, 0, 0},
        {HF, ALPHA, MILD, 2, 33, 2, 64, 256, 1, 1, 0, 0},
        {F32, G, MILD, 2, 150, 2, 64, 64, 1, 1, 0, 0},
        {F32, GAMMA, NEAR0, 1, 200, 2, 32, 48, 1, 1, 0, 3},
        {F32, NONE, MILD, 1, 0, 2, 64, 64, 1, 1, 0, 0},
        /* fp32's state products on the tensor cores (3xTF32, head sizes multiples of 8): one pass of n8
         * tiles, two (K = 256; K = 200 with 25 tiles), K != V both ways; then sizes that are not
         * multiples of 8 (the CUDA-core products) */
        {F32, G, MIX30, 1, 300, 2, 128, 128, 1, 1, 0, 0},
        {F32, GAMMA, MILD, 1, 100, 2, 256, 256, 1, 1, 0, 2},
        {F32, G, MILD, 2, 70, 2, 200, 72, 1, 1, 0, 0},
        {F32, ALPHA, MILD, 1, 90, 2, 60, 36, 1, 1, 0, 0},
        /* odd head sizes: the states kernels' tiles past K (zero columns) and V (a partial n8 tile) */
        {F32, G, MIX30, 1, 75, 2, 33, 17, 1, 1, 0, 0},
        {HF, G, MILD, 1, 66, 2, 7, 5, 1, 1, 0, 2},
        /* the tensor-core path: many chunks, a partial last one, varlen, every gate */
        {BF, G, MILD, 1, 1000, 2, 128, 128, 0, 0, 0, 0},
        {BF, G, NEG30, 1, 257, 3, 128, 128, 1, 1, 0, 5},
        {BF, G, MIX30, 2, 257, 3, 128, 128, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 1, 200, 2, 64, 64, 1, 1, 0, 0},
        {BF, NONE, MILD, 2, 65, 2, 64, 128, 1, 1, 0, 0},
        {HF, G, MIX30, 1, 129, 2, 128, 64, 1, 1, 0, 0},
        {BF, GAMMA, NEAR0, 1, 640, 1, 128, 128, 1, 1, 0, 7},
        {BF, ALPHA, MILD, 1, 64, 2, 64, 64, 0, 1, 0, 0},
        {BF, G, CONFORM_RESET, 1, 400, 2, 128, 128, 1, 1, 0, 0},
        {HF, GAMMA, CONFORM_RESET, 1, 200, 2, 64, 128, 1, 1, 0, 0},
        {F32, G, CONFORM_RESET, 1, 150, 2, 32, 48, 1, 1, 0, 0},
        /* dh0 == dht in place; B > 1 with a partial last chunk, dg and more heads (the state slots) */
        {BF, G, MILD, 2, 200, 2, 128, 128, 1, 1, 1, 0},
        {BF, G, MILD, 3, 333, 6, 64, 128, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 2, 190, 5, 128, 64, 1, 1, 1, 0},
        /* the three passes (the usual path on Hopper) at K = 256 with dg and K != V both ways; fp16 with
         * dg over many sequences (the mma.sync path: fp16 with dg does not take the three passes) */
        {BF, G, MIX30, 1, 300, 2, 256, 128, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 1, 200, 2, 128, 256, 1, 1, 0, 3},
        {HF, G, MILD, 1, 2000, 2, 64, 64, 1, 1, 0, 40},
        /* gate g where the passes read b (gate_b.cu): K = V = 64 (the merged pass) over chunks with a
         * partial last one, and K = V = 256 over a packed batch */
        {BF, G, MIX30, 2, 333, 4, 64, 64, 1, 1, 0, 0},
        {BF, G, MILD, 1, 300, 2, 256, 256, 0, 1, 0, 3},
        /* dg3's head blocks (8 heads a block: H = 9, 12, 16; 40 also takes gate_b past its 32 heads),
         * the merged pass on packed batches with mild gates (X_c far from 0: the NEG30 cases above leave
         * it ~0), T = 1 with g_gamma (review, session 30) */
        {BF, G, MILD, 2, 200, 12, 64, 64, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 1, 300, 9, 128, 128, 1, 1, 0, 4},
        {BF, G, MILD, 2, 130, 16, 64, 128, 0, 1, 0, 0},
        {BF, G, MILD, 2, 200, 40, 16, 16, 1, 1, 0, 0},
        {BF, G, MILD, 1, 700, 3, 64, 64, 1, 1, 0, 6},
        {BF, G, MILD, 1, 700, 9, 128, 128, 1, 1, 0, 6},
        {BF, GAMMA, MILD, 3, 1, 9, 64, 64, 1, 1, 0, 0},
        /* fixed cuts (conform_cuts256): empty first and last sequences, lengths 1, 63, 65, starts on and
         * off chunk boundaries; the merged pass (K = V), K != V, K = 256 */
        {BF, G, MILD, 1, 256, 3, 64, 64, 1, 1, 0, 8, 0, 0, conform_cuts256},
        {BF, GAMMA, MILD, 1, 256, 9, 128, 64, 1, 1, 0, 8, 0, 0, conform_cuts256},
        {BF, G, MIX30, 1, 256, 2, 128, 128, 1, 1, 1, 8, 0, 0, conform_cuts256},
        {BF, G, MILD, 1, 256, 2, 256, 128, 1, 1, 0, 8, 0, 0, conform_cuts256},
    };
    /* every other chunk's state copy (chunk_fwd.cuh: blob_kept; sgla_cuda_backward_windows with one
     * window, the plan a workspace cap takes first): rows that end inside the 64-token block the next
     * starts in, with an even chunk count (the last one kept beside its even neighbour's slot); steep
     * gates, where an odd chunk's X_c ~ 0 is the difference of two terms the size of its u; a packed
     * batch.  Each also on the usual plan (every chunk's state) */
    static const conform_case halves[] = {
        {BF, G, MIX30, 1, 300, 2, 64, 128, 1, 1, 0, 4},
        {BF, G, MILD, 2, 100, 2, 128, 128, 1, 1, 0, 0},
        {BF, GAMMA, MILD, 3, 250, 2, 64, 64, 1, 1, 0, 0},
        {BF, G, NEG30, 1, 400, 2, 128, 128, 1, 1, 0, 0},
        {BF, G, NEG30, 2, 300, 3, 64, 64, 1, 1, 0, 0},
        {BF, G, MIX30, 1, 500, 2, 256, 256, 1, 1, 0, 0},
    };
    /* head sizes the three passes round up (the tensors in place, the states through padded
     * copies), the path forced so that a refusal fails: dh0 in place, a packed batch, K != V both
     * ways; the first again with a forced split */
    static const conform_case padded3[] = {
        {BF, G, MILD, 1, 300, 2, 96, 64, 1, 1, 0, 0},
        {BF, GAMMA, MIX30, 2, 200, 2, 48, 160, 1, 1, 1, 0},
        {BF, G, MILD, 1, 500, 2, 80, 112, 1, 1, 0, 4},
        {HF, NONE, MILD, 1, 130, 3, 200, 32, 1, 1, 0, 0},
        {BF, G, MILD, 1, 260, 2, 200, 136, 1, 1, 0, 0}, /* the K = 256 row with dg: q, k's padded copies */
    };
    /* grids whose dg3 blocks loop over chunks (N ceil(H / 8) chunks > 4096), on the three passes forced
     * (a refusal fails): one head, small K and V (rounded up to 64), so that the fp64 reference is cheap */
    static const conform_case dg3_loops[] = {
        {BF, G, MILD, 300, 1000, 1, 16, 16, 0, 0, 0, 0},
        {BF, GAMMA, MILD, 1100, 300, 1, 16, 32, 0, 0, 0, 0},
    };
    /* the mma.sync tensor-core path (the usual one before Hopper), forced on this device */
    static const conform_case mma[] = {
        {BF, G, MILD, 1, 1000, 2, 128, 128, 0, 0, 0, 0},
        {BF, G, NEG30, 1, 257, 3, 128, 128, 1, 1, 0, 5},
        {HF, GAMMA, MILD, 2, 190, 5, 128, 64, 1, 1, 1, 0},
        {BF, G, MIX30, 1, 300, 2, 64, 128, 1, 1, 0, 4},
    };
    /* the CUDA-core path on shapes the tensor cores take by default */
    static const conform_case cores[] = {
        {BF, G, MILD, 1, 200, 2, 128, 128, 1, 1, 0, 0},
        {HF, GAMMA, MIX30, 1, 150, 2, 64, 128, 1, 1, 0, 3},
        {BF, G, MIX30, 1, 170, 3, 64, 64, 1, 1, 0, 0}, /* the states staged in shared memory, 16-bit rows */
        {BF, G, MILD, 1, 100, 2, 96, 48, 1, 1, 0, 0},    /* 16-bit rows of run-time heads: partial column */
        {HF, G, MIX30, 1, 77, 1, 200, 136, 1, 1, 0, 0},  /* steps of both tensors, up to 7 a row */
    };
    /* the sequence split of the tensor-core path, forced (segments of whole chunks, the last one
     * partial; dg, dg_gamma, h0, dht, dh0 in place, B > 1), and chosen by itself (one head, 2048 tokens) */
    static const conform_case splits[] = {
        {BF, G, MILD, 1, 1000, 2, 128, 128, 1, 1, 0, 0},
        {BF, G, MIX30, 2, 700, 3, 64, 128, 1, 1, 0, 0},
        {BF, G, MILD, 1, 900, 2, 64, 64, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 1, 520, 2, 128, 64, 1, 1, 1, 0},
        {BF, GAMMA, NEAR0, 1, 900, 1, 64, 64, 0, 0, 0, 0},
        {BF, G, CONFORM_RESET, 1, 777, 2, 128, 128, 1, 1, 0, 0},
        {BF, NONE, MILD, 1, 300, 2, 64, 64, 1, 1, 0, 0},
    };
    static const conform_case split_auto[] = {
        {BF, G, MILD, 1, 2048, 1, 128, 128, 1, 1, 0, 0},
        {HF, GAMMA, MIX30, 1, 3000, 2, 64, 64, 1, 1, 0, 0},
    };
    static const conform_case smalls[] = {
        {BF, G, MILD, 1, 70, 2, 64, 64, 1, 1, 0, 0},
        {HF, GAMMA, MILD, 1, 40, 1, 128, 64, 1, 1, 0, 3},
        {F32, G, MIX30, 1, 33, 1, 32, 48, 1, 1, 0, 0},
        {F32, G, MILD, 1, 40, 1, 136, 40, 1, 1, 0, 0},   /* two passes of the tensor-core state products */
        {F32, GAMMA, MILD, 1, 45, 1, 20, 12, 1, 1, 0, 0}, /* the CUDA-core state products */
        {F32, G, MILD, 1, 40, 1, 33, 17, 1, 1, 0, 2},     /* odd K and V in the states kernels */
        {F32, G, MILD, 1, 70, 1, 64, 64, 1, 1, 0, 0},     /* fp32's constant-head instances: the gradient */
        {F32, G, MILD, 1, 70, 1, 128, 128, 1, 1, 0, 0}, /* kernel's at 64 (staged) and 128, the states' at 64 */
        {BF, GAMMA, MILD, 1, 130, 9, 64, 64, 1, 1, 0, 3}, /* dg3's dg_gamma and two head blocks */
    };
    const conform_case *list = small ? smalls : all;
    const int n = small ? (int)(sizeof smalls / sizeof smalls[0]) : (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n; i++) run_case(&list[i], &r);
    if (small) {
        /* the CUDA-core path's instances for 16-bit rows: constant heads (K = V = 64 staged, 128 not),
         * then run-time ones (K != V, partial column steps) */
        static const conform_case cores_small[] = {
            {BF, G, MILD, 1, 70, 1, 64, 64, 1, 1, 0, 0},
            {HF, GAMMA, MILD, 1, 70, 1, 128, 128, 1, 1, 0, 0},
            {BF, G, MILD, 1, 45, 1, 96, 48, 1, 1, 0, 0},
            {HF, GAMMA, MILD, 1, 40, 1, 200, 136, 1, 1, 0, 0},
        };
        conform_bwd_path = 1;
        for (size_t i = 0; i < sizeof cores_small / sizeof cores_small[0]; i++) run_case(&cores_small[i], &r);
        conform_bwd_path = 0;
        /* the split's kernels under the sanitizers too, on the usual path and the mma.sync one */
        static const conform_case split_small = {BF, G, MILD, 1, 300, 1, 64, 64, 1, 1, 0, 0};
        conform_bwd_nseg = 3;
        run_case(&split_small, &r);
        conform_bwd_path = 2;
        run_case(&split_small, &r);
        conform_bwd_path = 4;
        run_case(&split_small, &r);
        conform_bwd_path = 2;
        conform_bwd_nseg = 0;
        run_case(&smalls[1], &r);
        conform_bwd_path = 4;
        run_case(&smalls[1], &r);
        if (hopper) {
            conform_bwd_path = 3; /* rounded-up head sizes on the three passes, a packed batch */
            static const conform_case padded_small = {BF, G, MILD, 1, 100, 1, 96, 48, 1, 1, 0, 2};
            run_case(&padded_small, &r);
            conform_bwd_path = 0;
            /* time windows: the merged pass, and the dk pass with the dv pass apart */
            static const conform_case win_small = {BF, GAMMA, MILD, 2, 200, 1, 64, 128, 1, 1, 0, 0};
            conform_bwd_tseg = 3;
            run_case(&split_small, &r);
            run_case(&win_small, &r);
            conform_bwd_tseg = 0;
            static const conform_case grp_small = {BF, GAMMA, MILD, 3, 70, 136, 64, 64, 1, 1, 0, 0}; /* batch groups */
            conform_bwd_groups = 2;
            run_case(&grp_small, &r);
            conform_bwd_groups = 0;
            conform_bwd_tseg = 1; /* half the blob */
            run_case(&halves[0], &r);
            conform_bwd_tseg = 0;
        }
    }
    if (!small) {
        for (int half = 0; half <= (hopper != 0); half++) { /* the usual plan, then (Hopper) one window */
            conform_bwd_tseg = half;
            for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++) run_case(&halves[i], &r);
        }
        conform_bwd_tseg = 0;
        conform_bwd_path = 1;
        for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++) run_case(&cores[i], &r);
        conform_bwd_path = 2;
        for (size_t i = 0; i < sizeof mma / sizeof mma[0]; i++) run_case(&mma[i], &r);
        conform_bwd_path = 4; /* one stage of tiles, as on smaller blocks */
        for (size_t i = 0; i < sizeof mma / sizeof mma[0]; i++) run_case(&mma[i], &r);
        conform_bwd_path = 0;
        for (int nseg = 2; nseg <= 5; nseg += 3) {
            conform_bwd_nseg = nseg;
            for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) run_case(&splits[i], &r);
            conform_bwd_path = nseg == 2 ? 2 : 4;
            for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) run_case(&splits[i], &r);
            conform_bwd_path = 0;
        }
        {   /* 20 segments: more than the 8 the scan loads at once (both scans: states and their gradients) */
            static const conform_case many = {BF, G, MIX30, 1, 1250, 2, 64, 64, 1, 1, 0, 0};
            conform_bwd_nseg = 20;
            run_case(&many, &r);
            conform_bwd_path = 2;
            run_case(&many, &r);
            conform_bwd_path = 0;
        }
        if (!hopper) {
            printf("skipped: the three passes forced, and K = 256 split on them (no sm_90a kernels in this build "
                   "for this device)\n");
        } else { /* K = 256 with a split forced on the usual path: the three passes take it (their fallback
                  * has no split at K = 256 and refused it before session 22) */
            static const conform_case k256[] = {
                {BF, G, MIX30, 1, 1000, 2, 256, 256, 1, 1, 0, 0},
                {BF, GAMMA, MILD, 1, 700, 1, 256, 256, 1, 1, 1, 0},
            };
            conform_bwd_nseg = 3;
            for (size_t i = 0; i < sizeof k256 / sizeof k256[0]; i++) run_case(&k256[i], &r);
        }
        conform_bwd_nseg = 0;
        if (hopper) {
            conform_bwd_path = 3;
            for (size_t i = 0; i < sizeof padded3 / sizeof padded3[0]; i++) run_case(&padded3[i], &r);
            for (size_t i = 0; i < sizeof dg3_loops / sizeof dg3_loops[0]; i++) run_case(&dg3_loops[i], &r);
            conform_bwd_nseg = 3;
            run_case(&padded3[0], &r);
            conform_bwd_nseg = 0;
            conform_bwd_path = 0;
            /* the chunk states a time window at a time: both gates' gradients, h0, dht, dh0 in place, B > 1
             * with a partial last chunk, the merged pass (K = V <= 128) and the dk pass with the dv pass
             * apart (K != V, K = 256), windows of one chunk (7 asked of 300 tokens: 5 of 64), resets, and
             * windows split along time */
            static const conform_case windows[] = {
                {BF, G, MILD, 2, 300, 3, 128, 128, 1, 1, 0, 0},
                {BF, GAMMA, MIX30, 2, 200, 2, 64, 64, 1, 1, 1, 0},
                {BF, G, MIX30, 1, 700, 2, 64, 128, 1, 1, 0, 0},
                {BF, GAMMA, MILD, 3, 333, 2, 128, 64, 0, 1, 0, 0},
                {BF, G, MILD, 1, 500, 2, 256, 256, 1, 1, 0, 0},
                {BF, G, CONFORM_RESET, 1, 400, 2, 128, 128, 1, 1, 0, 0},
                /* few pairs, long sequences: the passes split along time, and so each window (segments of
                 * 256 tokens at 2 windows of 2048; 7 asked: windows of whole segments, fewer, the last shorter) */
                {BF, G, MILD, 1, 2048, 2, 128, 128, 1, 1, 0, 0},
                {BF, GAMMA, MIX30, 1, 1500, 2, 64, 128, 1, 1, 0, 0},
                {BF, G, MILD, 1, 1100, 1, 256, 256, 1, 1, 1, 0},
            };
            for (int t = 2; t <= 7; t += 5) {
                conform_bwd_tseg = t;
                for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) run_case(&windows[i], &r);
            }
            conform_bwd_tseg = 0;
            /* batch groups (each at least twice the SMs' (sequence, head) pairs): dg_gamma summed over the
             * groups' chunk sums, a smaller last group (5 rows in 2 and in 3), dh0 in place, K != V */
            static const conform_case groups[] = {
                {BF, GAMMA, MILD, 5, 130, 136, 64, 64, 1, 1, 0, 0},
                {BF, G, MIX30, 5, 200, 136, 64, 128, 1, 1, 1, 0},
            };
            for (int gr = 2; gr <= 3; gr++) {
                conform_bwd_groups = gr;
                for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) run_case(&groups[i], &r);
            }
            conform_bwd_groups = 0;
            {   /* where windows cannot serve: refused (a packed batch; no gate gradient) */
                static const conform_case nowin[] = {
                    {BF, G, MILD, 1, 300, 2, 64, 64, 1, 1, 0, 3},
                    {BF, NONE, MILD, 1, 300, 2, 64, 64, 1, 1, 0, 0},
                };
                for (size_t i = 0; i < sizeof nowin / sizeof nowin[0]; i++) {
                    conform_data x;
                    sgla_status st = conform_draw(&x, &nowin[i], &r, SGLA_BACKEND_REF_A);
                    if (st == SGLA_OK) st = conform_draw_backward(&x, &r);
                    if (st == SGLA_OK) {
                        conform_bresult res;
                        conform_bwd_tseg = 2;
                        conform_check_backward(&x, SGLA_BACKEND_CUDA, &res);
                        conform_bwd_tseg = 0;
                        TU_CHECK(res.status == SGLA_ERR_INVALID_ARGUMENT, "time windows on case %zu: status %d, want a refusal",
                                 i, (int)res.status);
                    }
                    conform_free(&x);
                }
            }
            workspace_limit(&r);
        }
        for (size_t i = 0; i < sizeof split_auto / sizeof split_auto[0]; i++) run_case(&split_auto[i], &r);
        repeats_workspace_graph(&r, 0);
        repeats_workspace_graph(&r, 1);
    }
    emulated_gpus(&r, small);
    no_pairs();
    return tu_finish("test_gpu_backward");
}
