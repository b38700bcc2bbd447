"""Does the CUDA backward's time depend on the gate values?  (docs/perf.md, session 22 call 7)

Times sgla.chunk_simple_gla_backward at 8x4096x16x128 bf16 on the same tensors with five gates:
g = -0.2 U (sgla bench's gate g), g = each head's constant log(1 - 2^-(5 + h % 8)) as a per-token
tensor (sgla bench's g_gamma values), g_gamma with those values, g = 0 (no decay) and
g = logsigmoid(N(0,1)) (fla's tests).  Interleaved rounds, CUDA events, medians.
  SGLA_LIBRARY=path/libsgla.so PYTHONPATH=python python3 bench/gate_values_probe.py
"""
import math
import statistics

import torch

import sgla

B, T, H, D = 8, 4096, 16, 128
dev = "cuda"
torch.manual_seed(0)
q = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
k = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
v = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
do = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
gam = torch.tensor([math.log(1.0 - 2.0 ** -(5 + h % 8)) for h in range(H)], device=dev, dtype=torch.float32)
cases = {
    "g = -0.2 U": dict(g=-0.2 * torch.rand(B, T, H, device=dev)),
    "g = gamma values": dict(g=gam.view(1, 1, H).expand(B, T, H).contiguous()),
    "g_gamma": dict(g_gamma=gam),
    "g = 0": dict(g=torch.zeros(B, T, H, device=dev)),
    "g = logsigmoid(N)": dict(g=torch.nn.functional.logsigmoid(torch.randn(B, T, H, device=dev))),
}


def run(kw):
    return sgla.chunk_simple_gla_backward(q, k, v, do, **kw)


times = {n: [] for n in cases}
for kw in cases.values():  # warm
    run(kw)
torch.cuda.synchronize()
for _ in range(5):
    for n, kw in cases.items():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            run(kw)
        b.record()
        torch.cuda.synchronize()
        times[n].append(a.elapsed_time(b) / 10)
for n, t in times.items():
    print("%-20s backward %.4f ms (median of %d rounds of 10; min %.4f)" % (n, statistics.median(t), len(t), min(t)))
