#!/usr/bin/env python3
"""Would a tensor-core fp32 backward meet fp32's bar?  The chunked backward (chunk 64: the products of
src/cuda/chunk_bwd_tc.cu's two sweeps and the gate gradient's chunk-local form, X_c = exp(b_L) <dS_c, S_c>
from fp32 states) in float32 with every matrix product taken three ways: exact fp32 products (the CUDA-core
path today), 3xTF32 (each operand split into two TF32 halves, lo.hi + hi.lo + hi.hi, as the fp32 forward
does), and TF32 alone (hi.hi: SGLA_FLAG_ALLOW_TF32's, fla's).  Relative RMS of dq, dk, dv, dg against the
same algorithm in float64, for fp32 inputs; conform_bwd_bar holds fp32 gradients to 2e-6 today.
numpy only; run: python3 bench/tf32x3_bwd_study.py [--T 4096] [--K 128]"""
import argparse

import numpy as np


def tf32(x):
    """Round float32 to TF32 (10-bit mantissa, nearest even), returned as float32."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = ((u + 0xFFF + ((u >> 13) & 1)) >> 13) << 13
    return (u & 0xFFFFFFFF).astype(np.uint32).view(np.float32).reshape(a.shape)


def mm_of(mode):
    if mode == "f64":
        return lambda a, b: a @ b
    if mode == "f32":
        return lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32)

    def mm(a, b):
        a, b = a.astype(np.float32), b.astype(np.float32)
        ah, bh = tf32(a), tf32(b)
        if mode == "tf32":
            return (ah @ bh).astype(np.float32)
        al, bl = tf32(a - ah), tf32(b - bh)
        return ((al @ bh + ah @ bl) + ah @ bh).astype(np.float32)
    return mm


def backward(q, k, v, do, g, scale, C, mode):
    f = np.float64 if mode == "f64" else np.float32
    mm = mm_of(mode)
    q, k, v, do, g = (x.astype(f) for x in (q, k, v, do, g))
    T, K = q.shape
    V = v.shape[1]
    starts = list(range(0, T, C))
    S = np.zeros((K, V), f)
    states = []
    for s in starts:
        e = min(T, s + C)
        b = np.cumsum(g[s:e].astype(np.float64))  # the chunk's prefix in fp64, differences cast (as the kernels)
        states.append(S.copy())
        S = (np.exp(b[-1].astype(f)) * S + mm((k[s:e] * np.exp((b[-1] - b).astype(f))[:, None]).T, v[s:e])).astype(f)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    dg = np.empty(T, np.float64)
    dS = np.zeros((K, V), f)
    for ci in range(len(starts) - 1, -1, -1):
        s = starts[ci]
        e = min(T, s + C)
        n = e - s
        b = np.cumsum(g[s:e].astype(np.float64))
        qc, kc, vc, dc = q[s:e], k[s:e], v[s:e], do[s:e]
        mask = np.tril(np.ones((n, n), bool))
        G = np.where(mask, scale * np.exp(np.where(mask, b[:, None] - b[None, :], 0).astype(f)), 0).astype(f)
        P, dP = mm(qc, kc.T), np.where(mask, mm(dc, vc.T), 0).astype(f)
        A, dA = (G * P).astype(f), (G * dP).astype(f)
        rs, w = (scale * np.exp(b.astype(f))).astype(f), np.exp((b[-1] - b).astype(f)).astype(f)
        dqs = rs[:, None] * mm(dc, states[ci].T)
        dks = w[:, None] * mm(vc, dS.T)
        dvs = w[:, None] * mm(kc, dS)
        dq[s:e] = dqs + mm(dA, kc)
        dk[s:e] = dks + mm(dA.T, qc)
        dv[s:e] = dvs + mm(A.T, dc)
        ee = (qc * dqs).sum(1, dtype=np.float64)
        uu = (kc * dks).sum(1, dtype=np.float64)
        M = np.tril(A.astype(np.float64) * dP, -1)
        c4 = np.array([M[t:, :t].sum() for t in range(n)])
        X = np.exp(float(b[-1])) * (dS.astype(np.float64) * states[ci]).sum()
        dg[s:e] = X + np.cumsum(uu) - uu + np.cumsum(ee[::-1])[::-1] + c4
        dS = (np.exp(b[-1].astype(f)) * dS + mm((qc * rs[:, None]).T, dc)).astype(f)
    return dq, dk, dv, dg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--K", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    T, K = args.T, args.K
    rng = np.random.default_rng(args.seed)
    gates = [
        ("mild: -0.2 U(0,1)", lambda: -0.2 * rng.random(T)),
        ("fla's tests: logsigmoid(N(0,1))", lambda: -np.log1p(np.exp(-rng.standard_normal(T)))),
        ("strong: logsigmoid(N(0,1)) / 0.1", lambda: -np.log1p(np.exp(-rng.standard_normal(T))) / 0.1),
        ("near 1: -1e-3", lambda: np.full(T, -1e-3)),
    ]
    print(f"T = {T}, K = V = {K}, seed {args.seed}; relative RMS against float64 (dq dk dv dg)")
    print(f"{'gate':<34} {'fp32 products':>30} {'3xTF32':>30} {'TF32 alone':>30}")
    for name, gen in gates:
        q, k, v, do = (rng.standard_normal((T, K)).astype(np.float32) for _ in range(4))
        g = gen().astype(np.float32)
        scale = K ** -0.5
        ref = backward(q, k, v, do, g, scale, 64, "f64")
        cols = []
        for mode in ("f32", "3x", "tf32"):
            got = backward(q, k, v, do, g, scale, 64, mode)
            rel = [np.sqrt(np.mean((a.astype(np.float64) - r) ** 2) / np.mean(r ** 2)) for a, r in zip(got, ref)]
            cols.append(" ".join(f"{x:.1e}" for x in rel))
        print(f"{name:<34} {cols[0]:>30} {cols[1]:>30} {cols[2]:>30}")


if __name__ == "__main__":
    main()
