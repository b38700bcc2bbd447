#!/usr/bin/env python3
"""Could the backward keep the 16-bit state copy of every m-th chunk only?

dg's chunk term X_c (the pairs with their key before chunk c and their query after it) is made
today from the time-order pass's 16-bit state of every chunk (the blob: 268 MB written and read
back at 8x4096x16x128).  Counting pairs gives, exactly,

    X_{c+1} = X_c - E_{c+1} + U_c

with E_c the chunk's sum of q.dq through the carried state (pairs: key before c, query in c) and
U_c its sum of k.dk through the state (key in c, query after c): both are side outputs the passes
write already (e and u in chunk_bwd3.cu's dg3).  Stepped over the whole sequence this is the
per-token identity, which cancels (bench/dg_identity_study.py); stepped from a chunk whose X_c comes
from the blob, it cancels over m - 1 chunks only.  This measures dg's error against fp64 with the
blob kept every m chunks, the kernels' precision modelled as in dg_identity_study.py.
numpy only; run: python3 bench/dg_xc_step_study.py [--T 8192] [--K 64] [--m 2,4,8]
"""
import argparse

import numpy as np

from dg_identity_study import backward, bf16


def dg_from(parts, T, m, C):
    """dg with X_c from the blob where c % m == 0, else stepped from the stored chunk before it.
    The steps' sums in fp32 (as dg3 would make them from e and u), the stored X_c as given."""
    by = {s // C: (X, ee, uu, rest) for (s, X, ee, uu, rest) in parts}
    dg = np.empty(T, np.float64)
    n = len(by)
    for c in range(n):
        c0 = c - c % m
        X = np.float32(by[c0][0])
        for j in range(c0, c):  # X_{j+1} = X_j - E_{j+1} + U_j
            X = np.float32(X - np.float32(by[j + 1][1].sum(dtype=np.float32)) + np.float32(by[j][2].sum(dtype=np.float32)))
        dg[c * C:c * C + len(by[c][3])] = np.float64(X) + by[c][3]
    return dg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=8192)
    ap.add_argument("--K", type=int, default=64)
    ap.add_argument("--m", default="1,2,4,8")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    T, K, C = args.T, args.K, 64
    ms = [int(x) for x in args.m.split(",")]
    print(f"T = {T}, K = V = {K}, {args.seeds} seeds; relative RMS of dg against fp64, worst seed (and the worst "
          f"|error| / |dg| where |dg| > 1e-3 of its RMS)")
    print(f"{'gate':<36}" + "".join(f"{'blob every ' + str(m):>24}" for m in ms))
    gates = [
        ("mild: g = -0.2 U(0,1) (fla_compare)", lambda r: -0.2 * r.random(T)),
        ("fla's tests: logsigmoid(N(0,1))", lambda r: -np.log1p(np.exp(-r.standard_normal(T)))),
        ("strong: logsigmoid(N(0,1)) / 0.1", lambda r: -np.log1p(np.exp(-r.standard_normal(T))) / 0.1),
        ("near 1: g = -1e-3", lambda r: np.full(T, -1e-3)),
        ("g_gamma-like: g = -0.03", lambda r: np.full(T, -0.03)),
    ]
    for name, gen in gates:
        worst = {m: (0.0, 0.0) for m in ms}
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            q, k, v, do = (bf16(rng.standard_normal((T, K))) for _ in range(4))
            g = gen(rng).astype(np.float32)
            scale = K ** -0.5
            _, _, dg64 = backward(q, k, v, do, g, scale, C, low=False)
            parts = []
            backward(q, k, v, do, g, scale, C, low=True, parts=parts)
            rms = np.sqrt(np.mean(dg64 ** 2))
            big = np.abs(dg64) > 1e-3 * rms
            for m in ms:
                x = dg_from(parts, T, m, C)
                rel = np.sqrt(np.mean((x - dg64) ** 2)) / rms
                w = np.max(np.abs(x - dg64)[big] / np.abs(dg64[big]))
                worst[m] = (max(worst[m][0], rel), max(worst[m][1], w))
        print(f"{name:<36}" + "".join(f"{worst[m][0]:>13.2e} ({worst[m][1]:7.1e})" for m in ms), flush=True)


if __name__ == "__main__":
    main()
