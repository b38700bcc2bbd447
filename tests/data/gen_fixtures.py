"""Regenerate the .npy fixtures in tests/data with numpy itself (run from
the repository root: python3 tests/data/gen_fixtures.py).  The files are
committed; the tests never need numpy."""
import os
import numpy as np
from numpy.lib import format as npf

D = os.path.dirname(os.path.abspath(__file__))


def ramp(shape, dtype):
    # element i holds i*0.5 - 1: exact in every dtype used here
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.float64) * 0.5 - 1.0).reshape(shape).astype(dtype)


def save(name, a, version=None):
    path = os.path.join(D, name)
    with open(path, "wb") as f:
        npf.write_array(f, a, version=version, allow_pickle=False)


# numpy's own files: every dtype and rank 0..4, v1/v2/v3 headers
save("np_f2_r0.npy", ramp((), "<f2"))
save("np_f4_r1.npy", ramp((5,), "<f4"))
save("np_f8_r2.npy", ramp((2, 3), "<f8"))
save("np_i8_r3.npy", np.arange(24, dtype="<i8").reshape(2, 3, 4) - 5)
save("np_i4_r1.npy", np.arange(4, dtype="<i4") - 1)
save("np_f4_r4.npy", ramp((2, 1, 3, 2), "<f4"))
save("np_f4_empty.npy", ramp((0, 3), "<f4"))
save("np_f4_v2.npy", ramp((3, 2), "<f4"), version=(2, 0))
save("np_f8_v3.npy", ramp((4,), "<f8"), version=(3, 0))
# files numpy writes that sgla must refuse with a clear message
save("np_fortran.npy", np.asfortranarray(ramp((2, 3), "<f4")))
save("np_big_endian.npy", ramp((3,), ">f4"))
save("np_u1.npy", np.arange(3, dtype="u1"))

# inputs for `sgla run` smoke tests: B=2, T=7, H=2, K=3, V=4 (T not a
# multiple of the chunk used in the tests)
rng = np.random.default_rng(20261129)
B, T, H, K, V = 2, 7, 2, 3, 4
for dt, suf in (("<f4", ""), ("<f2", "16")):
    q = rng.standard_normal((B, T, H, K)).astype(dt)
    k = rng.standard_normal((B, T, H, K)).astype(dt)
    v = rng.standard_normal((B, T, H, V)).astype(dt)
    save(f"run_q{suf}.npy", q)
    save(f"run_k{suf}.npy", k)
    save(f"run_v{suf}.npy", v)
save("run_g.npy", np.log(rng.uniform(0.8, 0.999, (B, T, H))).astype("<f4"))
save("run_gg.npy", np.log(np.array([0.9, 0.5])).astype("<f4"))
save("run_h0.npy", rng.standard_normal((B, H, K, V)).astype("<f4"))
# varlen: B=1, T=9, three sequences of 4, 0 and 5 tokens
Tv = 9
save("var_q.npy", rng.standard_normal((1, Tv, H, K)).astype("<f4"))
save("var_k.npy", rng.standard_normal((1, Tv, H, K)).astype("<f4"))
save("var_v.npy", rng.standard_normal((1, Tv, H, V)).astype("<f4"))
save("var_cu.npy", np.array([0, 4, 4, 9], dtype="<i8"))
save("var_h0.npy", rng.standard_normal((3, H, K, V)).astype("<f4"))
