"""The TF32 forward's chunk step (src/cuda/chunk_fwd_tf32.cu, 16 warps) emulated at the fragment level
in fp64 (no TF32 split): the index math of Q S, the score quarters, the shared A tile in A.V's key order,
A.V and K^T.V against numpy, and the bank of every lane for the fragment loads and stores.
Run: python3 bench/tf32_fragment_sim.py  (prints o and S relative errors ~1e-16 and 32 distinct banks each)."""
import numpy as np
rng = np.random.default_rng(0)
KD, BV, LK, LV, LS, LA = 128, 64, 132, 68, 72, 68
MS = KD // 64

def mma(a, b, c):
    A = np.zeros((16, 8)); B = np.zeros((8, 8)); C = np.zeros((16, 8))
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3
        A[gid, tig], A[gid + 8, tig], A[gid, tig + 4], A[gid + 8, tig + 4] = a[lane]
        B[tig, gid], B[tig + 4, gid] = b[lane]
        C[gid, 2 * tig], C[gid, 2 * tig + 1], C[gid + 8, 2 * tig], C[gid + 8, 2 * tig + 1] = c[lane]
    D = A @ B + C
    return [[D[l >> 2, 2 * (l & 3)], D[l >> 2, 2 * (l & 3) + 1], D[(l >> 2) + 8, 2 * (l & 3)], D[(l >> 2) + 8, 2 * (l & 3) + 1]] for l in range(32)]

q = rng.standard_normal((64, KD)); k = rng.standard_normal((64, KD)) / np.sqrt(KD); v = rng.standard_normal((64, BV))
S0 = rng.standard_normal((KD, BV)); g = -0.3 * rng.random(64); b = np.cumsum(g * np.log2(np.e)); scale = 0.1
# shared memory
qs = np.zeros(64 * LK); ks = np.zeros(64 * LK); vs = np.zeros(64 * LV); Ss = np.zeros(KD * LS); At = np.full(64 * LA, np.nan)
for r in range(64):
    qs[r * LK:r * LK + KD] = q[r]; ks[r * LK:r * LK + KD] = k[r]; vs[r * LV:r * LV + BV] = v[r]
for r in range(KD):
    Ss[r * LS:r * LS + BV] = S0[r]
wt = np.exp2(b[63] - b)
o = np.zeros((64, BV)); Snew = np.zeros((KD, BV))
accs = {}
# phase 1: QS and score quarters, A tile writes
for warp in range(16):
    m, qt = warp & 3, warp >> 2
    acc = [[[0.0] * 4 for _ in range(32)] for _ in range(2)]; sc = [[[0.0] * 4 for _ in range(32)] for _ in range(2)]
    live = qt <= m
    for kk in range(KD // 8):
        a = []
        for lane in range(32):
            gid, tig = lane >> 2, lane & 3; i0 = 16 * m + gid; base = i0 * LK + 8 * kk + tig
            a.append([qs[base], qs[base + 8 * LK], qs[base + 4], qs[base + 8 * LK + 4]])
        for nt in range(2):
            bf = []
            for lane in range(32):
                gid, tig = lane >> 2, lane & 3; sb = (8 * kk + tig) * LS + 16 * qt + 8 * nt + gid
                bf.append([Ss[sb], Ss[sb + 4 * LS]])
            acc[nt] = mma(a, bf, acc[nt])
        if live:
            for nt in range(2):
                bf = []
                for lane in range(32):
                    gid, tig = lane >> 2, lane & 3; kb = (16 * qt + 8 * nt + gid) * LK + 8 * kk + tig
                    bf.append([ks[kb], ks[kb + 4]])
                sc[nt] = mma(a, bf, sc[nt])
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3; i0 = 16 * m + gid; i1 = i0 + 8
        r0, r1 = scale * np.exp2(b[i0]), scale * np.exp2(b[i1])
        for nt in range(2):
            acc[nt][lane] = [acc[nt][lane][0] * r0, acc[nt][lane][1] * r0, acc[nt][lane][2] * r1, acc[nt][lane][3] * r1]
        if live:
            for nt in range(2):
                for e in range(4):
                    i = i0 if e < 2 else i1; j = 16 * qt + 8 * nt + 2 * tig + (e & 1)
                    At[i * LA + 16 * qt + 8 * nt + tig + 4 * (e & 1)] = sc[nt][lane][e] * scale * np.exp2(b[i] - b[j]) if j <= i else 0.0
    accs[warp] = acc
# phase 2: A.V, o; U
for warp in range(16):
    m, qt = warp & 3, warp >> 2; acc = accs[warp]
    for kt in range(8):
        if (kt >> 1) > m: continue
        a = []
        for lane in range(32):
            gid, tig = lane >> 2, lane & 3; i0 = 16 * m + gid; aa = i0 * LA + 8 * kt + tig
            a.append([At[aa], At[aa + 8 * LA], At[aa + 4], At[aa + 8 * LA + 4]])
        for nt in range(2):
            bf = []
            for lane in range(32):
                gid, tig = lane >> 2, lane & 3; vb = (8 * kt + 2 * tig) * LV + 16 * qt + gid
                bf.append([vs[vb + 8 * nt], vs[vb + LV + 8 * nt]])
            acc[nt] = mma(a, bf, acc[nt])
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3; i0 = 16 * m + gid
        for nt in range(2):
            c0 = 16 * qt + 8 * nt + 2 * tig
            o[i0, c0], o[i0, c0 + 1], o[i0 + 8, c0], o[i0 + 8, c0 + 1] = acc[nt][lane]
    U = [[[[0.0] * 4 for _ in range(32)] for _ in range(2)] for _ in range(MS)]
    for kt in range(8):
        bfs = []
        for nt in range(2):
            bf = []
            for lane in range(32):
                gid, tig = lane >> 2, lane & 3; j = 8 * kt + 2 * tig; vb = j * LV + 16 * qt + gid
                bf.append([vs[vb + 8 * nt], vs[vb + LV + 8 * nt]])
            bfs.append(bf)
        for mt in range(MS):
            a = []
            for lane in range(32):
                gid, tig = lane >> 2, lane & 3; j = 8 * kt + 2 * tig; srow = (KD // 4) * m + gid
                ka = j * LK + srow + 16 * mt; w0, w1 = wt[j], wt[j + 1]
                a.append([ks[ka] * w0, ks[ka + 8] * w0, ks[ka + LK] * w1, ks[ka + LK + 8] * w1])
            for nt in range(2):
                U[mt][nt] = mma(a, bfs[nt], U[mt][nt])
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3; srow = (KD // 4) * m + gid; scol = 16 * qt + 2 * tig
        for mt in range(MS):
            for nt in range(2):
                for e in range(4):
                    r = srow + 16 * mt + 8 * (e >> 1); cl = scol + 8 * nt + (e & 1)
                    Snew[r, cl] = np.exp2(b[63]) * S0[r, cl] + U[mt][nt][lane][e]
# reference
W = np.where(np.arange(64)[None, :] <= np.arange(64)[:, None], np.exp2(b[:, None] - b[None, :]), 0.0)
o_ref = scale * (np.exp2(b)[:, None] * (q @ S0)) + (scale * W * (q @ k.T)) @ v
S_ref = np.exp2(b[63]) * S0 + (k * wt[:, None]).T @ v
print("o rel", np.linalg.norm(o - o_ref) / np.linalg.norm(o_ref), "S rel", np.linalg.norm(Snew - S_ref) / np.linalg.norm(S_ref))
# bank conflicts of the A tile's stores and loads (one instruction: 32 lanes, 32 banks of 4 bytes)
for name, addr in (("A store", lambda gid, tig: (16 * 1 + gid) * LA + 16 * 0 + 8 * 0 + tig + 4 * 0),
                   ("A load a0", lambda gid, tig: (gid) * LA + 8 * 0 + tig), ("A load a2", lambda gid, tig: gid * LA + tig + 4),
                   ("V load AV", lambda gid, tig: (2 * tig) * LV + gid), ("S load", lambda gid, tig: tig * LS + gid),
                   ("K load scores", lambda gid, tig: gid * LK + tig), ("K load U", lambda gid, tig: (2 * tig) * LK + gid)):
    banks = [addr(l >> 2, l & 3) % 32 for l in range(32)]
    print(f"{name:14s} distinct banks {len(set(banks))}")
