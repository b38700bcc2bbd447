#!/usr/bin/env python3
"""How accurate would the gate gradient be by the per-token identity?

The backward's dg today is made from chunk-local sums of products (exp(b_L) <dS, S>
from the state copies, the state parts' dots, the intra-chunk pairs: src/cpu/cpu_backward.c
and the CUDA passes), which costs the CUDA backward its state copies (docs/perf.md, session
14: 0.29 of the 0.74 ms at 8x4096x16x128 with g_gamma).  fla instead uses

    dL/db_t = q_t . dq_t - k_t . dk_t,    dg_u = sum_{t >= u} dL/db_t  (+ <dht, ht> for all u)

which needs no state copies, but subtracts two sums over every pair after u: where the
decay is strong, dg_u is a few pairs while the two sums hold all of them.  This script
measures both forms against fp64 on one (sequence, head), with dq and dk made as the
tensor-core kernels make them (bf16 operands: inputs, the masked score matrices and the
16-bit state copies; fp32 accumulation), so that the identity's dots see the kernels'
errors.  numpy only; run: python3 bench/dg_identity_study.py [--T 8192] [--K 64]
"""
import argparse

import numpy as np


def bf16(x):
    """Round to bfloat16 (nearest even), returned as float32."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).reshape(a.shape)


def gate_kinds(rng, T):
    """The studies' gates: (name, a function drawing T log gates from rng)."""
    return [
        ("mild: g = -0.2 U(0,1) (fla_compare)", lambda: -0.2 * rng.random(T)),
        ("fla's tests: logsigmoid(N(0,1))", lambda: -np.log1p(np.exp(-rng.standard_normal(T)))),
        ("strong: logsigmoid(N(0,1)) / 0.1", lambda: -np.log1p(np.exp(-rng.standard_normal(T))) / 0.1),
        ("near 1: g = -1e-3", lambda: np.full(T, -1e-3)),
    ]


def backward(q, k, v, do, g, scale, C, low, blob=None, parts=None, ds_round=None, mm=None, prefix64=False,
             dv=None):
    """Chunked backward of <o, do> (h0 = 0, no dht).  low: the kernels' precision (fp32
    accumulation, bf16 operands), else fp64 throughout; blob (with low): the rounding of the
    state copy in dg's boundary term, ds_round (with low) that of the reverse state it meets there
    (bench/dg_blob_study.py).  mm (with low): every product as mm(a, b) of the fp32 operands instead
    (bench/tf32x3_bwd_study.py); prefix64: each chunk's cumulative gate in fp64, its differences cast
    (as the kernels keep it), else summed in the working precision.  Returns dq, dk, and dg by the
    chunk-local form (the one sgla uses), and fills dv where given; parts (a list), where given, gets
    each chunk's (start, X_c, e, u, the rest of its dg) in reverse order (bench/dg_xc_step_study.py)."""
    f = np.float32 if low else np.float64
    r = bf16 if low and mm is None else (lambda x: x)
    prod = mm if mm is not None else (lambda a, b: a @ b)
    ex = lambda x: np.exp(np.asarray(x).astype(f))  # noqa: E731  (a no-op cast unless prefix64)
    prefix = (lambda x: np.cumsum(x.astype(np.float64))) if prefix64 else (lambda x: np.cumsum(x).astype(f))
    q, k, v, do, g = (x.astype(f) for x in (q, k, v, do, g))
    T, K = q.shape
    V = v.shape[1]
    starts = list(range(0, T, C))
    S = np.zeros((K, V), f)
    states = []
    for s in starts:
        e = min(T, s + C)
        b = prefix(g[s:e])
        states.append(S.copy())
        S = (ex(b[-1]) * S + prod(r(k[s:e] * ex(b[-1] - b)[:, None]).T, v[s:e])).astype(f)
    dq, dk = np.empty_like(q), np.empty_like(k)
    dg = np.empty(T, np.float64)
    dS = np.zeros((K, V), f)
    for ci in range(len(starts) - 1, -1, -1):
        s = starts[ci]
        e = min(T, s + C)
        n = e - s
        b = prefix(g[s:e])
        qc, kc, vc, dc = q[s:e], k[s:e], v[s:e], do[s:e]
        mask = np.tril(np.ones((n, n), bool))
        G = np.where(mask, scale * ex(np.where(mask, b[:, None] - b[None, :], 0)), 0).astype(f)
        P, dP = prod(qc, kc.T), np.where(mask, prod(dc, vc.T), 0).astype(f)
        A, dA = G * P, G * dP
        rs, w = (scale * ex(b)).astype(f), ex(b[-1] - b).astype(f)
        dqs = rs[:, None] * prod(dc, r(states[ci]).T)
        dks = w[:, None] * prod(vc, r(dS).T)
        dq[s:e] = dqs + prod(r(dA), kc)
        dk[s:e] = dks + prod(r(dA).T, qc)
        if dv is not None:
            dv[s:e] = w[:, None] * prod(kc, r(dS)) + prod(r(A).T, dc)
        ee = (qc * dqs).sum(1, dtype=np.float64)
        uu = (kc * dks).sum(1, dtype=np.float64)
        M = np.tril(A.astype(np.float64) * dP, -1)
        c4 = np.array([M[t:, :t].sum() for t in range(n)])
        Sb = blob(states[ci]) if low and blob else states[ci]
        dSx = ds_round(dS) if low and ds_round else dS
        X = np.exp(float(b[-1])) * (dSx.astype(np.float64) * Sb).sum()
        rest = np.cumsum(uu) - uu + np.cumsum(ee[::-1])[::-1] + c4
        dg[s:e] = X + rest
        if parts is not None:
            parts.append((s, X, ee, uu, rest))
        dS = (ex(b[-1]) * dS + prod(r(qc * rs[:, None]).T, dc)).astype(f)
    return dq, dk, dg


def identity_dg(q, k, dq, dk, acc):
    """dg by the identity: per-token dots in fp32 (as a kernel would make them), the reverse
    cumulative sum in acc (float32 or float64)."""
    e = (q.astype(np.float32) * dq.astype(np.float32)).sum(1, dtype=np.float32)
    u = (k.astype(np.float32) * dk.astype(np.float32)).sum(1, dtype=np.float32)
    d = (e - u).astype(acc)
    return np.cumsum(d[::-1], dtype=acc)[::-1].astype(np.float64)


def study_setup(T=8192, K=64):
    """The studies' common command line (--T, --K, --seed): returns (args, T, K, rng)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=T)
    ap.add_argument("--K", type=int, default=K)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    return args, args.T, args.K, np.random.default_rng(args.seed)


def main():
    args, T, K, rng = study_setup()
    C = 64
    print(f"T = {T}, K = V = {K}, seed {args.seed}; relative RMS against fp64 (and the worst "
          f"|error| / |dg| over the tokens where |dg| is above 1e-3 of its RMS)")
    print(f"{'gate':<34} {'dg now (chunk-local)':>22} {'identity, fp64 sum':>22} {'identity, fp32 sum':>22}")
    for name, gen in gate_kinds(rng, T):
        q, k, v, do = (bf16(rng.standard_normal((T, K))) for _ in range(4))
        g = gen().astype(np.float32)
        scale = K ** -0.5
        _, _, dg64 = backward(q, k, v, do, g, scale, C, low=False)
        dq, dk, dg_now = backward(q, k, v, do, g, scale, C, low=True)
        rms = np.sqrt(np.mean(dg64 ** 2))
        big = np.abs(dg64) > 1e-3 * rms

        def score(x):
            rel = np.sqrt(np.mean((x - dg64) ** 2)) / rms
            worst = np.max(np.abs(x - dg64)[big] / np.abs(dg64[big]))
            return f"{rel:9.2e} ({worst:8.1e})"
        print(f"{name:<34} {score(dg_now):>22} {score(identity_dg(q, k, dq, dk, np.float64)):>22} "
              f"{score(identity_dg(q, k, dq, dk, np.float32)):>22}")


if __name__ == "__main__":
    main()
