"""The backward as three forwards (the plan of docs/perf.md, "backward v3"), checked on
the fp64 references: with B the cumulative log gate and scale s,
  dq = forward(q=do, k=v, v=k, g, s, h0 = h0^T)
  dv = rev(forward(q=rev(k), k=rev(q), v=rev(do), g', s, h0 = dht / s))
  dk = rev(forward(q=rev(v), k=rev(do), v=rev(q), g', s, h0 = dht^T / s))
  dh0 = s exp(g_0) ht' of the dv pass,  dg_t = sum_{u>=t} (q_u.dq_u - k_u.dk_u) + <ht, dht>
where rev reverses time and g'[t'] = g[T - t'] (g'[0] = 0): the decay between a query
and a later key, seen backwards (with g_gamma: g_gamma as it is, h0 divided by exp(gamma)
too, and dh0 = s exp(gamma) ht').  A fast backward built on the forward kernels relies
on every line; this test fails if one is wrong."""
import numpy as np
import pytest

import sgla


def rev(x):
    return np.ascontiguousarray(x[:, ::-1])


def tr(s):
    return np.ascontiguousarray(s.transpose(0, 1, 3, 2))


@pytest.mark.parametrize("T", [1, 37, 130])
@pytest.mark.parametrize("gate", ["g", "g_gamma", "none"])
def test_backward_is_three_forwards(T, gate):
    r = np.random.default_rng(T * 7 + len(gate))
    B, H, K, V, s = 2, 3, 8, 6, 0.375  # s exact in fp32: the C descriptor holds a float
    q, k = r.standard_normal((2, B, T, H, K))
    v, do = r.standard_normal((2, B, T, H, V))
    h0, dht = r.standard_normal((2, B, H, K, V))
    g = -r.uniform(0.0, 0.5, (B, T, H)) if gate == "g" else None
    gg = -r.uniform(0.01, 0.3, (H,)) if gate == "g_gamma" else None
    dq, dk, dv, dg, dgg, dh0 = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, g_gamma=gg, scale=s,
                                                              initial_state=h0, dht=dht, backend="ref-b")

    def fwd(a, b, c, gate_g, h, final=False):
        kw = dict(g=gate_g, g_gamma=gg if gate_g is None else None, scale=s, initial_state=h,
                  output_final_state=final, backend="ref-b")
        return sgla.chunk_simple_gla(a, b, c, **kw)

    gl = g if g is not None else (np.broadcast_to(gg, (B, T, H)).copy() if gg is not None else None)
    gs = None
    if gl is not None:
        gs = np.zeros_like(gl)
        gs[:, 1:] = gl[:, :0:-1]
    oq, htq = fwd(do, v, k, g, tr(h0), final=True)
    ov, htv = fwd(rev(k), rev(q), rev(do), gs, dht / s, final=True)
    ok, _ = fwd(rev(v), rev(do), rev(q), gs, tr(dht) / s)
    tol = 1e-11
    assert np.abs(oq - dq).max() < tol * np.abs(dq).max()
    assert np.abs(rev(ov) - dv).max() < tol * np.abs(dv).max()
    assert np.abs(rev(ok) - dk).max() < tol * np.abs(dk).max()
    a0 = np.exp(gl[:, 0, :]) if gl is not None else np.ones((B, H))
    assert np.abs(s * a0[:, :, None, None] * htv - dh0).max() < tol * np.abs(dh0).max()
    ht = tr(htq)  # the dq pass's final state is ht^T
    x = (q * dq - k * dk).sum(-1)
    dg_from = np.flip(np.cumsum(np.flip(x, 1), 1), 1) + (ht * dht).sum((-1, -2))[:, None, :]
    if g is not None:
        assert np.abs(dg_from - dg).max() < 1e-10 * np.abs(dg).max()
    if gg is not None:
        assert np.abs(dg_from.sum((0, 1)) - dgg).max() < 1e-10 * np.abs(dgg).max()
        # a constant gate stays a constant gate backwards: g_gamma as it is, with the first token's
        # extra decay taken out of the entering state (h0 = dht / (s exp(gamma)))
        e = np.exp(gg)[None, :, None, None]
        ov2, htv2 = fwd(rev(k), rev(q), rev(do), None, dht / (s * e), final=True)
        ok2, _ = fwd(rev(v), rev(do), rev(q), None, tr(dht) / (s * e))
        assert np.abs(rev(ov2) - dv).max() < tol * np.abs(dv).max()
        assert np.abs(rev(ok2) - dk).max() < tol * np.abs(dk).max()
        assert np.abs(s * e * htv2 - dh0).max() < tol * np.abs(dh0).max()


@pytest.mark.parametrize("T,C", [(1, 64), (130, 64), (150, 16), (64, 64), (300, 32)])
@pytest.mark.parametrize("gate", ["g", "g_gamma", "steep"])
@pytest.mark.parametrize("form", ["own", "next"])
def test_dg_assembled_per_chunk(T, C, gate, form):
    """dg as the CUDA passes assemble it (src/cuda/chunk_bwd3.cu, dg3_kernel): per chunk c = [c0, c1)
    and row r in it, the pairs (query u >= r, key s < r) in four classes, each a sum of terms of
    one kind: X_c = s exp(b_L) <R_c, S_c> (u after the chunk or the dht "query", s before it or the
    h0 "key"), e_u = q_u . (the state's part of dq_u), u_s = k_s . (the state's part of dk_s), and the
    chunk's own off-diagonal pairs from the difference of the strict in-chunk dots.  Checked in fp64
    against ref-b's dg, with steep gates too (g = -30, where dg ~ 1e-12).  form "next": an odd chunk
    but the last takes X_c as the passes do where they keep every other chunk's state (chunk_fwd.cuh,
    blob_kept): s <R_c, S_{c+1}> less the chunk's u terms."""
    r = np.random.default_rng(T + C + len(gate))
    K, V, s = 5, 4, 0.375
    q, k = r.standard_normal((2, T, K))
    v, do = r.standard_normal((2, T, V))
    h0, dht = r.standard_normal((2, K, V))
    if gate == "g":
        g = -r.uniform(0.01, 0.5, T)
    elif gate == "steep":
        g = np.full(T, -30.0)
    else:
        g = np.full(T, -0.2)
    _, _, _, ref, _, _ = sgla.chunk_simple_gla_backward(
        q[None, :, None], k[None, :, None], v[None, :, None], do[None, :, None], g=g[None, :, None], scale=s,
        initial_state=h0[None, None], dht=dht[None, None], backend="ref-b")
    ref = ref[0, :, 0]
    B = np.cumsum(g)
    Bm = lambda t: B[t] if t >= 0 else 0.0  # noqa: E731

    def pair(u, t):  # the term of query u, key t <= u
        return s * np.exp(B[u] - B[t]) * (do[u] @ v[t]) * (q[u] @ k[t])

    def state(c0):  # entering token c0
        return sum((np.exp(Bm(c0 - 1) - B[t]) * np.outer(k[t], v[t]) for t in range(c0)), np.exp(Bm(c0 - 1)) * h0)

    dg = np.zeros(T)
    for c0 in range(0, T, C):
        c1 = min(T, c0 + C)
        S = state(c0)
        R = sum((np.exp(B[u] - B[c1 - 1]) * np.outer(q[u], do[u]) for u in range(c1, T)),
                np.exp(B[T - 1] - B[c1 - 1]) * dht / s)
        e = np.array([s * np.exp(B[u] - Bm(c0 - 1)) * (q[u] @ S @ do[u]) for u in range(c0, c1)])
        us = np.array([s * np.exp(B[c1 - 1] - B[t]) * (k[t] @ R @ v[t]) for t in range(c0, c1)])
        if form == "next" and (c0 // C) % 2 == 1 and c1 < T:
            X = s * np.sum(R * state(c1)) - us.sum()
        else:
            X = s * np.exp(B[c1 - 1] - Bm(c0 - 1)) * np.sum(R * S)
        qi = np.array([sum(pair(u, t) for t in range(c0, u)) for u in range(c0, c1)])  # strict: t < u
        ki = np.array([sum(pair(u, t) for u in range(t + 1, c1)) for t in range(c0, c1)])  # strict: u > t
        for i in range(c1 - c0):
            dg[c0 + i] = X + e[i:].sum() + us[:i].sum() + (qi[i:] - ki[i:]).sum()
    scale_ref = np.abs(ref).max()
    assert np.abs(dg - ref).max() <= 1e-12 * max(scale_ref, 1e-300) + 1e-300, (np.abs(dg - ref).max(), scale_ref)
