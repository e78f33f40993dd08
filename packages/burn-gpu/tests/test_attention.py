"""The flash-attention template (`burn_gpu.attention_program`) run on PoCL in the OpenCL dialect
against numpy float64: forward output and log-sum-exp, and the backward's dQ, dK, dV (the
joint key-side kernel and the split dK / dV pair, which must agree bit for bit), for
sequences that are not a multiple of the tiles, causal (seq_q < seq_k too), broadcast Bool
masks with fully masked rows, non-contiguous inputs, head dims 16/64/128 and a value dim that
differs from the head dim."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from burn_gpu import (
    ATTENTION_ROWS,
    attention_backward_kernels,
    attention_drop_args,
    attention_forward_kernel,
    attention_groups,
    attention_kernels,
    attention_program,
    attention_scale2,
)


def reference(q, k, v, mask, causal, scale, g, z=None):
    """(out, lse, dq, dk, dv) in float64; masked = left out, fully masked rows give 0; `z` the
    dropout's keep / (1 - p) on the weights (None: no dropout)."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[2], s.shape[3]
    hidden = np.zeros(s.shape, bool)
    if mask is not None:
        hidden |= np.broadcast_to(mask, s.shape)
    if causal:
        hidden |= np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq)
    s = np.where(hidden, -np.inf, s)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(s - top)
    tot = e.sum(-1, keepdims=True)
    p = e / np.where(tot > 0, tot, 1.0)
    lse = np.where(tot[..., 0] > 0, np.log(np.where(tot > 0, tot, 1.0))[..., 0] + top[..., 0], -np.inf)
    z = np.ones(p.shape) if z is None else z
    out = (p * z) @ v
    dv = np.swapaxes(p * z, 2, 3) @ g
    dp = (g @ np.swapaxes(v, 2, 3)) * z
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return out, lse, ds @ k, np.swapaxes(ds, 2, 3) @ q, dv


def _args(a, off=0):
    """(offset, batch, head, row) strides in elements of a [b, h, s, d] view."""
    st = [x // a.itemsize for x in a.strides]
    assert st[3] == 1
    return [np.int64(off), np.int64(st[0]), np.int64(st[1]), np.int64(st[2])]


def _mask_args(mask, shape):
    if mask is None:
        return [np.int64(0)] * 5
    m = np.broadcast_to(mask, shape)
    return [np.int64(0)] + [np.int64(s // m.itemsize) for s in m.strides]


@pytest.fixture(scope="module")
def run(cl_queue):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    mf = cl.mem_flags
    programs = {}

    def buf(a):
        return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))

    def attention(q, k, v, mask, causal, scale, g, dtype="float32", dropout=0.0, words=None):
        """The kernels a backend launches for these dims, over [b, h, s, d] arrays (views
        allowed: strides are passed) -> (out, natural lse, dq, dk, dv). For float32 with dims
        <= 16 every other kernel runs too and must agree: the row forward with the tiled one,
        the row backward (joint and split key side) with the tiled one."""
        b, h, sq, d = q.shape
        sk, dvd = k.shape[2], v.shape[3]
        cross = dtype == "float32" and max(d, dvd) <= 16  # small: each program builds fast
        names = None if cross else attention_kernels(dtype, d, dvd)
        key = (dtype, d, dvd, names)
        if key not in programs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                src = attention_program(dtype, d, dvd, "opencl", names)
                programs[key] = cl.Program(ctx, src).build()
        prg = programs[key]
        A = np.float64 if dtype == "float64" else np.float32

        # each array's whole memory in one buffer, read through the view's own strides
        def base(a):
            root = a if a.base is None else a.base
            assert root.flags.c_contiguous and root.ctypes.data == a.ctypes.data
            return buf(root), a

        def new(shape, dt=q.dtype):
            a = np.empty(shape, dt)
            return a, cl.Buffer(ctx, mf.READ_WRITE, max(a.nbytes, 1))

        def launch(name, args, seq, rows, items):
            kern = cl.Kernel(prg, name)
            kern.set_args(*args)
            cl.enqueue_nd_range_kernel(queue, kern, (attention_groups(b * h, seq, rows) * items,), (items,))

        def read(*pairs):
            for a, bb in pairs:
                cl.enqueue_copy(queue, a, bb)
            queue.finish()

        (qb, qv), (kb, kv), (vb, vv), (gb, gv) = (base(x) for x in (q, k, v, g))
        mb = buf(np.ascontiguousarray(np.zeros(1, np.uint8) if mask is None else mask).astype(np.uint8))
        margs = _mask_args(mask, (b, h, sq, sk))
        head = [np.int32(h), np.int32(sq), np.int32(sk), np.int32(causal), np.int32(mask is not None)]
        s2, R = A(attention_scale2(scale)), ATTENTION_ROWS
        views = [*_args(qv), *_args(kv), *_args(vv)]
        thr, drp = attention_drop_args(dropout)
        sb = buf(np.asarray(words if thr else [0, 0], np.int32))
        drop = [sb, np.uint32(thr), A(drp)]  # every kernel's trailing dropout arguments

        def forward(name, items):
            out, ob = new((b, h, sq, dvd))
            lse, lb = new(b * h * sq, A)
            launch(name, [ob, lb, qb, kb, vb, mb, *head, s2, *views, *margs, *drop], sq, R, items)
            read((out, ob), (lse, lb))
            return out, lse, ob, lb

        name, items = attention_forward_kernel(dtype, d, dvd)
        out, lse, ob, lb = forward(name, items)
        if cross and name != "attn_fwd":  # the row kernel agrees with the tiled one
            out2, lse2, _, _ = forward("attn_fwd", R)
            np.testing.assert_allclose(out2, out, rtol=1e-5, atol=1e-5, err_msg="row vs tiled forward")
            np.testing.assert_allclose(lse2, lse, rtol=1e-5, atol=1e-5, err_msg="row vs tiled lse")
        oargs = [np.int64(0), np.int64(h * sq * dvd), np.int64(sq * dvd), np.int64(dvd)]

        def backward(plan):
            (dq, dqb), (dk, dkb), (dv, dvb) = new((b, h, sq, d)), new((b, h, sk, d)), new((b, h, sk, dvd))
            delta = new(b * h * sq, A)[1]
            common = [lb, *head, s2, A(scale), *views]
            for kname, side, rows, n in plan:
                if side == "q":
                    args = [dqb, delta, qb, kb, vb, ob, gb, lb, mb, *common[1:], *oargs, *_args(gv), *margs, *drop]
                    launch(kname, args, sq, rows, n)
                else:
                    args = [dkb, dvb, qb, kb, vb, gb, lb, delta, mb, *common[1:], *_args(gv), *margs, *drop]
                    launch(kname, args, sk, rows, n)
            read((dq, dqb), (dk, dkb), (dv, dvb))
            return dq, dk, dv

        plan = attention_backward_kernels(dtype, d, dvd)
        grads = backward(plan)
        if cross:
            joint = backward([("attn_bwd_dq", "q", R, R), ("attn_bwd_dkv", "k", R, R)])
            split = backward([("attn_bwd_dq", "q", R, R), ("attn_bwd_dk", "k", R, R), ("attn_bwd_dv", "k", R, R)])
            for x, y in zip(joint, split):  # the same arithmetic in the same order: the same bits
                np.testing.assert_array_equal(x, y)
            for gname, x, y in zip(("dq", "dk", "dv"), joint, grads):
                np.testing.assert_allclose(x, y, rtol=2e-5, atol=2e-5, err_msg=f"row vs {plan[0][0]} {gname}")
        return (out, (lse * math.log(2.0)).reshape(b, h, sq), *grads)

    return attention


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CASES = [
    # (b, h, sq, sk, d, dv, causal, mask shape or None)
    (2, 3, 70, 70, 16, 16, False, None),  # seq not a multiple of ROWS or TILE
    (1, 2, 70, 70, 16, 16, True, None),
    (1, 2, 33, 100, 16, 24, True, None),  # seq_q < seq_k: bottom-right causal, dv != d
    (2, 2, 45, 37, 16, 16, False, (2, 1, 45, 37)),  # broadcast over heads, fully masked rows
    (1, 2, 40, 65, 16, 16, True, (1, 1, 1, 65)),  # key padding mask and causal
    (1, 1, 130, 90, 64, 64, False, None),
    (1, 1, 20, 50, 128, 128, True, (1, 1, 20, 50)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_forward_and_backward_match_float64(run, case):
    b, h, sq, sk, d, dvd, causal, mshape = case
    q, k, v = _rand((b, h, sq, d), 1), _rand((b, h, sk, d), 2), _rand((b, h, sk, dvd), 3)
    g = _rand((b, h, sq, dvd), 4)
    mask = None
    if mshape is not None:
        mask = np.random.default_rng(5).uniform(size=mshape) < 0.3
        mask[..., : min(3, mshape[2]), :] = True  # whole rows left out (when seq_q is there)
    scale = 1.0 / math.sqrt(d)
    got = run(q, k, v, mask, causal, scale, g)
    want = reference(*(x.astype(np.float64) for x in (q, k, v)), mask, causal, scale, g.astype(np.float64))
    for name, a, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=2e-4, atol=2e-4, err_msg=name)
    if mask is not None and mshape[2] > 1:
        assert np.all(got[0][:, :, :3] == 0) and np.all(np.isneginf(got[1][:, :, :3]))


DROP_CASES = [
    # (b, h, sq, sk, d, dv, causal, mask shape or None, dtype, p), on the programs CASES build:
    # float32 at dims <= 16 runs every kernel (row and tiled forward, joint and split key side,
    # tiled backward) and checks they agree; 16/24 the tiled forward and row backward; 64 the
    # tiled kernels; 128 the row kernels with the split key side
    (2, 3, 70, 45, 16, 16, True, (2, 1, 70, 45), "float32", 0.1),
    (1, 2, 33, 100, 16, 24, False, None, "float32", 0.5),
    (1, 2, 70, 70, 64, 64, False, (1, 1, 1, 70), "float32", 0.1),
    (1, 1, 20, 50, 128, 128, True, (1, 1, 20, 50), "float32", 0.5),
]


@pytest.mark.parametrize("case", DROP_CASES, ids=[str(c) for c in DROP_CASES])
def test_dropout_in_every_kernel_matches_float64(run, case):
    # issue 36: the keep mask hashed in the kernels is burn_tensor's numpy one, in the forward
    # (row sum of the undropped weights) and the backward (dV from the dropped weights, dP masked)
    from burn_tensor.ops import attention_keep_mask as keep_mask

    b, h, sq, sk, d, dvd, causal, mshape, dtype, p = case
    q, k, v = _rand((b, h, sq, d), 1), _rand((b, h, sk, d), 2), _rand((b, h, sk, dvd), 3)
    g = _rand((b, h, sq, dvd), 4)
    q, k, v, g = (x.astype(dtype) for x in (q, k, v, g))
    mask = None if mshape is None else np.random.default_rng(5).uniform(size=mshape) < 0.3
    words = np.array([424242, 777])
    scale = 1.0 / math.sqrt(d)
    got = run(q, k, v, mask, causal, scale, g, dtype, p, words)
    z = keep_mask(words, p, b, h, sq, sk) / (1 - p)
    want = reference(*(x.astype(np.float64) for x in (q, k, v)), mask, causal, scale, g.astype(np.float64), z)
    for name, a, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=2e-4, atol=2e-4, err_msg=name)


def test_strided_views_are_read_through_their_strides(run):
    """Q/K/V as [b, s, h, d] buffers viewed as [b, h, s, d] (what a multi-head projection
    hands over): no copy, the strides go to the kernel."""
    b, h, s, d = 2, 3, 50, 16
    raw = [_rand((b, s, h, d), i) for i in range(4)]
    q, k, v, g = (np.swapaxes(a, 1, 2) for a in raw)
    got = run(q, k, v, None, True, 0.3, g)
    want = reference(*(x.astype(np.float64) for x in (q, k, v)), None, True, 0.3, g.astype(np.float64))
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=2e-4, atol=2e-4)


def test_bfloat16_storage_accumulates_in_float32(run):
    ml = pytest.importorskip("ml_dtypes")
    b, h, s, d = 1, 2, 40, 16
    q, k, v, g = (_rand((b, h, s, d), i).astype(ml.bfloat16) for i in range(4))
    got = run(*(x.view(np.uint16) for x in (q, k, v)), None, False, 0.25, g.view(np.uint16), dtype="bfloat16")
    want = reference(*(x.astype(np.float64) for x in (q, k, v)), None, False, 0.25, g.astype(np.float64))
    for name, a, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        a = a.view(ml.bfloat16).astype(np.float64) if a.dtype == np.uint16 else a
        np.testing.assert_allclose(a, w, rtol=2e-2, atol=2e-2, err_msg=name)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="head_dim must be an int in 1..128, got 129"):
        attention_program("float32", 129, 64, "opencl")
    with pytest.raises(ValueError, match="dtype must be one of"):
        attention_program("int32", 64, 64, "cuda")
    with pytest.raises(ValueError, match="dialect"):
        attention_program("float32", 64, 64, "metal")
