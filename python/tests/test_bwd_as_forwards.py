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
