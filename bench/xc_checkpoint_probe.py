"""Could the three-pass backward store the dq pass's chunk state for X_c only every m chunks and
telescope between (X_{c+1} = X_c + U_c - E_{c+1})?  An fp64 emulation with bf16 copies of the carried
states (as the passes' products use them), one (sequence, head), T = 4096, K = V = 64: prints the
worst relative error of X_c for m = 1, 2, 4, 8 and three gate ranges (docs/perf.md, session 6).
    python3 bench/xc_checkpoint_probe.py   (numpy)"""
import numpy as np
def bf16(x):
    x = np.asarray(x, np.float32); u = x.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)
rng = np.random.default_rng(0)
T, K, V, C, s = 4096, 64, 64, 64, 0.125
q, k = bf16(rng.normal(size=(T, K))), bf16(rng.normal(size=(T, K)))
v, do = bf16(rng.normal(size=(T, V))), bf16(rng.normal(size=(T, V)))
for gname, g in (("mild", -rng.uniform(0.001, 0.05, T)), ("near0", -rng.uniform(0, 1e-3, T)), ("strong", -rng.uniform(0.2, 2, T))):
    B = np.cumsum(g); nc = T // C
    Bm = lambda t: B[t] if t >= 0 else 0.0
    # states in fp64 (exact), and their bf16 copies as the passes use them
    S = [np.zeros((K, V))]; 
    for c in range(nc):
        c0, c1 = c * C, (c + 1) * C
        w = np.exp(B[c1 - 1] - B[c0:c1])
        S.append(np.exp(B[c1 - 1] - Bm(c0 - 1)) * S[-1] + (k[c0:c1] * w[:, None]).T @ v[c0:c1])
    R = [None] * (nc + 1); R[nc] = np.zeros((K, V))
    for c in range(nc - 1, -1, -1):
        c0, c1 = c * C, (c + 1) * C
        w = np.exp(B[c0:c1] - Bm(c0 - 1))
        R[c] = np.exp(B[c1 - 1] - Bm(c0 - 1)) * R[c + 1] + (q[c0:c1] * w[:, None]).T @ do[c0:c1]
    # R[c+1] = state entering chunk c from the right (relative to B[c1-1]); S[c] entering from the left
    def parts(exact):
        E, U, X = np.zeros(nc), np.zeros(nc), np.zeros(nc)
        for c in range(nc):
            c0, c1 = c * C, (c + 1) * C
            Sc = S[c] if exact else bf16(S[c]); Rc = R[c + 1] if exact else bf16(R[c + 1])
            e = s * np.exp(B[c0:c1] - Bm(c0 - 1)) * np.einsum('uk,kv,uv->u', q[c0:c1], Sc, do[c0:c1])
            u = s * np.exp(B[c1 - 1] - B[c0:c1]) * np.einsum('tk,kv,tv->t', k[c0:c1], Rc, v[c0:c1])
            E[c], U[c] = e.sum(), u.sum()
            X[c] = s * np.exp(B[c1 - 1] - Bm(c0 - 1)) * np.sum(R[c + 1] * (S[c] if exact else bf16(S[c])))
        return E, U, X
    E0, U0, X0 = parts(True)
    E1, U1, X1 = parts(False)
    for m in (1, 2, 4, 8):
        Xt = X1.copy()
        for c in range(nc):
            if c % m: Xt[c] = Xt[c - 1] + U1[c - 1] - E1[c]
        err = np.abs(Xt - X0).max() / np.abs(X0).max()
        print(f"{gname:6s} checkpoint every {m}: max |X err| / max|X| = {err:.2e}   (|E|/|X| ~ {np.abs(E0).max()/np.abs(X0).max():.2f})")
