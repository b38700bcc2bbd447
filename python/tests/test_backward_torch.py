"""The backward through torch: autograd (gradcheck in float64 on the references,
fp32 gradients equal to the explicit backward and to an independent fp64
recurrence, dht flowing from a used final state), torch.compile seeing one
operator (fullgraph), and on CUDA every gradient against fp64."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sgla  # noqa: E402
from _reference import max_err, ref_backward, ref_forward, rel_l2  # noqa: E402


def t_inputs(seed, B, T, H, K, V, dtype, device="cpu", gate="g", nseq=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, H, K, generator=gen, dtype=torch.float64)
    k = torch.randn(B, T, H, K, generator=gen, dtype=torch.float64)
    v = torch.randn(B, T, H, V, generator=gen, dtype=torch.float64)
    g = -torch.rand(B, T, H, generator=gen, dtype=torch.float64) * 0.4 if gate == "g" else None
    gg = -(torch.rand(H, generator=gen, dtype=torch.float64) * 0.3 + 0.01) if gate == "g_gamma" else None
    N = nseq or B
    cu = torch.tensor([0] + sorted(torch.randint(0, T + 1, (nseq - 1,), generator=gen).tolist()) + [T]) if nseq else None
    h0 = torch.randn(N, H, K, V, generator=gen, dtype=torch.float64)
    aux = torch.float64 if dtype == torch.float64 else torch.float32
    cv = lambda x, dt: x.to(dt).to(device).requires_grad_() if x is not None else None  # noqa: E731
    return (cv(q, dtype), cv(k, dtype), cv(v, dtype), cv(g, aux), cv(gg, aux), cv(h0, aux),
            cu.to(device) if cu is not None else None)


@pytest.mark.parametrize("gate,nseq", [("g", 0), ("g_gamma", 0), ("none", 3), ("g", 3)])
def test_gradcheck_float64(gate, nseq):
    """Every input's gradient, dht flowing from the final state, on the fp64 references."""
    q, k, v, g, gg, h0, cu = t_inputs(1, 1 if nseq else 2, 19, 2, 3, 4, torch.float64, gate=gate, nseq=nseq)
    ins = [x for x in (q, k, v, g, gg, h0) if x is not None]

    def f(*xs):
        it = iter(xs)
        args = [next(it) for _ in range(3)]
        gx = next(it) if g is not None else None
        ggx = next(it) if gg is not None else None
        hx = next(it)
        o, ht = sgla.chunk_simple_gla(*args, g=gx, g_gamma=ggx, initial_state=hx, output_final_state=True,
                                      cu_seqlens=cu, chunk=4, backend="ref-a")
        return o, ht

    assert torch.autograd.gradcheck(f, ins)


def test_autograd_matches_the_explicit_backward():
    q, k, v, g, _, h0, _ = t_inputs(2, 2, 70, 2, 16, 8, torch.float32)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
    do, dht = torch.randn_like(o), torch.randn_like(ht)
    (o * do).sum().add_((ht * dht).sum()).backward()
    want = sgla.chunk_simple_gla_backward(q.detach(), k.detach(), v.detach(), do, g=g.detach(),
                                          initial_state=h0.detach(), dht=dht)
    for x, w in zip((q, k, v, g, h0), (want[0], want[1], want[2], want[3], want[5])):
        assert torch.equal(x.grad, w)
    ro, rht = ref_forward(q, k, v, g, None, None, h0)
    assert rel_l2(o, ro) <= 1e-5
    r = ref_backward(q, k, v, do, g, None, None, h0, dht)
    for x, w in zip((q.grad, k.grad, v.grad, g.grad, h0.grad), (r[0], r[1], r[2], r[3], r[5])):
        assert rel_l2(x, w) <= 1e-5


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_backward_half_states(device):
    """sgla.set_backward_half_states: returns the previous setting; the CPU backend ignores the flag
    (the same bits); on CUDA dk and dv are the same bits (no kept state on their way), dq too (the dq
    pass only writes fewer copies), dg within 1e-2 (an odd chunk's X_c through the next copy)."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    dt = torch.float32 if device == "cpu" else torch.bfloat16
    q, k, v, g, _, h0, _ = t_inputs(6, 2, 300, 2, 64, 64, dt, device=device)
    args = [x.detach() for x in (q, k, v)] + [torch.randn(q.shape[:3] + (64,), dtype=dt, device=device)]
    plain = sgla.chunk_simple_gla_backward(*args, g=g.detach(), initial_state=h0.detach())
    assert sgla.set_backward_half_states(True) is False
    try:
        half = sgla.chunk_simple_gla_backward(*args, g=g.detach(), initial_state=h0.detach())
    finally:
        assert sgla.set_backward_half_states(False) is True
    for name, a, b in zip(("dq", "dk", "dv", "dg", "dg_gamma", "dh0"), half, plain):
        if b is None:
            continue
        if device == "cpu" or name != "dg":
            assert torch.equal(a, b), name
        else:
            assert float((a.double() - b.double()).norm() / b.double().norm()) <= 1e-2


def test_autograd_without_final_state_and_no_grad():
    q, k, v, g, _, _, _ = t_inputs(3, 1, 30, 2, 8, 8, torch.float32)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g)
    assert ht is None and o.requires_grad
    o.sum().backward()
    assert q.grad is not None and g.grad is not None
    with torch.no_grad():
        o2, _ = sgla.chunk_simple_gla(q, k, v, g=g)
    assert not o2.requires_grad and torch.equal(o2, o.detach())


def test_empty_sequence_gives_empty_gradients():
    """T = 0: every input that requires grad gets a gradient of its own shape (empty where the
    input is), not None."""
    q, k, v, g, _, h0, _ = t_inputs(5, 1, 0, 2, 4, 4, torch.float32)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
    (o.sum() + ht.sum()).backward()
    for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("h0", h0)):
        assert x.grad is not None and x.grad.shape == x.shape, name
    assert torch.equal(h0.grad, torch.ones_like(h0))  # dh0 = dht when no token moves the state


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("B,H", [(0, 3), (2, 0)])
def test_no_sequence_or_no_head(device, B, H):
    """B = 0 or H = 0 (an empty batch, as a server's step with no request): empty outputs and
    gradients of their inputs' shapes; dg_gamma is a sum over no token, zeros where H > 0."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    q, k, v, _, gg, h0, _ = t_inputs(5, B, 64, H, 64, 64, torch.bfloat16 if device == "cuda" else torch.float32,
                                     device=device, gate="g_gamma")
    o, ht = sgla.chunk_simple_gla(q, k, v, g_gamma=gg, initial_state=h0, output_final_state=True)
    assert o.shape == (B, 64, H, 64) and ht.shape == (B, H, 64, 64)
    (o.float().sum() + ht.sum()).backward()
    for name, x in (("q", q), ("k", k), ("v", v), ("h0", h0)):
        assert x.grad is not None and x.grad.shape == x.shape, name
    assert gg.grad.shape == (H,) and torch.equal(gg.grad, torch.zeros_like(gg))


def test_explicit_backward_checks_do_and_dht():
    """do in q's dtype and on q's device, dht on q's device: refused otherwise (a meta dht was
    read as absent)."""
    q, k, v, g, _, h0, _ = t_inputs(6, 1, 5, 2, 4, 4, torch.float32)
    q, k, v, g, h0 = (x.detach() for x in (q, k, v, g, h0))
    do = torch.randn(1, 5, 2, 4)
    with pytest.raises(TypeError, match="do has dtype torch.float64"):
        sgla.chunk_simple_gla_backward(q, k, v, do.double(), g=g)
    with pytest.raises(ValueError, match="dht is on meta"):
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0,
                                       dht=torch.randn(1, 2, 4, 4, device="meta"))
    with pytest.raises(ValueError, match="do is on meta"):
        sgla.chunk_simple_gla_backward(q, k, v, do.to("meta"), g=g)
    with pytest.raises(TypeError, match="dht must be a floating-point tensor"):  # as NumPy refuses it
        sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0, dht=torch.ones(1, 2, 4, 4, dtype=torch.int32))


def test_scalar_and_list_gates_raise_value_errors():
    """A g_gamma given as a float or a list is converted first, then shape-checked: a ValueError
    naming it, not an AttributeError."""
    q, k, v, _, _, _, _ = t_inputs(7, 1, 5, 2, 4, 4, torch.float32)
    with pytest.raises(ValueError, match="g_gamma must be"):
        sgla.chunk_simple_gla(q, k, v, g_gamma=-0.1)
    o, _ = sgla.chunk_simple_gla(q.detach(), k.detach(), v.detach(), g_gamma=[-0.1, -0.2])
    o2, _ = sgla.chunk_simple_gla(q.detach(), k.detach(), v.detach(), g_gamma=torch.tensor([-0.1, -0.2]))
    assert torch.equal(o, o2)


def compiled_and_eager_grads(f, xs, **compile_kw):
    """Pairs (gradient through torch.compile(f, fullgraph=True), eager gradient), one per x in xs."""
    torch.compile(f, fullgraph=True, **compile_kw)(*xs).backward()
    compiled = [x.grad.clone() for x in xs]
    for x in xs:
        x.grad = None
    f(*xs).backward()
    return list(zip(compiled, (x.grad for x in xs)))


def test_torch_compile_sees_one_operator():
    q, k, v, g, _, h0, _ = t_inputs(4, 1, 40, 2, 8, 8, torch.float32)

    def f(q, k, v, g, h0):
        o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
        return o.square().sum() + ht.sum()

    # fullgraph: a graph break raises
    for a, b in compiled_and_eager_grads(f, (q, k, v, g, h0), backend="aot_eager"):
        assert torch.allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("gate", ["g", "g_gamma"])
def test_cuda_autograd_vs_fp64(dtype, gate):
    q, k, v, g, gg, h0, _ = t_inputs(5, 2, 200, 2, 64, 128, dtype, device="cuda", gate=gate)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True)
    do, dht = torch.randn_like(o), torch.randn_like(ht)
    (o.float() * do.float()).sum().add_((ht * dht).sum()).backward()
    r = ref_backward(q, k, v, do, g, gg, None, h0, dht)
    tol = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 2e-5}[dtype]
    got = (q.grad, k.grad, v.grad, g.grad if g is not None else None, gg.grad if gg is not None else None, h0.grad)
    for name, x, w in zip(("dq", "dk", "dv", "dg", "dg_gamma", "dh0"), got, r):
        if w is None:
            continue
        if name == "dg_gamma":
            # a sum over every token whose terms cancel: judged against sum_t |dg_t| of its head (the C
            # harness's rule, tools/conform.c), from the same backward with the gate given per token
            gt = gg.detach().expand(q.shape[:3])
            dgt = ref_backward(q, k, v, do, gt, None, None, h0, dht)[3]
            scale = np.abs(dgt).sum(axis=(0, 1))
            e = float(np.linalg.norm(x.detach().double().cpu().numpy() - w) / np.linalg.norm(scale))
        else:
            e = rel_l2(x, w)
            if name != "dg":  # a token's dg may be tiny beside its neighbours'
                m = max_err(x, w)
                assert m <= 4 * tol, f"{name}: max error / max|ref| {m:.3g} > {4 * tol}"
        assert e <= tol, f"{name}: rel L2 {e:.3g} > {tol}"


@pytest.mark.gpu
def test_cuda_f32_backward_allow_tf32():
    """float32 on CUDA: autograd's backward runs in the forward's mode: with allow_tf32=True every
    gradient within TF32's bar (5e-3) and measurably less exact than 3xTF32 (else the flag did not reach
    the backward), and the explicit backward with allow_tf32=True gives the same bits"""
    errs = {}
    for tf32 in (False, True):
        q, k, v, g, _, h0, _ = t_inputs(9, 2, 200, 2, 64, 128, torch.float32, device="cuda")
        o, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, allow_tf32=tf32)
        do = torch.randn(o.shape, generator=torch.Generator().manual_seed(3)).to("cuda")
        (o * do).sum().backward()
        r = ref_backward(q, k, v, do, g, None, None, h0, None)
        got = (q.grad, k.grad, v.grad, g.grad, None, h0.grad)
        errs[tf32] = [rel_l2(x, w) for x, w in zip(got, r) if w is not None]
        if tf32:
            e = sgla.chunk_simple_gla_backward(q.detach(), k.detach(), v.detach(), do, g=g.detach(),
                                               initial_state=h0.detach(), allow_tf32=True)
            for x, y in zip(e, got):
                assert (x is None) == (y is None) and (x is None or torch.equal(x, y))
    assert max(errs[False]) <= 2e-5, errs
    assert max(errs[True]) <= 5e-3 and min(errs[True]) > 10 * max(errs[False]), errs


@pytest.mark.gpu
def test_cuda_backward_workspace_limit():
    """A cap on the backward's workspace (sgla.set_backward_workspace_limit): under it every other
    chunk's state is kept, a time window at a time (Hopper); dk and dv come out in the same bits, dq
    within 1e-3 and dg within 1e-2 (the odd chunks' X_c through the next chunk's copy); torch's
    allocator peaks lower; a cap nothing fits raises."""
    # 128 (sequence, head) pairs fill the GPU without a split along time.  The plain plan keeps every
    # chunk's 16-bit state (~270 MB here), every other chunk's ~141 MB (~160 MB in all); windows add three
    # fp32 states a pair (~8.4 MB each), so the 110 MiB cap takes three windows (~106 MB)
    q, k, v, g, _, h0, _ = t_inputs(8, 8, 4096, 16, 128, 128, torch.bfloat16, device="cuda")
    do = torch.randn(q.shape, device="cuda", dtype=q.dtype)
    args = [x.detach() for x in (q, k, v)] + [do]

    def run():
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        r = sgla.chunk_simple_gla_backward(*args, g=g.detach(), initial_state=h0.detach())
        torch.cuda.synchronize()
        return r, torch.cuda.max_memory_allocated() - base

    plain, peak0 = run()
    old = sgla.set_backward_workspace_limit(110 << 20)
    try:
        capped, peak1 = run()
        sgla.set_backward_workspace_limit(1)
        with pytest.raises(sgla.SglaError):
            run()
    finally:
        sgla.set_backward_workspace_limit(old)
    for name, a, b in zip(("dq", "dk", "dv", "dg", "dg_gamma", "dh0"), capped, plain):
        if b is None:
            continue
        if name in ("dk", "dv", "dh0"):
            assert torch.equal(a, b), name
        else:
            e = float((a.double() - b.double()).norm() / b.double().norm())
            assert e <= (1e-2 if name in ("dg", "dg_gamma") else 1e-3), f"{name}: {e:.3g} from the uncapped backward"
    major = torch.cuda.get_device_capability()[0]
    if major == 9:  # the three passes (Hopper): the cap moved the peak
        assert peak1 < peak0 - (30 << 20), f"peak {peak1} with the cap, {peak0} without"


@pytest.mark.gpu
def test_cuda_backward_first_in_autograd_worker():
    """The op's backward as the first CUDA work of torch's autograd worker thread (o.backward(do)
    straight after the forward), in a fresh process: that thread has no current context, which the
    driver's tensor-map encoder needs (it failed with CUresult 201 before session 7's fix)."""
    import os
    import subprocess
    import sys
    code = (
        "import torch, sgla\n"
        "q, k, v = (torch.randn(2, 256, 2, 64, device='cuda', dtype=torch.bfloat16, requires_grad=True)"
        " for _ in range(3))\n"
        "g = (-0.1 * torch.rand(2, 256, 2, device='cuda')).requires_grad_()\n"
        "o, _ = sgla.chunk_simple_gla(q, k, v, g=g)\n"
        "o.backward(torch.randn_like(o))\n"
        "torch.cuda.synchronize()\n"
        "assert torch.isfinite(q.grad.float()).all() and torch.isfinite(g.grad).all()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.gpu
def test_cuda_torch_compile_fullgraph():
    """torch.compile (inductor, fullgraph) of a function calling sgla on CUDA tensors:
    one operator, the same outputs and gradients as eager."""
    q, k, v, g, _, h0, _ = t_inputs(6, 2, 300, 2, 64, 64, torch.bfloat16, device="cuda")

    def f(q, k, v, g, h0):
        o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
        return o.float().square().sum() + ht.sum()

    for a, b in compiled_and_eager_grads(f, (q, k, v, g, h0)):
        assert torch.equal(a, b)


@pytest.mark.gpu
def test_cuda_graph_capture_forward_and_backward():
    """One training step captured in a CUDA graph and replayed on new data: the same
    bits as eager (no host synchronisation, workspace from torch's allocator)."""
    q, k, v, g, _, h0, _ = t_inputs(7, 1, 200, 2, 64, 128, torch.bfloat16, device="cuda")
    do = torch.randn(q.shape[0], q.shape[1], q.shape[2], v.shape[3], device="cuda", dtype=q.dtype)
    leaves = [x.detach().clone().requires_grad_() for x in (q, k, v, g)]

    def step():
        for x in leaves:
            x.grad = None
        o, _ = sgla.chunk_simple_gla(*leaves[:3], g=leaves[3])
        o.backward(do)
        return o

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside the capture
        step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    for x in leaves:
        x.grad = None
    with torch.cuda.graph(graph):
        o_static, _ = sgla.chunk_simple_gla(*leaves[:3], g=leaves[3])
        o_static.backward(do)
    new = [torch.randn_like(x) if i < 3 else -torch.rand_like(x) for i, x in enumerate(leaves)]
    with torch.no_grad():
        for x, n in zip(leaves, new):
            x.copy_(n)
    graph.replay()
    torch.cuda.synchronize()
    got = [o_static.clone()] + [x.grad.clone() for x in leaves]
    eager_leaves = [n.clone().requires_grad_() for n in new]
    o, _ = sgla.chunk_simple_gla(*eager_leaves[:3], g=eager_leaves[3])
    o.backward(do)
    want = [o] + [x.grad for x in eager_leaves]
    for a, b in zip(got, want):
        assert torch.equal(a, b)


@pytest.mark.parametrize("gate,nseq", [("g", 0), ("g_gamma", 3), ("none", 0)])
def test_custom_ops_opcheck(gate, nseq):
    """torch.library.opcheck of both custom ops (schema, fake against real, autograd registration),
    q non-contiguous: the ops make their inputs dense and the fakes promise contiguous outputs."""
    from sgla._autograd import chunk_bwd, chunk_fwd
    from sgla._lib import Backend
    q, k, v, g, gg, h0, cu = t_inputs(7, 1 if nseq else 2, 24, 2, 8, 8, torch.float32, gate=gate, nseq=nseq)
    qn = q.detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
    assert not qn.is_contiguous()
    be = int(Backend.CPU)
    for final in (True, False):
        torch.library.opcheck(chunk_fwd, (qn, k, v, g, gg, h0, cu, 0.3, final, be, 1, 64, False))
    do = torch.randn(v.shape).transpose(1, 2).contiguous().transpose(1, 2)
    dht = torch.randn(h0.shape)
    d = lambda x: x.detach() if x is not None else None  # noqa: E731
    for want in ((True, True, True), (False, False, False)):
        torch.library.opcheck(chunk_bwd, (d(qn), d(k), d(v), do, d(g), d(gg), d(h0), dht, cu, 0.3, be, 1, 64, *want))


def test_unused_outputs_are_not_materialized(monkeypatch):
    """An unused final state reaches the backward as no dht (not zeros it would read), an unused o as
    zeros made there; gradcheck holds with the loss on either output alone, eager and compiled."""
    q, k, v, g, _, h0, _ = t_inputs(8, 1, 40, 2, 4, 4, torch.float64)
    seen = []
    raw = sgla._ops._torch_backward_raw

    def spy(*a, **kw):
        seen.append(a[7] is None)  # dht
        return raw(*a, **kw)
    monkeypatch.setattr(sgla._ops, "_torch_backward_raw", spy)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
    o.sum().backward()
    assert seen == [True]
    for which in (0, 1):
        f = lambda *x: sgla.chunk_simple_gla(*x[:3], g=x[3], initial_state=x[4], output_final_state=True)[which]  # noqa: E731
        assert torch.autograd.gradcheck(f, (q, k, v, g, h0))
    f = torch.compile(lambda *x: sgla.chunk_simple_gla(*x[:3], g=x[3], initial_state=x[4],
                                                       output_final_state=True)[1].sum(), backend="aot_eager",
                      fullgraph=True)
    for x in (q, k, v, g, h0):
        x.grad = None
    f(q, k, v, g, h0).backward()
    got = [x.grad.clone() for x in (q, k, v, g, h0)]
    for x in (q, k, v, g, h0):
        x.grad = None
    sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)[1].sum().backward()
    for a, b in zip(got, (q.grad, k.grad, v.grad, g.grad, h0.grad)):
        assert torch.allclose(a, b)


@pytest.mark.parametrize("gate", ["g", "g_gamma"])
def test_gradients_of_a_subset(gate):
    """Only some inputs require grad: those get the same gradients as when all do, the rest None."""
    q, k, v, g, gg, h0, _ = t_inputs(9, 2, 50, 2, 8, 8, torch.float32, gate=gate)
    xs = [q, k, v, g if gate == "g" else gg, h0]
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True)
    do, dht = torch.randn_like(o), torch.randn_like(ht)
    ((o * do).sum() + (ht * dht).sum()).backward()
    full = [x.grad.clone() for x in xs]
    for pick in ([3], [4], [2], [0, 4]):
        ys = [x.detach().clone().requires_grad_(i in pick) for i, x in enumerate(xs)]
        gk = dict(g=ys[3]) if gate == "g" else dict(g_gamma=ys[3])
        o, ht = sgla.chunk_simple_gla(*ys[:3], initial_state=ys[4], output_final_state=True, **gk)
        ((o * do).sum() + (ht * dht).sum()).backward()
        for i, y in enumerate(ys):
            if i in pick:
                assert torch.equal(y.grad, full[i]), (pick, i)
            else:
                assert y.grad is None, (pick, i)


def test_strided_and_expanded_inputs():
    """Transposed views, an expanded (stride 0) gate and a non-contiguous h0 give the bits of their
    contiguous copies, forward and backward."""
    q, k, v, g, _, h0, _ = t_inputs(10, 2, 40, 3, 8, 8, torch.float32)
    kt = k.detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
    ge = g.detach()[:, :, :1].expand(-1, -1, 3).requires_grad_()
    h0t = h0.detach().transpose(-1, -2).contiguous().transpose(-1, -2).requires_grad_()
    assert not (kt.is_contiguous() or ge.is_contiguous() or h0t.is_contiguous())
    outs = []
    for kk, gg_, hh in ((kt, ge, h0t), (kt.detach().contiguous().requires_grad_(),
                                        ge.detach().contiguous().requires_grad_(),
                                        h0t.detach().contiguous().requires_grad_())):
        o, ht = sgla.chunk_simple_gla(q, kk, v, g=gg_, initial_state=hh, output_final_state=True)
        (o.square().sum() + ht.sum()).backward()
        outs.append((o.detach(), ht.detach(), kk.grad, gg_.grad, hh.grad))
        q.grad = v.grad = None
    for a, b in zip(*outs):
        assert torch.equal(a, b)


def test_no_second_derivative():
    """Differentiating sgla's gradients raises (it has no second derivative): in eager mode a loss linear
    in o gave constant gradients, whose second-order term came back as 0, a wrong Hessian with no error.
    First-order use under create_graph=True (the gradient as a value) still works."""
    torch.manual_seed(0)
    q = torch.randn(1, 4, 1, 2, dtype=torch.float64, requires_grad=True)
    v = torch.randn(1, 4, 1, 2, dtype=torch.float64)
    o, _ = sgla.chunk_simple_gla(q, q, v)  # k = q: o is not linear in q
    gq, = torch.autograd.grad(o.sum() + (q ** 3).sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="no second derivative"):
        torch.autograd.grad(gq.sum(), q)
    o, _ = sgla.chunk_simple_gla(q, q, v)
    g1, = torch.autograd.grad(o.sum(), q, create_graph=True)
    o, _ = sgla.chunk_simple_gla(q, q, v)
    g0, = torch.autograd.grad(o.sum(), q)
    assert torch.equal(g1.detach(), g0)
    # a gradient penalty on another term, sgla's part only used as a value
    w = torch.randn(1, 4, 1, 2, dtype=torch.float64, requires_grad=True)
    o, _ = sgla.chunk_simple_gla(q, q, v)
    gw, gq = torch.autograd.grad(o.sum() + (w ** 2 * q).sum(), (w, q), create_graph=True)
    (gw ** 2).sum().backward()  # d/dw of (2 w q)^2: no path through sgla's gradient
    assert torch.allclose(w.grad, 8 * w * q.detach() ** 2)


@pytest.mark.parametrize("gate,nseq", [("g", 0), ("g_gamma", 0), ("g", 3)])
def test_torch_func_grad_and_vjp(gate, nseq):
    """torch.func's grad, vjp, jacrev and vmap give autograd's gradients and the forward's values (a
    Function in the form they need: the eager Function and the custom op's formula, which torch 2.11
    wraps without setup_context, fail there; vmap by one call a batch entry); a transform over sgla's
    gradient refuses."""
    q, k, v, g, gg, h0, cu = t_inputs(7, 1 if nseq else 2, 21, 2, 3, 4, torch.float64, gate=gate, nseq=nseq)
    w = torch.randn(*q.shape[:3], v.shape[3], dtype=torch.float64)
    wt = torch.randn(h0.shape, dtype=torch.float64)

    def f(q, k, v, g, gg, h0):
        o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True,
                                      cu_seqlens=cu)
        return (o * w).sum() + (ht * wt).sum()

    ins = (q, k, v, g, gg, h0)
    pos = tuple(i for i, x in enumerate(ins) if x is not None)
    want = torch.autograd.grad(f(*ins), [ins[i] for i in pos])
    plain = tuple(x.detach() if x is not None else None for x in ins)
    got = torch.func.grad(f, argnums=pos)(*plain)
    for a, b in zip(got, want):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-12)
    out, pull = torch.func.vjp(lambda q, v: f(q, plain[1], v, *plain[3:]), plain[0], plain[2])
    dq, dv = pull(torch.ones_like(out))
    assert torch.allclose(dq, want[0], rtol=1e-12, atol=1e-12) and torch.allclose(dv, want[2], rtol=1e-12, atol=1e-12)
    jac = torch.func.jacrev(lambda v: sgla.chunk_simple_gla(plain[0], plain[1], v, g=plain[3], g_gamma=plain[4],
                                                            cu_seqlens=cu)[0][..., 0, 0].sum())(plain[2])
    ref = torch.autograd.grad(sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, cu_seqlens=cu)[0][..., 0, 0].sum(), v)[0]
    assert torch.allclose(jac, ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="no second derivative"):
        torch.func.grad(lambda q: torch.func.grad(f)(q, *plain[1:]).sum())(plain[0])
    # vmap: one call a batch entry (here over the batch of q alone; k, v, ... shared)
    qs = torch.stack([plain[0], 2 * plain[0]])
    got_v = torch.func.vmap(lambda q: f(q, *plain[1:]))(qs)
    assert torch.allclose(got_v[0], f(*plain), rtol=1e-12) and torch.allclose(got_v[1], f(qs[1], *plain[1:]), rtol=1e-12)
    gv = torch.func.vmap(torch.func.grad(lambda q: f(q, *plain[1:])))(qs)
    assert torch.allclose(gv[0], want[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gate,nseq", [("g", 0), ("g_gamma", 3)])
def test_batched_and_nested_transforms(gate, nseq):
    """Batched cotangents through plain autograd (is_grads_batched, a vectorized jacobian: torch's legacy
    vmap), vmap over vmap and over jacrev, an nn.Parameter among a transform's inputs: each gives the
    gradients one cotangent at a time gives; a forward-mode dual input is refused, not dropped; the explicit
    backward runs under vmap."""
    q, k, v, g, gg, h0, cu = t_inputs(11, 1 if nseq else 2, 13, 2, 3, 4, torch.float64, gate=gate, nseq=nseq)
    q.requires_grad_(True)

    def f(q, v):
        return sgla.chunk_simple_gla(q, k.detach(), v, g=None if g is None else g.detach(),
                                     g_gamma=None if gg is None else gg.detach(), cu_seqlens=cu)[0]

    o = f(q, v.detach())
    dos = torch.randn((3,) + tuple(o.shape), dtype=torch.float64)
    got, = torch.autograd.grad(o, q, dos, is_grads_batched=True, retain_graph=True)
    for i in range(3):
        one, = torch.autograd.grad(o, q, dos[i], retain_graph=True)
        assert torch.allclose(got[i], one, rtol=1e-12, atol=1e-12)
    qp = q.detach()[..., :1, :1]  # a small Jacobian: q's first head and column only
    fj = lambda x: f(torch.cat([x, q.detach()[..., :1, 1:]], 3).expand(-1, -1, q.shape[2], -1).contiguous(),
                     v.detach())[..., 0, 0]
    jv = torch.autograd.functional.jacobian(fj, qp, vectorize=True)
    jl = torch.autograd.functional.jacobian(fj, qp)
    assert torch.allclose(jv, jl, rtol=1e-12, atol=1e-12)
    # vmap over vmap, and vmap over jacrev (per-entry Jacobians)
    qs = torch.stack([torch.stack([q.detach() * (1 + i + j) for j in range(2)]) for i in range(2)])
    nested = torch.func.vmap(torch.func.vmap(lambda q: f(q, v.detach())))(qs)
    for i in range(2):
        for j in range(2):
            assert torch.allclose(nested[i, j], f(qs[i, j], v.detach()), rtol=1e-12, atol=1e-12)
    r = lambda x: f(x, v.detach())[..., 0, 0].sum()
    per = torch.func.vmap(torch.func.jacrev(r))(qs[0])
    for j in range(2):
        x = qs[0, j].clone().requires_grad_(True)
        assert torch.allclose(per[j], torch.autograd.grad(r(x), x)[0], rtol=1e-12, atol=1e-12)
    # an nn.Parameter q while torch.func differentiates v
    qp = torch.nn.Parameter(q.detach().clone())
    gv = torch.func.grad(lambda v: f(qp, v).sum())(v.detach())
    vv = v.detach().clone().requires_grad_(True)
    assert torch.allclose(gv, torch.autograd.grad(f(q.detach(), vv).sum(), vv)[0], rtol=1e-12, atol=1e-12)
    # forward mode: refused with sgla's message (the tangent was silently dropped before)
    import torch.autograd.forward_ad as fwad
    with fwad.dual_level():
        with pytest.raises(NotImplementedError, match="no forward-mode derivative"):
            f(q.detach(), fwad.make_dual(v.detach(), torch.ones_like(v)))
    # the explicit backward under vmap (over do): one call a batch entry
    fb = lambda do: tuple(x for x in sgla.chunk_simple_gla_backward(q.detach(), k, v, do, g=g, g_gamma=gg,
                                                                   cu_seqlens=cu) if x is not None)
    out = torch.func.vmap(fb)(dos)
    for i in range(3):
        for a, b in zip(out, fb(dos[i])):
            assert torch.allclose(a[i], b, rtol=1e-12, atol=1e-12)
