"""flash-linear-attention's own acceptance cases for simple GLA, run on sgla.

fla checks its kernels in ``tests/ops/test_simple_gla.py``: a forward with h0
and the final state, then ``<o, do> + <ht, dht>`` backward, every output and
gradient (o, ht, dq, dk, dv, dg, dh0) compared with a recurrent reference by
``fla.utils.assert_close`` (relative RMS below a ratio, or max |error| within
an absolute bound).  Here sgla's ``chunk_simple_gla`` and
``fused_recurrent_simple_gla`` take the place of fla's, on the shapes, gates,
scales and dtypes those tests use (fp16 for the chunked cases, fp32 and fp16
for the recurrent ones; head sizes 32, 60, 64, 100, 128 and 256; T from 1;
packed batches), with fla's ratios.  The reference is fla's
``naive_recurrent_simple_gla`` (PyTorch, fp32), the one fla's recurrent tests
take; its chunked tests take its Triton recurrence, which the naive one stands
for here without compiling kernels.  This is the drop-in claim measured the
way fla measures itself; the fp64 reference checks the rest (test_torch.py,
test_backward_torch.py).

Needs a CUDA device and fla importable (its wheels: bench/calls scripts install
them from .whl); skipped otherwise.
"""
import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import sgla  # noqa: E402

pytestmark = pytest.mark.gpu


def _fla():
    try:
        from fla.ops.simple_gla.naive import naive_recurrent_simple_gla
        from fla.utils import assert_close
    except Exception as e:  # ImportError, or triton failing to initialise
        pytest.skip(f"flash-linear-attention not importable: {e}")
    return naive_recurrent_simple_gla, assert_close


def _grads(xs):
    out = []
    for x in xs:
        out.append(x.grad.clone())
        x.grad = None
    return out


def _run(fn, q, k, v, g, h0, do, dht, **kw):
    o, ht = fn(q=q, k=k, v=v, g=g, initial_state=h0, output_final_state=True, **kw)
    ((o * do).sum() + (ht * dht).sum()).backward()
    return [o, ht] + _grads((q, k, v, g, h0))


def _reference(naive, q, k, v, g, h0, do, dht, scale, cu):
    """fla's naive recurrence, per sequence where cu is given (as fla's varlen tests do)"""
    if cu is None:
        o, ht = naive(q=q, k=k, v=v, g=g, scale=scale, initial_state=h0, output_final_state=True)
    else:
        os_, hs = [], []
        for i, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
            oi, hi = naive(q=q[:, a:b], k=k[:, a:b], v=v[:, a:b], g=g[:, a:b], scale=scale,
                           initial_state=h0[i], output_final_state=True)
            os_.append(oi)
            hs.append(hi)
        o, ht = torch.cat(os_, 1), torch.cat(hs, 0)
    ((o * do).sum() + (ht * dht).sum()).backward()
    return [o, ht] + _grads((q, k, v, g, h0))


NAMES = ("o", "ht", "dq", "dk", "dv", "dg", "dh0")


def _compare(assert_close, ref, tri, ratios, dg_atol=None):
    for name, r, t, ratio in zip(NAMES, ref, tri, ratios):
        assert t.shape == r.shape and t.dtype == r.dtype, (name, t.shape, r.shape, t.dtype, r.dtype)
        assert torch.isfinite(t).all(), f"{name}: not finite"
        if name == "dg" and dg_atol is not None:
            assert_close(name, r, t, ratio, err_atol=dg_atol)
        else:
            assert_close(name, r, t, ratio)


# (B, T, H, D, scale, gate normaliser): fla's test_chunk cases, then its grid of B = 2, T in 1, 15, 63,
# 300, D in 64, 32, 100, 256, normalisers 1, 0.1 (steep), 10 (near one), scales 1 and 0.1
CHUNK = [(1, 63, 1, 64, 1, 1), (2, 1024, 4, 60, 1, 1), (2, 1024, 8, 128, 1, 0.1), (2, 1024, 8, 128, 0.1, 1),
         (2, 1024, 8, 128, 0.1, 10), (4, 2048, 8, 64, 0.1, 1)]
CHUNK += [(2, T, 2, D, s, n) for T in (1, 15, 63, 300) for D in (64, 32, 100, 256) for s in (1, 0.1)
          for n in (1, 0.1, 10)]


@pytest.mark.parametrize("B,T,H,D,scale,norm", CHUNK, ids=[f"B{c[0]}-T{c[1]}-H{c[2]}-D{c[3]}-s{c[4]}-n{c[5]}"
                                                           for c in CHUNK])
def test_chunk(B, T, H, D, scale, norm):
    naive, assert_close = _fla()
    torch.manual_seed(42)
    dev, dt = "cuda", torch.float16
    q, k, v = (torch.randn((B, T, H, D), dtype=dt, device=dev).requires_grad_() for _ in range(3))
    g = (F.logsigmoid(torch.randn((B, T, H), device=dev)) / norm).requires_grad_()
    h0 = torch.rand((B, H, D, D), device=dev).requires_grad_()
    dht, do = torch.randn_like(h0), torch.randn_like(v)
    ref = _reference(naive, q, k, v, g, h0, do, dht, scale, None)
    tri = _run(sgla.chunk_simple_gla, q, k, v, g, h0, do, dht, scale=scale)
    _compare(assert_close, ref, tri, (0.004,) + (0.005,) * 6)


# (H, D, cu_seqlens): fla's test_chunk_varlen cases, then its grid of two sequences (a cut at token 16
# or later) in T = 63, 286, 300, 512 tokens at D = 64, 32, 100, 256; gate logsigmoid(N(0, 1)) in fp16
VARLEN = [(4, 64, [0, 15]), (4, 64, [0, 256, 500, 1000]), (4, 100, [0, 15, 100, 300, 1200, 2000])]
VARLEN += [(2, D, [0, c, T]) for T, c in ((63, 40), (286, 17), (300, 151), (512, 300)) for D in (64, 32, 100, 256)]


@pytest.mark.parametrize("H,D,cu", VARLEN, ids=[f"H{c[0]}-D{c[1]}-cu{'_'.join(map(str, c[2]))}" for c in VARLEN])
def test_chunk_varlen(H, D, cu):
    naive, assert_close = _fla()
    torch.manual_seed(42)
    dev, dt = "cuda", torch.float16
    N, T = len(cu) - 1, cu[-1]
    cu = torch.tensor(cu, dtype=torch.int32, device=dev)
    q, k, v = (torch.randn((1, T, H, D), dtype=dt, device=dev).requires_grad_() for _ in range(3))
    g = F.logsigmoid(torch.randn((1, T, H), dtype=dt, device=dev)).requires_grad_()
    h0 = torch.randn((N, H, D, D), device=dev).requires_grad_()
    dht, do = torch.randn_like(h0), torch.randn_like(v)
    ref = _reference(naive, q, k, v, g, h0, do, dht, None, cu)
    tri = _run(sgla.chunk_simple_gla, q, k, v, g, h0, do, dht, cu_seqlens=cu)
    _compare(assert_close, ref, tri, (0.004,) + (0.005,) * 6)


# fla's test_fused_recurrent and its varlen cases: fp32 and fp16 inputs, the gate in q's dtype, dg's
# absolute bound 2e-4 (fla's)
RECUR = [(1, 63, 1, 64, 1, 1, torch.float), (2, 1024, 4, 60, 1, 1, torch.float), (2, 1024, 8, 128, 1, 0.1, torch.float),
         (2, 1024, 8, 128, 0.1, 1, torch.float), (2, 1024, 8, 128, 1, 10, torch.float),
         (4, 2048, 8, 64, 0.1, 1, torch.float), (2, 1024, 8, 128, 1, 0.1, torch.float16),
         (2, 1024, 8, 128, 1, 10, torch.float16)]


@pytest.mark.parametrize("B,T,H,D,scale,norm,dt", RECUR,
                         ids=[f"B{c[0]}-T{c[1]}-H{c[2]}-D{c[3]}-s{c[4]}-n{c[5]}-{str(c[6])[6:]}" for c in RECUR])
def test_fused_recurrent(B, T, H, D, scale, norm, dt):
    naive, assert_close = _fla()
    torch.manual_seed(42)
    dev = "cuda"
    q, k, v = (torch.randn((B, T, H, D), dtype=dt, device=dev).requires_grad_() for _ in range(3))
    g = (F.logsigmoid(torch.randn((B, T, H), dtype=dt, device=dev)) / norm).requires_grad_()
    h0 = torch.randn(B, H, D, D, device=dev).requires_grad_()
    dht, do = torch.randn_like(h0), torch.randn_like(v)
    ref = _reference(naive, q, k, v, g, h0, do, dht, scale, None)
    tri = _run(sgla.fused_recurrent_simple_gla, q, k, v, g, h0, do, dht, scale=scale)
    _compare(assert_close, ref, tri, (0.005,) * 7, dg_atol=2e-4)


RECUR_VARLEN = [(4, 64, 1, 1, [0, 15], torch.float), (4, 64, 1, 1, [0, 256, 500, 1000], torch.float),
                (4, 100, 0.1, 1, [0, 15, 100, 300, 1200, 2000], torch.float),
                (4, 100, 1, 1, [0, 15, 100, 300, 1200, 2000], torch.float),
                (4, 100, 1, 10, [0, 15, 100, 300, 1200, 2000], torch.float),
                (4, 64, 1, 1, [0, 1, 100, 300, 1200, 2048], torch.float16),
                (4, 128, 1, 1, [0, 200, 512, 1200, 2048], torch.float16)]


@pytest.mark.parametrize("H,D,scale,norm,cu,dt", RECUR_VARLEN,
                         ids=[f"H{c[0]}-D{c[1]}-s{c[2]}-n{c[3]}-cu{'_'.join(map(str, c[4]))}-{str(c[5])[6:]}"
                              for c in RECUR_VARLEN])
def test_fused_recurrent_varlen(H, D, scale, norm, cu, dt):
    naive, assert_close = _fla()
    torch.manual_seed(42)
    dev = "cuda"
    N, T = len(cu) - 1, cu[-1]
    cu = torch.tensor(cu, dtype=torch.int32, device=dev)
    q, k, v = (torch.randn((1, T, H, D), dtype=dt, device=dev).requires_grad_() for _ in range(3))
    g = (F.logsigmoid(torch.randn((1, T, H), dtype=dt, device=dev)) / norm).requires_grad_()
    h0 = torch.randn(N, H, D, D, device=dev).requires_grad_()
    dht, do = torch.randn_like(h0), torch.randn_like(v)
    ref = _reference(naive, q, k, v, g, h0, do, dht, scale, cu)
    tri = _run(sgla.fused_recurrent_simple_gla, q, k, v, g, h0, do, dht, scale=scale, cu_seqlens=cu)
    _compare(assert_close, ref, tri, (0.005,) * 7, dg_atol=2e-4)


if __name__ == "__main__":  # a direct run prints fla's assert_close lines (its logger)
    import logging
    import sys
    logging.basicConfig(level=logging.INFO)
    sys.exit(pytest.main([__file__, "-q", "-rs"] + sys.argv[1:] + (["-p", "no:cacheprovider"]
                                                                     if os.environ.get("CI") else [])))
