"""Decode steps on sgla's state pool against flash-linear-attention's
fused_recurrent_simple_gla (which takes the states as one [B, H, K, V] tensor
and writes a new final state), on one GPU, medians of interleaved rounds.
Floor: the states read and written once at 4.25 TB/s.

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


def timed(fn, iters=50):
    fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


rows = []
for B, H, D in ((256, 32, 128), (1, 16, 128), (64, 16, 128)):
    dev, dt = "cuda", torch.bfloat16
    q, k, v = (torch.randn(1, B, H, D, device=dev, dtype=dt) for _ in range(3))
    g = F.logsigmoid(torch.randn(1, B, H, device=dev))
    pool = torch.randn(2 * B, H, D, D, device=dev)
    idx = torch.randperm(2 * B, device=dev)[:B]
    cu = torch.arange(B + 1, device=dev)
    states = torch.randn(B, H, D, D, device=dev)
    qb, kb, vb, gb = (x.view(B, 1, *x.shape[2:]) for x in (q, k, v, g))

    def s_step():
        sgla.fused_recurrent_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx)

    def f_step():
        fla_fr(qb, kb, vb, g=gb, initial_state=states, output_final_state=True)

    ts, tf = [], []
    for _ in range(args.rounds):
        ts.append(timed(s_step))
        if fla_fr is not None:
            tf.append(timed(f_step))
    floor = B * H * D * D * 4 * 2 / HBM * 1e3
    ms = statistics.median(ts)
    mf = statistics.median(tf) if tf else float("nan")
    rows.append((B, H, D, ms, floor, mf))
    print(f"B={B} H={H} K=V={D}: sgla pool {ms * 1e3:.1f} us ({ms / floor:.2f}x floor {floor * 1e3:.1f} us), "
          f"fla fused_recurrent {mf * 1e3:.1f} us", flush=True)
print("\nB,H,K=V  sgla_us  floor_us  x_floor  fla_us")
for B, H, D, ms, floor, mf in rows:
    print(f"{B},{H},{D}  {ms * 1e3:.1f}  {floor * 1e3:.1f}  {ms / floor:.2f}  {mf * 1e3:.1f}")
