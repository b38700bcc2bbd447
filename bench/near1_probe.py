"""Errors for a decay within 1e-7 of 1 over T = 1e6 tokens on the CUDA forward and
backward (docs/numerics.md §7): one head (the forward and the backward split the
sequence in time) and 133 heads (no split: one block carries the state through
every chunk), against ref-b (fp64) on head 0.  Forward: ht, bf16 and fp32 inputs;
--backward: dh0 (fp32: the indicator) and dq of the last 64 tokens (bf16 outputs: their
rounding, ~2e-3, hides anything smaller), bf16 inputs.

    SGLA_LIBRARY=$PWD/build/libsgla.so python3 bench/near1_probe.py [--T 1000000] [--backward]
    (--device cpu --T 5000 runs the same script on the CPU backend: a check of the script)"""
import argparse

import torch

import sgla

ap = argparse.ArgumentParser()
ap.add_argument("--T", type=int, default=1000000)
ap.add_argument("--backward", action="store_true")
ap.add_argument("--device", default="cuda")
args = ap.parse_args()
T, K, V, dev = args.T, 64, 64, args.device
torch.manual_seed(1)


def rel(x, r):
    return float((x.double().cpu() - r).norm() / r.norm())


def np64(x):
    return x[:, :, :1].double().cpu().numpy()


for H, dts in ((1, (torch.bfloat16, torch.float32)), (133, (torch.bfloat16,))):
    q = torch.randn(1, T, H, K, device=dev).bfloat16()
    k = (torch.randn(1, T, H, K, device=dev) * 0.1).bfloat16()
    v = torch.randn(1, T, H, V, device=dev).bfloat16()
    g = torch.full((1, T, H), -1e-7, device=dev)
    if not args.backward:
        _, r = sgla.chunk_simple_gla(np64(q), np64(k), np64(v), g=g[:, :, :1].double().cpu().numpy(),
                                     output_final_state=True, backend="ref-b")
        r = torch.from_numpy(r[0, 0])
        for dt in dts:
            _, ht = sgla.chunk_simple_gla(q.to(dt), k.to(dt), v.to(dt), g=g, output_final_state=True)
            print(f"T={T} H={H} {str(dt).replace('torch.', '')}: ht rel {rel(ht[0, 0], r):.2e}", flush=True)
    else:
        do = torch.randn(1, T, H, V, device=dev).bfloat16()
        h0 = torch.zeros(1, H, K, V, device=dev)
        ref = sgla.chunk_simple_gla_backward(np64(q), np64(k), np64(v), np64(do), g=g[:, :, :1].double().cpu().numpy(),
                                             initial_state=h0[:, :1].double().cpu().numpy(), backend="ref-b")
        rdq, rdh0 = torch.from_numpy(ref[0][0, -64:, 0]), torch.from_numpy(ref[5][0, 0])
        dq, _, _, _, _, dh0 = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0)
        print(f"T={T} H={H} bfloat16 backward: dh0 rel {rel(dh0[0, 0], rdh0):.2e}, "
              f"dq (last 64 tokens) rel {rel(dq[0, -64:, 0], rdq):.2e}", flush=True)
        del do, h0, dq, dh0
    del q, k, v, g
    if dev == "cuda":
        torch.cuda.empty_cache()
