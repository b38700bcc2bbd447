"""The H200's practical rate for a 1:1 read-write stream (the pool decode's traffic):
torch's device copy of the decode row's state bytes (256 x 32 x 128 x 128 fp32 = 537 MB read
and 537 MB written), CUDA events, median of 50.
    python3 bench/copy_ceiling.py"""
import torch

n = 256 * 32 * 128 * 128
x = torch.randn(n, device="cuda")
y = torch.empty_like(x)
for _ in range(5):
    y.copy_(x)
ts = []
for _ in range(50):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); y.copy_(x); b.record(); b.synchronize()
    ts.append(a.elapsed_time(b))
ts.sort()
med = ts[len(ts) // 2]
print(f"copy of {4 * n / 1e6:.0f} MB: median {med:.4f} ms, min {ts[0]:.4f} ms, "
      f"{8 * n / med / 1e9:.2f} TB/s read + write; floor at 4.25 TB/s {8 * n / 4.25e9:.4f} ms")
