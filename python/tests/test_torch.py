"""torch tests: CPU tensors (run wherever torch is installed) and CUDA tensors
(marked gpu: torch + a CUDA device + libsgla built with CUDA), against the
independent fp64 recurrence and against flash-linear-attention."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sgla  # noqa: E402
from _reference import max_err, ref_forward, rel_l2  # noqa: E402

TOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DT_IDS = ["f32", "f16", "bf16"]


def rand_inputs(seed, B, T, H, K, V, dtype, device, gate="g", h0=True):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, H, K, generator=gen).to(dtype).to(device)
    k = torch.randn(B, T, H, K, generator=gen).to(dtype).to(device)
    v = torch.randn(B, T, H, V, generator=gen).to(dtype).to(device)
    g = gg = None
    if gate == "g":
        g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, generator=gen) + 3.0).to(device)
    elif gate == "g_gamma":
        gg = torch.log(torch.rand(H, generator=gen) * 0.149 + 0.85).to(device)
    s = torch.randn(B, H, K, V, generator=gen).to(device) if h0 else None
    return q, k, v, g, gg, s


def check(o, ht, ro, rht, dtype, what=""):
    tol = TOL[dtype]
    e_o, m_o = rel_l2(o, ro), max_err(o, ro)
    e_h, m_h = (rel_l2(ht, rht), max_err(ht, rht)) if ht is not None else (0.0, 0.0)
    print(f"{what} o rel L2 {e_o:.3g} max {m_o:.3g}  ht rel L2 {e_h:.3g} max {m_h:.3g}  (tol {tol})")
    assert e_o <= tol and m_o <= 4 * tol, f"o rel L2 {e_o:.3g}, max error / max|ref| {m_o:.3g} > {tol}, {4 * tol}"
    assert e_h <= tol and m_h <= 4 * tol, f"ht rel L2 {e_h:.3g}, max error / max|ref| {m_h:.3g} > {tol}, {4 * tol}"


# ---------------------------------------------------------------- CPU tensors

@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("gate", ["none", "g", "g_gamma"])
def test_cpu_tensors(dtype, gate):
    q, k, v, g, gg, h0 = rand_inputs(1, 2, 90, 2, 16, 8, dtype, "cpu", gate)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0,
                                  output_final_state=True)
    assert isinstance(o, torch.Tensor) and o.dtype == dtype and o.device.type == "cpu"
    assert ht.dtype == torch.float32 and ht.shape == (2, 2, 16, 8)
    ro, rht = ref_forward(q, k, v, g, gg, None, h0)
    check(o, ht, ro, rht, dtype)


def test_cpu_tensor_varlen_noncontiguous_and_gate_dtype():
    q, k, v, g, _, _ = rand_inputs(2, 1, 100, 3, 8, 12, torch.float32, "cpu")
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # same values, strided
    assert not qt.is_contiguous()
    cu = torch.tensor([0, 10, 10, 100], dtype=torch.int32)
    h0 = torch.randn(3, 3, 8, 12)
    o, ht = sgla.chunk_simple_gla(qt, k, v, g=g.to(torch.bfloat16), initial_state=h0,
                                  output_final_state=True, cu_seqlens=cu)
    ro, rht = ref_forward(q, k, v, g.to(torch.bfloat16), None, None, h0, cu)
    check(o, ht, ro, rht, torch.float32)


def test_grad_modes():
    q, k, v, g, _, _ = rand_inputs(3, 1, 8, 2, 8, 8, torch.float32, "cpu")
    q.requires_grad_(True)
    o, _ = sgla.chunk_simple_gla(q, k, v, g=g)  # differentiable (test_backward.py checks the values)
    assert o.requires_grad
    with torch.no_grad():
        o, _ = sgla.chunk_simple_gla(q, k, v, g=g)
    assert not o.requires_grad
    with torch.inference_mode():
        sgla.chunk_simple_gla(q.detach(), k, v, g=g)
    sgla.chunk_simple_gla(q.detach(), k, v, g=g)  # grad mode on, nothing requires grad


def test_cpu_errors():
    q, k, v, g, _, _ = rand_inputs(4, 1, 8, 2, 8, 8, torch.float32, "cpu")
    with pytest.raises(TypeError, match="^k has dtype"):
        sgla.chunk_simple_gla(q, k.half(), v)
    with pytest.raises(TypeError, match="^q has dtype"):
        sgla.chunk_simple_gla(q.int(), k.int(), v.int())
    with pytest.raises(sgla.SglaError) as ei:  # float64 is for the references
        sgla.chunk_simple_gla(q.double(), k.double(), v.double(), backend="cpu")
    assert ei.value.status == sgla.Status.ERR_UNSUPPORTED_DTYPE
    with pytest.raises(TypeError, match="^cu_seqlens must be an integer"):
        sgla.chunk_simple_gla(q, k, v, cu_seqlens=torch.tensor([0.0, 8.0]))
    if hasattr(torch, "uint64"):  # an offset past int64 is refused by name, not wrapped negative
        cu = torch.from_numpy(np.array([0, 2 ** 64 - 1, 8], np.uint64))
        with pytest.raises(ValueError, match=r"^cu_seqlens\[1\] = 18446744073709551615 does not fit int64"):
            sgla.chunk_simple_gla(q, k, v, cu_seqlens=cu)
    with pytest.raises(sgla.SglaError) as ei:
        sgla.chunk_simple_gla(q, k, v, g=-g)
    assert ei.value.status == sgla.Status.ERR_POSITIVE_GATE
    # a float64 gate too small a positive for fp32 (+1e-50 would round to 0) is refused as NumPy refuses it
    g64 = torch.zeros(g.shape, dtype=torch.float64)
    g64.view(-1)[3] = 1e-50
    with pytest.raises(sgla.SglaError) as ei:
        sgla.chunk_simple_gla(q, k, v, g=g64)
    assert ei.value.status == sgla.Status.ERR_POSITIVE_GATE
    g64.view(-1)[3] = -1e-50  # and a tiny negative one still runs (exp rounds it to 1, as it should)
    sgla.chunk_simple_gla(q, k, v, g=g64)


# ---------------------------------------------------------------- CUDA tensors

GPU_SHAPES = [  # B, T, H, K, V (64, 128, 256 natively; other sizes up to 256 on padded copies)
    (2, 300, 4, 64, 128),
    (1, 1000, 2, 128, 64),
    (3, 129, 2, 128, 128),
    (1, 64, 2, 256, 128),
    (2, 200, 2, 60, 60),     # fla's own tests use D = 60 and D = 100
    (1, 130, 3, 100, 100),
    (2, 65, 2, 32, 96),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("gate", ["none", "g", "g_gamma"])
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cuda_vs_fp64(shape, gate, dtype):
    B, T, H, K, V = shape
    q, k, v, g, gg, h0 = rand_inputs(10, B, T, H, K, V, dtype, "cuda", gate)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0,
                                  output_final_state=True)
    assert o.device == q.device and o.dtype == dtype and ht.device == q.device
    torch.cuda.synchronize()
    ro, rht = ref_forward(q, k, v, g, gg, None, h0)
    check(o, ht, ro, rht, dtype, f"{shape} {gate}")


def test_allow_tf32_ignored_on_cpu():
    """allow_tf32 names a CUDA mode: the CPU backend gives the same bits with it"""
    q, k, v, g, _, h0 = rand_inputs(14, 1, 70, 2, 32, 16, torch.float32, "cpu", "g")
    a, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0)
    b, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, allow_tf32=True)
    assert torch.equal(a, b)


@pytest.mark.gpu
def test_cuda_f32_allow_tf32():
    """float32 on CUDA: 3xTF32 by default (fp32's bar), TF32 alone with allow_tf32=True (its own
    bar, and measurably less accurate: else the flag did not reach the kernel)"""
    q, k, v, g, _, h0 = rand_inputs(13, 2, 300, 2, 128, 128, torch.float32, "cuda", "g")
    ro, _ = ref_forward(q, k, v, g, None, None, h0)
    errs = []
    for tf32 in (False, True):
        o, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, allow_tf32=tf32)
        torch.cuda.synchronize()
        errs.append(rel_l2(o, ro))
    assert errs[0] <= 1e-5, errs
    assert 1e-6 < errs[1] <= 5e-3 and errs[1] > 10 * errs[0], errs


@pytest.mark.gpu
@pytest.mark.parametrize("chunk_size", [16, 32, 64])
def test_cuda_chunk_sizes(chunk_size):
    """fla's chunk_size: 16, 32 and 64 are taken (computed in chunks of 64: the same bits)"""
    q, k, v, g, _, h0 = rand_inputs(12, 2, 150, 2, 64, 64, torch.bfloat16, "cuda", "g")
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True, chunk_size=chunk_size)
    o64, ht64 = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
    assert torch.equal(o, o64) and torch.equal(ht, ht64)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_cuda_varlen(dtype):
    H, K, V = 2, 64, 128
    cu = torch.tensor([0, 0, 1, 65, 65, 300, 301], dtype=torch.int64, device="cuda")
    N, T = len(cu) - 1, int(cu[-1])
    q, k, v, g, _, _ = rand_inputs(11, 1, T, H, K, V, dtype, "cuda")
    h0 = torch.randn(N, H, K, V, device="cuda")
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True,
                                  cu_seqlens=cu)
    torch.cuda.synchronize()
    ro, rht = ref_forward(q, k, v, g, None, None, h0, cu.cpu())
    check(o, ht, ro, rht, dtype, "varlen")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_cuda_decode_step(dtype):
    B, H, K, V = 4, 8, 128, 128
    q, k, v, g, _, h0 = rand_inputs(12, B, 1, H, K, V, dtype, "cuda")
    o, ht = sgla.fused_recurrent_simple_gla(q, k, v, g=g, initial_state=h0,
                                            output_final_state=True)
    torch.cuda.synchronize()
    ro, rht = ref_forward(q, k, v, g, None, None, h0)
    check(o, ht, ro, rht, dtype, "decode")


@pytest.mark.gpu
@pytest.mark.parametrize("gate", ["g", "g_gamma"])
def test_cuda_sequence_split_workspace_from_torch(gate):
    """One long sequence with one head: the CUDA backend splits it in time, and
    its workspace comes from torch's allocator (sgla_workspace_size)."""
    B, T, H, K, V = 1, 4096, 1, 64, 64
    q, k, v, g, gg, h0 = rand_inputs(14, B, T, H, K, V, torch.bfloat16, "cuda", gate)
    before = torch.cuda.memory_stats().get("allocation.all.allocated", 0)
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True)
    torch.cuda.synchronize()
    # o, ht and the workspace at least went through torch's allocator
    assert torch.cuda.memory_stats().get("allocation.all.allocated", 0) - before >= 3
    ro, rht = ref_forward(q, k, v, g, gg, None, h0)
    check(o, ht, ro, rht, torch.bfloat16, "split")


@pytest.mark.gpu
def test_cuda_runs_on_current_stream():
    q, k, v, g, _, h0 = rand_inputs(13, 2, 512, 4, 128, 64, torch.bfloat16, "cuda")
    ref, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        o, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0)
    s.synchronize()
    assert torch.equal(o, ref)


@pytest.mark.gpu
def test_cuda_noncontiguous_and_errors():
    q, k, v, g, _, h0 = rand_inputs(14, 1, 100, 2, 64, 64, torch.float16, "cuda")
    o, _ = sgla.chunk_simple_gla(q.transpose(1, 2).contiguous().transpose(1, 2), k, v, g=g)
    o2, _ = sgla.chunk_simple_gla(q, k, v, g=g)
    torch.cuda.synchronize()
    assert torch.equal(o, o2)
    with pytest.raises(ValueError, match="^k is on cpu"):
        sgla.chunk_simple_gla(q, k.cpu(), v)
    with pytest.raises(ValueError, match="^cu_seqlens is on cpu"):
        sgla.chunk_simple_gla(q, k, v, cu_seqlens=torch.tensor([0, 100]))
    with pytest.raises(ValueError, match="runs on the host but q is on cuda"):
        sgla.chunk_simple_gla(q, k, v, backend="cpu")


def _fla():
    try:
        from fla.ops.simple_gla import chunk_simple_gla
    except Exception as e:  # ImportError, or triton failing to initialise
        pytest.skip(f"flash-linear-attention not importable: {e}")
    return chunk_simple_gla


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("gate", ["g", "g_gamma"])
@pytest.mark.parametrize("varlen", [False, True], ids=["batch", "varlen"])
def test_cuda_vs_fla(dtype, gate, varlen):
    fla_chunk = _fla()
    B, T, H, K, V = 2, 512, 4, 128, 64
    q, k, v, g, gg, h0 = rand_inputs(15, B, T, H, K, V, dtype, "cuda", gate)
    cu = None
    if varlen:
        q, k, v = (x.reshape(1, B * T, H, -1) for x in (q, k, v))
        g = g.reshape(1, B * T, H) if g is not None else None
        cu = torch.tensor([0, 100, 100, 700, B * T], dtype=torch.long, device="cuda")
        h0 = torch.randn(len(cu) - 1, H, K, V, device="cuda")
    kw = dict(g=g, g_gamma=gg, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    with torch.no_grad():
        o_f, ht_f = fla_chunk(q, k, v, **kw)
    o_s, ht_s = sgla.chunk_simple_gla(q, k, v, **kw)
    torch.cuda.synchronize()
    ro, rht = ref_forward(q, k, v, g, gg, None, h0, cu.cpu() if cu is not None else None)
    tol = TOL[dtype]
    print(f"fla vs fp64: o {rel_l2(o_f, ro):.3g} ht {rel_l2(ht_f, rht):.3g}; "
          f"sgla vs fp64: o {rel_l2(o_s, ro):.3g} ht {rel_l2(ht_s, rht):.3g}; "
          f"sgla vs fla: o {rel_l2(o_s, o_f):.3g}")
    assert o_s.shape == o_f.shape and o_s.dtype == o_f.dtype and ht_s.shape == ht_f.shape
    check(o_s, ht_s, ro, rht, dtype, "sgla")
    assert rel_l2(o_s, o_f) <= 2 * tol
    assert rel_l2(ht_s, ht_f) <= 2 * tol


@pytest.mark.gpu
def test_readme_example():
    """The README's example, as written there."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "README.md")) as f:
        text = f.read()
    start = text.index("```python\n") + len("```python\n")
    code = text[start:text.index("```", start)]
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert ns["o"].shape == ns["v"].shape
    assert np.isfinite(ns["o"].float().cpu().numpy()).all()


@pytest.mark.gpu
def test_cuda_misaligned_views_are_copied():
    """A contiguous CUDA view that starts off a 16-byte boundary (the TMA kernels' need) is copied,
    forward and backward, where it raised before; the results equal the aligned call's."""
    q, k, v, g, _, h0 = rand_inputs(15, 1, 100, 2, 64, 64, torch.bfloat16, "cuda")
    buf = torch.empty(q.numel() + 1, dtype=q.dtype, device="cuda")
    qm = buf[1:].view(q.shape)
    qm.copy_(q)
    assert qm.is_contiguous() and qm.data_ptr() % 16
    o, ht = sgla.chunk_simple_gla(qm, k, v, g=g, initial_state=h0, output_final_state=True)
    o2, ht2 = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True)
    assert torch.equal(o, o2) and torch.equal(ht, ht2)
    do = torch.randn_like(o)
    a = sgla.chunk_simple_gla_backward(qm, k, v, do, g=g, initial_state=h0)
    b = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, initial_state=h0)
    for x, y in zip(a, b):  # (None where the input was absent: dg_gamma here)
        assert (x is None and y is None) or torch.equal(x, y)
