"""fp32 inputs on 16-bit tensor cores: is 3xFP16 with a power-of-two scale per tile as accurate as 3xTF32?

Issue 14 asks fp32 inputs at fp32-level accuracy (relative error <= 1e-5, 3xTF32 or better) within 2x
their HBM floor.  3xTF32 costs three TF32 products, 1.4-1.6x the floor at the measured TF32 rates
(docs/perf.md, session 24).  An fp16 product runs at twice TF32's rate and fp16 has TF32's 11 bits, but
only 5 bits of exponent: x = hi + lo in fp16 holds about 22 bits where x * 2^e fits fp16's range.  So each
operand tile is scaled by one power of two (exact) that puts its largest magnitude near 2^14, split into
fp16 hi + lo, and the product's three terms (lo.lo dropped) are unscaled in fp32.  Elements far below the
tile's largest lose bits only below 2^-39 of it (fp16's subnormal step after the scale).

This study runs the chunked forward (chunks of 64, the kernels' form) in numpy with each product's operands
rounded as a scheme would round them and the products taken exactly, every product's result and the
state rounded to fp32, and compares o and the final state with an fp64 recurrence:
    python3 bench/fp32_split_study.py [--trials N]
Schemes: fp32 (operands exact: the fp32 chain's own rounding), tf32x3 (RN hi, lo = tf32(x - hi)), tf32x1
(fla's TF32), fp16x3 (the scaled split above, one scale a tile), fp16x3r (a scale a row of A and a column of B), bf16x3 (hi, lo in bf16, no scale needed, 16 bits).
Not modelled: the tensor cores' own accumulation (the same for every scheme)."""
import argparse

import numpy as np

from dg_identity_study import bf16  # round to bfloat16 (nearest even), as float32

C = 64


def tf32(x):
    """round to nearest (ties to even) at TF32's 10 fraction bits, in fp32"""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def split(x, scheme, axis=None):
    """(parts, scale): x ~ sum(parts) / scale, parts as the tensor cores would read them (float64); the
    scale an array broadcast along axis where fp16x3r scales rows (axis 1) or columns (axis 0)"""
    x = np.asarray(x, dtype=np.float32)
    if scheme == "fp32":
        return [x.astype(np.float64)], 1.0
    if scheme in ("tf32x3", "tf32x1"):
        hi = tf32(x)
        if scheme == "tf32x1":
            return [hi.astype(np.float64)], 1.0
        lo = tf32(x - hi)
        return [hi.astype(np.float64), lo.astype(np.float64)], 1.0
    if scheme == "bf16x3":
        hi = bf16(x)
        lo = bf16(x - hi)
        return [hi.astype(np.float64), lo.astype(np.float64)], 1.0
    if scheme in ("fp16x3", "fp16x3r"):
        # one scale a tile, or (fp16x3r, axis given) one a row of A / a column of B
        m = np.max(np.abs(x), axis=axis, keepdims=True) if axis is not None and scheme == "fp16x3r" \
            else np.max(np.abs(x), keepdims=True)
        m = np.where(m > 0, m, 1.0)
        sc = 2.0 ** (14 - np.ceil(np.log2(m.astype(np.float64))))  # largest magnitude in (2^13, 2^14]
        xs = x.astype(np.float64) * sc  # exact: a power of two
        hi = xs.astype(np.float16)
        lo = (xs - hi.astype(np.float64)).astype(np.float16)
        return [hi.astype(np.float64), lo.astype(np.float64)], sc
    raise ValueError(scheme)


def mm(a, b, scheme):
    """a @ b with each operand split by the scheme; the three terms (no lo.lo), the result in fp32"""
    pa, sa = split(a, scheme, axis=1)  # a row of A a scale: sa is [M, 1]
    pb, sb = split(b, scheme, axis=0)  # a column of B: sb is [1, N]
    acc = pa[0] @ pb[0]
    if len(pa) > 1:
        acc = acc + pa[0] @ pb[1] + pa[1] @ pb[0]
    return (acc / (sa * sb)).astype(np.float32)


def forward(q, k, v, g, scale, scheme):
    T, K = q.shape
    V = v.shape[1]
    S = np.zeros((K, V), np.float32)
    o = np.zeros((T, V), np.float32)
    for c0 in range(0, T, C):
        Q, Kc, Vc = q[c0:c0 + C], k[c0:c0 + C], v[c0:c0 + C]
        L = Q.shape[0]
        b = np.cumsum(g[c0:c0 + C].astype(np.float32)).astype(np.float32)
        sc = mm(Q, Kc.T, scheme)
        w = np.exp(np.minimum(b[:, None] - b[None, :], 0)).astype(np.float32) * np.tri(L, dtype=np.float32)
        A = (np.float32(scale) * w * sc).astype(np.float32)
        rs = (np.float32(scale) * np.exp(b)).astype(np.float32)
        o[c0:c0 + L] = mm(A, Vc, scheme) + rs[:, None] * mm(Q, S, scheme)
        kw = (Kc * np.exp(b[-1] - b)[:, None]).astype(np.float32)
        S = (np.float32(np.exp(b[-1])) * S + mm(kw.T, Vc, scheme)).astype(np.float32)
    return o, S


def reference(q, k, v, g, scale):
    q, k, v, g = (x.astype(np.float64) for x in (q, k, v, g))
    S = np.zeros((q.shape[1], v.shape[1]))
    o = np.zeros((q.shape[0], v.shape[1]))
    for t in range(q.shape[0]):
        S = np.exp(g[t]) * S + np.outer(k[t], v[t])
        o[t] = scale * (q[t] @ S)
    return o, S


def inputs(rng, kind, T, K, V):
    def mat(n, d):
        x = rng.standard_normal((n, d))
        if kind == "lognormal":  # magnitudes over ~6 decades
            x *= np.exp(2.0 * rng.standard_normal((n, d)))
        if kind == "outliers":  # a few features 1000x the rest (activation outliers)
            x[:, rng.choice(d, 2, replace=False)] *= 1000.0
        if kind == "small":  # all tiny: fp16 without the scale would flush it
            x *= 1e-6
        if kind.startswith("token"):  # a few tokens (rows) far larger than the rest, e.g. token1e5
            x[rng.choice(n, 3, replace=False)] *= float(kind[5:])
        return x.astype(np.float32)

    g = -rng.uniform(0.0, 0.2 if kind != "strong-decay" else 5.0, T).astype(np.float32)
    return mat(T, K), mat(T, K), mat(T, V), g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--T", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    K = V = 64
    schemes = ["fp32", "tf32x3", "fp16x3", "fp16x3r", "bf16x3", "tf32x1"]
    kinds = ["normal", "lognormal", "outliers", "small", "strong-decay", "token1e3", "token1e5", "token1e8"]
    print(f"seed {args.seed}, T = {args.T}, K = V = {K}, chunks of {C}; worst of {args.trials} trials of "
          f"rel L2 of o / of the final state against the fp64 recurrence")
    print(f"{'inputs':<13}" + "".join(f"{s:>22}" for s in schemes))
    rng = np.random.default_rng(args.seed)
    for kind in kinds:
        worst = {s: [0.0, 0.0] for s in schemes}
        for _ in range(args.trials):
            q, k, v, g = inputs(rng, kind, args.T, K, V)
            ro, rS = reference(q, k, v, g, K ** -0.5)
            for s in schemes:
                o, S = forward(q, k, v, g, K ** -0.5, s)
                eo = np.linalg.norm(o - ro) / np.linalg.norm(ro)
                eS = np.linalg.norm(S - rS) / np.linalg.norm(rS)
                worst[s][0] = max(worst[s][0], eo if np.isfinite(eo) else np.inf)
                worst[s][1] = max(worst[s][1], eS if np.isfinite(eS) else np.inf)
        print(f"{kind:<13}" + "".join(f"{worst[s][0]:>11.2e} /{worst[s][1]:>9.2e}" for s in schemes))


if __name__ == "__main__":
    main()
