#!/usr/bin/env python3
"""The index logic of chunk_bwd.cu's state_prod_tc (the state products of the grads kernel on mma.sync
m16n8k8, 3xTF32), emulated lane by lane in numpy: each lane's loads (its B values of 8 consecutive j, its
A values at R's odd stride), the fragments assembled as the instruction reads them (A a0 row g k t, a1
g + 8 t, a2 g t + 4, a3 g + 8 t + 4; B b0 k t column g, b1 t + 4 g; C c0 c1 row g columns 2t 2t+1, c2
c3 row g + 8), the passes over n8 tiles, the zeros past nj; checked against X = w (R M^T) in fp64
(the split itself is left out: exact products here).  Also counts the banks of the A loads.
A model of the CUDA code, kept beside it: change both together.  Run: python3 bench/grads_tc_emulate.py"""
import numpy as np

BT, NW, NTP = 32, 8, 2
rng = np.random.default_rng(7)


def state_prod_tc(R, lr, M, ld, w, lx, nc, nj, trans):
    X = np.full(BT * lx, np.nan)
    ntl = nc // 8
    banks_worst = 1
    for wp in range(NW):
        pass_ = 0
        while 8 * NTP * pass_ < ntl:
            nt0 = wp + 8 * NTP * pass_
            acc = np.zeros((2, NTP, 32, 4))  # [mt][n][lane][c0..c3]

            def load_b(j0):
                b = np.zeros((NTP, 32, 8))
                for n in range(NTP):
                    nt = nt0 + 8 * n
                    for lane in range(32):
                        g, t = lane >> 2, lane & 3
                        c, jb = 8 * nt + g, j0 + 8 * t
                        if nt < ntl and jb < nj:
                            for e in range(8):
                                b[n, lane, e] = M[c * ld + jb + e] if trans else M[(jb + e) * ld + c]
                return b
            b = load_b(0)
            for j0 in range(0, nj, 32):
                bn = load_b(j0 + 32)
                for s in range(4):
                    fa = np.zeros((2, 32, 4))
                    for mt in range(2):
                        banks = {}
                        for lane in range(32):
                            g, t = lane >> 2, lane & 3
                            jb = j0 + 8 * t
                            inn = jb < nj
                            base = g * lr + jb + 16 * mt * lr + s
                            idx = [base, base + 8 * lr, base + 4, base + 8 * lr + 4]
                            fa[mt, lane] = [R[i] if inn else 0.0 for i in idx]
                            if inn:
                                banks.setdefault(idx[0] % 32, set()).add(idx[0])
                        banks_worst = max(banks_worst, max((len(v) for v in banks.values()), default=1))
                    for n in range(NTP):
                        if nt0 + 8 * n >= ntl:
                            continue
                        # assemble the matrices the instruction sees
                        for mt in range(2):
                            A = np.zeros((16, 8)); B = np.zeros((8, 8))
                            for lane in range(32):
                                g, t = lane >> 2, lane & 3
                                A[g, t], A[g + 8, t], A[g, t + 4], A[g + 8, t + 4] = fa[mt, lane]
                                B[t, g], B[t + 4, g] = b[n, lane, s], b[n, lane, 4 + s]
                            C = A @ B
                            for lane in range(32):
                                g, t = lane >> 2, lane & 3
                                acc[mt, n, lane] += [C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1]]
                b = bn
            for mt in range(2):
                for n in range(NTP):
                    nt = nt0 + 8 * n
                    if nt >= ntl:
                        continue
                    for lane in range(32):
                        g, t = lane >> 2, lane & 3
                        r, c = 16 * mt + g, 8 * nt + 2 * t
                        X[r * lx + c], X[r * lx + c + 1] = w[r] * acc[mt, n, lane, 0], w[r] * acc[mt, n, lane, 1]
                        X[(r + 8) * lx + c] = w[r + 8] * acc[mt, n, lane, 2]
                        X[(r + 8) * lx + c + 1] = w[r + 8] * acc[mt, n, lane, 3]
            pass_ += 1
    return X, banks_worst


def check(K, V, L):
    lk, lv = K + 1, V + 1
    lx = max(K, V) + 1
    worst = 0.0
    for trans, nc, nj, lr in ((True, K, V, lv), (False, V, K, lk)):
        R = np.full(BT * lr + 64, np.nan)  # rows past L (and the pad column) hold garbage
        Rm = rng.standard_normal((BT, nj))
        Rm[L:] = np.nan
        for i in range(BT):
            R[i * lr:i * lr + nj] = Rm[i]
        M = rng.standard_normal(K * V)  # K x V state: M(c, j) = M[c V + j] (trans) or M[j V + c]
        w = rng.standard_normal(BT)
        X, banks = state_prod_tc(R, lr, M, V, w, lx, nc, nj, trans)
        Mm = M.reshape(K, V) if trans else M.reshape(K, V).T  # [c][j]
        ref = w[:, None] * (Rm @ Mm.T)
        got = X.reshape(BT, lx)[:, :nc]
        err = np.abs(got[:L] - ref[:L]).max() / np.abs(ref[:L]).max()
        assert np.isfinite(got[:L]).all() and err < 1e-12, (K, V, L, trans, err)
        worst = max(worst, err)
        print(f"K={K:3d} V={V:3d} L={L:2d} {'dO S^T' if trans else 'K dS  '}: max rel {err:.1e}, "
              f"A loads at most {banks}-way on a bank")
    return worst


if __name__ == "__main__":
    for K, V, L in ((128, 128, 32), (64, 64, 7), (32, 48, 32), (256, 256, 20), (200, 72, 32), (8, 8, 1), (136, 40, 31)):
        check(K, V, L)
    print("ok")
