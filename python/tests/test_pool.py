"""The state pool through fla's continuous-batching keywords (ssm_state_indices,
has_initial_state, num_accepted_tokens, inplace_final_state, state_v_first),
NumPy and CPU torch, against plain calls: each sequence run alone from its
slot's state (or zeros) and its states put back by hand."""
import numpy as np
import pytest

import sgla


def plain(q, k, v, g, h0):
    o, ht = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=h0[None], output_final_state=True)
    return o, ht[0]


def packed_batch(rng, lens, H, K, V, S, v_first):
    """cu_seqlens of lens, then q, k, v, a mild gate g and a pool of S slots ([S, H, V, K] v-first)."""
    cu = np.concatenate([[0], np.cumsum(lens)])
    T = int(cu[-1])
    q, k = (rng.standard_normal((1, T, H, K), dtype=np.float32) for _ in range(2))
    v = rng.standard_normal((1, T, H, V), dtype=np.float32)
    g = -rng.uniform(0, 0.3, (1, T, H)).astype(np.float32)
    pool = rng.standard_normal((S, H, V, K) if v_first else (S, H, K, V)).astype(np.float32)
    return cu, q, k, v, g, pool


@pytest.mark.parametrize("v_first", [False, True])
@pytest.mark.parametrize("bits", [32, 64])
def test_mixed_batch(v_first, bits):
    rng = np.random.default_rng(bits + v_first)
    H, K, V, S = 2, 8, 12, 7
    lens = [5, 1, 1, 7, 1]
    idx = np.array([3, 0, -1, 6, 2], dtype=np.int32 if bits == 32 else np.int64)
    his = np.array([True, True, True, False, True])
    cu, q, k, v, g, pool = packed_batch(rng, lens, H, K, V, S, v_first)
    pool0 = pool.copy()
    # fla's cu_seqlens_cpu (a host copy; the CPU backend only checks it)
    o, p = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx,
                                 has_initial_state=his, state_v_first=v_first,
                                 cu_seqlens_cpu=cu if bits == 64 else None)
    assert p is pool
    want = pool0.copy()
    for n, (a, b) in enumerate(zip(cu[:-1], cu[1:])):
        if idx[n] < 0:
            assert not np.any(o[:, a:b])
            continue
        h0 = pool0[idx[n]].swapaxes(-1, -2) if v_first else pool0[idx[n]]
        h0 = h0 if his[n] else np.zeros_like(h0)
        on, hn = plain(q[:, a:b], k[:, a:b], v[:, a:b], g[:, a:b], np.ascontiguousarray(h0))
        np.testing.assert_allclose(o[:, a:b], on, rtol=1e-5, atol=1e-5)
        want[idx[n]] = hn.swapaxes(-1, -2) if v_first else hn
    np.testing.assert_allclose(pool, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("accepted", [[1, 1], [2, 3], [3, 1]])
def test_speculative_steps(accepted):
    rng = np.random.default_rng(sum(accepted))
    H, K, V, S = 1, 4, 6, 8
    idx = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int64)
    lens = [3, 2]
    cu = np.array([0, 3, 5])
    q, k = (rng.standard_normal((1, 5, H, K), dtype=np.float32) for _ in range(2))
    v = rng.standard_normal((1, 5, H, V), dtype=np.float32)
    g = -rng.uniform(0, 0.3, (1, 5, H)).astype(np.float32)
    pool = rng.standard_normal((S, H, K, V)).astype(np.float32)
    pool0 = pool.copy()
    acc = np.array(accepted, dtype=np.int64)
    o, _ = sgla.fused_recurrent_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx,
                                           num_accepted_tokens=acc)
    want = pool0.copy()
    for n in range(2):
        S_ = pool0[idx[n, acc[n] - 1]]
        for t in range(lens[n]):
            a = cu[n] + t
            on, S_ = plain(q[:, a:a + 1], k[:, a:a + 1], v[:, a:a + 1], g[:, a:a + 1], S_)
            np.testing.assert_allclose(o[:, a:a + 1], on, rtol=1e-5, atol=1e-5)
            want[idx[n, t]] = S_
    np.testing.assert_allclose(pool, want, rtol=1e-5, atol=1e-5)


def test_torch_cpu_and_refusals():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    q, k = (rng.standard_normal((1, 4, 2, 8), dtype=np.float32) for _ in range(2))
    v = rng.standard_normal((1, 4, 2, 8), dtype=np.float32)
    pool = rng.standard_normal((4, 2, 8, 8)).astype(np.float32)
    cu = np.array([0, 3, 4])
    o_np, _ = sgla.chunk_simple_gla(q, k, v, initial_state=pool.copy(), cu_seqlens=cu,
                                    ssm_state_indices=np.array([1, 2]))
    tp = torch.from_numpy(pool.copy())
    o_t, p_t = sgla.chunk_simple_gla(*(torch.from_numpy(x) for x in (q, k, v)), initial_state=tp,
                                     cu_seqlens=torch.from_numpy(cu), ssm_state_indices=torch.tensor([1, 2]))
    assert p_t is tp
    np.testing.assert_array_equal(o_t.numpy(), o_np)
    with pytest.raises(sgla.SglaError, match="POOL_CONFLICT"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=np.array([1, 1]))
    with pytest.raises(sgla.SglaError, match="POOL_INDEX"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=np.array([1, 4]))
    with pytest.raises(TypeError, match="float32"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool.astype(np.float64), cu_seqlens=cu,
                              ssm_state_indices=np.array([1, 2]))
    with pytest.raises(ValueError, match="need ssm_state_indices"):
        sgla.chunk_simple_gla(q, k, v, num_accepted_tokens=np.array([1, 1]))


@pytest.mark.gpu
@pytest.mark.parametrize("v_first", [False, True])
def test_cuda_pool_matches_cpu(v_first):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    H, K, V, S = 4, 128, 128, 10
    lens = [1, 1, 6, 1]
    cu, q, k, v, g, pool = packed_batch(rng, lens, H, K, V, S, v_first)
    idx = np.array([4, -1, 0, 9])
    his = np.array([True, True, False, True])
    pc = pool.copy()
    oc, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=pc, cu_seqlens=cu, ssm_state_indices=idx,
                                  has_initial_state=his, state_v_first=v_first)
    t = lambda x: torch.from_numpy(x).cuda()  # noqa: E731
    pg = t(pool)
    og, _ = sgla.chunk_simple_gla(t(q), t(k), t(v), g=t(g), initial_state=pg, cu_seqlens=t(cu),
                                  ssm_state_indices=t(idx), has_initial_state=t(his), state_v_first=v_first)
    torch.cuda.synchronize()
    np.testing.assert_allclose(og.cpu().numpy(), oc, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(pg.cpu().numpy(), pc, rtol=2e-5, atol=2e-5)


def two_sequences(seed):
    """Two packed sequences of 3 and 1 tokens (H = 2, K = V = 8), a pool of 4 slots and its copy."""
    rng = np.random.default_rng(seed)
    H, K, V, S = 2, 8, 8, 4
    cu = np.array([0, 3, 4])
    q, k, v = (rng.standard_normal((1, 4, H, K), dtype=np.float32) for _ in range(3))
    pool = rng.standard_normal((S, H, K, V)).astype(np.float32)
    return cu, q, k, v, pool, pool.copy()


def test_pool_host_cu_seqlens_checked():
    """cu_seqlens_cpu that does not describe T is refused before anything is written."""
    cu, q, k, v, pool, p0 = two_sequences(5)
    with pytest.raises(sgla.SglaError, match="cu_seqlens"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=np.array([0, 1]),
                              cu_seqlens_cpu=np.array([0, 3, 5]))
    np.testing.assert_array_equal(pool, p0)


@pytest.mark.gpu
@pytest.mark.parametrize("host_cu", [False, True])
def test_cuda_mixed_batch_bf16(host_cu):
    """A prefill batch with decodes on a bf16 pool step: the chunked kernel on the prefills' slots
    (with cu_seqlens_cpu only over them), the recurrence on the rest, against the CPU."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    H, K, V, S = 2, 128, 128, 8
    lens = [1, 130, 1, 5, 2]
    cu = np.concatenate([[0], np.cumsum(lens)])
    T = int(cu[-1])
    q, k, v = (torch.from_numpy(rng.standard_normal((1, T, H, K), dtype=np.float32) * 0.5).bfloat16()
               for _ in range(3))
    g = torch.from_numpy(-rng.uniform(0, 0.3, (1, T, H)).astype(np.float32))
    pool = torch.from_numpy(rng.standard_normal((S, H, K, V)).astype(np.float32))
    idx = torch.tensor([4, 0, -1, 7, 2])
    his = torch.tensor([True, True, True, False, True])
    pc = pool.clone()
    oc, _ = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=pc, cu_seqlens=torch.from_numpy(cu),
                                  ssm_state_indices=idx, has_initial_state=his)
    pg = pool.cuda()
    og, _ = sgla.chunk_simple_gla(q.cuda(), k.cuda(), v.cuda(), g=g.cuda(), initial_state=pg,
                                  cu_seqlens=torch.from_numpy(cu).cuda(), ssm_state_indices=idx.cuda(),
                                  has_initial_state=his.cuda(), cu_seqlens_cpu=torch.from_numpy(cu) if host_cu else None)
    torch.cuda.synchronize()
    rel = lambda a, b: float((a.float() - b.float()).norm() / b.float().norm())  # noqa: E731
    assert rel(og.cpu(), oc) < 1e-2 and rel(pg.cpu(), pc) < 1e-2
    assert not og[0, int(cu[2]):int(cu[3])].any()  # the padded row



def test_pool_unsigned_past_int64_refused():
    """uint64 offsets, slot indices and accepted counts past int64 are refused by name (the cast wrapped
    them: an index 2**64 - 1 became -1, a padded sequence), and nothing is written; in range they are
    taken as int64."""
    cu, q, k, v, pool, p0 = two_sequences(6)
    big = np.uint64(2 ** 64 - 1)
    kw = dict(initial_state=pool, cu_seqlens=cu, ssm_state_indices=np.array([0, 1]))
    for name, val, msg in (
            ("ssm_state_indices", np.array([0, big], np.uint64), r"^ssm_state_indices\[1\] = 18446744073709551615"),
            ("cu_seqlens", np.array([0, big, 4], np.uint64), r"^cu_seqlens\[1\] = 18446744073709551615"),
            ("cu_seqlens_cpu", np.array([0, 3, big], np.uint64), r"^cu_seqlens_cpu\[2\] = 18446744073709551615"),
            ("num_accepted_tokens", np.array([big, 1], np.uint64), r"^num_accepted_tokens\[0\] = 18446744073709551615")):
        with pytest.raises(ValueError, match=msg + " does not fit int64"):
            sgla.chunk_simple_gla(q, k, v, **dict(kw, **{name: val}))
        np.testing.assert_array_equal(pool, p0)
    o_u, _ = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=p0.copy(), ssm_state_indices=np.array([0, 1], np.uint64)))
    o_i, _ = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=p0.copy()))
    np.testing.assert_array_equal(o_u, o_i)


def test_pool_integer_inputs_not_wrapped():
    """Object arrays are refused rather than cast (4.7 became slot 4); has_initial_state is nonzero-is-true
    (256 wrapped to 0 in uint8); an int64 accepted count beside int32 indices is not cut to 32 bits
    (2**32 + 2 became 2): both go as int64; a pool only read may be a read-only array."""
    cu, q, k, v, pool, p0 = two_sequences(7)
    kw = dict(initial_state=pool, cu_seqlens=cu, ssm_state_indices=np.array([0, 1]))
    for name, val in (("ssm_state_indices", np.array([4.7, 2.2], dtype=object)),
                      ("cu_seqlens", np.array([0, 1.9, 4], dtype=object)),
                      ("has_initial_state", np.array([1, 0], dtype=object))):
        with pytest.raises(TypeError, match=f"^{name} must be a numeric array, got dtype object"):
            sgla.chunk_simple_gla(q, k, v, **dict(kw, **{name: val}))
        np.testing.assert_array_equal(pool, p0)
    o256, _ = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=p0.copy(), has_initial_state=[256, 0]))
    o1, _ = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=p0.copy(), has_initial_state=[1, 0]))
    np.testing.assert_array_equal(o256, o1)
    spec = dict(initial_state=pool, cu_seqlens=np.array([0, 2, 4]),
                ssm_state_indices=np.array([[0, 1], [2, 3]], np.int32))
    with pytest.raises(sgla.SglaError) as ei:
        sgla.fused_recurrent_simple_gla(q, k, v, num_accepted_tokens=np.array([2 ** 32 + 2, 1], np.int64), **spec)
    assert ei.value.status == sgla.Status.ERR_POOL_INDEX
    np.testing.assert_array_equal(pool, p0)
    o_a, _ = sgla.fused_recurrent_simple_gla(q, k, v, **dict(spec, initial_state=p0.copy(),
                                                              num_accepted_tokens=np.array([2, 1], np.int64)))
    o_b, _ = sgla.fused_recurrent_simple_gla(q, k, v, **dict(spec, initial_state=p0.copy(),
                                                              num_accepted_tokens=np.array([2, 1], np.int32)))
    np.testing.assert_array_equal(o_a, o_b)
    ro = p0.copy()
    ro.flags.writeable = False
    o_ro, ht = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=ro, inplace_final_state=False))
    o_rw, ht2 = sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=p0.copy(), inplace_final_state=False))
    np.testing.assert_array_equal(o_ro, o_rw)
    np.testing.assert_array_equal(ht, ht2)
    with pytest.raises(TypeError, match="writable unless inplace_final_state=False"):
        sgla.chunk_simple_gla(q, k, v, **dict(kw, initial_state=ro))


def test_pool_integer_inputs_not_wrapped_torch():
    """The same on CPU torch tensors (the torch branch of the pool path)."""
    torch = pytest.importorskip("torch")
    cu, q, k, v, pool, p0 = two_sequences(8)
    t = torch.from_numpy
    kw = dict(cu_seqlens=t(cu), ssm_state_indices=torch.tensor([0, 1]))
    o256, _ = sgla.chunk_simple_gla(t(q), t(k), t(v), initial_state=t(p0.copy()), has_initial_state=torch.tensor([256, 0]), **kw)
    o1, _ = sgla.chunk_simple_gla(t(q), t(k), t(v), initial_state=t(p0.copy()), has_initial_state=[True, False], **kw)
    assert torch.equal(o256, o1)
    spec = dict(cu_seqlens=torch.tensor([0, 2, 4]), ssm_state_indices=torch.tensor([[0, 1], [2, 3]], dtype=torch.int32))
    pt = t(p0.copy())
    with pytest.raises(sgla.SglaError) as ei:
        sgla.fused_recurrent_simple_gla(t(q), t(k), t(v), initial_state=pt,
                                        num_accepted_tokens=torch.tensor([2 ** 32 + 2, 1]), **spec)
    assert ei.value.status == sgla.Status.ERR_POOL_INDEX
    assert torch.equal(pt, t(p0))
    with pytest.raises(TypeError, match="^ssm_state_indices must hold integers"):
        sgla.chunk_simple_gla(t(q), t(k), t(v), initial_state=pt, cu_seqlens=t(cu),
                              ssm_state_indices=torch.tensor([0.5, 1.0]))


def test_pool_inputs_checked_like_plain_calls():
    """The pool path checks every input's shape and dtype before the library reads it (a short k
    was read past its end), and refuses float offsets and slot indices rather than rounding them."""
    rng = np.random.default_rng(9)
    H, K, V, T = 2, 8, 8, 6
    q, k = (rng.standard_normal((1, T, H, K), dtype=np.float32) for _ in range(2))
    v = rng.standard_normal((1, T, H, V), dtype=np.float32)
    pool = rng.standard_normal((4, H, K, V)).astype(np.float32)
    p0 = pool.copy()
    cu = np.array([0, 4, T])
    idx = np.array([0, 2])

    def call(**kw):
        args = dict(q=q, k=k, v=v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx)
        args.update(kw)
        return sgla.chunk_simple_gla(**args)

    with pytest.raises(ValueError, match="k must have q's shape"):
        call(k=k[:, :1])
    with pytest.raises(ValueError, match="v must be"):
        call(v=v[:, :2])
    with pytest.raises(TypeError, match="k has dtype float16"):
        call(k=k.astype(np.float16))
    with pytest.raises(ValueError, match="g must be"):
        call(g=np.zeros((1, 1, H), np.float32))
    with pytest.raises(ValueError, match="g_gamma must be"):
        call(g_gamma=np.zeros((1,), np.float32))
    with pytest.raises(ValueError, match="q must be 4-D"):
        call(q=q[0])
    with pytest.raises(TypeError, match="g must be a floating-point array"):
        call(g=np.zeros((1, T, H), np.int32))
    with pytest.raises(TypeError, match="ssm_state_indices must hold integers"):
        call(ssm_state_indices=np.array([0.7, 2.2]))
    with pytest.raises(TypeError, match="cu_seqlens must hold integers"):
        call(cu_seqlens=cu.astype(np.float64))
    np.testing.assert_array_equal(pool, p0)
    o, _ = call()
    assert o.shape == (1, T, H, V)


def test_pool_refuses_inputs_that_require_grad():
    """The pool path records no gradient: refused with grad enabled, run under no_grad."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    q, k, v = (torch.from_numpy(rng.standard_normal((1, 3, 2, 4), dtype=np.float32)) for _ in range(3))
    pool = torch.from_numpy(rng.standard_normal((3, 2, 4, 4)).astype(np.float32))
    cu, idx = torch.tensor([0, 1, 3]), torch.tensor([0, 2])
    qg = q.clone().requires_grad_()
    with pytest.raises(ValueError, match="for inference"):
        sgla.chunk_simple_gla(qg, k, v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx)
    with torch.no_grad():
        o, _ = sgla.chunk_simple_gla(qg, k, v, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx)
    assert o.shape == (1, 3, 2, 4) and not o.requires_grad


@pytest.mark.parametrize("v_first", [False, True])
def test_final_states_not_in_place(v_first):
    """inplace_final_state=False (fla's): the pool is only read, the final states come back in a new
    [N, ...] array, equal to what the in-place call writes to the sequences' slots; a padded row's
    final state is zeros."""
    rng = np.random.default_rng(11 + v_first)
    H, K, V, S = 2, 8, 12, 6
    lens = [5, 1, 3, 2]
    idx = np.array([4, -1, 0, 2])
    his = np.array([True, True, False, True])
    cu, q, k, v, g, pool = packed_batch(rng, lens, H, K, V, S, v_first)
    p0 = pool.copy()
    kw = dict(g=g, cu_seqlens=cu, ssm_state_indices=idx, has_initial_state=his, state_v_first=v_first)
    o, fin = sgla.chunk_simple_gla(q, k, v, initial_state=pool, inplace_final_state=False, **kw)
    np.testing.assert_array_equal(pool, p0)
    assert fin.shape == (len(lens),) + pool.shape[1:]
    o2, p2 = sgla.chunk_simple_gla(q, k, v, initial_state=pool.copy(), **kw)
    np.testing.assert_array_equal(o, o2)
    for n in range(len(lens)):
        np.testing.assert_array_equal(fin[n], p2[idx[n]] if idx[n] >= 0 else np.zeros_like(fin[n]))
    with pytest.raises(ValueError, match=r"outside \[-1, 6\)"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, inplace_final_state=False,
                              **dict(kw, ssm_state_indices=np.array([4, -1, 6, 2])))
    with pytest.raises(NotImplementedError, match="speculative"):
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, inplace_final_state=False,
                              **dict(kw, ssm_state_indices=np.array([[4, 5], [-1, -1], [0, 1], [2, 3]])))
    torch = pytest.importorskip("torch")
    tp = torch.from_numpy(pool.copy())
    o_t, fin_t = sgla.chunk_simple_gla(*(torch.from_numpy(x) for x in (q, k, v)), initial_state=tp,
                                       inplace_final_state=False, g=torch.from_numpy(g),
                                       cu_seqlens=torch.from_numpy(cu), ssm_state_indices=torch.from_numpy(idx),
                                       has_initial_state=torch.from_numpy(his), state_v_first=v_first)
    np.testing.assert_array_equal(tp.numpy(), p0)
    np.testing.assert_array_equal(fin_t.numpy(), fin)
    np.testing.assert_array_equal(o_t.numpy(), o)


def test_pool_flags_and_backend_refused():
    """has_initial_state and cu_seqlens_cpu are never rounded from floats; backend='cuda' with host
    arrays is refused before any pointer reaches the library."""
    rng = np.random.default_rng(12)
    H, K, V, T = 1, 4, 4, 3
    q, k, v = (rng.standard_normal((1, T, H, K), dtype=np.float32) for _ in range(3))
    pool = rng.standard_normal((3, H, K, V)).astype(np.float32)
    p0 = pool.copy()
    kw = dict(initial_state=pool, cu_seqlens=np.array([0, 2, 3]), ssm_state_indices=np.array([0, 2]))
    with pytest.raises(TypeError, match="has_initial_state must hold bools"):
        sgla.chunk_simple_gla(q, k, v, has_initial_state=np.array([0.5, 0.7]), **kw)
    with pytest.raises(TypeError, match="cu_seqlens_cpu must hold integers"):
        sgla.chunk_simple_gla(q, k, v, cu_seqlens_cpu=np.array([0.0, 2.0, 3.0]), **kw)
    with pytest.raises(ValueError, match="backend='cuda' needs CUDA tensors"):
        sgla.chunk_simple_gla(q, k, v, backend="cuda", **kw)
    np.testing.assert_array_equal(pool, p0)
    o, _ = sgla.chunk_simple_gla(q, k, v, has_initial_state=np.array([1, 0], np.int32), **kw)
    assert o.shape == (1, T, H, V)
    o2, _ = sgla.chunk_simple_gla(q, k, v, has_initial_state=[True, False], **dict(kw, initial_state=p0.copy()))
    np.testing.assert_array_equal(o, o2)
    with pytest.raises(TypeError, match="has_initial_state must hold bools"):
        sgla.chunk_simple_gla(q, k, v, has_initial_state=[0.5, 0.7], **kw)


def test_torch_pool_write_bumps_the_version():
    """The in-place pool write tells torch (its version counter), so autograd refuses a backward
    through a tensor saved before the write; without inplace the pool's version stays."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    q, k, v = (torch.from_numpy(rng.standard_normal((1, 3, 1, 4), dtype=np.float32)) for _ in range(3))
    pool = torch.from_numpy(rng.standard_normal((2, 1, 4, 4)).astype(np.float32))
    kw = dict(cu_seqlens=torch.tensor([0, 3]), ssm_state_indices=torch.tensor([1]))
    v0 = pool._version
    with torch.no_grad():
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, **kw)
    assert pool._version > v0
    v1 = pool._version
    with torch.no_grad():
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, inplace_final_state=False, **kw)
    assert pool._version == v1
    w = torch.ones(2, 1, 4, 4, requires_grad=True)
    y = (w * pool).sum()  # saves pool for the backward
    with torch.no_grad():
        sgla.chunk_simple_gla(q, k, v, initial_state=pool, **kw)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def _compiled_pool_step(torch, backend, fin_kw):
    """A serving step (a packed batch on the pool, fla's keywords) as a function torch.compile can take
    whole, and what it returns."""
    def step(q, k, v, g, pool, cu, idx, his):
        o, fin = sgla.chunk_simple_gla(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx,
                                       has_initial_state=his, **fin_kw)
        return o * 2, fin
    graphs = []

    def seen(gm, example):  # the graph dynamo hands its backend, then the backend asked for
        graphs.append(str(gm.graph))
        return torch._dynamo.lookup_backend(backend)(gm, example)
    return step, torch.compile(step, fullgraph=True, backend=seen), graphs


@pytest.mark.parametrize("inplace", [True, False])
def test_torch_compile_sees_the_pool_operator(inplace):
    """torch.compile(fullgraph=True) of a step that runs on the pool: one operator, sgla::pool_fwd,
    no graph break; the same o, the same pool afterwards (updated in place, or only read), the same
    final states, as the eager call."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(17 + inplace)
    cu, q, k, v, g, pool = packed_batch(rng, [5, 1, 3, 2], 2, 8, 12, 6, False)
    t = torch.from_numpy
    args = (t(q), t(k), t(v), t(g))
    rest = (t(cu), torch.tensor([4, -1, 0, 2]), torch.tensor([True, True, False, True]))
    step, compiled, graphs = _compiled_pool_step(torch, "aot_eager", {"inplace_final_state": inplace})
    pe, pc = t(pool.copy()), t(pool.copy())
    with torch.no_grad():
        oe, fe = step(*args, pe, *rest)
        oc, fc = compiled(*args, pc, *rest)
    assert any("sgla.pool_fwd" in s for s in graphs), graphs
    assert torch.equal(oc, oe)
    assert torch.equal(pc, pe)
    assert torch.equal(fc, fe)
    assert torch.equal(pc, t(pool)) != inplace  # written in place, or left alone


@pytest.mark.gpu
def test_cuda_torch_compile_pool_step():
    """The same on CUDA tensors through inductor (an engine's compiled decode and mixed steps), bf16."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(19)
    cu, q, k, v, g, pool = packed_batch(rng, [1, 1, 70, 1], 4, 128, 128, 10, False)
    c = lambda x: torch.from_numpy(x).cuda()  # noqa: E731
    args = tuple(c(x).to(torch.bfloat16) for x in (q, k, v)) + (c(g),)
    rest = (c(cu), c(np.array([4, -1, 0, 9])), c(np.array([True, True, False, True])))
    step, compiled, graphs = _compiled_pool_step(torch, "inductor", {})
    pe, pc = c(pool), c(pool)
    with torch.no_grad():
        oe, _ = step(*args, pe, *rest)
        oc, _ = compiled(*args, pc, *rest)
    torch.cuda.synchronize()
    assert any("sgla.pool_fwd" in s for s in graphs), graphs
    assert torch.equal(oc, oe)
    assert torch.equal(pc, pe)
