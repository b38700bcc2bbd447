"""ht's error for a decay within 1e-7 of 1 over T = 1e6 tokens on the CUDA forward
(docs/numerics.md §7): one head (the forward splits the sequence in time) and 133
heads (no split: one block carries the state through every chunk), bf16 and fp32
inputs, against ref-b (fp64) on head 0.

    SGLA_LIBRARY=$PWD/build/libsgla.so python3 bench/near1_probe.py [--T 1000000]"""
import argparse

import torch

import sgla

ap = argparse.ArgumentParser()
ap.add_argument("--T", type=int, default=1000000)
args = ap.parse_args()
T, K, V = args.T, 64, 64
torch.manual_seed(1)
for H, dts in ((1, (torch.bfloat16, torch.float32)), (133, (torch.bfloat16,))):
    q = torch.randn(1, T, H, K, device="cuda").bfloat16()
    k = (torch.randn(1, T, H, K, device="cuda") * 0.1).bfloat16()
    v = torch.randn(1, T, H, V, device="cuda").bfloat16()
    g = torch.full((1, T, H), -1e-7, device="cuda")
    _, r = sgla.chunk_simple_gla(*(x[:, :, :1].double().cpu().numpy() for x in (q, k, v)),
                                 g=g[:, :, :1].double().cpu().numpy(), output_final_state=True, backend="ref-b")
    r = torch.from_numpy(r[0, 0])
    for dt in dts:
        _, ht = sgla.chunk_simple_gla(q.to(dt), k.to(dt), v.to(dt), g=g, output_final_state=True)
        ht = ht[0, 0].double().cpu()
        print(f"T={T} H={H} {str(dt).replace('torch.', '')}: ht rel {float((ht - r).norm() / r.norm()):.2e}",
              flush=True)
    del q, k, v, g
    torch.cuda.empty_cache()
