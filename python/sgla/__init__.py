"""sgla: causal linear attention with scalar decay (simple GLA, RetNet,
Lightning, Mamba2-style gates), forward and backward, over the C/CUDA library
libsgla.

    import sgla
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, output_final_state=True)

A drop-in for ``from fla.ops.simple_gla import chunk_simple_gla``; torch
autograd and torch.compile see it as one operator with its gradient.
The library is loaded with ctypes from the package, or from SGLA_LIBRARY.
"""
from ._lib import (  # noqa: F401
    Backend, DType, SglaError, Status, HEADER_VERSION, library_path, version as __version__,
)
from ._ops import (  # noqa: F401
    backends, chunk_simple_gla, chunk_simple_gla_backward, fused_recurrent_simple_gla, resolve_backend,
    set_backward_half_states, set_backward_workspace_limit,
)

__all__ = [
    "chunk_simple_gla", "chunk_simple_gla_backward", "fused_recurrent_simple_gla", "backends", "resolve_backend",
    "set_backward_half_states", "set_backward_workspace_limit",
    "SglaError", "Status", "Backend", "DType", "__version__", "library_path",
]
