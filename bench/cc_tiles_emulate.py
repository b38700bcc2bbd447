#!/usr/bin/env python3
"""The index logic of chunk_bwd.cu's tiled loops (state_prod, tri_prod, the 2 x 2 score tiles), emulated
thread by thread in numpy and checked against the plain products at odd head sizes and partial
blocks, before any GPU run (the shared layout, its float4 alignment, the zero-fills, the rows past L).
A model of the CUDA code, kept beside it: change both together.  Run: python3 bench/cc_tiles_emulate.py"""
import numpy as np
BT, NT, MAXK = 32, 256, 256
rng = np.random.default_rng(1)

def state_prod(R, lr, M, ld, w, lx, nc, nj, trans, xsize):
    """R: smem flat, M: global flat; returns X flat (smem region of xsize floats)."""
    X = np.full(xsize, np.nan)
    mc = (nc + 31) // 32; ncp = 32 * mc; LT = ncp + 4
    acc = np.zeros((NT, MAXK // 32, 4))
    for j0 in range(0, nj, BT):
        jt = min(nj - j0, BT)
        Mt = X  # shares space
        for tid in range(NT):
            for idx in range(tid, BT * ncp, NT):
                if trans:
                    c, jj = idx // BT, idx % BT
                    Mt[jj * LT + c] = M[c * ld + j0 + jj] if (jj < jt and c < nc) else 0.0
                else:
                    jj, c = idx // ncp, idx % ncp
                    Mt[jj * LT + c] = M[(j0 + jj) * ld + c] if (jj < jt and c < nc) else 0.0
        for tid in range(NT):
            lane, wp = tid & 31, tid >> 5
            for jj in range(jt):
                r = R[lane * lr + j0 + jj]
                for m in range(MAXK // 32):
                    if m < mc:
                        base = jj * LT + 4 * wp + 32 * m
                        assert base % 4 == 0 and base + 3 < xsize
                        acc[tid, m, :] += r * Mt[base:base + 4]
    for tid in range(NT):
        lane, wp = tid & 31, tid >> 5
        for m in range(MAXK // 32):
            for q in range(4):
                c = 4 * wp + 32 * m + q
                if m < mc and c < nc:
                    X[lane * lx + c] = w[lane] * acc[tid, m, q]
    return X

def x_floats(K, V):
    mx = max(K, V); lt = 32 * ((mx + 31) // 32) + 4
    return BT * max(mx + 1, lt)

def tri_prod(lower, W, F, lf, X, lx, nc, L):
    out = {}
    for tid in range(NT):
        lane, w = tid & 31, tid >> 5; mc = (nc + 31) // 32
        acc = np.zeros((4, MAXK // 32))
        for y in range(4):
            for m in range(MAXK // 32):
                r, c = w + 8 * y, lane + 32 * m
                acc[y, m] = X[r * lx + c] if (m < mc and r < L and c < nc) else 0.0
        s0, s1 = (0, min(w + 25, L)) if lower else (w, L)
        for s in range(s0, s1):
            wr = [W[(w + 8 * y) * (BT + 1) + s] if lower else W[s * (BT + 1) + w + 8 * y] for y in range(4)]
            for m in range(MAXK // 32):
                if m < mc:
                    c = lane + 32 * m
                    f = F[s * lf + c] if c < nc else 0.0
                    for y in range(4):
                        acc[y, m] += wr[y] * f
        for y in range(4):
            for m in range(MAXK // 32):
                r, c = w + 8 * y, lane + 32 * m
                if m < mc and r < L and c < nc:
                    assert (r, c) not in out
                    out[(r, c)] = acc[y, m]
    return out

def run(K, V, L):
    lk, lv, lx = K + 1, V + 1, max(K, V) + 1
    xs = x_floats(K, V)
    Qs = np.full(BT * lk, np.nan); Ks = np.full(BT * lk, np.nan); Vs = np.full(BT * lv, np.nan); dOs = np.full(BT * lv, np.nan)
    q = rng.standard_normal((L, K)); k = rng.standard_normal((L, K)); v = rng.standard_normal((L, V)); do = rng.standard_normal((L, V))
    for r in range(L):
        Qs[r * lk:r * lk + K] = q[r]; Ks[r * lk:r * lk + K] = k[r]; Vs[r * lv:r * lv + V] = v[r]; dOs[r * lv:r * lv + V] = do[r]
    S = rng.standard_normal((K, V)); dS = rng.standard_normal((K, V))
    w = np.full(32, np.nan); w[:L] = rng.random(L) + 0.5
    # dq state part: X[i][c] = w[i] sum_j dO[i][j] S[c][j]
    X = state_prod(dOs, lv, S.ravel(), V, w, lx, K, V, True, xs)
    ref = w[:L, None] * (do @ S.T)
    got = np.array([[X[i * lx + c] for c in range(K)] for i in range(L)])
    assert np.allclose(got, ref), ("dq", K, V, L)
    # dv state part: X[j][c] = w[j] sum_m K[j][m] dS[m][c]
    X = state_prod(Ks, lk, dS.ravel(), V, w, lx, V, K, False, xs)
    ref = w[:L, None] * (k @ dS)
    got = np.array([[X[i * lx + c] for c in range(V)] for i in range(L)])
    assert np.allclose(got, ref), ("dv", K, V, L)
    # A/dP tiles and tri products
    A = np.full(BT * (BT + 1), np.nan)
    for tid in range(NT):
        i0, j0 = 2 * (tid >> 4), 2 * (tid & 15)
        a = np.zeros((2, 2))
        if j0 <= i0 + 1 and i0 < L:
            i1 = i0 + 1 if i0 + 1 < L else i0; j1 = j0 + 1 if j0 + 1 < L else j0
            for x, ii in enumerate((i0, i1)):
                for y, jj in enumerate((j0, j1)):
                    a[x, y] = sum(Qs[ii * lk + c] * Ks[jj * lk + c] for c in range(K))
        for x in range(2):
            for y in range(2):
                i, j = i0 + x, j0 + y
                if i >= L or j >= L: continue
                A[i * (BT + 1) + j] = a[x, y] if j <= i else 0.0
    Aref = np.tril(q @ k.T)
    got = np.array([[A[i * (BT + 1) + j] for j in range(L)] for i in range(L)])
    assert np.allclose(got, Aref), ("A", K, V, L)
    X = np.zeros(xs); X[:] = np.nan
    Xv = rng.standard_normal((L, max(K, V)))
    for r in range(L): X[r * lx:r * lx + max(K, V)] = Xv[r]
    out = tri_prod(True, A, Ks, lk, X, lx, K, L)
    ref = Xv[:, :K] + Aref @ k
    for (r, c), val in out.items(): assert np.isclose(val, ref[r, c]), ("lower", r, c)
    assert len(out) == L * K
    out = tri_prod(False, A, dOs, lv, X, lx, V, L)
    ref = Xv[:, :V] + Aref.T @ do
    for (r, c), val in out.items(): assert np.isclose(val, ref[r, c]), ("upper", r, c)
    assert len(out) == L * V
    print("ok", K, V, L)

for K, V, L in [(64, 64, 32), (32, 48, 17), (128, 64, 32), (48, 128, 5), (100, 36, 31), (256, 256, 32), (16, 200, 1)]:
    run(K, V, L)
