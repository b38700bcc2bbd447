"""torch autograd and torch.compile for sgla.

The forward and the backward are torch.library custom ops, ``sgla::chunk_fwd``
and ``sgla::chunk_bwd``, each with a fake (meta) implementation, and the
backward is registered as the forward's autograd formula: autograd
differentiates through sgla, and torch.compile sees one operator with its
gradient instead of a graph break.  Imported on the first torch call.

Outside torch.compile the same two calls run through a torch.autograd.Function
instead: the custom ops' eager dispatch took ~0.5 ms of host time per forward
and backward (docs/perf.md, session 12), more than the kernels at small and
medium sizes, where the GPU then waits for the host.

torch.func's transforms (grad, vjp, jacrev, vmap) take a third route, _FuncFwd, a
Function of the form they need (setup_context; torch 2.11 wraps the custom op's
formula in one of the old form, which they refuse).  Plain eager calls keep the
old-form _Eager: the new form costs ~75 us more host time a forward + backward
(torch 2.11 on the CPU, 185 -> 260 us a step at 1x4x1x16, session 37).

Custom ops return tensors only: an absent output (no final state asked for,
no gate, no initial state) is an empty tensor here and None outside.

The state-pool forward (``ssm_state_indices``) is a third op, ``sgla::pool_fwd``,
which mutates the pool; it has no gradient (the pool path is for inference) and
runs only under torch.compile: eagerly the plain call is cheaper, as above.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch

if not hasattr(torch.library, "custom_op"):  # torch 2.4
    raise ImportError(f"sgla's torch support needs torch >= 2.4 (torch.library.custom_op); this is torch "
                      f"{torch.__version__}")

from . import _ops
from ._lib import Backend

_T = torch.Tensor


def _aux(q):
    return torch.float64 if q.dtype == torch.float64 else torch.float32


def _empty(q):
    return q.new_empty((0,), dtype=_aux(q))


def _some(x):
    return x if x is not None and x.numel() else None


@torch.library.custom_op("sgla::chunk_fwd", mutates_args=())
def chunk_fwd(q: _T, k: _T, v: _T, g: Optional[_T], g_gamma: Optional[_T], h0: Optional[_T],
              cu: Optional[_T], scale: float, output_final_state: bool, backend: int, threads: int,
              chunk: int, allow_tf32: bool = False) -> Tuple[_T, _T]:
    return _eager_fwd(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, backend, threads, chunk, allow_tf32)


@chunk_fwd.register_fake
def _chunk_fwd_fake(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, backend, threads, chunk, allow_tf32=False):
    B, T, H, K = q.shape
    V = v.shape[3]
    N = cu.shape[0] - 1 if cu is not None else B
    o = q.new_empty((B, T, H, V))
    ht = q.new_empty((N, H, K, V), dtype=_aux(q)) if output_final_state else _empty(q)
    return o, ht


@torch.library.custom_op("sgla::chunk_bwd", mutates_args=())
def chunk_bwd(q: _T, k: _T, v: _T, do: _T, g: Optional[_T], g_gamma: Optional[_T], h0: Optional[_T],
              dht: Optional[_T], cu: Optional[_T], scale: float, backend: int, threads: int, chunk: int,
              want_dg: bool, want_dgg: bool, want_dh0: bool, allow_tf32: bool = False
              ) -> Tuple[_T, _T, _T, _T, _T, _T]:
    grads = _eager_bwd(q, k, v, do, g, g_gamma, h0, dht, cu, scale, backend, threads, chunk, want_dg, want_dgg,
                       want_dh0, allow_tf32)
    return tuple(x if x is not None else _empty(q) for x in grads)


@chunk_bwd.register_fake
def _chunk_bwd_fake(q, k, v, do, g, g_gamma, h0, dht, cu, scale, backend, threads, chunk, want_dg, want_dgg,
                    want_dh0, allow_tf32=False):
    B, T, H, K = q.shape
    V = v.shape[3]
    N = cu.shape[0] - 1 if cu is not None else B
    aux = _aux(q)
    dg = q.new_empty((B, T, H), dtype=aux) if g is not None and want_dg else _empty(q)
    dgg = q.new_empty((H,), dtype=aux) if g_gamma is not None and want_dgg else _empty(q)
    dh0 = q.new_empty((N, H, K, V), dtype=aux) if h0 is not None and want_dh0 else _empty(q)
    # contiguous whatever the inputs' strides: the op makes its inputs dense first (_ops._dense)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape), dg, dgg, dh0


def _setup_context(ctx, inputs, output):
    q, k, v, g, g_gamma, h0, cu, scale, output_final_state, backend, threads, chunk, allow_tf32 = inputs
    ctx.save_for_backward(q, k, v, g, g_gamma, h0, cu)
    ctx.args = (scale, backend, threads, chunk, allow_tf32)  # the backward in the forward's mode
    ctx.set_materialize_grads(False)  # an unused ht gives dht None, not zeros the backward would read


def _backward_by(bwd, ctx, do, dht):
    q, k, v, g, g_gamma, h0, cu = ctx.saved_tensors
    scale, backend, threads, chunk, allow_tf32 = ctx.args
    if do is None:  # only ht was used
        do = q.new_zeros(tuple(q.shape[:3]) + (v.shape[3],))
    need = ctx.needs_input_grad
    want = (g is not None and bool(need[3]), g_gamma is not None and bool(need[4]), h0 is not None and bool(need[5]))
    dq, dk, dv, dg, dgg, dh0 = bwd(q, k, v, do, g, g_gamma, h0, _some(dht), cu, scale, backend, threads, chunk,
                                   *want, allow_tf32)
    # absent by what was asked, not by size: at T = 0 dg is [B, 0, H], empty and present
    dg, dgg, dh0 = (x if w else None for x, w in zip((dg, dgg, dh0), want))
    return (dq, dk, dv, dg, dgg, dh0) + (None,) * 7


def _backward(ctx, do, dht):
    return _backward_by(chunk_bwd, ctx, do, dht)


chunk_fwd.register_autograd(_backward, setup_context=_setup_context)


def _eager_fwd(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, backend, threads, chunk, allow_tf32):
    o, ht = _ops._torch_forward_raw(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, Backend(backend),
                                    threads, chunk, allow_tf32)
    return o, ht if ht is not None else _empty(q)


def _eager_bwd(q, k, v, do, g, g_gamma, h0, dht, cu, scale, backend, threads, chunk, want_dg, want_dgg, want_dh0,
               allow_tf32=False):
    return _ops._torch_backward_raw(q, k, v, do, g, g_gamma, h0, dht, cu, scale, Backend(backend), threads, chunk,
                                    want_dg, want_dgg, want_dh0, allow_tf32)


_NO_SECOND = ("sgla: chunk_simple_gla has no second derivative: its gradients were differentiated (backward with "
              "create_graph=True, gradgradcheck, a gradient penalty through sgla, a torch.func transform over "
              "sgla's gradient)")


class _NoSecondDerivative(torch.autograd.Function):
    """x, tied to the inputs its value depends on, refusing to be differentiated: sgla's gradients have no
    gradient of their own (the custom op's chunk_bwd refuses the same way)."""

    @staticmethod
    def forward(ctx, x, *inputs):
        return x.clone()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_NO_SECOND)


class _Eager(torch.autograd.Function):
    """The custom ops' bodies and autograd formula without their dispatch, for eager mode."""

    @staticmethod
    def forward(ctx, *inputs):
        o, ht = _eager_fwd(*inputs)
        _setup_context(ctx, inputs, (o, ht))
        return o, ht

    @staticmethod
    def backward(ctx, do, dht):
        if _functorch((do, dht)):  # torch.func.vmap over the cotangents: _FuncBwd's rule
            return _backward_by(_FuncBwd.apply, ctx, do, dht)
        if _storageless(do) or _storageless(dht):  # the legacy vmap of is_grads_batched and vectorized
            return _backward(ctx, do, dht)          # jacobians: the custom op, which its fallback loops over
        with torch.no_grad():
            grads = _backward_by(_eager_bwd, ctx, do, dht)
        if not torch.is_grad_enabled():
            return grads
        # create_graph=True: the gradients depend on the inputs, and as constants (once_differentiable's way,
        # where only an incoming gradient that requires grad is caught) their second derivative came back as
        # 0 when the loss was linear in o.  Each is tied to the saved inputs that require grad instead.
        live = [x for x in ctx.saved_tensors + (do, dht) if isinstance(x, _T) and x.requires_grad]
        if not live:
            return grads
        return tuple(x if not isinstance(x, _T) else _NoSecondDerivative.apply(x, *live) for x in grads)


def _vmap_loop(fn, info, in_dims, inputs):
    """torch.func.vmap's rule for the two Functions below: one call of fn a batch entry (the inputs' mapped
    dimensions selected), the outputs stacked along dimension 0.  fn is the Function itself: an entry may
    still be wrapped by an outer transform (nested vmap, vmap over jacrev), which it then dispatches."""
    body = fn.apply
    if info.batch_size == 0:
        raise ValueError("sgla: torch.func.vmap over a dimension of size 0")
    outs = [body(*(x.select(d, i) if d is not None else x for x, d in zip(inputs, in_dims)))
            for i in range(info.batch_size)]
    return tuple(torch.stack([o[j] for o in outs]) for j in range(len(outs[0]))), (0,) * len(outs[0])


def _bwd_tensors(*inputs):
    return tuple(x if x is not None else _empty(inputs[0]) for x in _eager_bwd(*inputs))


class _FuncBwd(torch.autograd.Function):
    """The backward's call for torch.func: a Function of its own, so that the transform hands it plain tensors
    (the library reads their memory) and sees a gradient it cannot differentiate again."""

    @staticmethod
    def forward(*inputs):
        return _bwd_tensors(*inputs)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def vmap(info, in_dims, *inputs):
        return _vmap_loop(_FuncBwd, info, in_dims, inputs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_NO_SECOND)


class _FuncFwd(torch.autograd.Function):
    """The forward for torch.func's transforms (grad, vjp, jacrev, vmap): a Function in the form they need
    (setup_context), whose forward the transform runs on plain tensors; the eager _Eager and the custom op
    (whose autograd formula torch 2.11 wraps in a Function without setup_context) fail there."""

    @staticmethod
    def forward(*inputs):
        return _eager_fwd(*inputs)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _setup_context(ctx, inputs, output)

    @staticmethod
    def vmap(info, in_dims, *inputs):
        return _vmap_loop(_FuncFwd, info, in_dims, inputs)

    @staticmethod
    def backward(ctx, do, dht):
        return _backward_by(_FuncBwd.apply, ctx, do, dht)


_wrapped = getattr(getattr(torch._C, "_functorch", None), "is_functorch_wrapped_tensor", None)
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_fwad = torch.autograd.forward_ad
_NO_FORWARD_AD = ("sgla: chunk_simple_gla has no forward-mode derivative (a dual tensor of torch.autograd.forward_ad "
                  "among its inputs): use reverse mode (backward, torch.func.vjp / jacrev)")


def _storageless(x):
    """Whether x is a tensor without memory of its own (a batched tensor of torch's legacy vmap)."""
    if not isinstance(x, _T):
        return False
    try:
        x.data_ptr()
    except RuntimeError:
        return True
    return False


def _functorch(xs):
    """Whether a tensor among xs is wrapped by a torch.func transform."""
    return _wrapped is not None and any(isinstance(x, _T) and _wrapped(x) for x in xs)


def forward(q, k, v, g, g_gamma, h0, cu, scale, output_final_state, backend, threads, chunk, allow_tf32=False):
    """(o, final state or None) of prepared tensors, differentiable."""
    args = (q, k, v, g, g_gamma, h0, cu, float(scale), bool(output_final_state), int(backend), int(threads),
            64 if chunk is None else int(chunk), bool(allow_tf32))
    if _ops._compiling(torch):
        o, ht = chunk_fwd(*args)
    elif _functorch(args[:7]):  # before the subclass test: an nn.Parameter among a transform's inputs
        o, ht = _FuncFwd.apply(*args)
    elif type(q) not in _PLAIN:  # fake or other tensor subclasses
        o, ht = chunk_fwd(*args)
    elif getattr(_fwad, "_current_level", -1) >= 0 and any(
            isinstance(x, _T) and _fwad.unpack_dual(x).tangent is not None for x in args[:7]):
        raise NotImplementedError(_NO_FORWARD_AD)
    elif torch.is_grad_enabled() and any(isinstance(x, _T) and x.requires_grad for x in args[:6]):
        o, ht = _Eager.apply(*args)
    else:
        o, ht = _eager_fwd(*args)
    return o, ht if output_final_state else None


@torch.library.custom_op("sgla::pool_fwd", mutates_args=("pool",))
def pool_fwd(q: _T, k: _T, v: _T, g: Optional[_T], g_gamma: Optional[_T], pool: _T, cu: Optional[_T],
             indices: _T, num_accepted: Optional[_T], has_initial_state: Optional[_T], cu_host: Optional[_T],
             scale: Optional[float], inplace: bool, state_v_first: bool, backend: int, threads: int,
             chunk: Optional[int]) -> Tuple[_T, _T]:
    o, final = _ops._pool_forward(q, k, v, g, g_gamma, scale, pool, cu, indices, num_accepted, has_initial_state,
                                  inplace, cu_host, state_v_first, None if backend < 0 else backend, threads, chunk)
    # in place, the final states are the pool itself, which an op may not return (an alias of an input)
    return o, _empty(q) if inplace else final


@pool_fwd.register_fake
def _pool_fwd_fake(q, k, v, g, g_gamma, pool, cu, indices, num_accepted, has_initial_state, cu_host, scale, inplace,
                   state_v_first, backend, threads, chunk):
    B, T, H, _ = q.shape
    o = q.new_empty((B, T, H, v.shape[3]))
    final = _empty(q) if inplace else pool.new_empty((indices.shape[0],) + tuple(pool.shape[1:]))
    return o, final


def pool_forward(q, k, v, g, g_gamma, scale, pool, cu, indices, num_accepted, has_initial_state, inplace, cu_host,
                 state_v_first, backend, threads, chunk):
    """_ops._pool_forward's (o, final states) as one operator that updates the pool, for torch.compile."""
    if cu_host is not None and not isinstance(cu_host, _T):
        cu_host = torch.as_tensor(cu_host)
    b = -1 if backend is None else int(_ops.resolve_backend(backend))
    o, final = pool_fwd(q, k, v, g, g_gamma, pool, cu, indices, num_accepted, has_initial_state, cu_host,
                        None if scale is None else float(scale), bool(inplace), bool(state_v_first), b, int(threads),
                        None if chunk is None else int(chunk))
    return o, pool if inplace else final
