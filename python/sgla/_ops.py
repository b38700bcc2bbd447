"""chunk_simple_gla / fused_recurrent_simple_gla over libsgla (ctypes).

Array handling lives here; the C mirror lives in _lib.py.  NumPy and torch are
imported lazily: a torch user does not need NumPy for the torch path and a
NumPy user never imports torch.
"""
from __future__ import annotations

import ctypes
import numbers
import sys

from . import _lib
from ._lib import Backend, DType, SglaError

__all__ = ["chunk_simple_gla", "chunk_simple_gla_backward", "fused_recurrent_simple_gla", "backends",
           "set_backward_workspace_limit",
           "resolve_backend"]

_BACKEND_NAMES = {
    "auto": Backend.AUTO, "ref-a": Backend.REF_A, "ref-b": Backend.REF_B,
    "ref-c": Backend.REF_C, "ref-d": Backend.REF_D, "cpu": Backend.CPU, "cuda": Backend.CUDA,
}


def backends():
    """Names of the backends usable in this process (compiled in and, for
    "cuda", a device present), e.g. ["auto", "ref-a", ..., "cpu", "cuda"].

    chunk_simple_gla picks "cpu" for host arrays (NumPy, CPU tensors; "ref-b"
    for float64) and "cuda" for CUDA tensors unless ``backend=`` says otherwise.
    """
    return [n for n, b in _BACKEND_NAMES.items() if _lib.backend_available(b)]


def resolve_backend(backend):
    """A backend name ("cpu", "ref-a", ...), an sgla Backend or its int -> Backend."""
    if isinstance(backend, Backend):
        return backend
    if isinstance(backend, str):
        key = backend.strip().lower().replace("_", "-")
        if key.startswith("sgla-backend-"):
            key = key[len("sgla-backend-"):]
        if key in _BACKEND_NAMES:
            return _BACKEND_NAMES[key]
        raise ValueError(f"backend={backend!r} is not one of {sorted(_BACKEND_NAMES)}")
    if isinstance(backend, int) and not isinstance(backend, bool):
        try:
            return Backend(backend)
        except ValueError:
            raise ValueError(f"backend={backend!r} is not a value of sgla_backend (0..6)") from None
    raise TypeError(f"backend must be a name such as 'cpu' or 'ref-a', got {type(backend).__name__}")


# --------------------------------------------------------------------------
# framework detection

_KDL_CPU = 1


def _torch():
    return sys.modules.get("torch")


def _is_torch(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _np():
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is there whenever arrays are
        raise TypeError("sgla: NumPy is needed for NumPy/DLPack CPU inputs") from None
    return numpy


def _is_numpy(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def _framework_of_q(q):
    """'torch' or 'numpy'; DLPack producers are imported into one of them."""
    if _is_torch(q):
        return "torch"
    if _is_numpy(q):
        return "numpy"
    if hasattr(q, "__dlpack__") and hasattr(q, "__dlpack_device__"):
        dev = q.__dlpack_device__()[0]
        if int(dev) == _KDL_CPU:
            return "dlpack-cpu"
        return "dlpack-device"
    raise TypeError(
        f"q must be a torch.Tensor, a numpy.ndarray or an array that supports DLPack, "
        f"got {type(q).__module__}.{type(q).__name__}")


# --------------------------------------------------------------------------
# shape checks shared by both frameworks

def _shape_checks(q, k, v, g, g_gamma, h0, cu, state_v_first):
    qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    if len(qs) != 4:
        raise ValueError(f"q must be 4-D [B, T, H, K], got shape {list(qs)}")
    B, T, H, K = qs
    if ks != qs:
        raise ValueError(f"k must have q's shape [B, T, H, K] = {list(qs)}, got {list(ks)}")
    if len(vs) != 4 or vs[:3] != qs[:3]:
        raise ValueError(f"v must be [B, T, H, V] with q's B, T, H = {list(qs[:3])}, got {list(vs)}")
    V = vs[3]
    if g is not None and tuple(g.shape) != (B, T, H):
        raise ValueError(f"g must be [B, T, H] = {[B, T, H]}, got {list(g.shape)}")
    if g_gamma is not None and tuple(g_gamma.shape) != (H,):
        raise ValueError(f"g_gamma must be [H] = [{H}], got {list(g_gamma.shape)}")
    if cu is not None:
        if len(cu.shape) != 1:
            raise ValueError(f"cu_seqlens must be 1-D [N+1], got shape {list(cu.shape)}")
        if B != 1:
            raise ValueError(f"cu_seqlens needs B == 1 (flatten the batch into T), got B = {B}")
        N = cu.shape[0] - 1
        if N < 1:
            raise ValueError(f"cu_seqlens must hold at least 2 offsets [0, ..., T], got {cu.shape[0]}")
    else:
        N = B
    if h0 is not None:
        want = (N, H, V, K) if state_v_first else (N, H, K, V)
        if tuple(h0.shape) != want:
            what = "[N, H, V, K]" if state_v_first else "[N, H, K, V]"
            raise ValueError(f"initial_state must be {what} = {list(want)} "
                             f"(N = {'len(cu_seqlens) - 1' if cu is not None else 'B'}), "
                             f"got {list(h0.shape)}")
    return B, T, H, K, V, N


def _scale_of(scale, K):
    if scale is None:
        if K < 1:
            raise ValueError(f"K = {K}: q and k need a last dimension of at least 1")
        return K ** -0.5
    if isinstance(scale, (str, bytes, bool)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number or None, got {type(scale).__name__} {scale!r}")
    try:
        return float(scale)
    except OverflowError:  # an int past the double range; the library checks the float (finite, fp32 range)
        raise ValueError(f"scale = {scale} is beyond the float range") from None


def _fill_desc(d, dtype, B, T, H, K, V, N, scale, chunk, threads, cu_present):
    d.dtype = int(dtype)
    d.B, d.T, d.H, d.K, d.V = B, T, H, K, V
    d.scale = scale
    d.num_seqs = N if cu_present else 0
    if chunk is not None:
        d.chunk = _c_int("chunk", chunk, -2 ** 63, 2 ** 63 - 1)  # the library checks the real range
    d.threads = _c_int("threads", threads, -2 ** 31, 2 ** 31 - 1)


def _c_int(name, x, lo, hi):
    """An integer that fits its C field: ctypes would wrap it silently."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if not lo <= int(x) <= hi:
        raise ValueError(f"{name} = {x} is out of range [{lo}, {hi}]")
    return int(x)


def _of_kind(name, x, floating, bools=False, asarray=None):
    """x unchanged, after refusing the wrong kind of array as a plain call does: gates are
    floating (any float dtype is converted to fp32), offsets and slot indices integers (never
    rounded silently), flags (bools) bools or integers.  asarray: how the caller's framework
    reads a list (torch.as_tensor: torch users need no NumPy), NumPy's by default."""
    if x is None or (floating and isinstance(x, float)):
        return x
    dt = getattr(x, "dtype", None)
    if dt is None and not (isinstance(x, (list, tuple)) and not x):
        dt = (asarray or _np().asarray)(x).dtype
    if dt is None:
        return x
    s = str(dt)
    is_float = "float" in s
    if s in ("object", "O"):  # an object array would be cast (rounded, wrapped) by the conversion after this
        raise TypeError(f"{name} must be a numeric array, got dtype object")
    if floating and not is_float:
        raise TypeError(f"{name} must be a floating-point array (it is used as fp32), got dtype {s}")
    if bools and (is_float or "complex" in s):
        raise TypeError(f"{name} must hold bools (or integers 0 / 1), got dtype {s}")
    if not floating and not bools and (is_float or "complex" in s or "bool" in s):
        raise TypeError(f"{name} must hold integers (int64 or int32), got dtype {s}")
    return x


def _call(d, backend):
    st = _lib.sgla_forward(ctypes.byref(d), int(backend))
    _lib.raise_for(st)


# --------------------------------------------------------------------------
# the state pool (serving): fla's continuous-batching keywords

def _pool_call(q, k, v, g, g_gamma, scale, pool, cu, indices, num_accepted, has_initial_state, inplace, cu_host,
               state_v_first, backend, threads, chunk):
    """_pool_forward, through the custom op sgla::pool_fwd while torch.compile traces (torch tensors)."""
    args = (q, k, v, g, g_gamma, scale, pool, cu, indices, num_accepted, has_initial_state, inplace, cu_host,
            state_v_first, backend, threads, chunk)
    if _is_torch(q):
        torch = _torch()
        if _compiling(torch) and all(x is None or isinstance(x, torch.Tensor)
                                     for x in (k, v, g, g_gamma, pool, cu, indices, num_accepted, has_initial_state)):
            _pool_no_grad(torch, (q, k, v, g, g_gamma, pool))  # (in the op body it came back as a compile failure)
            from . import _autograd
            return _autograd.pool_forward(*args)
    return _pool_forward(*args)


def _pool_no_grad(torch, tensors):
    if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in tensors):
        raise ValueError("the state-pool path (ssm_state_indices) is for inference and records no "
                         "gradient: call it under torch.no_grad() or torch.inference_mode(), or train "
                         "through initial_state without ssm_state_indices")


def _pool_forward(q, k, v, g, g_gamma, scale, pool, cu, indices, num_accepted, has_initial_state, inplace,
                  cu_host, state_v_first, backend, threads, chunk):
    """o for a batch whose states live in `pool` [S, H, K, V] (or [S, H, V, K]): NumPy
    arrays, CPU or CUDA torch tensors; the pool is updated in place when `inplace`, else
    read only, the final states returned in a new [N, ...] array (fla's inplace_final_state=False).
    cu_host: a host copy of cu_seqlens (fla's cu_seqlens_cpu) or None."""
    fw = _framework_of_q(q)
    if fw == "torch":
        torch = _torch()
        dev = q.device
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"q is on {dev}; sgla runs on CPU tensors and CUDA tensors")

        def as_arr(name, x, dtype=None):
            if x is None:
                return None
            if not isinstance(x, torch.Tensor):
                x = torch.as_tensor(x, device=dev)
            if x.device != dev:
                raise ValueError(f"{name} is on {x.device} but q is on {dev}")
            if dtype is not None and x.dtype != dtype:
                x = x.to(dtype)
            return x.contiguous()

        def ptr(x):
            return x.data_ptr()

        q, k, v = (as_arr(n, x) for n, x in (("q", q), ("k", k), ("v", v)))
        _pool_no_grad(torch, (q, k, v, g, g_gamma, pool))
        dt = {torch.float32: DType.F32, torch.float16: DType.F16, torch.bfloat16: DType.BF16}.get(q.dtype)
        f32, i64, i32, u8 = torch.float32, torch.int64, torch.int32, torch.uint8

        def empty(shape, dtype):
            return torch.empty(shape, dtype=dtype, device=dev)
        pool_ok = isinstance(pool, torch.Tensor) and pool.dtype == f32 and pool.is_contiguous() and pool.device == dev
    else:
        np = _np()
        q, k, v = (np.require(x, requirements=["C", "A"]) for x in (q, k, v))
        dt = _np_dtype_code("q", q)

        def as_arr(name, x, dtype=None):
            if x is None:
                return None
            return np.require(x, dtype=dtype, requirements=["C", "A"])

        def ptr(x):
            return x.ctypes.data

        f32, i64, i32, u8 = np.float32, np.int64, np.int32, np.uint8
        empty = np.empty
        pool_ok = isinstance(pool, np.ndarray) and pool.dtype == np.float32 and pool.flags.c_contiguous \
            and pool.flags.aligned and (pool.flags.writeable or not inplace)  # (not in place: only read)
    if dt is None or dt == DType.F64:
        raise TypeError(f"q must be float32, float16 or bfloat16 with a state pool, got {q.dtype}")
    for name, x in (("k", k), ("v", v)):
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has {q.dtype}; q, k and v must share one dtype")
    if not pool_ok:
        raise TypeError("initial_state (the pool) must be a C-contiguous float32 array [S, H, K, V] when "
                        "ssm_state_indices is given, writable unless inplace_final_state=False: it is read and "
                        "updated in place")
    def kind(name, x, floating, bools=False):
        return _of_kind(name, x, floating, bools, torch.as_tensor if fw == "torch" else None)
    cu = kind("cu_seqlens", cu, False)
    _fits_int64("cu_seqlens", cu)
    cu = as_arr("cu_seqlens", cu, i64)
    g = as_arr("g", kind("g", g, True), f32)
    g_gamma = as_arr("g_gamma", kind("g_gamma", g_gamma, True), f32)
    B, T, H, K, V, N = (int(x) for x in _shape_checks(q, k, v, g, g_gamma, None, cu, state_v_first))
    o = empty((B, T, H, V), q.dtype)
    want = (H, V, K) if state_v_first else (H, K, V)
    if len(pool.shape) != 4 or tuple(int(x) for x in pool.shape[1:]) != want:
        raise ValueError(f"the pool must be [S, {', '.join(str(x) for x in want)}], got {list(pool.shape)}")
    idx = kind("ssm_state_indices", indices, False)
    acc = kind("num_accepted_tokens", num_accepted, False)
    if fw == "torch":
        idx = idx if isinstance(idx, torch.Tensor) else torch.as_tensor(idx, device=q.device)
        acc = acc if acc is None or isinstance(acc, torch.Tensor) else torch.as_tensor(acc, device=q.device)
        i32_of = lambda x: x.dtype == torch.int32  # noqa: E731
    else:
        idx = np.asarray(idx)
        acc = acc if acc is None else np.asarray(acc)
        i32_of = lambda x: x.dtype == np.int32  # noqa: E731
    # the library takes indices and accepted counts of one integer type: int32 where both are, else both
    # int64 (an int64 count cast to an index's int32 wrapped: 2**32 + 2 became 2)
    bits = 32 if i32_of(idx) and (acc is None or i32_of(acc)) else 64
    _fits_int64("ssm_state_indices", idx)
    _fits_int64("num_accepted_tokens", acc)
    idx = as_arr("ssm_state_indices", idx, i32 if bits == 32 else i64)
    if len(idx.shape) not in (1, 2) or int(idx.shape[0]) != N:
        raise ValueError(f"ssm_state_indices must be [N] or [N, T_max] with N = {N}, got {list(idx.shape)}")
    t_max = int(idx.shape[1]) if len(idx.shape) == 2 else 0
    acc = as_arr("num_accepted_tokens", acc, i32 if bits == 32 else i64)
    if acc is not None and tuple(int(x) for x in acc.shape) != (N,):
        raise ValueError(f"num_accepted_tokens must be [N] = [{N}], got {list(acc.shape)}")
    his = kind("has_initial_state", has_initial_state, False, bools=True)
    if his is not None:  # nonzero is true (a cast to uint8 took 256 for false); no host sync for CUDA tensors
        if fw == "torch":
            his = (his if isinstance(his, torch.Tensor) else torch.as_tensor(his, device=dev)) != 0
        else:
            his = np.asarray(his) != 0
    his = as_arr("has_initial_state", his, u8)
    if his is not None and tuple(int(x) for x in his.shape) != (N,):
        raise ValueError(f"has_initial_state must be [N] = [{N}], got {list(his.shape)}")
    on_cuda = fw == "torch" and q.device.type == "cuda"
    final = pool
    if not inplace:
        # fla's inplace_final_state=False: the final states in a new [N, ...] array and the pool only
        # read; the call runs in place on a copy of the N slots it reads (a slot outside [0, S): a padded
        # row, as on CUDA; the host refuses one outside [-1, S), as the C library does)
        if t_max:
            raise NotImplementedError("inplace_final_state=False with speculative indices [N, T_max]: "
                                      "sgla writes those states into the pool only")
        S = int(pool.shape[0])
        if S < 1:
            raise ValueError("the pool (initial_state) has no slots")
        ok = (idx >= 0) & (idx < S)
        if fw == "torch":
            if not on_cuda and not bool((ok | (idx == -1)).all()):
                raise ValueError(f"ssm_state_indices: a slot outside [-1, {S})")
            rows = pool.index_select(0, torch.where(ok, idx, torch.zeros_like(idx)).long())
            final = torch.where(ok.view(-1, 1, 1, 1), rows, torch.zeros_like(rows)).contiguous()
            idx = torch.where(ok, torch.arange(N, device=dev, dtype=idx.dtype), torch.full_like(idx, -1)).contiguous()
        else:
            if not bool((ok | (idx == -1)).all()):
                raise ValueError(f"ssm_state_indices: a slot outside [-1, {S})")
            final = np.zeros((N,) + tuple(pool.shape[1:]), dtype=np.float32)
            final[ok] = pool[idx[ok]]
            idx = np.ascontiguousarray(np.where(ok, np.arange(N), -1).astype(idx.dtype))
    p = _lib.StatePool()
    p.slots, p.indices, p.index_bits, p.t_max = int(final.shape[0]), ptr(idx), bits, t_max
    p.has_initial_state = ptr(his) if his is not None else None
    p.num_accepted = ptr(acc) if acc is not None else None
    p.flags = _lib.POOL_INPLACE | (_lib.POOL_V_FIRST if state_v_first else 0)
    if cu_host is not None and cu is not None:
        np = _np()
        kind("cu_seqlens_cpu", cu_host, False)
        _fits_int64("cu_seqlens_cpu", cu_host)
        cu_host = np.ascontiguousarray(cu_host.cpu().numpy() if hasattr(cu_host, "cpu") else cu_host, dtype=np.int64)
        if cu_host.shape != (N + 1,):
            raise ValueError(f"cu_seqlens_cpu must be [{N + 1}] like cu_seqlens, got {list(cu_host.shape)}")
        p.host_cu_seqlens = cu_host.ctypes.data
    d = _lib.new_desc()
    _fill_desc(d, dt, B, T, H, K, V, N, _scale_of(scale, K), chunk, threads, cu is not None)
    d.q, d.k, d.v, d.o, d.h0 = ptr(q), ptr(k), ptr(v), ptr(o), ptr(final)
    d.g = ptr(g) if g is not None else None
    d.g_gamma = ptr(g_gamma) if g_gamma is not None else None
    d.cu_seqlens = ptr(cu) if cu is not None else None
    d.pool = ctypes.addressof(p)
    asked = None if backend is None else resolve_backend(backend)
    if on_cuda and asked not in (None, Backend.AUTO, Backend.CUDA):
        raise ValueError(f"backend={backend!r} runs on the host but q is on {q.device}; "
                         "use backend='cuda' (the default for CUDA tensors)")
    if not on_cuda and asked == Backend.CUDA:
        raise ValueError("backend='cuda' needs CUDA tensors (the pool, indices and inputs on the device); "
                         "these are host arrays")
    if on_cuda:  # asynchronous on torch's current stream, no workspace
        with torch.cuda.device(q.device):
            d.stream = torch.cuda.current_stream(q.device).cuda_stream
            _call(d, Backend.CUDA)
    else:
        _call(d, Backend.CPU if asked in (None, Backend.AUTO) else asked)
    if fw == "torch" and final is pool:  # written behind torch's back: autograd's saved-tensor checks see it
        try:
            torch.autograd.graph.increment_version(pool)
        except (AttributeError, RuntimeError):  # older torch; an inference tensor keeps no version
            pass
    return o, final


# --------------------------------------------------------------------------
# NumPy (and DLPack CPU producers, imported through numpy.from_dlpack)

def _np_dtype_code(name, a):
    np = _np()
    dt = a.dtype
    if dt == np.float32:
        return DType.F32
    if dt == np.float16:
        return DType.F16
    if dt.name == "bfloat16" and dt.itemsize == 2:  # ml_dtypes.bfloat16
        return DType.BF16
    if dt == np.float64:
        return DType.F64
    raise TypeError(f"{name} has dtype {dt}; sgla takes float32, float16, bfloat16 or float64 "
                    f"(float64: the reference backends) (convert with .astype(numpy.float32))")


def _np_in(name, x, dlpack):
    np = _np()
    if x is None:
        return None
    if not isinstance(x, np.ndarray):
        if _is_torch(x):
            if x.device.type != "cpu":
                raise ValueError(f"{name} is on {x.device} but q is a host (NumPy) array")
            x = x.detach().numpy() if x.dtype != _torch().bfloat16 else None
            if x is None:
                raise TypeError(f"{name} is a bfloat16 torch tensor but q is a NumPy array; "
                                "pass torch tensors for all of q, k, v")
        elif dlpack and hasattr(x, "__dlpack__"):
            try:
                x = np.from_dlpack(x)
            except (BufferError, TypeError, RuntimeError) as e:
                raise TypeError(f"{name}: cannot import through DLPack into NumPy: {e}") from None
        else:
            x = np.asarray(x)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    return x


_FLT_MAX = 3.4028234663852886e38
_FLT_TRUE_MIN = 2.0 ** -149  # fp32's least positive (subnormal) value


def _np_f32(name, x, f64=False):
    """Gates and states: fp32, or fp64 with float64 inputs (SGLA_F64).  A wider float gate is judged
    before it is rounded, as the CLI judges an f8 file: a positive log gate is refused however small
    (+1e-50 would round to 0), one below -FLT_MAX is taken as -FLT_MAX (it would round to -inf, which
    the library refuses naming a value never given; any gate under -104 already erases the state)."""
    np = _np()
    if x is None:
        return None
    if not (np.issubdtype(x.dtype, np.floating) or x.dtype.name == "bfloat16"):
        raise TypeError(f"{name} must be a floating-point array (it is used as fp32), got dtype {x.dtype}")
    if not f64 and name in ("g", "g_gamma") and x.dtype.kind == "f" and x.dtype.itemsize > 4:
        xa = np.asarray(x)
        pos = xa > 0
        if pos.any():
            at = _first(pos)
            st = _lib.Status.ERR_POSITIVE_GATE
            raise _lib.SglaError(st, _lib.sgla_status_string(int(st)).decode(errors="replace"),
                                 f"{name}{_index_text(at)} = {float(xa[at])!r}: "
                                 "log gates must be <= 0 (judged in the input's precision, before fp32)")
        x = np.where((xa < -_FLT_MAX) & np.isfinite(xa), -_FLT_MAX, xa)  # (-inf stays: the library names it)
    return np.require(x, dtype=np.float64 if f64 else np.float32, requirements=["C", "A"])


def _default_backend(dt, on_cuda):
    """None: "cuda" for CUDA tensors, "ref-b" for float64 (only the references take it), else "cpu"."""
    if on_cuda:
        return Backend.CUDA
    return Backend.REF_B if dt == DType.F64 else Backend.CPU


def _np_backend(backend, dt):
    if backend is None or resolve_backend(backend) == Backend.AUTO:  # auto: sgla.h's meaning
        return _default_backend(dt, False)
    be = resolve_backend(backend)
    if be == Backend.CUDA:
        raise ValueError("backend='cuda' needs CUDA tensors (torch); q is a host (NumPy) array")
    return be


def _forward_numpy(q, k, v, g, g_gamma, scale, h0, output_final_state, cu, backend,
                   threads, chunk, state_v_first, dlpack):
    np = _np()
    q, k, v, g, g_gamma, h0, cu = (_np_in(n, x, dlpack) for n, x in (
        ("q", q), ("k", k), ("v", v), ("g", g), ("g_gamma", g_gamma),
        ("initial_state", h0), ("cu_seqlens", cu)))
    B, T, H, K, V, N = _shape_checks(q, k, v, g, g_gamma, h0, cu, state_v_first)
    dt = _np_dtype_code("q", q)
    for name, x in (("k", k), ("v", v)):
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has {q.dtype}; q, k and v must share one dtype")
    be = _np_backend(backend, dt)
    f64 = dt == DType.F64
    q, k, v = (np.require(x, requirements=["C", "A"]) for x in (q, k, v))  # misaligned views are copied
    g, g_gamma, h0 = _np_f32("g", g, f64), _np_f32("g_gamma", g_gamma, f64), _np_f32("initial_state", h0, f64)
    if h0 is not None and state_v_first:
        h0 = np.ascontiguousarray(h0.transpose(0, 1, 3, 2))
    if cu is not None:
        cu = _np_cu(cu)
    o = np.empty((B, T, H, V), dtype=q.dtype)
    ht = np.empty((N, H, K, V), dtype=np.float64 if f64 else np.float32) if output_final_state else None

    d = _lib.new_desc()
    _fill_desc(d, dt, B, T, H, K, V, N, _scale_of(scale, K), chunk, threads, cu is not None)
    d.q, d.k, d.v, d.o = q.ctypes.data, k.ctypes.data, v.ctypes.data, o.ctypes.data
    if g is not None:
        d.g = g.ctypes.data
    if g_gamma is not None:
        d.g_gamma = g_gamma.ctypes.data
    if h0 is not None:
        d.h0 = h0.ctypes.data
    if ht is not None:
        d.ht = ht.ctypes.data
    if cu is not None:
        d.cu_seqlens = cu.ctypes.data
    _call(d, be)
    if ht is not None and state_v_first:
        ht = np.ascontiguousarray(ht.transpose(0, 1, 3, 2))
    return o, ht


def _backward_numpy(q, k, v, do, g, g_gamma, scale, h0, dht, cu, backend, threads, chunk, state_v_first, dlpack):
    np = _np()
    q, k, v, do, g, g_gamma, h0, dht, cu = (_np_in(n, x, dlpack) for n, x in (
        ("q", q), ("k", k), ("v", v), ("do", do), ("g", g), ("g_gamma", g_gamma),
        ("initial_state", h0), ("dht", dht), ("cu_seqlens", cu)))
    B, T, H, K, V, N = _shape_checks(q, k, v, g, g_gamma, h0, cu, state_v_first)
    dt = _np_dtype_code("q", q)
    for name, x in (("k", k), ("v", v), ("do", do)):
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has {q.dtype}; q, k, v and do must share one dtype")
    if tuple(do.shape) != (B, T, H, V):
        raise ValueError(f"do must be [B, T, H, V] = {[B, T, H, V]}, got {list(do.shape)}")
    want = (N, H, V, K) if state_v_first else (N, H, K, V)
    if dht is not None and tuple(dht.shape) != want:
        raise ValueError(f"dht must have the final state's shape {list(want)}, got {list(dht.shape)}")
    be = _np_backend(backend, dt)
    f64 = dt == DType.F64
    aux = np.float64 if f64 else np.float32
    q, k, v, do = (np.require(x, requirements=["C", "A"]) for x in (q, k, v, do))
    g, g_gamma = _np_f32("g", g, f64), _np_f32("g_gamma", g_gamma, f64)
    h0, dht = _np_f32("initial_state", h0, f64), _np_f32("dht", dht, f64)
    if state_v_first:
        h0 = np.ascontiguousarray(h0.transpose(0, 1, 3, 2)) if h0 is not None else None
        dht = np.ascontiguousarray(dht.transpose(0, 1, 3, 2)) if dht is not None else None
    if cu is not None:
        cu = _np_cu(cu)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    dg = np.empty((B, T, H), dtype=aux) if g is not None else None
    dgg = np.empty((H,), dtype=aux) if g_gamma is not None else None
    dh0 = np.empty((N, H, K, V), dtype=aux) if h0 is not None else None
    f = _lib.new_desc()
    _fill_desc(f, dt, B, T, H, K, V, N, _scale_of(scale, K), chunk, threads, cu is not None)
    ptr = lambda x: x.ctypes.data if x is not None else None  # noqa: E731
    f.q, f.k, f.v = ptr(q), ptr(k), ptr(v)
    f.g, f.g_gamma, f.h0, f.cu_seqlens = ptr(g), ptr(g_gamma), ptr(h0), ptr(cu)
    b = _lib.new_bdesc()
    b.fwd = ctypes.pointer(f)
    b.dout, b.dht = ptr(do), ptr(dht)
    b.dq, b.dk, b.dv, b.dg, b.dg_gamma, b.dh0 = ptr(dq), ptr(dk), ptr(dv), ptr(dg), ptr(dgg), ptr(dh0)
    _lib.raise_for(_lib.sgla_backward(ctypes.byref(b), int(be)))
    if dh0 is not None and state_v_first:
        dh0 = np.ascontiguousarray(dh0.transpose(0, 1, 3, 2))
    return dq, dk, dv, dg, dgg, dh0


# --------------------------------------------------------------------------
# torch (CPU and CUDA; DLPack device producers are imported through torch)

def _torch_dtype_code(name, t):
    torch = _torch()
    if t.dtype == torch.float32:
        return DType.F32
    if t.dtype == torch.float16:
        return DType.F16
    if t.dtype == torch.bfloat16:
        return DType.BF16
    if t.dtype == torch.float64:
        return DType.F64
    raise TypeError(f"{name} has dtype {t.dtype}; sgla takes torch.float32, torch.float16, "
                    f"torch.bfloat16 or torch.float64 (the reference backends)")


def _compiling(torch):
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(f()) if f is not None else False


def _fits_int64(name, x):
    """An unsigned integer array or tensor (numpy's or torch's uint64) whose values int64 holds: the cast
    to int64 would wrap the others to negatives, which the library reads as something else (a decreasing
    cu_seqlens, a -1 index that pads a sequence).  Signed and None pass; a torch tensor of another dtype
    is not copied to the host."""
    if x is None:
        return
    if type(x).__module__.startswith("torch"):
        import torch
        if x.dtype != getattr(torch, "uint64", None):
            return
        x = x.cpu().numpy()
    np = _np()
    x = np.asarray(x)
    if x.dtype.kind != "u":
        return
    big = x > np.iinfo(np.int64).max
    if big.any():
        at = _first(big)
        raise ValueError(f"{name}{_index_text(at)} = {int(x[at])} does not fit int64 "
                         "(sgla's offsets and indices are int64)")


def _first(mask):
    """The index tuple of mask's first true element (C order; () for a 0-d mask)."""
    np = _np()
    return np.unravel_index(int(np.argmax(mask)), mask.shape) if mask.ndim else ()


def _index_text(at):
    return f"[{', '.join(str(int(i)) for i in at)}]"


def _np_cu(cu):
    np = _np()
    if not np.issubdtype(cu.dtype, np.integer):
        raise TypeError(f"cu_seqlens must be an integer array (int64), got dtype {cu.dtype}")
    _fits_int64("cu_seqlens", cu)
    return np.require(cu, dtype=np.int64, requirements=["C", "A"])


def _cuda_available_on(torch, dev):
    """sgla's CUDA backend probed on dev (the probe looks at the current device: with q on cuda:1
    and cuda:0 current it would judge, and make a context on, the wrong GPU)."""
    with torch.cuda.device(dev):
        return _lib.backend_available(Backend.CUDA)


def _torch_prepare(q, k, v, g, g_gamma, h0, cu, backend, state_v_first):
    """Checks and converts the torch inputs (differentiably: the gates and the state
    become fp32, or fp64 with float64 inputs, and contiguous; a [N, H, V, K] state is
    transposed).  Returns the tensors, the shape, the dtype code and the backend."""
    torch = _torch()
    if not _is_torch(q):  # a DLPack producer on a device
        q = torch.from_dlpack(q)
    dev = q.device

    def take(name, x, aux):
        if x is None:
            return None
        if not isinstance(x, torch.Tensor):
            if hasattr(x, "__dlpack__") and not _is_numpy(x):
                x = torch.from_dlpack(x)
            else:
                x = torch.as_tensor(x, device=dev)
        if x.device != dev:
            raise ValueError(f"{name} is on {x.device} but q is on {dev}; "
                             "all tensors must be on one device")
        if aux is not None:
            if not x.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor (it is used as fp32), "
                                f"got {x.dtype}")
            if name in ("g", "g_gamma") and aux == torch.float32 and x.dtype == torch.float64:
                # below -FLT_MAX a log gate would round to -inf: -FLT_MAX, as the CLI and NumPy take it; a
                # positive one too small for fp32 (+1e-50) would round to 0 and pass: fp32's least positive
                # value, which the library's value check refuses (NumPy's path judges it on the host; here that
                # would be a sync)
                x = torch.where((x < -_FLT_MAX) & x.isfinite(), torch.full_like(x, -_FLT_MAX),
                                torch.where((x > 0) & (x < _FLT_TRUE_MIN), torch.full_like(x, _FLT_TRUE_MIN), x))
            x = x.to(aux)
        return x

    k, v = take("k", k, None), take("v", v, None)
    cu = take("cu_seqlens", cu, None)
    dt = _torch_dtype_code("q", q)
    aux = torch.float64 if dt == DType.F64 else torch.float32
    # tensors before the shape checks: a float, a list or a DLPack producer has no .shape
    g, g_gamma, h0 = take("g", g, aux), take("g_gamma", g_gamma, aux), take("initial_state", h0, aux)
    B, T, H, K, V, N = _shape_checks(q, k, v, g, g_gamma, h0, cu, state_v_first)
    for name, x in (("k", k), ("v", v)):
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has {q.dtype}; "
                            "q, k and v must share one dtype")
    if cu is not None:
        if cu.is_floating_point() or cu.is_complex() or cu.dtype == torch.bool:
            raise TypeError(f"cu_seqlens must be an integer tensor (torch.long), got {cu.dtype}")
        _fits_int64("cu_seqlens", cu)  # (a uint64 tensor's values past int64 would wrap in the cast)
        cu = cu.to(torch.int64).contiguous()

    on_cuda = dev.type == "cuda"
    if not on_cuda and dev.type != "cpu":
        raise ValueError(f"q is on {dev}; sgla runs on CPU tensors and CUDA tensors")
    if backend is None or resolve_backend(backend) == Backend.AUTO:  # auto: sgla.h's meaning
        be = _default_backend(dt, on_cuda)
    else:
        be = resolve_backend(backend)
        if on_cuda and be != Backend.CUDA:
            raise ValueError(f"backend={backend!r} runs on the host but q is on {dev}; "
                             "use backend='cuda' (the default for CUDA tensors)")
        if not on_cuda and be == Backend.CUDA:
            raise ValueError(f"backend='cuda' needs CUDA tensors; q is on {dev}")
    # under torch.compile the check is left to the operator (sgla_forward reports the
    # same status when it runs): dynamo cannot trace a ctypes call
    if on_cuda and not _compiling(torch) and not _cuda_available_on(torch, dev):
        raise SglaError(
            _lib.Status.ERR_BACKEND_UNAVAILABLE,
            _lib.sgla_status_string(int(_lib.Status.ERR_BACKEND_UNAVAILABLE)).decode(),
            f"q is on {dev} but {_lib.library_path} has no usable CUDA backend (built "
            "without CUDA, or no device visible to it); install with "
            "`SGLA_CUDA=1 pip install ./python` or set SGLA_LIBRARY to a CUDA build")
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    g = g.contiguous() if g is not None else None
    g_gamma = g_gamma.contiguous() if g_gamma is not None else None
    if h0 is not None:
        h0 = (h0.transpose(-1, -2) if state_v_first else h0).contiguous()
    return q, k, v, g, g_gamma, h0, cu, (B, T, H, K, V, N), dt, be


def _ptr(x):
    return x.data_ptr() if x is not None else None


def _dense(x):
    """x contiguous, and on CUDA 16-byte aligned (the TMA kernels' need; a view into a tensor,
    e.g. q[:, 1:], may start anywhere): copied where it is not.  The ops call it on what they
    are given, since under torch.compile Inductor chooses their inputs' layouts."""
    if x is None:
        return None
    x = x.contiguous()
    if x.device.type == "cuda" and x.data_ptr() % 16:
        x = x.clone()
    return x


def _torch_run(dev, d, be, call, size_query):
    """Run a C entry on q's device; on CUDA on its current stream, with the
    workspace from torch's caching allocator (same stream: reused only after)."""
    torch = _torch()
    if dev.type != "cuda":
        _lib.raise_for(call(ctypes.byref(d), int(be)))
        return
    with torch.cuda.device(dev):
        fwd = d if isinstance(d, _lib.ForwardDesc) else d.fwd.contents
        fwd.stream = torch.cuda.current_stream(dev).cuda_stream
        nbytes = ctypes.c_size_t(0)
        _lib.raise_for(size_query(ctypes.byref(d), int(be), ctypes.byref(nbytes)))
        ws = None
        if nbytes.value:
            ws = torch.empty(nbytes.value, dtype=torch.uint8, device=dev)
            d.workspace, d.workspace_bytes = ws.data_ptr(), nbytes.value
        _lib.raise_for(call(ctypes.byref(d), int(be)))
        del ws


def _torch_input_desc(q, k, v, g, g_gamma, h0, cu, scale, threads, chunk):
    """The forward descriptor of prepared tensors (inputs only), its sizes
    (B, T, H, K, V, N) and the dtype of the gates and states."""
    torch = _torch()
    B, T, H, K = q.shape
    V = v.shape[3]
    N = cu.shape[0] - 1 if cu is not None else B
    dt = _torch_dtype_code("q", q)
    d = _lib.new_desc()
    _fill_desc(d, dt, B, T, H, K, V, N, float(scale), chunk, threads, cu is not None)
    d.q, d.k, d.v = q.data_ptr(), k.data_ptr(), v.data_ptr()
    d.g, d.g_gamma, d.h0, d.cu_seqlens = _ptr(g), _ptr(g_gamma), _ptr(h0), _ptr(cu)
    return d, (B, T, H, K, V, N), torch.float64 if dt == DType.F64 else torch.float32


def _torch_forward_raw(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, be, threads, chunk,
                       allow_tf32=False):
    """o (and ht) of prepared tensors, no autograd."""
    torch = _torch()
    q, k, v, g, g_gamma, h0, cu = (_dense(x) for x in (q, k, v, g, g_gamma, h0, cu))
    d, (B, T, H, K, V, N), aux = _torch_input_desc(q, k, v, g, g_gamma, h0, cu, scale, threads, chunk)
    if allow_tf32:
        d.flags |= _lib.FLAG_ALLOW_TF32
    o = torch.empty((B, T, H, V), dtype=q.dtype, device=q.device)
    ht = torch.empty((N, H, K, V), dtype=aux, device=q.device) if output_final_state else None
    d.o, d.ht = o.data_ptr(), _ptr(ht)
    _torch_run(q.device, d, be, _lib.sgla_forward, _lib.sgla_workspace_size)
    return o, ht


_bwd_ws_limit = 0  # set_backward_workspace_limit's cap, bytes (0: none)


def set_backward_workspace_limit(nbytes=None):
    """Cap the CUDA backward's workspace at nbytes (None or 0: no cap, the
    usual plan) for every later backward in this process, autograd's
    included; returns the previous cap.  With dg or dg_gamma on Hopper the
    backward then keeps every other chunk's 16-bit state (half the bytes,
    ~10 % faster, dg's error 1.5-1.9x), and if that does not fit, those of a
    batch group or a time window at a time (dense batches), slower by its
    launches (4-15 % at the caps measured in docs/perf.md); a call whose
    least workspace exceeds the cap raises SglaError (UNSUPPORTED_SHAPE)."""
    global _bwd_ws_limit
    old = _bwd_ws_limit or None
    _bwd_ws_limit = 0 if nbytes is None else _c_int("nbytes", nbytes, 0, (1 << 63) - 1)
    return old


_bwd_half = False  # set_backward_half_states


def set_backward_half_states(on=True):
    """Have every later CUDA backward in this process (autograd's included)
    keep every other chunk's 16-bit state for the gate gradient on Hopper
    (SGLA_FLAG_BWD_HALF_STATES): half that workspace and ~10 % faster, with
    dg's relative error 1.5-1.9x (docs/numerics.md section 8), as a workspace
    cap below the usual plan would.  Returns the previous setting."""
    global _bwd_half
    old = _bwd_half
    _bwd_half = bool(on)
    return old


def _torch_backward_raw(q, k, v, do, g, g_gamma, h0, dht, cu, scale, be, threads, chunk,
                        want_dg=True, want_dgg=True, want_dh0=True, allow_tf32=False):
    """(dq, dk, dv, dg, dg_gamma, dh0) of prepared tensors; None where the input is absent."""
    torch = _torch()
    q, k, v, g, g_gamma, h0, cu = (_dense(x) for x in (q, k, v, g, g_gamma, h0, cu))
    f, (B, T, H, K, V, N), aux = _torch_input_desc(q, k, v, g, g_gamma, h0, cu, scale, threads, chunk)
    dev = q.device
    do = _dense(do.to(q.dtype))
    dht = _dense(dht.to(aux)) if dht is not None else None
    dq, dk = torch.empty_like(q), torch.empty_like(k)
    dv = torch.empty_like(v)
    dg = torch.empty((B, T, H), dtype=aux, device=dev) if g is not None and want_dg else None
    dgg = torch.empty((H,), dtype=aux, device=dev) if g_gamma is not None and want_dgg else None
    dh0 = torch.empty((N, H, K, V), dtype=aux, device=dev) if h0 is not None and want_dh0 else None
    if _bwd_half:
        f.flags |= _lib.FLAG_BWD_HALF_STATES
    if allow_tf32:
        f.flags |= _lib.FLAG_ALLOW_TF32
    b = _lib.new_bdesc()
    b.fwd = ctypes.pointer(f)
    b.dout, b.dht = do.data_ptr(), _ptr(dht)
    b.dq, b.dk, b.dv = dq.data_ptr(), dk.data_ptr(), dv.data_ptr()
    b.dg, b.dg_gamma, b.dh0 = _ptr(dg), _ptr(dgg), _ptr(dh0)
    b.workspace_limit = _bwd_ws_limit
    _torch_run(dev, b, be, _lib.sgla_backward, _lib.sgla_backward_workspace_size)
    return dq, dk, dv, dg, dgg, dh0


def _forward_torch(q, k, v, g, g_gamma, scale, h0, output_final_state, cu, backend,
                   threads, chunk, state_v_first, allow_tf32=False):
    from . import _autograd
    q, k, v, g, g_gamma, h0, cu, (B, T, H, K, V, N), dt, be = _torch_prepare(
        q, k, v, g, g_gamma, h0, cu, backend, state_v_first)
    o, ht = _autograd.forward(q, k, v, g, g_gamma, h0, cu, _scale_of(scale, K), output_final_state,
                              be, threads, chunk, allow_tf32)
    if ht is not None and state_v_first:
        ht = ht.transpose(-1, -2).contiguous()
    return o, ht


# --------------------------------------------------------------------------
# public entry points

def _forward(q, k, v, g, g_gamma, scale, initial_state, output_final_state, cu_seqlens,
             backend, threads, chunk, state_v_first, allow_tf32=False):
    fw = _framework_of_q(q)
    if fw == "dlpack-device" and _torch() is None:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise TypeError("q lives on a device and torch is not installed: sgla imports "
                            "device arrays through torch.from_dlpack") from None
    if fw in ("torch", "dlpack-device"):
        return _forward_torch(q, k, v, g, g_gamma, scale, initial_state, output_final_state,
                              cu_seqlens, backend, threads, chunk, state_v_first, allow_tf32)
    return _forward_numpy(q, k, v, g, g_gamma, scale, initial_state, output_final_state,
                          cu_seqlens, backend, threads, chunk, state_v_first,
                          dlpack=(fw == "dlpack-cpu"))


def _pool_kwargs(kwargs, cu_host=None):
    """fla's continuous-batching keywords: ssm_state_indices (then initial_state is
    the pool), num_accepted_tokens, has_initial_state, inplace_final_state (default
    True).  Returns None without ssm_state_indices."""
    idx = kwargs.pop("ssm_state_indices", None)
    acc = kwargs.pop("num_accepted_tokens", None)
    his = kwargs.pop("has_initial_state", None)
    inplace = kwargs.pop("inplace_final_state", True)
    if idx is None:
        if acc is not None or his is not None:
            raise ValueError("num_accepted_tokens and has_initial_state need ssm_state_indices")
        return None
    # fla's cu_seqlens_cpu (left in kwargs for _fla_kwargs): lets CUDA launch its chunked
    # kernel over the long sequences only
    return idx, acc, his, bool(inplace), kwargs.get("cu_seqlens_cpu", cu_host)


def _flag(fn, name, x):
    """A bool argument (Python or NumPy bool, 0 / 1, or None for False): older fla put cu_seqlens
    where sgla has state_v_first (chunk_simple_gla's 9th argument), so an offsets array there is
    refused, not taken as True (None there, older fla's default, is False)."""
    if x is None:
        return False
    if isinstance(x, bool) or (isinstance(x, numbers.Integral) and int(x) in (0, 1)):
        return bool(x)
    if getattr(x, "dtype", None) is not None and tuple(getattr(x, "shape", (0,))) == () and \
            ("bool" in str(x.dtype) or ("int" in str(x.dtype) and int(x) in (0, 1))):
        return bool(x)  # a NumPy bool or integer 0 / 1, a 0-d array or tensor of one
    hint = " (cu_seqlens goes by keyword: cu_seqlens=...)" if hasattr(x, "shape") or isinstance(x, (list, tuple)) else ""
    raise TypeError(f"{fn}: {name} must be a bool, got {type(x).__name__}{hint}")


def _fla_kwargs(fn, kwargs, chunk, state_v_first):
    """fla's keyword extras: chunk_size (its name for the chunk length), the
    deprecated transpose_state_layout (state_v_first), head_first (refused when
    true), cu_seqlens_cpu (a host copy: used only with a state pool, see
    _pool_kwargs).  Returns (chunk, state_v_first)."""
    if "head_first" in kwargs:
        if kwargs.pop("head_first"):
            raise ValueError(f"{fn}: head_first=True is not supported; inputs are [B, T, H, ...]")
    kwargs.pop("cu_seqlens_cpu", None)
    if "chunk_size" in kwargs:
        cs = kwargs.pop("chunk_size")
        if cs is not None:
            if chunk is not None and chunk != cs:
                raise ValueError(f"{fn}: chunk={chunk} and chunk_size={cs} disagree")
            if not isinstance(cs, numbers.Integral) or cs < 1 or cs & (cs - 1):
                raise ValueError(f"{fn}: chunk_size must be a power of 2, got {cs!r}")
            chunk = int(cs)
    if "transpose_state_layout" in kwargs:
        t = bool(kwargs.pop("transpose_state_layout"))
        if t and not state_v_first:
            state_v_first = True
    if kwargs:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {sorted(kwargs)}")
    return chunk, state_v_first


def chunk_simple_gla_backward(q, k, v, do, g=None, g_gamma=None, scale=None, initial_state=None, dht=None,
                              cu_seqlens=None, *, state_v_first=False, backend=None, threads=0, chunk=None,
                              allow_tf32=False):
    r"""The gradients of :func:`chunk_simple_gla`'s outputs: given ``do`` (the
    gradient of o) and ``dht`` (of the final state, or None), the gradients of
    L = <o, do> + <ht, dht> with respect to every input.

    Takes the forward's arguments (same shapes, dtypes, backends) plus ``do``
    ``[B, T, H, V]`` in q's dtype and ``dht`` ``[N, H, K, V]`` (fp32, or fp64 for
    float64 inputs).  Returns ``(dq, dk, dv, dg, dg_gamma, dh0)``: dq, dk, dv in
    q's dtype; dg ``[B, T, H]``, dg_gamma ``[H]`` (the gradient of each head's
    constant log-decay) and dh0 ``[N, H, K, V]`` in fp32 (fp64 for float64
    inputs), each None when its input was absent.  No autograd: for that, call
    :func:`chunk_simple_gla` on tensors that require grad.

    float64 inputs (NumPy or torch) run the fp64 references (backend None picks
    "ref-b"; "ref-a" is the reverse-time recurrence).  ``allow_tf32``: float32
    torch tensors on CUDA, the products in TF32 alone (relative error ~4e-4;
    fla's TF32 1.5e-3; ~12 % faster) instead of 3xTF32 (~5e-7), as in
    :func:`chunk_simple_gla`; other backends and dtypes ignore it.
    """
    state_v_first = _flag("chunk_simple_gla_backward", "state_v_first", state_v_first)
    if do is None:
        raise TypeError("chunk_simple_gla_backward: do (the gradient of o, [B, T, H, V]) is required")
    fw = _framework_of_q(q)
    if fw in ("torch", "dlpack-device"):
        if fw == "dlpack-device" and _torch() is None:
            import torch  # noqa: F401
        torch = _torch()
        q, k, v, g, g_gamma, h0, cu, (B, T, H, K, V, N), dt, be = _torch_prepare(
            q, k, v, g, g_gamma, initial_state, cu_seqlens, backend, state_v_first)
        do = do if isinstance(do, torch.Tensor) else torch.as_tensor(do, device=q.device)
        if tuple(do.shape) != (B, T, H, V):
            raise ValueError(f"do must be [B, T, H, V] = {[B, T, H, V]}, got {list(do.shape)}")
        if do.dtype != q.dtype:
            raise TypeError(f"do has dtype {do.dtype} but q has {q.dtype}; do must be in q's dtype")
        for name, x in (("do", do), ("dht", dht)):
            if isinstance(x, torch.Tensor) and x.device != q.device:
                raise ValueError(f"{name} is on {x.device} but q is on {q.device}; all tensors must be on one device")
        if dht is not None:
            dht = dht if isinstance(dht, torch.Tensor) else torch.as_tensor(dht, device=q.device)
            if not dht.is_floating_point():
                raise TypeError(f"dht must be a floating-point tensor (it is used as fp32), got {dht.dtype}")
            want = (N, H, V, K) if state_v_first else (N, H, K, V)
            if tuple(dht.shape) != want:
                raise ValueError(f"dht must have the final state's shape {list(want)}, got {list(dht.shape)}")
            if state_v_first:
                dht = dht.transpose(-1, -2)
        args = (q, k, v, do, g, g_gamma, h0, dht, cu, _scale_of(scale, K), be, threads, 64 if chunk is None else chunk)
        from . import _autograd
        if _autograd._functorch(args[:9]):  # under torch.func.vmap: its rule, one call a batch entry
            grads = _autograd._FuncBwd.apply(*args[:10], int(be), *args[11:], True, True, True, bool(allow_tf32))
            grads = grads[:3] + tuple(x if p is not None else None for x, p in zip(grads[3:], (g, g_gamma, h0)))
        else:
            with torch.no_grad():
                grads = _torch_backward_raw(*args, allow_tf32=bool(allow_tf32))
        dq, dk, dv, dg, dgg, dh0 = grads
        if dh0 is not None and state_v_first:
            dh0 = dh0.transpose(-1, -2).contiguous()
        return dq, dk, dv, dg, dgg, dh0
    return _backward_numpy(q, k, v, do, g, g_gamma, scale, initial_state, dht, cu_seqlens, backend, threads,
                           chunk, state_v_first, dlpack=(fw == "dlpack-cpu"))


def chunk_simple_gla(q, k, v, g=None, g_gamma=None, scale=None, initial_state=None,
                     output_final_state=False, state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None, *,
                     backend=None, threads=0, chunk=None, allow_tf32=False, **kwargs):
    r"""Causal linear attention with a scalar (per-head) decay, differentiable.

    The signature and meanings of ``fla.ops.simple_gla.chunk_simple_gla``::

        S_t = exp(g_t) * S_{t-1} + k_t v_t^T,   o_t = scale * q_t^T S_t

    Args:
        q, k: ``[B, T, H, K]``; v: ``[B, T, H, V]``.  One dtype for all three:
            float32, float16 or bfloat16 (float64 on the reference backends, for
            gradient checks).  torch tensors (CPU or CUDA), NumPy
            arrays, or any DLPack producer (CPU ones through NumPy, device ones
            through torch).  Non-contiguous inputs are copied to contiguous.
        g: ``[B, T, H]`` natural-log gates (<= 0), or None.  Converted to fp32.
        g_gamma: ``[H]`` per-head constant log-decay (<= 0), or None.
            Converted to fp32.  At most one of g and g_gamma.
        scale: multiplies q^T S; None means ``K ** -0.5``.
        initial_state: ``[N, H, K, V]`` (N = B, or len(cu_seqlens) - 1), or
            None for zero.  Converted to fp32.
        output_final_state: also return the final state ``[N, H, K, V]`` fp32.
        state_v_first: states are ``[N, H, V, K]`` (as in fla).
        cu_seqlens: ``[N + 1]`` int64 offsets into T (int32 is converted);
            needs B == 1; on CUDA it must be on q's device.
        cu_seqlens_cpu: fla's host copy of cu_seqlens; used only with a state
            pool (``ssm_state_indices``), ignored otherwise.

    Keyword-only extras:
        backend: None picks "cpu" for host arrays ("ref-b" for float64) and
            "cuda" for CUDA tensors;
            "ref-a" .. "ref-d" run the fp64 references (host only; ref-a
            and ref-b have a backward, ref-c and ref-d do not); see
            :func:`sgla.backends`.
        threads: CPU threads, 0 = all cores.
        chunk: chunk length C (default 64; CUDA takes 16, 32 and 64, all computed
            in chunks of 64).
        allow_tf32: float32 inputs on CUDA: products in TF32 alone (relative
            error ~4e-4, as fla and ``torch.backends.cuda.matmul.allow_tf32``;
            about 1.7x faster) instead of 3xTF32 (~1e-6); autograd's backward
            runs in the same mode.  Other dtypes and backends ignore it.

    Returns:
        ``(o, final_state)``: o ``[B, T, H, V]`` in q's dtype, on q's device
        (a NumPy array for NumPy input); final_state None unless requested.

    torch tensors go through the custom op ``sgla::chunk_fwd``, whose autograd
    formula is ``sgla::chunk_bwd`` (:func:`chunk_simple_gla_backward`): q, k, v,
    g, g_gamma and initial_state get gradients, and dht flows in when the final
    state is used; torch.compile sees the operator, not a graph break.

    On CUDA the kernel runs asynchronously on ``torch.cuda.current_stream()``;
    gate and cu_seqlens values on the device are trusted, not checked (checking
    them would synchronise).  Host calls check them: a positive gate raises
    :class:`sgla.SglaError` with ``.status == Status.ERR_POSITIVE_GATE``.

    Raises:
        TypeError / ValueError naming the argument for wrong dtypes, devices or
        shapes; :class:`sgla.SglaError` (a ValueError) for any C status.
    """
    state_v_first = _flag("chunk_simple_gla", "state_v_first", state_v_first)
    output_final_state = _flag("chunk_simple_gla", "output_final_state", output_final_state)
    pool = _pool_kwargs(kwargs, cu_seqlens_cpu)  # cu_seqlens_cpu serves the pool alone
    chunk, state_v_first = _fla_kwargs("chunk_simple_gla", kwargs, chunk, state_v_first)
    if pool is not None:
        return _pool_call(q, k, v, g, g_gamma, scale, initial_state, cu_seqlens, *pool, state_v_first, backend,
                          threads, chunk)
    return _forward(q, k, v, g, g_gamma, scale, initial_state, output_final_state, cu_seqlens,
                    backend, threads, chunk, state_v_first, allow_tf32)


def fused_recurrent_simple_gla(q, k, v, g=None, g_gamma=None, scale=None, initial_state=None,
                               output_final_state=False, reverse=False, state_v_first=False, cu_seqlens=None,
                               *, backend=None, threads=0, chunk=None, **kwargs):
    r"""The signature of ``fla.ops.simple_gla.fused_recurrent_simple_gla``.

    The C library has one forward entry point: it takes its token-recurrent
    path for T = 1 (the decode step: state in, state out) and the chunked
    path for T > 1.  Both compute the same function, so for T > 1 this is
    the same computation as :func:`chunk_simple_gla`.  ``reverse=True`` is
    not supported.  See :func:`chunk_simple_gla` for the arguments.
    """
    state_v_first = _flag("fused_recurrent_simple_gla", "state_v_first", state_v_first)
    output_final_state = _flag("fused_recurrent_simple_gla", "output_final_state", output_final_state)
    if _flag("fused_recurrent_simple_gla", "reverse", reverse):
        raise NotImplementedError("fused_recurrent_simple_gla: reverse=True is not supported by sgla")
    pool = _pool_kwargs(kwargs)
    chunk, state_v_first = _fla_kwargs("fused_recurrent_simple_gla", kwargs, chunk, state_v_first)
    if pool is not None:
        if chunk is None and getattr(getattr(q, "device", None), "type", None) == "cuda":
            chunk = 1  # the decode step of an engine: the token recurrence alone (sgla.h, state pool)
        return _pool_call(q, k, v, g, g_gamma, scale, initial_state, cu_seqlens, *pool, state_v_first, backend,
                          threads, chunk)
    return _forward(q, k, v, g, g_gamma, scale, initial_state, output_final_state, cu_seqlens,
                    backend, threads, chunk, state_v_first)
