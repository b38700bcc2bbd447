"""Per-role timeline of the chunked kernels, from a diagnostic build (-DSGLA_TRACE: chunk_trace in
src/cuda/chunk_fwd.cuh).  Each role of the traced blocks (column block 0, items < 8) stores clock64 at
its marks of every chunk; printed: the median over chunks 4 .. n-4 and over blocks of each mark's
distance from the role's chunk start, and of the chunk step itself (cycles).

  cmake -S . -B build-trace -DCMAKE_CUDA_FLAGS=-DSGLA_TRACE=1 && cmake --build build-trace --target sgla_shared
  SGLA_LIBRARY=build-trace/libsgla.so python3 bench/trace_run.py B,T,H,K,V [--gate g|gamma] [--pass fwd|dq|merged|f32]
  [--tf32]

Marks: outputs 0 top, 1 stage landed, 2 S_c ready, 3 scores weighted, 4 Q.S done, 5 products done,
6 o put, 7 (the merged pass) dv put, 8 scores done (before their weights), 9 (merged) k T^T done, 10 (merged)
dv's product done, 11 before A V, 12 A V done, 13 the row dots stored; state 0 top, 1 stage landed, 5 X_c done (reverse passes), 2 update
done, 3 S_FREE passed, 4 S_{c+1} stored; producer 0 top, 1 stage empty.  A role's step: from a chunk's
top to the top of the next chunk it takes (two output warpgroups take alternate chunks).
--pass f32: fp32 inputs on the wgmma kernel (wg_trace in src/cuda/chunk_fwd_tf32.cu; --tf32 for TF32 alone).
Marks: outputs 0 top, 1 B_READY passed, 2 Q [K ; S^T] done, 3 LO_READY passed, 4 A V issued, 5 A V done,
6 o stored; state 0 top, 1 k and v landed, 2 VT_FREE passed, 3 K's lo and V^T written, 4 S updated,
5 B_FREE passed, 6 S^T stored.
"""
import argparse
import ctypes
import statistics

import torch

import sgla
from sgla import _lib

ITEMS, CHUNKS, EV = 8, 512, 16  # chunk_fwd.cuh's SGLA_TRACE_ITEMS, _CHUNKS, _EV: the buffer's layout
NAMES = {0: "out0", 1: "out1", 2: "state", 3: "producer"}
PASS_BW = {"fwd": 0, "dq": 1, "merged": 4, "f32": 8}

ap = argparse.ArgumentParser()
ap.add_argument("shape")
ap.add_argument("--gate", default="g")
ap.add_argument("--pass", dest="pss", default="fwd", choices=list(PASS_BW))
ap.add_argument("--tf32", action="store_true", help="--pass f32: TF32 alone (allow_tf32)")
a = ap.parse_args()
B, T, H, K, V = (int(x) for x in a.shape.split(","))
dev = "cuda"
torch.manual_seed(0)
dt = torch.float32 if a.pss == "f32" else torch.bfloat16
q = torch.randn(B, T, H, K, device=dev, dtype=dt)
k = torch.randn(B, T, H, K, device=dev, dtype=dt) / K ** 0.5
v = torch.randn(B, T, H, V, device=dev, dtype=dt)
g = -torch.rand(B, T, H, device=dev) * 0.2 if a.gate == "g" else None
gg = torch.log(1 - 2.0 ** -(5 + torch.arange(H, device=dev) % 8)).float() if a.gate == "gamma" else None
do = torch.randn(B, T, H, V, device=dev, dtype=torch.bfloat16)

tset = _lib.lib.sgla_trace_set
tset.restype = None
tset.argtypes = [ctypes.c_void_p, ctypes.c_int]
buf = torch.zeros(ITEMS * 4 * CHUNKS * EV, dtype=torch.int64, device=dev)


def run():
    if a.pss in ("fwd", "f32"):
        sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, allow_tf32=a.tf32)
    else:
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, g_gamma=gg)


run()
torch.cuda.synchronize()
tset(buf.data_ptr(), PASS_BW[a.pss])
run()
torch.cuda.synchronize()
tset(None, -1)
t = buf.view(ITEMS, 4, CHUNKS, EV).cpu().tolist()
nch = (T + 63) // 64
print(f"{a.shape} gate {a.gate} pass {a.pss}: {nch} chunks a block, cycles (median over chunks 4..n-4 and blocks)")
for r in range(4):
    rows = []
    for it in range(ITEMS):
        x = t[it][r]
        mine = [c for c in range(nch) if x[c][0]]
        for a_, b_ in zip(mine, mine[1:]):
            if 4 <= a_ < nch - 4:
                rows.append([x[b_][0] - x[a_][0]] + [x[a_][e] - x[a_][0] if x[a_][e] else None for e in range(1, EV)])
    if not rows:
        continue
    cols = []
    for e in range(EV):
        vals = [row[e] for row in rows if row[e] is not None]
        cols.append(f"{int(statistics.median(vals)):6d}" if vals else "     -")
    print(f"  {NAMES[r]:9s} step {cols[0]}  marks 1..15: {' '.join(cols[1:])}   ({len(rows)} chunks)")
# the outputs' chunk c against the state's: how long after its stage landed S_c was ready, and when the
# state had stored it
rows = []
for it in range(ITEMS if a.pss != "f32" else 0):
    for wo in (0, 1):
        o, st = t[it][wo], t[it][2]
        for c in range(4, max(5, nch - 4)):
            if o[c][1] and o[c][2] and st[c - 1][4]:
                rows.append((o[c][2] - o[c][1], st[c - 1][4] - o[c][1]))
if rows:
    print(f"  outputs: S_c ready {int(statistics.median(r[0] for r in rows))} cycles after the stage landed; "
          f"stored by the state {int(statistics.median(r[1] for r in rows))} cycles after it landed")
