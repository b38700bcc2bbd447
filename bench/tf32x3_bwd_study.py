#!/usr/bin/env python3
"""Would a tensor-core fp32 backward meet fp32's bar?  The chunked backward of bench/dg_identity_study.py
(chunk 64: the products of the two sweeps and the gate gradient's chunk-local form, X_c = exp(b_L)
<dS_c, S_c> from fp32 states; each chunk's cumulative gate in fp64, as the kernels keep it) in float32
with every matrix product taken three ways, fp32 accumulation: exact fp32 products (the CUDA-core path
today), 3xTF32 (each operand split into two TF32 halves, lo.hi + hi.lo + hi.hi, as the fp32 forward
does), and TF32 alone (hi.hi: SGLA_FLAG_ALLOW_TF32's, fla's).  Relative RMS of dq, dk, dv, dg against
the same algorithm in float64, for fp32 inputs; conform_bwd_bar holds fp32 gradients to 2e-6 today.
numpy only; run: python3 bench/tf32x3_bwd_study.py [--T 4096] [--K 128]"""

import numpy as np

from dg_identity_study import backward, gate_kinds, study_setup
from fp32_split_study import tf32


def mm_of(mode):
    """a @ b of float32 operands, accumulated in float32: exact products ("f32"), 3xTF32 ("3x") or
    TF32 alone ("tf32")"""
    def mm(a, b):
        a, b = a.astype(np.float32), b.astype(np.float32)
        if mode == "f32":
            return (a @ b).astype(np.float32)
        ah, bh = tf32(a), tf32(b)
        if mode == "tf32":
            return (ah @ bh).astype(np.float32)
        al, bl = tf32(a - ah), tf32(b - bh)
        return ((al @ bh + ah @ bl) + ah @ bh).astype(np.float32)
    return mm


def grads(q, k, v, do, g, scale, mode):
    dv = np.empty(v.shape, np.float64 if mode == "f64" else np.float32)
    dq, dk, dg = backward(q, k, v, do, g, scale, 64, low=mode != "f64", mm=None if mode == "f64" else mm_of(mode),
                          prefix64=True, dv=dv)
    return dq, dk, dv, dg


def main():
    args, T, K, rng = study_setup(4096, 128)
    print(f"T = {T}, K = V = {K}, seed {args.seed}; relative RMS against float64 (dq dk dv dg)")
    print(f"{'gate':<38} {'fp32 products':>30} {'3xTF32':>30} {'TF32 alone':>30}")
    for name, gen in gate_kinds(rng, T):
        q, k, v, do = (rng.standard_normal((T, K)).astype(np.float32) for _ in range(4))
        g = gen().astype(np.float32)
        scale = K ** -0.5
        ref = grads(q, k, v, do, g, scale, "f64")
        cols = []
        for mode in ("f32", "3x", "tf32"):
            got = grads(q, k, v, do, g, scale, mode)
            rel = [np.sqrt(np.mean((a.astype(np.float64) - r) ** 2) / np.mean(r ** 2)) for a, r in zip(got, ref)]
            cols.append(" ".join(f"{x:.1e}" for x in rel))
        print(f"{name:<38} {cols[0]:>30} {cols[1]:>30} {cols[2]:>30}")


if __name__ == "__main__":
    main()
