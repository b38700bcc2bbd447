#!/usr/bin/env python3
"""sgla's CUDA forward against flash-linear-attention's chunk_simple_gla.

Same shapes, same inputs [B, T, H, K] and [B, T, H, V] (bf16, or fp32 with
@f32; packed batches with cu_seqlens: see parse_shape), both gate forms
(g_gamma and data-dependent g); `--shapes issue14` runs issue 14's table.  Both are warmed first (fla's Triton kernels
compile on first use), then timed in interleaved rounds (sgla, fla, sgla, fla,
...: fla's times move by up to 30% between calls, so one block each would
compare two moments), each round a triton.testing.do_bench median (it clears
the L2 cache before every timed run); the table gives the median over rounds.
Checks the two outputs agree (rel L2 between them, and each against an fp64
chunked reference on the last (batch, head) slice), and prints the HBM floor
(q, k, v read and o written once at 4.25 TB/s).

Also measures the two ceilings first: a large device-to-device copy and a bf16
matmul through torch.

Our kernel is called through the python package (python/sgla, ctypes over
libsgla.so; SGLA_LIBRARY points at the build).  Usage:
    SGLA_LIBRARY=build-cuda/libsgla.so python3 bench/fla_compare.py [--shapes 8x4096x16x128,...]
"""
import argparse
import math
import os
import statistics
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import sgla  # noqa: E402

HBM = 4.25e12
DEFAULT_SHAPES = "8x4096x16x128,4x8192x32x64,2x16384x8x256,64x1024x16x128,1x32768x16x128"
# issue 14's table: K = 64 with gate g, one long sequence, packed batches, K != V, D = 256, K = 32 / 96, fp32 inputs
ISSUE14_SHAPES = ("16x2048x32x128,4x8192x32x64,1x65536x8x128,1x65536x16x128v64,0x0x16x128u1000_1_4096,4x8192x16x128x256,"
                  "2x16384x8x256,8x4096x16x32,8x4096x16x96,8x4096x16x128@f32,64x1024x16x128@f32")


def parse_shape(sh):
    """B x T x H x K [x V] [vN | uN_A_B] [@f32]: vN packs the B = 1 row into N sequences of random
    lengths (cut points from a fixed seed), uN_A_B is N sequences of lengths uniform in [A, B] (B and T
    come from them: write 0x0); @f32 takes fp32 inputs (else bf16).  Returns (B, T, H, K, V, dtype, lens)."""
    name = sh
    dtype = "bf16"
    if "@" in sh:
        sh, dtype = sh.split("@")
    lens = None
    for tag in ("v", "u"):
        if tag in sh:
            sh, spec = sh.split(tag)
            lens = spec
            kind = tag
    dims = [int(x) for x in sh.split("x")]
    B, T, H, K = dims[:4]
    V = dims[4] if len(dims) > 4 else K
    if lens is not None:
        import random
        rnd = random.Random(20261130)
        if kind == "v":
            n = int(lens)
            cuts = sorted(rnd.sample(range(1, T), n - 1))
            lens = [b - a for a, b in zip([0] + cuts, cuts + [T])]
        else:
            n, a, b = (int(x) for x in lens.split("_"))
            lens = [rnd.randint(a, b) for _ in range(n)]
        B, T = 1, sum(lens)
    assert dtype in ("bf16", "f32"), f"{name}: dtype {dtype}"
    return B, T, H, K, V, dtype, lens


def ceilings():
    n = 1 << 30  # 1 GiB each way
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.random_(0, 255)
    ms = triton.testing.do_bench(lambda: b.copy_(a), warmup=50, rep=200, return_mode="median")
    copy_tbs = 2 * n / (ms * 1e-3) / 1e12
    del a, b
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    ms = triton.testing.do_bench(lambda: x @ y, warmup=50, rep=300, return_mode="median")
    tflops = 2 * m ** 3 / (ms * 1e-3) / 1e12
    del x, y
    torch.cuda.empty_cache()
    return copy_tbs, tflops


def ref_slice(q, k, v, g, gamma, scale, C=64):
    """fp64 chunked reference for one [T, D] slice (g: [T] natural-log or None)."""
    q, k, v = q.double(), k.double(), v.double()
    T, K = q.shape
    V = v.shape[1]
    S = torch.zeros(K, V, dtype=torch.float64, device=q.device)
    o = torch.empty(T, V, dtype=torch.float64, device=q.device)
    for s in range(0, T, C):
        e = min(T, s + C)
        n = e - s
        if g is not None:
            b = torch.cumsum(g[s:e].double(), 0)
        elif gamma is not None:
            b = gamma * torch.arange(1, n + 1, dtype=torch.float64, device=q.device)
        else:
            b = torch.zeros(n, dtype=torch.float64, device=q.device)
        diff = b[:, None] - b[None, :]
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool, device=q.device))
        gam = torch.where(mask, torch.exp(torch.where(mask, diff, torch.zeros_like(diff))), torch.zeros_like(diff))
        qc, kc, vc = q[s:e], k[s:e], v[s:e]
        o[s:e] = scale * ((qc * torch.exp(b)[:, None]) @ S + ((qc @ kc.T) * gam) @ vc)
        S = math.exp(b[-1].item()) * S + (kc * torch.exp(b[-1] - b)[:, None]).T @ vc
    return o


def ref_bwd_slice(q, k, v, do, g, gamma, scale, C=64):
    """fp64 gradients (dq, dk, dv, dg) of <o, do> for one [T, D] slice, chunked like ref-b."""
    q, k, v, do = q.double(), k.double(), v.double(), do.double()
    T, K = q.shape
    V = v.shape[1]
    if g is not None:
        gl = g.double()
    elif gamma is not None:
        gl = torch.full((T,), gamma, dtype=torch.float64, device=q.device)
    else:
        gl = torch.zeros(T, dtype=torch.float64, device=q.device)
    starts = list(range(0, T, C))
    S = torch.zeros(K, V, dtype=torch.float64, device=q.device)
    states = []
    for s in starts:
        e = min(T, s + C)
        b = torch.cumsum(gl[s:e], 0)
        states.append(S)
        S = torch.exp(b[-1]) * S + (k[s:e] * torch.exp(b[-1] - b)[:, None]).T @ v[s:e]
    dq, dk, dv, dg = (torch.empty_like(x) for x in (q, k, v, gl))
    dS = torch.zeros(K, V, dtype=torch.float64, device=q.device)
    for ci in range(len(starts) - 1, -1, -1):
        s = starts[ci]
        e = min(T, s + C)
        n = e - s
        b = torch.cumsum(gl[s:e], 0)
        S = states[ci]
        qc, kc, vc, dc = q[s:e], k[s:e], v[s:e], do[s:e]
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool, device=q.device))
        diff = torch.where(mask, b[:, None] - b[None, :], torch.zeros_like(b[:, None] - b[None, :]))
        G = torch.where(mask, scale * torch.exp(diff), torch.zeros_like(diff))
        P, dP = qc @ kc.T, torch.where(mask, dc @ vc.T, torch.zeros(n, n, dtype=torch.float64, device=q.device))
        A, dA = G * P, G * dP
        rs, w = scale * torch.exp(b), torch.exp(b[-1] - b)
        dqs, dks = rs[:, None] * (dc @ S.T), w[:, None] * (vc @ dS.T)
        dq[s:e] = dqs + dA @ kc
        dk[s:e] = dks + dA.T @ qc
        dv[s:e] = w[:, None] * (kc @ dS) + A.T @ dc
        ee, uu = (qc * dqs).sum(1), (kc * dks).sum(1)
        M = torch.tril(A * dP, -1)
        c4 = torch.stack([M[r:, :r].sum() for r in range(n)])
        dg[s:e] = torch.exp(b[-1]) * (dS * S).sum() + torch.cumsum(uu, 0) - uu + torch.flip(torch.cumsum(torch.flip(ee, [0]), 0), [0]) + c4
        dS = torch.exp(b[-1]) * dS + (qc * rs[:, None]).T @ dc
    return dq, dk, dv, dg


def rel(a, b):
    """||a - b|| / ||b|| in fp64, over slices of the first dimension: the whole of a large output in fp64
    (1000 packed sequences, 2M tokens: 34 GB) did not fit an 80 GB GPU beside the inputs"""
    a, b = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    num = den = 0.0
    for i in range(0, a.shape[0], 1 << 20):
        x, y = a[i:i + (1 << 20)].double(), b[i:i + (1 << 20)].double()
        num += float(((x - y) ** 2).sum())
        den += float((y ** 2).sum())
    return math.sqrt(num / den) if den > 0 else float("nan")


def time_backward(sh, gate, q, k, v, g, gg, scale, fla_chunk, args, bq, hq):
    """fwd + bwd and fwd alone of sgla and fla in interleaved rounds (medians; bwd = the
    difference), and every gradient's relative RMS against fp64 on the last slice."""
    do = torch.randn(q.shape[0], q.shape[1], q.shape[2], v.shape[3], device=q.device, dtype=q.dtype)
    def leaf(x):
        return x.detach().clone().requires_grad_() if x is not None else None
    qs, ks, vs, gs, ggs = leaf(q), leaf(k), leaf(v), leaf(g), leaf(gg)
    kw = lambda: dict(g=gs, g_gamma=ggs, scale=scale)  # noqa: E731
    def fresh():  # new .grad tensors each time: no accumulation kernels in the timing (both sides)
        for x in (qs, ks, vs, gs, ggs):
            if x is not None:
                x.grad = None
    def fb_s(gamma=None, tf32=False):  # gamma: g_gamma as given, a constant (no dg_gamma); else the leaf
        fresh()
        o, _ = sgla.chunk_simple_gla(qs, ks, vs, allow_tf32=tf32,
                                     **(kw() if gamma is None else dict(kw(), g_gamma=gamma)))
        o.backward(do)
    def fb_f():
        fresh()
        o, _ = fla_chunk(qs, ks, vs, **kw())
        o.backward(do)
    def f_s(tf32=False):
        with torch.no_grad():
            sgla.chunk_simple_gla(qs, ks, vs, allow_tf32=tf32, **kw())
    def f_f():
        with torch.no_grad():
            fla_chunk(qs, ks, vs, **kw())
    if gate == "g" and fla_chunk is not None:  # fla issue 640: timing only, its gated backward is wrong on Triton 3.6
        import fla.ops.common.chunk_o as fco
        fco.TRITON_ABOVE_3_7_1 = True
    res = {}
    fns = (("sfb", fb_s), ("ffb", fb_f), ("sf", f_s), ("ff", f_f))
    if gg is not None:  # sgla with g_gamma a constant: what fla's g_gamma backward computes
        fns += (("sfb0", lambda: fb_s(gg)),)
    tf = q.dtype == torch.float32  # fp32: sgla in TF32 alone too (allow_tf32, fla's own mode), fwd and fwd + bwd
    fb_sT = lambda: fb_s(tf32=True)  # noqa: E731
    if tf:
        fns += (("sfbT", fb_sT), ("sfT", lambda: f_s(tf32=True)))
    cap = args.ws_caps.get(sh, 0)
    def fb_sL():  # sgla under the workspace cap (--ws-limit)
        old = sgla.set_backward_workspace_limit(cap << 20)
        try:
            fb_s()
        finally:
            sgla.set_backward_workspace_limit(old)
    if cap:
        fns += (("sfbL", fb_sL),)
    for name, fn in fns:
        if fla_chunk is None and name[0] == "f":
            res[name] = None  # not timed
            continue
        try:
            fn()
            torch.cuda.synchronize()
            res[name] = []
        except Exception as e:  # noqa: BLE001
            print(f"{name} failed on {sh} {gate}: {e!r}")
            res[name] = None
    for _ in range(args.rounds):
        for name, fn in fns:
            if res.get(name) is None:
                continue
            res[name].append(triton.testing.do_bench(fn, warmup=5, rep=args.rep, return_mode="median"))
    med = {n: (statistics.median(t) if t else float("nan")) for n, t in res.items() if t is not None}
    med = {n: med.get(n, float("nan")) for n in ("sfb", "ffb", "sf", "ff", "sfb0", "sfbL", "sfbT", "sfT")}
    # accuracy on the last (batch, head) slice
    r = ref_bwd_slice(q[bq, :, hq], k[bq, :, hq], v[bq, :, hq], do[bq, :, hq], None if g is None else g[bq, :, hq],
                      None if gg is None else gg[hq].item(), scale)
    def errs(fn):
        for x in (qs, ks, vs, gs):
            if x is not None:
                x.grad = None
        try:
            fn()
        except Exception:  # noqa: BLE001
            return [float("nan")] * 4
        got = [qs.grad[bq, :, hq], ks.grad[bq, :, hq], vs.grad[bq, :, hq], gs.grad[bq, :, hq] if gs is not None else None]
        return [rel(x, y) if x is not None else float("nan") for x, y in zip(got, r)]
    es = errs(fb_s)
    ef = errs(fb_f) if fla_chunk is not None else [float("nan")] * 4
    eT = errs(fb_sT) if tf else [float("nan")] * 4
    def peak(fn):  # MB allocated at the peak of one fwd + bwd beyond what was before (o and the gradients too)
        fresh()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        try:
            fn()
        except Exception:  # noqa: BLE001
            return float("nan")
        torch.cuda.synchronize()
        return (torch.cuda.max_memory_allocated() - base) / 1e6
    mem = (peak(fb_s), peak(fb_f) if fla_chunk is not None else float("nan"),
           peak(fb_sL) if cap else float("nan"))
    row = (sh, gate, med["sfb"], med["ffb"], med["sfb"] - med["sf"], med["ffb"] - med["ff"], es, ef,
           med["sfb0"] - med["sf"], mem, med["sfbL"] - med["sf"], med["sfbT"] - med["sfT"], eT, med["sfT"])
    print("bwd " + " ".join(str(x) for x in row), flush=True)
    return row


def warm(shapes, args):
    """Compile fla's kernels for every (shape, gate) in parallel processes (no timing there: --rounds 0)."""
    import subprocess
    import tempfile
    import time
    t0 = time.time()
    logs = tempfile.mkdtemp(prefix="fla_warm_")
    todo = [(sh, gate) for sh in shapes for gate in args.gates.split(",")]
    running, failed = [], []
    while todo or running:
        while todo and len(running) < args.warm_jobs:
            sh, gate = todo.pop(0)
            cmd = [sys.executable, os.path.abspath(__file__), "--shapes", sh, "--gates", gate, "--rounds", "0",
                   "--no-ceilings", "--bwd-shapes", sh if sh in args.bwd_shapes.split(",") else ""]
            log = os.path.join(logs, f"{sh}_{gate}.log")
            with open(log, "w") as f:
                running.append((f"{sh} {gate}", log, subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)))
        for job in list(running):
            name, log, p = job
            if p.poll() is not None:
                running.remove(job)
                if p.returncode != 0:  # an exception, or sgla off the reference (the timed run says which)
                    with open(log) as f:
                        last = (f.read().strip().splitlines() or [""])[-1]
                    failed.append(f"{name} rc={p.returncode}: {last[:200]}")
        time.sleep(0.5)
    print(f"warmed fla's kernels for {len(shapes)} shape(s) in up to {args.warm_jobs} processes: {time.time() - t0:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--gates", default="gamma,g")
    ap.add_argument("--rep", type=int, default=60, help="do_bench rep of one round (ms)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds (the table gives their median); 0 compiles and checks, times nothing")
    ap.add_argument("--warm-jobs", type=int, default=0,
                    help="first compile fla's kernels in this many processes at once, one (shape, gate) each (Triton's"
                         " file cache keeps them for the timed run; its compiles are serial within a process)")
    ap.add_argument("--no-ceilings", action="store_true")
    ap.add_argument("--ws-limit", default="0",
                    help="also time sgla's backward (and its peak memory) under this workspace cap, MiB "
                         "(sgla.set_backward_workspace_limit); a list gives one cap a --bwd-shapes entry")
    ap.add_argument("--bwd-shapes", default="8x4096x16x128,4x8192x32x64",
                    help="shapes that also time forward + backward and check the gradients ('' for none)")
    args = ap.parse_args()
    caps = [int(x) for x in args.ws_limit.split(",")]
    bwd_list = args.bwd_shapes.split(",")
    args.ws_caps = {sh: caps[min(i, len(caps) - 1)] for i, sh in enumerate(bwd_list)}

    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}; torch {torch.__version__}; triton {triton.__version__}; sgla {sgla.__version__}")
    if not args.no_ceilings:
        copy_tbs, tflops = ceilings()
        print(f"ceilings: device-to-device copy {copy_tbs:.2f} TB/s (read+write); bf16 matmul 8192^3 {tflops:.0f} TFLOP/s")
    try:
        from fla.ops.simple_gla import chunk_simple_gla as fla_chunk
        import fla
        print(f"fla {fla.__version__}: fla.ops.simple_gla.chunk_simple_gla")
    except Exception as e:  # noqa: BLE001
        fla_chunk = None
        print(f"fla unavailable: {e!r}")

    rows, bwd_rows = [], []
    shapes = ISSUE14_SHAPES if args.shapes == "issue14" else args.shapes
    if args.warm_jobs > 0:
        if fla_chunk is not None:
            warm(shapes.split(","), args)
        if args.rounds == 0:
            return 0  # the cache is all that was asked for
    for sh in shapes.split(","):
        B, T, H, K, V, dts, lens = parse_shape(sh)
        tdt = torch.float32 if dts == "f32" else torch.bfloat16
        q = torch.randn(B, T, H, K, device="cuda", dtype=tdt)
        k = torch.randn(B, T, H, K, device="cuda", dtype=tdt)
        v = torch.randn(B, T, H, V, device="cuda", dtype=tdt)
        cu = None
        if lens is not None:
            cu = torch.tensor([0] + lens, device="cuda").cumsum(0)
        scale = K ** -0.5
        nbytes = (2 * K + 2 * V) * B * T * H * (4 if dts == "f32" else 2)
        floor_ms = nbytes / HBM * 1e3
        for gate in args.gates.split(","):
            g = gg = None
            if gate == "g":
                g = -0.2 * torch.rand(B, T, H, device="cuda", dtype=torch.float32)
            elif gate == "gamma":
                gg = torch.tensor([math.log(1 - 2.0 ** -(5 + h % 8)) for h in range(H)], device="cuda",
                                  dtype=torch.float32)
            kw = dict(g=g, g_gamma=gg, scale=scale)
            if cu is not None:
                kw["cu_seqlens"] = cu
            # fp64 reference on the last slice (the last sequence of a packed row)
            bq, hq = B - 1, H - 1
            t0 = int(cu[-2]) if cu is not None else 0
            r = ref_slice(q[bq, t0:, hq], k[bq, t0:, hq], v[bq, t0:, hq], None if g is None else g[bq, t0:, hq],
                          None if gg is None else gg[hq].item(), scale)
            o_s = o_f = None
            rel_s = rel_f = float("nan")
            try:
                o_s, _ = sgla.chunk_simple_gla(q, k, v, **kw)
                torch.cuda.synchronize()
                rel_s = rel(o_s[bq, t0:, hq], r)
            except Exception as e:  # noqa: BLE001
                print(f"sgla failed on {sh} {gate}: {e!r}")
            if fla_chunk is not None:
                try:
                    o_f, _ = fla_chunk(q, k, v, **kw)  # compiles fla's kernels for this shape
                    torch.cuda.synchronize()
                    rel_f = rel(o_f[bq, t0:, hq], r)
                except Exception as e:  # noqa: BLE001
                    print(f"fla failed on {sh} {gate}: {e!r}")
            t_s, t_f = [], []
            for _ in range(args.rounds):
                if o_s is not None:
                    t_s.append(triton.testing.do_bench(lambda: sgla.chunk_simple_gla(q, k, v, **kw), warmup=10,
                                                       rep=args.rep, return_mode="median"))
                if o_f is not None:
                    t_f.append(triton.testing.do_bench(lambda: fla_chunk(q, k, v, **kw), warmup=10, rep=args.rep,
                                                       return_mode="median"))
            ms_s = statistics.median(t_s) if t_s else float("nan")
            ms_f = statistics.median(t_f) if t_f else float("nan")
            rel_sf = rel(o_s, o_f) if o_f is not None and o_s is not None else float("nan")
            spread = (max(t_f) / min(t_f) - 1) if len(t_f) > 1 else float("nan")
            row = (sh, gate, ms_s, ms_f, floor_ms, ms_s / floor_ms, ms_f / ms_s, rel_s, rel_f, rel_sf, spread)
            rows.append(row)
            print("row " + " ".join(str(x) for x in row), flush=True)
            del o_s, o_f
            if sh in args.bwd_shapes.split(",") and cu is None:  # "...@f32" names an fp32 row
                bwd_rows.append(time_backward(sh, gate, q, k, v, g, gg, scale, fla_chunk, args, bq, hq))
        del q, k, v
        torch.cuda.empty_cache()

    print()
    print(f"{'shape':<16} {'gate':<6} {'sgla ms':>8} {'fla ms':>8} {'floor':>7} {'sgla/fl':>7}"
          f" {'fla/sgla':>8}  {'relL2 sgla':>10} {'relL2 fla':>10} {'sgla~fla':>9} {'fla spread':>10}")
    for (sh, gate, ms_s, ms_f, fl, rs, rf, a, b_, c, sp) in rows:
        print(f"{sh:<16} {gate:<6} {ms_s:8.4f} {ms_f:8.4f} {fl:7.4f} {rs:7.2f} {rf:8.2f}  {a:10.2e}"
              f" {b_:10.2e} {c:9.2e} {sp:10.1%}")
    if bwd_rows:
        print()
        print(f"{'BxTxHxD':<16} {'gate':<6} {'sgla f+b':>9} {'fla f+b':>9} {'sgla bwd':>9} {'fla bwd':>9}"
              f" {'fla/sgla':>8} {'bwd, fixed':>10} {'MB sgla':>8} {'MB fla':>8} {'bwd cap':>8} {'MB cap':>7}"
              f"  relRMS sgla (dq dk dv dg) | fla (dq dk dv dg)")
        fmt = lambda e: " ".join(f"{x:.1e}" for x in e)  # noqa: E731
        for (sh, gate, sfb, ffb, sb, fb, es, ef, sb0, mem, sbL, _sbT, _eT, _sfT) in bwd_rows:
            print(f"{sh:<16} {gate:<6} {sfb:9.4f} {ffb:9.4f} {sb:9.4f} {fb:9.4f} {fb / sb:8.2f} {sb0:10.4f}"
                  f" {mem[0]:8.0f} {mem[1]:8.0f} {sbL:8.4f} {mem[2]:7.0f}  {fmt(es)} | {fmt(ef)}")
        tf_rows = [r for r in bwd_rows if r[11] == r[11]]  # (nan unless fp32)
        if tf_rows:
            print("fp32 with allow_tf32 (sgla's products in TF32 alone, fla's mode):")
            print(f"{'BxTxHxD':<16} {'gate':<6} {'sgla fwd':>9} {'sgla bwd':>9} {'fla bwd':>9} {'fla/sgla':>8}"
                  f"  relRMS sgla TF32 (dq dk dv dg)")
            for (sh, gate, _sfb, _ffb, _sb, fb, _es, _ef, _sb0, _mem, _sbL, sbT, eT, sfT) in tf_rows:
                print(f"{sh:<16} {gate:<6} {sfT:9.4f} {sbT:9.4f} {fb:9.4f} {fb / sbT:8.2f}  {fmt(eT)}")
        print("bwd, fixed: sgla's backward with g_gamma a constant (no dg_gamma; fla never returns one)")
        print("MB: peak memory of one fwd + bwd beyond what was allocated before it (o and the gradients included)")
        if any(args.ws_caps.values()):
            print("bwd cap, MB cap: sgla's backward and its peak under a workspace cap (MiB: "
                  + ", ".join(f"{k} {v}" for k, v in args.ws_caps.items()) + ")")
    bad = [r for r in rows if not (r[7] <= (1e-5 if r[0].endswith("@f32") else 8e-3))]
    if bad:
        print(f"FAIL: {len(bad)} sgla outputs off the fp64 reference by more than 8e-3")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
