"""Loading libsgla with ctypes: the one place that mirrors include/sgla.h.

Library search order:
  1. the environment variable SGLA_LIBRARY (a path to libsgla.so / .dylib / .dll);
  2. the library shipped inside this package (pip install ./python);
  3. when the package is imported from a source checkout (python/sgla), the
     build trees <repo>/build*/ beside it: build/ first, then the others, the
     most recently built first (trees built with sanitizers left out).
"""
from __future__ import annotations

import ctypes
import enum
import glob
import os
import sys

# The header version this mirror was written against.  The struct layout of
# sgla_forward_desc below must be kept in step with include/sgla.h.
HEADER_VERSION = "0.2.0"


class Status(enum.IntEnum):
    """sgla_status, value for value."""

    OK = 0
    ERR_NULL_POINTER = 1
    ERR_INVALID_SIZE = 2
    ERR_SIZE_OVERFLOW = 3
    ERR_BOTH_GATES = 4
    ERR_POSITIVE_GATE = 5
    ERR_NONFINITE_GATE = 6
    ERR_INVALID_SCALE = 7
    ERR_UNSUPPORTED_DTYPE = 8
    ERR_UNSUPPORTED_CHUNK = 9
    ERR_CU_SEQLENS_BATCH = 10
    ERR_CU_SEQLENS_START = 11
    ERR_CU_SEQLENS_DECREASING = 12
    ERR_CU_SEQLENS_END = 13
    ERR_INVALID_NUM_SEQS = 14
    ERR_NONFINITE_INPUT = 15
    ERR_UNSUPPORTED_SHAPE = 16
    ERR_BACKEND_UNAVAILABLE = 17
    ERR_INVALID_BACKEND = 18
    ERR_INVALID_ARGUMENT = 19
    ERR_OVERLAP = 20
    ERR_OUT_OF_MEMORY = 21
    ERR_CUDA = 22
    ERR_INTERNAL = 23
    ERR_POOL_INDEX = 24
    ERR_POOL_CONFLICT = 25


class DType(enum.IntEnum):
    """sgla_dtype."""

    F32 = 0
    F16 = 1
    BF16 = 2
    F64 = 3  # the reference backends only; every tensor of the call is then fp64


class Backend(enum.IntEnum):
    """sgla_backend."""

    AUTO = 0
    REF_A = 1
    REF_B = 2
    REF_C = 3
    REF_D = 4
    CPU = 5
    CUDA = 6


FLAG_CHECK_FINITE = 0x1
FLAG_SKIP_VALUE_CHECK = 0x2
FLAG_CHECK_DEVICE_VALUES = 0x4
FLAG_ALLOW_TF32 = 0x8
FLAG_BWD_HALF_STATES = 0x10


class ForwardDesc(ctypes.Structure):
    """Mirror of `sgla_forward_desc` (include/sgla.h), field for field."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("dtype", ctypes.c_int),  # sgla_dtype (a C enum: int-sized)
        ("B", ctypes.c_int64),
        ("T", ctypes.c_int64),
        ("H", ctypes.c_int64),
        ("K", ctypes.c_int64),
        ("V", ctypes.c_int64),
        ("g", ctypes.c_void_p),
        ("g_gamma", ctypes.c_void_p),
        ("scale", ctypes.c_float),
        ("h0", ctypes.c_void_p),
        ("ht", ctypes.c_void_p),
        ("cu_seqlens", ctypes.c_void_p),
        ("num_seqs", ctypes.c_int64),
        ("chunk", ctypes.c_int64),
        ("threads", ctypes.c_int),
        ("stream", ctypes.c_void_p),
        ("flags", ctypes.c_uint),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("pool", ctypes.c_void_p),  # const sgla_state_pool * (0.3)
    ]


POOL_INPLACE = 0x1
POOL_V_FIRST = 0x2


class StatePool(ctypes.Structure):
    """Mirror of `sgla_state_pool` (include/sgla.h, experimental)."""

    _fields_ = [
        ("slots", ctypes.c_int64),
        ("indices", ctypes.c_void_p),
        ("index_bits", ctypes.c_int),
        ("t_max", ctypes.c_int64),
        ("has_initial_state", ctypes.c_void_p),
        ("num_accepted", ctypes.c_void_p),
        ("flags", ctypes.c_uint),
        ("host_cu_seqlens", ctypes.c_void_p),
    ]


class BackwardDesc(ctypes.Structure):
    """Mirror of `sgla_backward_desc` (include/sgla.h), field for field."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("fwd", ctypes.POINTER(ForwardDesc)),
        ("dout", ctypes.c_void_p),
        ("dht", ctypes.c_void_p),
        ("dq", ctypes.c_void_p),
        ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
        ("dg", ctypes.c_void_p),
        ("dg_gamma", ctypes.c_void_p),
        ("dh0", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("workspace_limit", ctypes.c_size_t),
    ]


class SglaError(ValueError):
    """A status other than SGLA_OK from the C library.

    ``.status`` is the :class:`Status`, ``.status_string`` the library's fixed
    sentence for it (sgla_status_string) and ``.detail`` the thread-local
    detail (sgla_last_error) naming the argument at fault.
    """

    def __init__(self, status, status_string="", detail=""):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.status_string = status_string
        self.detail = detail
        name = status.name if isinstance(status, Status) else str(int(status))
        msg = f"sgla: {status_string} [{name}]"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)

    def __reduce__(self):  # pickle and copy (a worker process's error reaches its parent whole)
        return (type(self), (int(self.status), self.status_string, self.detail))


def _candidates():
    env = os.environ.get("SGLA_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.platform == "darwin":
        names = ["libsgla.dylib"]
    elif sys.platform == "win32":
        names = ["sgla.dll", "libsgla.dll"]
    else:
        names = ["libsgla.so"]
    out = [os.path.join(here, n) for n in names]
    repo = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(repo, "include", "sgla.h")):
        out += _build_tree_order(repo, names)
    return out, False


def _sanitized(tree):
    """A tree configured with SGLA_SANITIZE: its library needs the ASan runtime loaded first, and
    ctypes loading it ends the process instead of raising."""
    try:
        with open(os.path.join(tree, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            return any(line.strip().upper() in ("SGLA_SANITIZE:BOOL=ON", "SGLA_SANITIZE:BOOL=TRUE", "SGLA_SANITIZE:BOOL=1")
                       for line in f)
    except OSError:
        return False


def _build_tree_order(repo, names):
    """A checkout's libraries: build/ first (the README's tree, which tests/run.sh builds with CUDA
    where nvcc is found), then the other build*/ trees, the most recently built first; trees built
    with sanitizers are left out."""
    trees = [d for d in sorted(glob.glob(os.path.join(repo, "build*"))) if os.path.isdir(d) and not _sanitized(d)]
    first = [d for d in trees if os.path.basename(d) == "build"]
    libs = lambda ds: [os.path.join(d, n) for d in ds for n in names]  # noqa: E731
    return [p for p in libs(first) if os.path.isfile(p)] + _newest_first(libs([d for d in trees if d not in first]))


def _newest_first(paths):
    """The files among paths, the most recently modified first (stable: equal times keep their order)."""
    found = [p for p in paths if os.path.isfile(p)]
    return sorted(found, key=lambda p: -os.path.getmtime(p))


def _load():
    paths, from_env = _candidates()
    errors = []
    for p in paths:
        if not from_env and not os.path.exists(p):
            continue
        try:
            return ctypes.CDLL(os.path.abspath(p)), os.path.abspath(p)
        except OSError as e:
            errors.append(f"{p}: {e}")
    if from_env:
        raise ImportError(f"sgla: cannot load SGLA_LIBRARY={paths[0]}: {'; '.join(errors)}")
    raise ImportError(
        "sgla: libsgla not found. Install the package with `pip install ./python` "
        "(it builds and ships the library), or build the C library with CMake and "
        "set SGLA_LIBRARY=/path/to/libsgla.so. Looked in: " + ", ".join(paths)
        + ("; errors: " + "; ".join(errors) if errors else "")
    )


lib, library_path = _load()


def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_c_desc_p = ctypes.POINTER(ForwardDesc)
sgla_version = _sig("sgla_version", ctypes.c_char_p)
sgla_status_string = _sig("sgla_status_string", ctypes.c_char_p, ctypes.c_int)
sgla_last_error = _sig("sgla_last_error", ctypes.c_char_p)
sgla_dtype_size = _sig("sgla_dtype_size", ctypes.c_size_t, ctypes.c_int)
sgla_dtype_name = _sig("sgla_dtype_name", ctypes.c_char_p, ctypes.c_int)
sgla_backend_name = _sig("sgla_backend_name", ctypes.c_char_p, ctypes.c_int)
sgla_backend_available = _sig("sgla_backend_available", ctypes.c_int, ctypes.c_int)
sgla_forward_desc_init = _sig("sgla_forward_desc_init", None, _c_desc_p)
sgla_num_sequences = _sig("sgla_num_sequences", ctypes.c_int64, _c_desc_p)
sgla_validate = _sig("sgla_validate", ctypes.c_int, _c_desc_p, ctypes.c_int)
sgla_forward = _sig("sgla_forward", ctypes.c_int, _c_desc_p, ctypes.c_int)
sgla_reference = _sig("sgla_reference", ctypes.c_int, _c_desc_p, ctypes.c_int,
                      ctypes.c_void_p, ctypes.c_void_p)
sgla_workspace_size = _sig("sgla_workspace_size", ctypes.c_int, _c_desc_p, ctypes.c_int,
                           ctypes.POINTER(ctypes.c_size_t))
_c_bdesc_p = ctypes.POINTER(BackwardDesc)
sgla_backward_desc_init = _sig("sgla_backward_desc_init", None, _c_bdesc_p)
sgla_backward = _sig("sgla_backward", ctypes.c_int, _c_bdesc_p, ctypes.c_int)
sgla_backward_workspace_size = _sig("sgla_backward_workspace_size", ctypes.c_int, _c_bdesc_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_size_t))

version = sgla_version().decode()


def _check_mirror():
    """Refuse a library whose version or descriptor layout differs from this mirror."""
    if version.split(".")[:2] != HEADER_VERSION.split(".")[:2]:
        raise ImportError(
            f"sgla: library {library_path} is version {version}, but this Python "
            f"package mirrors sgla.h {HEADER_VERSION}; rebuild one to match the other")
    # sgla_forward_desc_init zeroes sizeof(desc) bytes then sets size, scale, chunk,
    # dtype: run it on a poisoned buffer longer than our mirror and check that
    # it wrote exactly the bytes we think the struct has, and the fields where
    # we think they are.
    n = ctypes.sizeof(ForwardDesc)
    buf = (ctypes.c_ubyte * (n + 64))(*([0xA5] * (n + 64)))
    d = ForwardDesc.from_buffer(buf)
    sgla_forward_desc_init(ctypes.byref(d))
    tail = bytes(buf[n:])
    if tail != b"\xa5" * 64 or d.size != n or d.scale != 1.0 or d.chunk != 64 or d.dtype != 0 \
            or d.q is not None or d.flags != 0 or d.stream is not None:
        raise ImportError(
            f"sgla: the ctypes mirror of sgla_forward_desc does not match {library_path} "
            f"(version {version}); update python/sgla/_lib.py")


_check_mirror()


def _check_backward_mirror():
    n = ctypes.sizeof(BackwardDesc)
    buf = (ctypes.c_ubyte * (n + 64))(*([0xA5] * (n + 64)))
    d = BackwardDesc.from_buffer(buf)
    sgla_backward_desc_init(ctypes.byref(d))
    if bytes(buf[n:]) != b"\xa5" * 64 or d.size != n or d.dout is not None or d.workspace_bytes != 0:
        raise ImportError(
            f"sgla: the ctypes mirror of sgla_backward_desc does not match {library_path} "
            f"(version {version}); update python/sgla/_lib.py")


_check_backward_mirror()


def new_bdesc():
    d = BackwardDesc()
    sgla_backward_desc_init(ctypes.byref(d))
    return d


def new_desc():
    d = ForwardDesc()
    sgla_forward_desc_init(ctypes.byref(d))
    return d


def raise_for(status):
    """Turn a non-OK status into SglaError (call right after the failing call:
    sgla_last_error is thread-local and overwritten by the next call)."""
    if status == Status.OK:
        return
    detail = sgla_last_error().decode(errors="replace")
    text = sgla_status_string(int(status)).decode(errors="replace")
    raise SglaError(status, text, detail)


def backend_name(b):
    return sgla_backend_name(int(b)).decode()


def backend_available(b):
    return bool(sgla_backend_available(int(b)))
