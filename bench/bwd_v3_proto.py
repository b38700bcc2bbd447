"""The backward as three forward passes (docs/perf.md, "Plan: the backward as three
forward passes"), the torch prototype that preceded the kernels (src/cuda/chunk_bwd3.cu, session 6;
kept for the record: its dg is the short form the kernels do not use), around sgla's forward: reversals by torch.flip,
dg from the 16-bit dq and dk (a kernel version would take q.dq and k.dk in fp32).
Prints its accuracy next to the shipped backward's (both against ref-b in fp64 on an
accuracy shape) and times, in interleaved rounds: the shipped backward, the prototype,
and its three forward passes alone on inputs flipped beforehand (what a reverse-time
mode in the kernel would cost).

    SGLA_LIBRARY=$PWD/build/libsgla.so python3 bench/bwd_v3_proto.py [--shape 8,4096,16,128,128]
        [--gate g|gamma] [--rounds 5]
    (--device cpu --shape 1,300,2,64,64 --acc-shape 1,200,2,32,32 --rounds 1 checks the script)"""
import argparse
import statistics

import numpy as np
import torch

import sgla

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="8,4096,16,128,128")
ap.add_argument("--acc-shape", default="1,2048,2,128,128")
ap.add_argument("--gate", default="g", choices=["g", "gamma"])
ap.add_argument("--device", default="cuda")
ap.add_argument("--rounds", type=int, default=5)
args = ap.parse_args()
dev = args.device
dt = torch.bfloat16 if dev == "cuda" else torch.float32


def inputs(B, T, H, K, V, seed):
    torch.manual_seed(seed)
    q, k = (torch.randn(B, T, H, K, device=dev).to(dt) for _ in range(2))
    v, do = (torch.randn(B, T, H, V, device=dev).to(dt) for _ in range(2))
    g = -0.2 * torch.rand(B, T, H, device=dev) if args.gate == "g" else None
    gg = torch.tensor([float(np.log(1 - 2.0 ** -(5 + h % 8))) for h in range(H)], device=dev) \
        if args.gate == "gamma" else None
    h0, dht = (torch.randn(B, H, K, V, device=dev) for _ in range(2))
    return q, k, v, do, g, gg, h0, dht


def tr(x):
    return x.transpose(-1, -2).contiguous()


def v3(q, k, v, do, g, gg, s, h0, dht, flipped=None):
    """(dq, dk, dv, dg or dg_gamma, dh0); flipped: (rq, rk, rv, rdo) made beforehand"""
    dq, htT = sgla.chunk_simple_gla(do, v, k, g=g, g_gamma=gg, scale=s, initial_state=tr(h0),
                                    output_final_state=True)
    rq, rk, rv, rdo = flipped if flipped is not None else (x.flip(1) for x in (q, k, v, do))
    if g is not None:
        gs = torch.zeros_like(g)
        gs[:, 1:] = g.flip(1)[:, :-1]
        a0 = torch.exp(g[:, 0, :])[:, :, None, None]
        h0v = dht / s
    else:
        gs = None
        a0 = torch.exp(gg)[None, :, None, None]
        h0v = dht / (s * a0)
    dvr, htv = sgla.chunk_simple_gla(rk, rq, rdo, g=gs, g_gamma=gg if g is None else None, scale=s,
                                     initial_state=h0v, output_final_state=True)
    dkr, _ = sgla.chunk_simple_gla(rv, rdo, rq, g=gs, g_gamma=gg if g is None else None, scale=s,
                                   initial_state=tr(h0v))
    dv, dk = dvr.flip(1), dkr.flip(1)
    dh0 = s * a0 * htv
    x = (q.float() * dq.float() - k.float() * dk.float()).sum(-1)
    dg = x.flip(1).cumsum(1).flip(1) + (tr(htT) * dht).sum((-1, -2))[:, None, :]
    return dq, dk, dv, (dg if g is not None else dg.sum((0, 1))), dh0


def rel(x, r):
    x, r = x.double().cpu(), torch.as_tensor(r).double()
    return float((x - r).norm() / r.norm())


# accuracy against ref-b (fp64)
B, T, H, K, V = (int(x) for x in args.acc_shape.split(","))
q, k, v, do, g, gg, h0, dht = inputs(B, T, H, K, V, 1)
s = K ** -0.5
np64 = [None if x is None else x.double().cpu().numpy() for x in (q, k, v, do, g, gg, h0, dht)]
ref = sgla.chunk_simple_gla_backward(np64[0], np64[1], np64[2], np64[3], g=np64[4], g_gamma=np64[5], scale=s,
                                     initial_state=np64[6], dht=np64[7], backend="ref-b")
ref = [ref[0], ref[1], ref[2], ref[3] if g is not None else ref[4], ref[5]]
shipped = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, g_gamma=gg, scale=s, initial_state=h0, dht=dht)
shipped = [shipped[0], shipped[1], shipped[2], shipped[3] if g is not None else shipped[4], shipped[5]]
proto = v3(q, k, v, do, g, gg, s, h0, dht)
names = ["dq", "dk", "dv", "dg" if g is not None else "dg_gamma", "dh0"]
print(f"accuracy {args.acc_shape} {args.gate} {str(dt).replace('torch.', '')} (rel L2 against ref-b):")
for n, a, b, r in zip(names, shipped, proto, ref):
    print(f"  {n:<9} shipped {rel(a, r):.2e}   three forwards {rel(b, r):.2e}")

# timing
B, T, H, K, V = (int(x) for x in args.shape.split(","))
q, k, v, do, g, gg, h0, dht = inputs(B, T, H, K, V, 2)
s = K ** -0.5
flipped = tuple(x.flip(1).contiguous() for x in (q, k, v, do))


def timed(fn):
    if dev != "cuda":
        fn()
        return float("nan")
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    e0.record()
    for _ in range(10):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / 10


runs = {"shipped backward": lambda: sgla.chunk_simple_gla_backward(q, k, v, do, g=g, g_gamma=gg, scale=s,
                                                                  initial_state=h0, dht=dht),
        "three forwards + flips + dg (torch)": lambda: v3(q, k, v, do, g, gg, s, h0, dht),
        "three forwards on flipped inputs + dg": lambda: v3(q, k, v, do, g, gg, s, h0, dht, flipped)}
times = {n: [] for n in runs}
for _ in range(args.rounds):
    for n, fn in runs.items():
        times[n].append(timed(fn))
print(f"time {args.shape} {args.gate} (ms, median of {args.rounds} rounds of 10 calls):")
for n, t in times.items():
    print(f"  {n:<40} {statistics.median(t):.4f}")
