"""sgla from NumPy: the forward, its final state and the gradients, checked
against a plain NumPy loop of the recurrence.  Run it as it is:

    python3 examples/numpy_quickstart.py

(with sgla installed by `pip install ./python`; from a build tree, set
PYTHONPATH=python and SGLA_LIBRARY=build/libsgla.so.)"""
import numpy as np

import sgla

rng = np.random.default_rng(0)
B, T, H, K, V = 2, 200, 3, 32, 48
q = rng.standard_normal((B, T, H, K), dtype=np.float32)
k = rng.standard_normal((B, T, H, K), dtype=np.float32)
v = rng.standard_normal((B, T, H, V), dtype=np.float32)
g = np.log(rng.uniform(0.9, 1.0, (B, T, H))).astype(np.float32)  # log decays, <= 0

o, ht = sgla.chunk_simple_gla(q, k, v, g=g, output_final_state=True)  # scale defaults to K ** -0.5

# the definition, token by token, in float64
scale = K ** -0.5
S = np.zeros((B, H, K, V))
o_ref = np.zeros((B, T, H, V))
for t in range(T):
    S = np.exp(g[:, t, :, None, None].astype(np.float64)) * S + np.einsum("bhk,bhv->bhkv", k[:, t], v[:, t])
    o_ref[:, t] = scale * np.einsum("bhk,bhkv->bhv", q[:, t], S)


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


print(f"o  {o.shape} {o.dtype}: rel L2 {rel(o, o_ref):.2e} against a float64 loop")
print(f"ht {ht.shape} {ht.dtype}: rel L2 {rel(ht, S):.2e}")

# the gradients of sum(o * do), without torch
do = rng.standard_normal(o.shape, dtype=np.float32)
dq, dk, dv, dg, _, _ = sgla.chunk_simple_gla_backward(q, k, v, do, g=g)
# one coordinate of dg by central differences of the float64 reference backend
i = (1, 77, 2)
eps = 1e-4
g64 = g.astype(np.float64)
f = []
for sgn in (1, -1):
    gp = g64.copy()
    gp[i] += sgn * eps
    op, _ = sgla.chunk_simple_gla(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), g=gp,
                                  backend="ref-a")
    f.append(float(np.sum(op * do)))
fd = (f[0] - f[1]) / (2 * eps)
print(f"dg{list(i)} = {dg[i]:.6f}, central difference {fd:.6f}")
assert rel(o, o_ref) < 1e-5 and rel(ht, S) < 1e-5 and abs(dg[i] - fd) <= 1e-3 * max(1.0, abs(fd))
print("ok")
