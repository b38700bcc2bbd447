"""The backward from NumPy: chunk_simple_gla_backward against an independent fp64
reverse-time recurrence (_reference.ref_backward), float64 inputs on the reference
backends, [N, H, V, K] states, errors.  torch: test_backward_torch.py."""
import numpy as np
import pytest

import sgla
from _reference import max_err, ref_backward, ref_forward, rel_l2

TOL = {np.float32: 1e-5, np.float16: 2e-3, np.float64: 1e-12}


def np_inputs(seed, B, T, H, K, V, dtype, gate, h0=True, nseq=0):
    r = np.random.default_rng(seed)
    q, k = r.standard_normal((2, B, T, H, K)).astype(dtype)
    v, do = r.standard_normal((2, B, T, H, V)).astype(dtype)
    g = -r.uniform(0.0, 0.4, (B, T, H)).astype(np.float32) if gate == "g" else None
    gg = -r.uniform(0.01, 0.3, (H,)).astype(np.float32) if gate == "g_gamma" else None
    cu = None
    N = B
    if nseq:
        cu = np.array([0] + sorted(r.integers(0, T + 1, nseq - 1).tolist()) + [T], dtype=np.int64)
        N = nseq
    s = r.standard_normal((N, H, K, V)).astype(np.float32) if h0 else None
    dht = r.standard_normal((N, H, K, V)).astype(np.float32)
    return q, k, v, do, g, gg, s, dht, cu


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=["f32", "f16", "f64"])
@pytest.mark.parametrize("gate", ["none", "g", "g_gamma"])
@pytest.mark.parametrize("nseq", [0, 4])
@pytest.mark.parametrize("T", [45, 1, 0])
def test_numpy_backward(dtype, gate, nseq, T):
    B = 1 if nseq else 2
    q, k, v, do, g, gg, h0, dht, cu = np_inputs(7, B, T, 2, 8, 6, dtype, gate, nseq=nseq)
    if dtype == np.float64:  # every tensor fp64 on the references
        g, gg, h0, dht = (x.astype(np.float64) if x is not None else None for x in (g, gg, h0, dht))
    got = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, g_gamma=gg, scale=0.5, initial_state=h0, dht=dht,
                                         cu_seqlens=cu, chunk=16)
    want = ref_backward(q, k, v, do, g, gg, 0.5, h0, dht, cu)  # 0.5: exact in the fp32 scale field
    for name, x, r in zip(("dq", "dk", "dv", "dg", "dg_gamma", "dh0"), got, want):
        assert (x is None) == (r is None), name
        if x is None:
            continue
        tol = TOL[dtype] if name in ("dq", "dk", "dv") else (1e-12 if dtype == np.float64 else 1e-5)
        if dtype == np.float16 and name not in ("dq", "dk", "dv"):
            tol = 1e-5  # fp32 outputs of fp16 inputs: the inputs are exact
        e = rel_l2(x, r)
        assert e <= tol, f"{name}: rel L2 {e:.3g} > {tol}"
        if name in ("dq", "dk", "dv", "dh0"):  # dg: a token's may be tiny beside its neighbours'
            m = max_err(x, r)
            assert m <= 4 * tol, f"{name}: max error / max|ref| {m:.3g} > {4 * tol}"
        if name in ("dq", "dk", "dv"):
            assert x.dtype == q.dtype


def test_numpy_float64_forward_and_state_v_first():
    q, k, v, do, g, _, h0, dht, _ = np_inputs(8, 2, 33, 2, 5, 7, np.float64, "g")
    g, h0, dht = g.astype(np.float64), h0.astype(np.float64), dht.astype(np.float64)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, scale=0.5, initial_state=h0, output_final_state=True)
    ro, rht = ref_forward(q, k, v, g, None, 0.5, h0)  # the scale field is fp32: 0.5 is exact
    assert o.dtype == np.float64 and ht.dtype == np.float64
    assert rel_l2(o, ro) <= 1e-12 and rel_l2(ht, rht) <= 1e-12
    # [N, H, V, K] states: the same gradients, transposed
    a = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0, dht=dht)
    b = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0.transpose(0, 1, 3, 2),
                                       dht=dht.transpose(0, 1, 3, 2), state_v_first=True)
    for x, y in zip(a[:4], b[:4]):
        assert np.array_equal(x, y)
    assert np.array_equal(a[5], b[5].transpose(0, 1, 3, 2))
    with pytest.raises(sgla.SglaError) as ei:  # the CPU backend takes no float64
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, backend="cpu")
    assert ei.value.status == sgla.Status.ERR_UNSUPPORTED_DTYPE


def test_numpy_backward_errors():
    q, k, v, do, g, _, h0, dht, _ = np_inputs(9, 1, 10, 2, 4, 4, np.float32, "g")
    with pytest.raises(ValueError, match="^do must be"):
        sgla.chunk_simple_gla_backward(q, k, v, do[:, :5], g=g)
    with pytest.raises(ValueError, match="^dht must have"):
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0, dht=dht[:, :1])
    with pytest.raises(sgla.SglaError) as ei:
        sgla.chunk_simple_gla_backward(q, k, v, do, g=-g)
    assert ei.value.status == sgla.Status.ERR_POSITIVE_GATE
    with pytest.raises(sgla.SglaError, match="ref-c has no backward"):
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, backend="ref-c")
