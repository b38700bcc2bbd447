"""An independent fp64 reference for the tests: the token recurrence straight
from the definition, in NumPy, not calling the library.

    S_t = exp(g_t) S_{t-1} + k_t v_t^T,   o_t = scale * q_t^T S_t
"""
import numpy as np


def to64(x):
    if x is None:
        return None
    if hasattr(x, "detach"):  # a torch tensor: exact upcast on its device, then host
        import torch
        return x.detach().to(torch.float64).cpu().numpy()
    return np.asarray(x).astype(np.float64)


def _setup(q, g, g_gamma, scale, cu_seqlens):
    """The scale, the log-gate [B,T,H] and the (batch row, t0, t1) of each sequence."""
    B, T, H, K = q.shape
    if scale is None:
        scale = K ** -0.5
    logg = np.zeros((B, T, H))
    if g is not None:
        logg = g
    elif g_gamma is not None:
        logg = np.broadcast_to(g_gamma, (B, T, H))
    if cu_seqlens is not None:
        cu = [int(c) for c in (cu_seqlens.tolist() if hasattr(cu_seqlens, "tolist") else cu_seqlens)]
        seqs = [(0, cu[i], cu[i + 1]) for i in range(len(cu) - 1)]
    else:
        seqs = [(b, 0, T) for b in range(B)]
    return scale, logg, seqs


def ref_forward(q, k, v, g=None, g_gamma=None, scale=None, h0=None, cu_seqlens=None):
    """Returns (o [B,T,H,V], ht [N,H,K,V]) in fp64."""
    q, k, v, g, g_gamma, h0 = (to64(x) for x in (q, k, v, g, g_gamma, h0))
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale, logg, seqs = _setup(q, g, g_gamma, scale, cu_seqlens)
    o = np.zeros((B, T, H, V))
    ht = np.zeros((len(seqs), H, K, V))
    for n, (b, t0, t1) in enumerate(seqs):
        S = h0[n].copy() if h0 is not None else np.zeros((H, K, V))
        for t in range(t0, t1):
            S = np.exp(logg[b, t])[:, None, None] * S + k[b, t][:, :, None] * v[b, t][:, None, :]
            o[b, t] = scale * np.einsum("hk,hkv->hv", q[b, t], S)
        ht[n] = S
    return o, ht


def rel_l2(x, ref):
    x = to64(x)
    ref = to64(ref)
    assert x.shape == ref.shape, (x.shape, ref.shape)
    if not np.all(np.isfinite(x)):
        return float("inf")  # NaN never passes
    den = np.linalg.norm(ref)
    num = np.linalg.norm(x - ref)
    if den == 0.0:
        return float(num)
    return float(num / den)


def max_err(x, ref):
    """The farthest element's error over max|ref| (inf for NaN or inf in x): judged at 4x the rel L2
    bar beside rel_l2, as the C harness judges o and the gradients (tools/conform.c): one wrong
    element hides in a large tensor's rel L2."""
    x = to64(x)
    ref = to64(ref)
    assert x.shape == ref.shape, (x.shape, ref.shape)
    if not np.all(np.isfinite(x)):
        return float("inf")
    if x.size == 0:
        return 0.0
    m = float(np.max(np.abs(ref)))
    d = float(np.max(np.abs(x - ref)))
    return d / m if m > 0 else d


def ref_backward(q, k, v, do, g=None, g_gamma=None, scale=None, h0=None, dht=None, cu_seqlens=None):
    """The gradients of <o, do> + <ht, dht> by the reverse-time recurrence, fp64:
    (dq, dk, dv, dg, dg_gamma, dh0), None where the input is absent."""
    q, k, v, do, g, g_gamma, h0, dht = (to64(x) for x in (q, k, v, do, g, g_gamma, h0, dht))
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale, logg, seqs = _setup(q, g, g_gamma, scale, cu_seqlens)
    dq, dk, dv, dg = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v), np.zeros((B, T, H))
    dh0 = np.zeros((len(seqs), H, K, V))
    for n, (b, t0, t1) in enumerate(seqs):
        S = h0[n].copy() if h0 is not None else np.zeros((H, K, V))
        states = [S]
        for t in range(t0, t1):
            S = np.exp(logg[b, t])[:, None, None] * S + k[b, t][:, :, None] * v[b, t][:, None, :]
            states.append(S)
        dS = dht[n].copy() if dht is not None else np.zeros((H, K, V))
        for t in range(t1 - 1, t0 - 1, -1):
            a = np.exp(logg[b, t])
            St, Sp = states[t - t0 + 1], states[t - t0]
            dS = dS + scale * q[b, t][:, :, None] * do[b, t][:, None, :]
            dq[b, t] = scale * np.einsum("hkv,hv->hk", St, do[b, t])
            dk[b, t] = np.einsum("hkv,hv->hk", dS, v[b, t])
            dv[b, t] = np.einsum("hkv,hk->hv", dS, k[b, t])
            dg[b, t] = a * np.einsum("hkv,hkv->h", dS, Sp)
            dS = a[:, None, None] * dS
        dh0[n] = dS
    return (dq, dk, dv, dg if g is not None else None, dg.sum(axis=(0, 1)) if g_gamma is not None else None,
            dh0 if h0 is not None else None)
