"""CPU tests with NumPy arrays against an independent fp64 recurrence.

SGLA_TEST_BACKEND=ref-a (etc.) runs them against another host backend; the
default is the library's choice for host arrays (the CPU backend).
"""
import os

import numpy as np
import pytest

import sgla
from _reference import max_err, ref_forward, rel_l2

BACKEND = os.environ.get("SGLA_TEST_BACKEND") or None
TOL = {np.float32: 1e-5, np.float16: 1e-3}
GATES = ["none", "g", "g_gamma", "alpha", "alpha1"]


def call(*a, **kw):
    kw.setdefault("backend", BACKEND)
    return sgla.chunk_simple_gla(*a, **kw)


def make_gates(rng, form, B, T, H):
    """(g, g_gamma) for one gate form."""
    if form == "none":
        return None, None
    if form == "g":
        # mix slow (alpha ~ U(0.85, 0.999)) and fast (logsigmoid) decays
        slow = np.log(rng.uniform(0.85, 0.999, (B, T, H)))
        fast = -np.log1p(np.exp(-rng.standard_normal((B, T, H)) - 2.0))
        pick = rng.random((B, T, H)) < 0.5
        return np.where(pick, slow, fast).astype(np.float32), None
    if form == "g_gamma":
        return None, np.log(rng.uniform(0.5, 0.999, H)).astype(np.float32)
    if form == "alpha":  # a constant alpha = 0.9 for every head
        return None, np.full(H, np.log(0.9), np.float32)
    if form == "alpha1":  # alpha = 1: plain linear attention
        return None, np.zeros(H, np.float32)
    raise AssertionError(form)


def inputs(rng, B, T, H, K, V, dtype):
    q = rng.standard_normal((B, T, H, K)).astype(dtype)
    k = rng.standard_normal((B, T, H, K)).astype(dtype)
    v = rng.standard_normal((B, T, H, V)).astype(dtype)
    return q, k, v


def check(o, ht, ro, rht, dtype):
    tol = TOL[dtype]
    assert o.dtype == dtype
    e, m = rel_l2(o, ro), max_err(o, ro)
    assert e <= tol and m <= 4 * tol, f"o rel L2 {e:.3g}, max error / max|ref| {m:.3g} (bars {tol}, {4 * tol})"
    if ht is not None:
        assert ht.dtype == np.float32
        e, m = rel_l2(ht, rht), max_err(ht, rht)
        assert e <= tol and m <= 4 * tol, f"ht rel L2 {e:.3g}, max error / max|ref| {m:.3g} (bars {tol}, {4 * tol})"


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(10))
def test_random_shapes(seed, dtype):
    rng = np.random.default_rng(1000 + seed)
    B = int(rng.integers(1, 4))
    T = int(rng.choice([0, 1, 2, 7, 63, 64, 65, 100, 128, 129, 200]))
    H = int(rng.integers(1, 4))
    K = int(rng.choice([1, 3, 8, 16, 32, 64]))
    V = int(rng.choice([1, 5, 8, 24, 48, 64]))
    form = GATES[int(rng.integers(len(GATES)))]
    use_h0 = bool(rng.integers(2))
    scale = None if rng.integers(2) else float(rng.uniform(0.1, 1.0))
    print(f"seed={1000 + seed} B={B} T={T} H={H} K={K} V={V} gate={form} h0={use_h0} scale={scale}")
    q, k, v = inputs(rng, B, T, H, K, V, dtype)
    g, gg = make_gates(rng, form, B, T, H)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32) if use_h0 else None
    o, ht = call(q, k, v, g=g, g_gamma=gg, scale=scale, initial_state=h0, output_final_state=True)
    assert o.shape == (B, T, H, V) and ht.shape == (B, H, K, V)
    ro, rht = ref_forward(q, k, v, g, gg, scale, h0)
    check(o, ht, ro, rht, dtype)


@pytest.mark.parametrize("form", GATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_gate_forms(form, dtype):
    rng = np.random.default_rng(7)
    B, T, H, K, V = 2, 150, 2, 16, 24  # K != V, partial last chunk
    q, k, v = inputs(rng, B, T, H, K, V, dtype)
    g, gg = make_gates(rng, form, B, T, H)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32)
    o, ht = call(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True)
    ro, rht = ref_forward(q, k, v, g, gg, None, h0)
    check(o, ht, ro, rht, dtype)


def test_no_final_state_by_default():
    rng = np.random.default_rng(1)
    q, k, v = inputs(rng, 1, 10, 2, 8, 8, np.float32)
    o, ht = call(q, k, v)
    assert ht is None and o.shape == (1, 10, 2, 8)


def test_scale_default_is_k_rsqrt():
    rng = np.random.default_rng(2)
    q, k, v = inputs(rng, 1, 20, 2, 16, 8, np.float32)
    o1, _ = call(q, k, v)
    o2, _ = call(q, k, v, scale=16 ** -0.5)
    o3, _ = call(q, k, v, scale=1.0)
    assert rel_l2(o1, o2) <= 1e-7
    assert rel_l2(o3 * np.float32(0.25), o1) <= 1e-6


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_varlen_with_empty_sequences(dtype):
    rng = np.random.default_rng(3)
    cu = np.array([0, 0, 5, 5, 70, 70, 200, 200], dtype=np.int64)
    N, T, H, K, V = len(cu) - 1, int(cu[-1]), 2, 8, 12
    q, k, v = inputs(rng, 1, T, H, K, V, dtype)
    g, _ = make_gates(rng, "g", 1, T, H)
    h0 = rng.standard_normal((N, H, K, V)).astype(np.float32)
    o, ht = call(q, k, v, g=g, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    assert ht.shape == (N, H, K, V)
    ro, rht = ref_forward(q, k, v, g, None, None, h0, cu)
    check(o, ht, ro, rht, dtype)
    # an empty sequence passes its state through unchanged
    for n in (0, 2, 4, 6):
        np.testing.assert_array_equal(ht[n], h0[n])
    # each sequence equals its own call with B = 1
    for n in range(N):
        a, b = int(cu[n]), int(cu[n + 1])
        on, hn = call(q[:, a:b], k[:, a:b], v[:, a:b], g=g[:, a:b], initial_state=h0[n:n + 1],
                      output_final_state=True)
        assert rel_l2(on, o[:, a:b]) <= TOL[dtype]
        assert rel_l2(hn, ht[n:n + 1]) <= TOL[dtype]


def test_varlen_int32_and_list_offsets():
    rng = np.random.default_rng(4)
    cu = [0, 30, 31, 90]
    q, k, v = inputs(rng, 1, 90, 3, 8, 4, np.float32)
    _, gg = make_gates(rng, "g_gamma", 1, 90, 3)
    o64, h64 = call(q, k, v, g_gamma=gg, cu_seqlens=np.array(cu, np.int64), output_final_state=True)
    o32, h32 = call(q, k, v, g_gamma=gg, cu_seqlens=np.array(cu, np.int32), output_final_state=True)
    ol, hl = call(q, k, v, g_gamma=gg, cu_seqlens=cu, output_final_state=True)
    np.testing.assert_array_equal(o64, o32)
    np.testing.assert_array_equal(o64, ol)
    np.testing.assert_array_equal(h64, h32)
    ro, rht = ref_forward(q, k, v, None, gg, None, None, cu)
    check(o64, h64, ro, rht, np.float32)


@pytest.mark.parametrize("use_h0", [False, True])
def test_T0(use_h0):
    rng = np.random.default_rng(5)
    B, H, K, V = 2, 3, 8, 5
    q, k, v = inputs(rng, B, 0, H, K, V, np.float32)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32) if use_h0 else None
    o, ht = call(q, k, v, g=np.zeros((B, 0, H), np.float32), initial_state=h0, output_final_state=True)
    assert o.shape == (B, 0, H, V)
    np.testing.assert_array_equal(ht, h0 if use_h0 else np.zeros((B, H, K, V), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_T1_decode_steps_match_full_sequence(dtype):
    """fused_recurrent_simple_gla one token at a time (the decode step) equals
    one chunked call over the whole sequence."""
    rng = np.random.default_rng(6)
    B, T, H, K, V = 2, 40, 2, 16, 8
    q, k, v = inputs(rng, B, T, H, K, V, dtype)
    g, _ = make_gates(rng, "g", B, T, H)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32)
    o_full, h_full = call(q, k, v, g=g, initial_state=h0, output_final_state=True)
    h = h0
    outs = []
    for t in range(T):
        ot, h = sgla.fused_recurrent_simple_gla(q[:, t:t + 1], k[:, t:t + 1], v[:, t:t + 1],
                                                g=g[:, t:t + 1], initial_state=h,
                                                output_final_state=True, backend=BACKEND)
        assert ot.shape == (B, 1, H, V)
        outs.append(ot)
    o_steps = np.concatenate(outs, axis=1)
    ro, rht = ref_forward(q, k, v, g, None, None, h0)
    check(o_steps, h, ro, rht, dtype)
    check(o_full, h_full, ro, rht, dtype)


def test_fused_recurrent_same_as_chunk():
    rng = np.random.default_rng(8)
    q, k, v = inputs(rng, 1, 77, 2, 8, 16, np.float32)
    _, gg = make_gates(rng, "g_gamma", 1, 77, 2)
    a = call(q, k, v, g_gamma=gg, output_final_state=True)
    b = sgla.fused_recurrent_simple_gla(q, k, v, g_gamma=gg, output_final_state=True, backend=BACKEND)
    assert rel_l2(a[0], b[0]) <= 1e-6 and rel_l2(a[1], b[1]) <= 1e-6


def test_non_contiguous_inputs():
    rng = np.random.default_rng(9)
    B, T, H, K, V = 2, 50, 3, 8, 6
    # [B, H, T, K] storage viewed as [B, T, H, K]; g as a strided slice; h0 transposed view
    q = rng.standard_normal((B, H, T, K)).astype(np.float32).transpose(0, 2, 1, 3)
    k = rng.standard_normal((B, H, T, K)).astype(np.float32).transpose(0, 2, 1, 3)
    v = rng.standard_normal((B, T, H, 2 * V)).astype(np.float32)[..., ::2]
    g = np.log(rng.uniform(0.8, 1.0, (B, T, 2 * H))).astype(np.float32)[..., ::2]
    h0 = rng.standard_normal((B, H, V, K)).astype(np.float32).transpose(0, 1, 3, 2)
    assert not (q.flags.c_contiguous or v.flags.c_contiguous or g.flags.c_contiguous
                or h0.flags.c_contiguous)
    o, ht = call(q, k, v, g=g, initial_state=h0, output_final_state=True)
    oc, hc = call(*(np.ascontiguousarray(x) for x in (q, k, v)), g=np.ascontiguousarray(g),
                  initial_state=np.ascontiguousarray(h0), output_final_state=True)
    np.testing.assert_array_equal(o, oc)
    np.testing.assert_array_equal(ht, hc)
    ro, rht = ref_forward(q, k, v, g, None, None, h0)
    check(o, ht, ro, rht, np.float32)


def test_gates_and_state_converted_to_fp32():
    rng = np.random.default_rng(10)
    B, T, H, K, V = 1, 30, 2, 4, 4
    q, k, v = inputs(rng, B, T, H, K, V, np.float16)
    g64 = np.log(rng.uniform(0.8, 1.0, (B, T, H)))          # float64
    h16 = rng.standard_normal((B, H, K, V)).astype(np.float16)  # float16
    o, ht = call(q, k, v, g=g64, initial_state=h16, output_final_state=True)
    o2, ht2 = call(q, k, v, g=g64.astype(np.float32), initial_state=h16.astype(np.float32),
                   output_final_state=True)
    np.testing.assert_array_equal(o, o2)
    np.testing.assert_array_equal(ht, ht2)
    o3, _ = call(q, k, v, g_gamma=[-0.1, -0.2])  # a plain list for g_gamma
    ro, _ = ref_forward(q, k, v, None, np.array([-0.1, -0.2], np.float32))
    assert rel_l2(o3, ro) <= 1e-3


def test_state_v_first():
    rng = np.random.default_rng(11)
    B, T, H, K, V = 2, 33, 2, 8, 4
    q, k, v = inputs(rng, B, T, H, K, V, np.float32)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32)
    o, ht = call(q, k, v, initial_state=h0, output_final_state=True)
    o2, ht2 = call(q, k, v, initial_state=h0.transpose(0, 1, 3, 2).copy(), output_final_state=True,
                   state_v_first=True)
    assert ht2.shape == (B, H, V, K)
    np.testing.assert_array_equal(o, o2)
    np.testing.assert_array_equal(ht, ht2.transpose(0, 1, 3, 2))


@pytest.mark.parametrize("threads", [1, 2])
def test_threads(threads):
    rng = np.random.default_rng(12)
    q, k, v = inputs(rng, 3, 100, 2, 16, 16, np.float32)
    g, _ = make_gates(rng, "g", 3, 100, 2)
    o, ht = call(q, k, v, g=g, output_final_state=True, threads=threads)
    ro, rht = ref_forward(q, k, v, g)
    check(o, ht, ro, rht, np.float32)


@pytest.mark.parametrize("backend", ["ref-a", "ref-b", "ref-c", "ref-d", "cpu", "auto"])
def test_every_host_backend(backend):
    rng = np.random.default_rng(13)
    q, k, v = inputs(rng, 2, 70, 2, 8, 4, np.float32)
    gg = np.log(np.array([0.95, 0.99], np.float32))  # mild: ref-d's factorised form stays finite
    h0 = rng.standard_normal((2, 2, 8, 4)).astype(np.float32)
    o, ht = sgla.chunk_simple_gla(q, k, v, g_gamma=gg, initial_state=h0, output_final_state=True,
                                  backend=backend, chunk=16)
    ro, rht = ref_forward(q, k, v, None, gg, None, h0)
    check(o, ht, ro, rht, np.float32)


@pytest.mark.parametrize("chunk", [1, 5, 16, 64, 128])
def test_chunk_sizes(chunk):
    rng = np.random.default_rng(14)
    q, k, v = inputs(rng, 1, 130, 2, 8, 8, np.float32)
    g, _ = make_gates(rng, "g", 1, 130, 2)
    try:
        o, ht = call(q, k, v, g=g, output_final_state=True, chunk=chunk)
    except sgla.SglaError as e:
        if e.status == sgla.Status.ERR_UNSUPPORTED_CHUNK:
            pytest.skip(f"backend does not take chunk={chunk}: {e}")
        raise
    ro, rht = ref_forward(q, k, v, g)
    check(o, ht, ro, rht, np.float32)


class _DLPackOnly:
    """A foreign CPU array that only speaks DLPack."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_cpu_producer():
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("this NumPy has no DLPack")
    rng = np.random.default_rng(15)
    q, k, v = inputs(rng, 1, 20, 2, 8, 8, np.float32)
    g, _ = make_gates(rng, "g", 1, 20, 2)
    o, ht = call(_DLPackOnly(q), _DLPackOnly(k), _DLPackOnly(v), g=_DLPackOnly(g),
                 output_final_state=True)
    assert isinstance(o, np.ndarray)
    ro, rht = ref_forward(q, k, v, g)
    check(o, ht, ro, rht, np.float32)


def test_bfloat16_via_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(16)
    q, k, v = (x.astype(ml_dtypes.bfloat16) for x in inputs(rng, 1, 40, 2, 8, 8, np.float32))
    o, ht = call(q, k, v, output_final_state=True)
    assert o.dtype == ml_dtypes.bfloat16
    ro, rht = ref_forward(q, k, v)
    assert rel_l2(o.astype(np.float32), ro) <= 8e-3


def test_version_and_backends():
    assert sgla.__version__ == sgla.HEADER_VERSION
    here = os.path.dirname(os.path.abspath(__file__))
    header = os.path.join(here, "..", "..", "include", "sgla.h")
    if os.path.exists(header):
        with open(header) as f:
            assert f'SGLA_VERSION_STRING "{sgla.__version__}"' in f.read()
    names = sgla.backends()
    for n in ("auto", "ref-a", "ref-b", "ref-c", "ref-d", "cpu"):
        assert n in names
    assert sgla.resolve_backend("REF_A") == sgla.Backend.REF_A
    assert sgla.resolve_backend(5) == sgla.Backend.CPU


@pytest.mark.parametrize("form", ["g", "g_gamma", "none"])
@pytest.mark.parametrize("threads", [2, 4])
def test_long_sequence_few_items(form, threads):
    """Fewer (sequence, head) items than threads: the CPU backend splits each
    sequence across threads; the result must not change."""
    rng = np.random.default_rng(17)
    B, T, H, K, V = 1, 1000, 1, 24, 40
    q, k, v = inputs(rng, B, T, H, K, V, np.float32)
    g, gg = make_gates(rng, form, B, T, H)
    if form == "none":  # keep plain linear attention's state bounded over 1000 tokens
        q, k = q * np.float32(0.1), k * np.float32(0.1)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32)
    o, ht = call(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True,
                 threads=threads)
    ro, rht = ref_forward(q, k, v, g, gg, None, h0)
    check(o, ht, ro, rht, np.float32)
    o1, ht1 = call(q, k, v, g=g, g_gamma=gg, initial_state=h0, output_final_state=True, threads=1)
    assert rel_l2(o, o1) <= 1e-6 and rel_l2(ht, ht1) <= 1e-6


def _inputs(seed=3, B=1, T=70, H=2, K=16, V=16):
    rng = np.random.default_rng(seed)
    q, k = (rng.standard_normal((B, T, H, K), dtype=np.float32) for _ in range(2))
    v = rng.standard_normal((B, T, H, V), dtype=np.float32)
    g = np.log(rng.uniform(0.8, 1.0, (B, T, H))).astype(np.float32)
    h0 = rng.standard_normal((B, H, K, V), dtype=np.float32)
    return q, k, v, g, h0


def test_fla_positional_order():
    """fla's order: ..., initial_state, output_final_state, state_v_first, cu_seqlens, cu_seqlens_cpu"""
    q, k, v, g, h0 = _inputs(T=70)
    cu = np.array([0, 30, 70], np.int64)
    h0 = np.concatenate([h0, h0])
    o1, h1 = sgla.chunk_simple_gla(q, k, v, g, None, None, h0, True, False, cu, cu)
    o2, h2 = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    assert np.array_equal(o1, o2) and np.array_equal(h1, h2)
    o3, h3 = sgla.fused_recurrent_simple_gla(q, k, v, g, None, None, h0, True, False, False, cu)
    assert np.array_equal(o1, o3) and np.array_equal(h1, h3)


def test_fla_keywords_chunk_size_and_transpose_state_layout(recwarn):
    q, k, v, g, h0 = _inputs()
    a, ha = sgla.chunk_simple_gla(q, k, v, g=g, chunk=32, initial_state=h0, output_final_state=True)
    b, hb = sgla.chunk_simple_gla(q, k, v, g=g, chunk_size=32, initial_state=h0, output_final_state=True)
    assert np.array_equal(a, b) and np.array_equal(ha, hb)
    with pytest.raises(ValueError, match="power of 2"):
        sgla.chunk_simple_gla(q, k, v, g=g, chunk_size=48)
    h0t = np.ascontiguousarray(h0.transpose(0, 1, 3, 2))
    c, hc = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0t, output_final_state=True, state_v_first=True)
    d, hd = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0t, output_final_state=True,
                                  transpose_state_layout=True)
    assert np.array_equal(c, d) and np.array_equal(hc, hd)
    sgla.chunk_simple_gla(q, k, v, g=g, cu_seqlens=None, cu_seqlens_cpu=None)
    assert len(recwarn) == 0, [str(w.message) for w in recwarn]


def test_misaligned_views_are_copied():
    q, k, v, g, _ = _inputs()
    want, _ = sgla.chunk_simple_gla(q, k, v, g=g)
    buf = bytearray(q.nbytes + 1)
    qm = np.frombuffer(buf, dtype=np.float32, count=q.size, offset=1).reshape(q.shape)
    qm[...] = q
    assert not qm.flags.aligned
    got, _ = sgla.chunk_simple_gla(qm, k, v, g=g)
    assert np.array_equal(got, want)


def test_scale_must_be_a_number():
    q, k, v, g, _ = _inputs()
    with pytest.raises(TypeError, match="scale"):
        sgla.chunk_simple_gla(q, k, v, g=g, scale="0.5")
    a, _ = sgla.chunk_simple_gla(q, k, v, g=g, scale=np.float32(0.5))
    b, _ = sgla.chunk_simple_gla(q, k, v, g=g, scale=0.5)
    assert np.array_equal(a, b)
