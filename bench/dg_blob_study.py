#!/usr/bin/env python3
"""Could the backward's 16-bit state copies (the blob) be 8-bit?

The CUDA backward's gate gradient takes, per chunk, exp(b_L) <dS, S> with S read from a copy
of every chunk's state written by the time-order pass (bf16 at K = V = 128: 268 MB written and
read again at 8x4096x16x128, about a third of what dg costs: docs/perf.md, sessions 13-14).
This script models that term with the copy rounded to bf16 (as the kernels do), or to fp8
(e4m3 or e5m2, the tensor's max-abs scaled to the format's largest value), in
bench/dg_identity_study.py's kernel model, and prints each dg's relative RMS against fp64.
numpy only; run: python3 bench/dg_blob_study.py [--T 4096] [--K 128]
"""

import numpy as np

from dg_identity_study import backward, bf16, gate_kinds, study_setup


def fp8(x, mbits, emin, vmax):
    """Round to an 8-bit float with mbits mantissa bits and smallest normal exponent emin
    (subnormals below it), after scaling the tensor's max-abs to vmax; returned unscaled."""
    x = np.asarray(x, np.float64)
    m = np.max(np.abs(x))
    if m == 0:
        return x.astype(np.float32)
    y = x * (vmax / m)
    e = np.maximum(np.floor(np.log2(np.maximum(np.abs(y), 1e-300))), emin)
    step = 2.0 ** (e - mbits)
    return (np.round(y / step) * step * (m / vmax)).astype(np.float32)


def main():
    args, T, K, rng = study_setup(4096, 128)
    # (copy, reverse state): the second also rounded to bf16 is X_c made from the 16-bit state the
    # reverse pass stores for its outputs (S_s) rather than from its fp32 registers
    blobs = [("bf16 (now)", bf16, None), ("e4m3", lambda x: fp8(x, 3, -6, 448.0), None),
             ("e5m2", lambda x: fp8(x, 2, -14, 57344.0), None), ("bf16, dS bf16", bf16, bf16)]
    gates = gate_kinds(rng, T)
    print(f"T = {T}, K = V = {K}, seed {args.seed}: dg's relative RMS against fp64, by the state copy's format")
    print(f"{'gate':<34}" + "".join(f"{n:>15}" for n, _, _ in blobs))
    for name, gen in gates:
        q, k, v, do = (bf16(rng.standard_normal((T, K))) for _ in range(4))
        g = gen().astype(np.float32)
        ref = backward(q, k, v, do, g, K ** -0.5, 64, low=False)[2]
        rms = np.sqrt(np.mean(ref ** 2))
        errs = [np.sqrt(np.mean((backward(q, k, v, do, g, K ** -0.5, 64, low=True, blob=bl, ds_round=dr)[2] - ref) ** 2))
                / rms for _, bl, dr in blobs]
        print(f"{name:<34}" + "".join(f"{x:15.2e}" for x in errs), flush=True)


if __name__ == "__main__":
    main()
