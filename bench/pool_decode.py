"""Serving steps on sgla's state pool (issue 12's targets), against
flash-linear-attention's fused_recurrent_simple_gla where it has a counterpart
(it takes the states as one [B, H, K, V] tensor and writes a new final state).

Each row is timed two ways, medians over interleaved rounds:
  eager  CUDA events around one Python call (what a Python server sees; at
         small B this is Python and launch overhead, not the GPU)
  graph  20 calls captured in one CUDA graph and replayed: GPU time per call
Floor: the bytes each step must move (states read and written once, plus q, k,
v read and o written) at 4.25 TB/s.

    SGLA_LIBRARY=$PWD/build/libsgla.so python3 bench/pool_decode.py [--rounds 5]"""
import argparse
import statistics

import torch
import torch.nn.functional as F

import sgla

try:
    from fla.ops.simple_gla import fused_recurrent_simple_gla as fla_fr
except Exception:  # noqa: BLE001
    fla_fr = None

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=5)
args = ap.parse_args()
HBM = 4.25e12
REPS = 20


def eager_ms(fn, iters=50):
    fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def graph_of(fn):
    """fn captured REPS times in one graph (None if it cannot be captured)."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()  # warm (compiles fla's kernels outside the capture)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(REPS):
                fn()
        return g
    except Exception as e:  # noqa: BLE001
        print(f"  (no graph: {type(e).__name__}: {str(e)[:120]})")
        return None


def graph_ms(g, iters=10):
    if g is None:
        return float("nan")
    g.replay()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for a, b in ev:
        a.record()
        g.replay()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev) / REPS


def med(x):
    return statistics.median(x) if x else float("nan")


dev, dt = "cuda", torch.bfloat16
rows = []
# (name, H, D, prefill lengths, decodes)
# decode rows call fused_recurrent_simple_gla (the recurrence alone), mixed rows chunk_simple_gla
# with cu_seqlens_cpu (the chunked kernel over the prefills) and, "mixed-nohost", without it
cases = [("decode", 32, 128, [], 256), ("decode", 16, 128, [], 1), ("decode", 16, 128, [], 64),
         ("mixed", 32, 128, [2048] * 4, 250), ("mixed-nohost", 32, 128, [2048] * 4, 250),
         ("mixed", 16, 128, [1000, 3000], 62)]
for name, H, D, pre, ndec in cases:
    lens = pre + [1] * ndec
    N, T = len(lens), sum(lens)
    q, k, v = (torch.randn(1, T, H, D, device=dev, dtype=dt) * 0.5 for _ in range(3))
    g = F.logsigmoid(torch.randn(1, T, H, device=dev) + 4)
    pool = torch.randn(2 * N, H, D, D, device=dev) * 0.1
    idx = torch.randperm(2 * N, device=dev)[:N]
    cu = torch.tensor([0] + lens, device=dev).cumsum(0)

    cu_cpu = cu.cpu() if name == "mixed" else None

    def s_step():
        if not pre:
            sgla.fused_recurrent_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx)
        else:
            sgla.chunk_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, cu_seqlens_cpu=cu_cpu,
                                  ssm_state_indices=idx)

    f_step = None
    if fla_fr is not None and not pre:
        states = torch.randn(N, H, D, D, device=dev)
        qb, kb, vb, gb = (x.view(N, 1, *x.shape[2:]) for x in (q, k, v, g))

        def f_step():
            fla_fr(qb, kb, vb, g=gb, initial_state=states, output_final_state=True)

    sg, fg = graph_of(s_step), graph_of(f_step) if f_step else None
    te, tg, fe, fgt = [], [], [], []
    for _ in range(args.rounds):
        te.append(eager_ms(s_step))
        tg.append(graph_ms(sg))
        if f_step:
            fe.append(eager_ms(f_step))
            fgt.append(graph_ms(fg))
    floor = (N * H * D * D * 4 * 2 + T * H * D * 2 * 4) / HBM * 1e3
    r = (name, N, T, H, D, med(te), med(tg), floor, med(fe), med(fgt))
    rows.append(r)
    print(f"{name} N={N} T={T} H={H} K=V={D}: sgla eager {r[5] * 1e3:.1f} us, graph {r[6] * 1e3:.1f} us "
          f"({r[6] / floor:.2f}x floor {floor * 1e3:.1f} us); fla eager {r[8] * 1e3:.1f}, graph {r[9] * 1e3:.1f} us",
          flush=True)
print("\ncase         N     T      H   D   sgla_eager_us  sgla_graph_us  floor_us  x_floor  fla_eager_us  fla_graph_us")
for name, N, T, H, D, e, gt, fl, fe, fg in rows:
    print(f"{name:<12} {N:<5} {T:<6} {H:<3} {D:<3} {e * 1e3:13.1f}  {gt * 1e3:13.1f}  {fl * 1e3:8.1f}  "
          f"{gt / fl:7.2f}  {fe * 1e3:12.1f}  {fg * 1e3:12.1f}")
