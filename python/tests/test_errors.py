"""Error cases: Python-side checks name the argument; C statuses become SglaError."""
import os

import numpy as np
import pytest

import sgla
from sgla import SglaError, Status

BACKEND = os.environ.get("SGLA_TEST_BACKEND") or None
B, T, H, K, V = 1, 12, 2, 8, 4


def call(*a, **kw):
    kw.setdefault("backend", BACKEND)
    return sgla.chunk_simple_gla(*a, **kw)


@pytest.fixture
def qkv():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((B, T, H, K)).astype(np.float32),
            rng.standard_normal((B, T, H, K)).astype(np.float32),
            rng.standard_normal((B, T, H, V)).astype(np.float32))


def test_sgla_error_is_value_error():
    assert issubclass(SglaError, ValueError)


@pytest.mark.parametrize("dtype", [np.int32, np.complex64])
def test_bad_dtype(qkv, dtype):
    q, k, v = qkv
    with pytest.raises(TypeError, match=r"^q has dtype"):
        call(q.astype(dtype), k.astype(dtype), v.astype(dtype))


def test_float64_is_for_the_references(qkv):
    q, k, v = (x.astype(np.float64) for x in qkv)
    o, _ = sgla.chunk_simple_gla(q, k, v)  # backend None: ref-b
    assert o.dtype == np.float64
    with pytest.raises(SglaError) as ei:
        sgla.chunk_simple_gla(q, k, v, backend="cpu")
    assert ei.value.status == sgla.Status.ERR_UNSUPPORTED_DTYPE


def test_mixed_dtypes(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match=r"^k has dtype float16 but q has float32"):
        call(q, k.astype(np.float16), v)
    with pytest.raises(TypeError, match=r"^v has dtype"):
        call(q, k, v.astype(np.float16))


def test_bad_shapes(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match=r"^q must be 4-D"):
        call(q[0], k[0], v[0])
    with pytest.raises(ValueError, match=r"^k must have q's shape"):
        call(q, k[:, :-1], v)
    with pytest.raises(ValueError, match=r"^v must be \[B, T, H, V\]"):
        call(q, k, v[:, :, :1])
    with pytest.raises(ValueError, match=r"^g must be \[B, T, H\]"):
        call(q, k, v, g=np.zeros((B, T), np.float32))
    with pytest.raises(ValueError, match=r"^g_gamma must be \[H\]"):
        call(q, k, v, g_gamma=np.zeros(H + 1, np.float32))
    with pytest.raises(ValueError, match=r"^initial_state must be \[N, H, K, V\]"):
        call(q, k, v, initial_state=np.zeros((B, H, V, K), np.float32))
    with pytest.raises(ValueError, match=r"^initial_state must be"):
        call(q, k, v, initial_state=np.zeros((2, H, K, V), np.float32), cu_seqlens=[0, T])


def test_non_float_gates_and_state(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match=r"^g must be a floating-point"):
        call(q, k, v, g=np.zeros((B, T, H), np.int32))
    with pytest.raises(TypeError, match=r"^g_gamma must be a floating-point"):
        call(q, k, v, g_gamma=np.zeros(H, np.int64))
    with pytest.raises(TypeError, match=r"^initial_state must be a floating-point"):
        call(q, k, v, initial_state=np.zeros((B, H, K, V), np.int32))


def test_positive_gate(qkv):
    q, k, v = qkv
    g = np.full((B, T, H), -0.1, np.float32)
    g[0, 5, 1] = 0.01
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g=g)
    e = ei.value
    assert e.status == Status.ERR_POSITIVE_GATE
    assert isinstance(e, ValueError)
    assert "positive" in str(e) and e.detail  # status string and the detail
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g_gamma=np.array([-0.1, 0.5], np.float32))
    assert ei.value.status == Status.ERR_POSITIVE_GATE
    assert "g_gamma" in ei.value.detail


def test_nonfinite_gate(qkv):
    q, k, v = qkv
    g = np.full((B, T, H), -0.1, np.float32)
    g[0, 3, 0] = np.nan
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g=g)
    assert ei.value.status == Status.ERR_NONFINITE_GATE


def test_float64_gates_judged_before_rounding(qkv):
    """A float64 log gate is judged as the CLI judges an f8 file: positive however small is refused
    (+1e-50 rounds to 0 in fp32), below -FLT_MAX taken as -FLT_MAX (it rounded to -inf and was refused
    as a value never given); -inf itself is still refused by name."""
    q, k, v = qkv
    g = np.full((B, T, H), -0.1)
    g[0, 3, 1] = 1e-50
    with pytest.raises(SglaError, match=r"g\[0, 3, 1\] = 1e-50") as ei:
        call(q, k, v, g=g)
    assert ei.value.status == Status.ERR_POSITIVE_GATE
    g[0, 3, 1] = -1e300
    o, _ = call(q, k, v, g=g)
    o2, _ = call(q, k, v, g=np.where(g < -1e38, np.float32(-3.4028234663852886e38), g).astype(np.float32))
    np.testing.assert_array_equal(o, o2)
    assert np.isfinite(o).all()
    g[0, 3, 1] = -np.inf
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g=g)
    assert ei.value.status == Status.ERR_NONFINITE_GATE


def test_both_gates(qkv):
    q, k, v = qkv
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g=np.zeros((B, T, H), np.float32), g_gamma=np.zeros(H, np.float32))
    assert ei.value.status == Status.ERR_BOTH_GATES


def test_bad_scale(qkv):
    q, k, v = qkv
    with pytest.raises(SglaError) as ei:
        call(q, k, v, scale=float("nan"))
    assert ei.value.status == Status.ERR_INVALID_SCALE
    with pytest.raises(TypeError, match="scale"):
        call(q, k, v, scale="big")
    with pytest.raises(TypeError, match="scale"):  # a bool is not a scale (True was taken as 1.0)
        call(q, k, v, scale=True)
    with pytest.raises(ValueError, match="beyond the float range"):  # (was OverflowError from float())
        call(q, k, v, scale=10 ** 400)


@pytest.mark.parametrize("cu,status", [
    ([1, 5, T], Status.ERR_CU_SEQLENS_START),
    ([0, 8, 5, T], Status.ERR_CU_SEQLENS_DECREASING),
    ([0, 5, T - 1], Status.ERR_CU_SEQLENS_END),
    ([0, 5, T + 1], Status.ERR_CU_SEQLENS_END),
])
def test_bad_cu_seqlens_values(qkv, cu, status):
    q, k, v = qkv
    with pytest.raises(SglaError) as ei:
        call(q, k, v, cu_seqlens=np.array(cu, np.int64))
    assert ei.value.status == status
    assert "cu_seqlens" in str(ei.value)


def test_bad_cu_seqlens_form(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="cu_seqlens needs B == 1"):
        call(np.concatenate([q, q]), np.concatenate([k, k]), np.concatenate([v, v]),
             cu_seqlens=[0, T])
    with pytest.raises(TypeError, match="^cu_seqlens must be an integer"):
        call(q, k, v, cu_seqlens=np.array([0.0, T]))
    with pytest.raises(ValueError, match="^cu_seqlens must be 1-D"):
        call(q, k, v, cu_seqlens=np.array([[0, T]]))
    with pytest.raises(ValueError, match="^cu_seqlens must hold at least 2"):
        call(q, k, v, cu_seqlens=np.array([0]))
    # unsigned offsets past int64 are refused by name, not wrapped into a "decreasing" sequence
    for big in (2 ** 63 + 5, 2 ** 64 - 1):
        with pytest.raises(ValueError, match=rf"^cu_seqlens\[1\] = {big} does not fit int64"):
            call(q, k, v, cu_seqlens=np.array([0, big, T], np.uint64))
    o, _ = call(q, k, v, cu_seqlens=np.array([0, 5, T], np.uint64))  # in range: taken as int64
    o2, _ = call(q, k, v, cu_seqlens=np.array([0, 5, T], np.int64))
    assert np.array_equal(o, o2)


def test_bad_backend_and_threads(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="backend="):
        sgla.chunk_simple_gla(q, k, v, backend="gpu-please")
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        sgla.chunk_simple_gla(q, k, v, backend="cuda")
    with pytest.raises(SglaError) as ei:
        call(q, k, v, threads=-1)
    assert ei.value.status == Status.ERR_INVALID_ARGUMENT
    with pytest.raises(SglaError) as ei:
        call(q, k, v, chunk=0)
    assert ei.value.status == Status.ERR_UNSUPPORTED_CHUNK
    # values a C int would wrap are refused before ctypes sees them
    with pytest.raises(ValueError, match="threads"):
        call(q, k, v, threads=2 ** 32 + 1)
    with pytest.raises(TypeError, match="chunk"):
        call(q, k, v, chunk=1.5)


def test_zero_k_is_a_clear_error():
    z = np.zeros((1, 4, 1, 0), np.float32)
    with pytest.raises(ValueError, match="K = 0"):
        sgla.chunk_simple_gla(z, z, np.zeros((1, 4, 1, 2), np.float32))


def test_bad_q_type():
    with pytest.raises(TypeError, match="^q must be"):
        sgla.chunk_simple_gla([[1.0]], [[1.0]], [[1.0]])


def test_unsupported_keywords(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match="unexpected keyword"):
        call(q, k, v, bogus=1)
    with pytest.raises(ValueError, match="head_first"):
        call(q, k, v, head_first=True)
    with pytest.raises(NotImplementedError, match="reverse"):
        sgla.fused_recurrent_simple_gla(q, k, v, reverse=True)
    call(q, k, v, head_first=False, cu_seqlens_cpu=None)  # fla's keywords, accepted


def test_error_leaves_no_partial_result(qkv):
    """A failed call raises; the next good call works (no sticky state)."""
    q, k, v = qkv
    with pytest.raises(SglaError):
        call(q, k, v, g_gamma=np.array([1.0, 1.0], np.float32))
    o, _ = call(q, k, v)
    assert np.all(np.isfinite(o))


def test_flags_are_bools(qkv):
    """Older fla took cu_seqlens where sgla has state_v_first (the 9th argument): an offsets array
    there is refused, naming the keyword, rather than taken as True and ignored."""
    q, k, v = qkv
    cu = np.array([0, 5, T])
    with pytest.raises(TypeError, match="state_v_first must be a bool.*cu_seqlens="):
        sgla.chunk_simple_gla(q, k, v, None, None, None, None, False, cu)
    with pytest.raises(TypeError, match="output_final_state must be a bool"):
        sgla.chunk_simple_gla(q, k, v, output_final_state=cu)
    with pytest.raises(TypeError, match="reverse must be a bool"):
        sgla.fused_recurrent_simple_gla(q, k, v, None, None, None, None, False, cu)
    with pytest.raises(TypeError, match="do .* is required"):
        sgla.chunk_simple_gla_backward(q, k, v, None)
    # older fla's positional None for cu_seqlens, NumPy bools and 0 / 1 are flags
    o1, h1 = sgla.chunk_simple_gla(q, k, v, None, None, None, None, np.bool_(True), None)
    o2, h2 = sgla.chunk_simple_gla(q, k, v, output_final_state=1, state_v_first=0)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(h1, h2)


def test_sgla_error_pickles(qkv):
    """A worker process's SglaError reaches its parent whole (pickle, copy)."""
    import copy
    import pickle
    q, k, v = qkv
    with pytest.raises(SglaError) as ei:
        call(q, k, v, g=np.full((B, T, H), 0.5, np.float32))
    e = ei.value
    for x in (pickle.loads(pickle.dumps(e)), copy.copy(e)):
        assert type(x) is SglaError and x.status == e.status and x.detail == e.detail and str(x) == str(e)


def test_backward_workspace_limit_setter():
    """The cap's setter: an integer in range, None or 0 lifts it, each call returns the previous
    cap; the NumPy backward (CPU, no workspace) runs under any cap."""
    try:
        assert sgla.set_backward_workspace_limit(1 << 20) is None
        assert sgla.set_backward_workspace_limit(None) == 1 << 20
        assert sgla.set_backward_workspace_limit(0) is None
        with pytest.raises(ValueError):
            sgla.set_backward_workspace_limit(-1)
        with pytest.raises(TypeError):
            sgla.set_backward_workspace_limit(1.5)
        sgla.set_backward_workspace_limit(1)
        rng = np.random.default_rng(0)
        q, k = rng.standard_normal((2, B, T, H, K), dtype=np.float32)
        v, do = rng.standard_normal((2, B, T, H, V), dtype=np.float32)
        g = -0.1 * rng.random((B, T, H), dtype=np.float32)
        dq = sgla.chunk_simple_gla_backward(q, k, v, do, g=g, backend=BACKEND)[0]
        assert dq.shape == q.shape and np.isfinite(dq).all()
    finally:
        sgla.set_backward_workspace_limit(None)
