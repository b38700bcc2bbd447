"""Why torch's do_bench reads the forward slower than `sgla bench` (a probe, session 52).

triton.testing.do_bench clears the L2 before every timed call by writing a 256 MB buffer
(`cache.zero_()`), so the call starts with the L2 full of dirty lines that must be written
back as its own loads evict them, and its start event is recorded before the Python call, so
host time the GPU waits for counts too.  This times sgla's forward (torch path) five ways, each
the median of --iters calls, interleaved over --rounds rounds:
  do_bench   triton.testing.do_bench as bench/fla_compare.py calls it
  zero       the same loop written out: zero_() the 256 MB, record, call, record
  zero+read  zero_() then read the 256 MB (the dirty lines written back before the call)
  read       read the 256 MB alone (a cold, clean L2)
  none       nothing between calls (inputs rotated over four sets, as `sgla bench`)
and each of zero / read with a GPU sleep queued before the start event (host time hidden).

  python3 bench/l2_probe.py --shapes 4x8192x32x64,8x4096x16x128 [--iters 100 --rounds 3]
"""
import argparse
import statistics

import torch
import triton

import sgla


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4x8192x32x64,8x4096x16x128")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gate", default="g", choices=["g", "gamma"])
    a = ap.parse_args()
    dev = "cuda"
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device=dev)
    sink = torch.empty(1, dtype=torch.int64, device=dev)
    print(torch.cuda.get_device_name(), flush=True)

    def read_cache():
        sink.copy_(torch.sum(cache, dtype=torch.int64).view(1))

    for s in a.shapes.split(","):
        B, T, H, D = (int(x) for x in s.split("x"))
        floor = 4 * B * T * H * D * 2 / 4.25e12 * 1e3
        sets = []
        for _ in range(4):
            q = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
            k = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16) / D ** 0.5
            v = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16)
            if a.gate == "g":
                g = -0.2 * torch.rand(B, T, H, device=dev, dtype=torch.float32)
                sets.append(dict(q=q, k=k, v=v, g=g))
            else:
                gg = torch.log1p(-torch.pow(2.0, -5.0 - torch.arange(H, device=dev) % 8))
                sets.append(dict(q=q, k=k, v=v, g_gamma=gg.float()))
        cur = [0]

        def call(rot):
            x = sets[cur[0] % 4] if rot else sets[0]
            cur[0] += 1
            with torch.no_grad():
                sgla.chunk_simple_gla(x["q"], x["k"], x["v"], g=x.get("g"), g_gamma=x.get("g_gamma"))

        def loop(pre, sleep, rot=False):
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(a.iters)]
            for i in range(a.iters):
                pre()
                if sleep:
                    torch.cuda._sleep(400000)  # ~0.2 ms at 2 GHz: the call is queued before the GPU reaches it
                ev[i][0].record()
                call(rot)
                ev[i][1].record()
            torch.cuda.synchronize()
            return statistics.median(s_.elapsed_time(e_) for s_, e_ in ev)

        ways = {
            "do_bench": lambda: triton.testing.do_bench(lambda: call(False), warmup=10, rep=60, return_mode="median"),
            "zero": lambda: loop(cache.zero_, False),
            "zero+sleep": lambda: loop(cache.zero_, True),
            "zero+read": lambda: loop(lambda: (cache.zero_(), read_cache()), False),
            "read": lambda: loop(read_cache, False),
            "read+sleep": lambda: loop(read_cache, True),
            "none": lambda: loop(lambda: None, False, True),
            "none+sleep": lambda: loop(lambda: None, True, True),
        }
        for f in ways.values():  # warm: kernels loaded, plans cached
            f()
        res = {n: [] for n in ways}
        for _ in range(a.rounds):
            for n, f in ways.items():
                res[n].append(f())
        for n, r in res.items():
            m = statistics.median(r)
            print(f"{s} {a.gate:5s} {n:11s} {m:.4f} ms  {m / floor:.3f}x floor  rounds {' '.join(f'{x:.4f}' for x in r)}",
                  flush=True)


if __name__ == "__main__":
    main()
