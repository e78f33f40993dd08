"""Every own CUDA kernel of burn_cuda, run on the CPU through `Cuda()`'s own ops
(`cpu_backend.py`): the real kernel text, the grid, block and parameter slots the launch code
computes. Sizes span several blocks with a partial last block (and a grid-stride tail where a
kernel caps its grid), so a launch one block short, a swapped stride or a wrong bound fails.
References: numpy float64 (NdArray(float64) for the module ops) or hand-derived values.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda import _bf16, _kernel_source
from burn_ndarray import NdArray
from burn_tensor import Distribution
from burn_tensor.ops import ConvOptions, ConvTransposeOptions, InterpolateOptions
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

REF = NdArray(float_dtype="float64", int_dtype="int64")
#: kernel names launched by this module's tests (the last test checks the full list)
LAUNCHED: set = set()
def _env(**options):
    # one stand-in per test: the op table is installed on the Cuda class, so two may not overlap
    with cuda_on_cpu_backend(FakeCupy(), **options) as (backend, cp):
        yield backend, cp
        LAUNCHED.update(launch.name for launch in cp.launches)


@pytest.fixture
def env():
    yield from _env()


@pytest.fixture
def env64():
    yield from _env(float_dtype="float64", int_dtype="int64")


def _rand(shape, seed, dtype=np.float32, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def _close(got, want, rtol=1e-5, atol=1e-5):
    got = np.asarray(got, np.float64)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _last(cp, name):
    """The last launch of kernel `name` (asserts there was one)."""
    for launch in reversed(cp.launches):
        if launch.name == name:
            return launch
    raise AssertionError(f"{name} was not launched")


# -- creation, bias add, im2col, col2im, bias gradient ------------------------------------------
def test_fill_covers_every_element(env):
    B, cp = env
    for n in (1, 255, 256, 257, 1000):
        out = B.float_full((n,), 2.5, B.device(), B.float_dtype)
        assert np.array_equal(np.asarray(out), np.full(n, 2.5, np.float32)), n
    assert _last(cp, "fill")[2] == (4,)  # 1000 elements -> 4 blocks of 256


CONV = [
    # (x shape, w shape, stride, padding, dilation)
    ((2, 3, 9, 11), (4, 3, 3, 3), (2, 1), (1, 2), (1, 2)),
    ((1, 2, 17, 13), (3, 2, 2, 4), (1, 3), (0, 1), (2, 1)),
]


@pytest.mark.parametrize("case", CONV, ids=["strided", "dilated"])
def test_conv2d_im2col_and_bias(env, case, monkeypatch):
    # the im2col path (wide convs take it); these few-channel shapes would take burn_gpu's
    # direct kernels (test_conv_direct_cpu.py) without BURN_GPU_CONV_DIRECT=0
    monkeypatch.setenv("BURN_GPU_CONV_DIRECT", "0")
    B, cp = env
    xs, ws, stride, pad, dil = case
    x, w, b = _rand(xs, 1), _rand(ws, 2), _rand(ws[:1], 3)
    opts = ConvOptions(stride, pad, dil, 1)
    got = B.conv2d(asfake(x), asfake(w), asfake(b), opts)
    want = REF.conv2d(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), opts)
    _close(got, want)
    assert _last(cp, "im2col") and _last(cp, "bias_add")


def test_conv_transpose2d_col2im(env):
    B, cp = env
    x, w, b = _rand((2, 3, 7, 6), 4), _rand((3, 4, 3, 2), 5), _rand((4,), 6)
    opts = ConvTransposeOptions((2, 3), (1, 0), (1, 2), (1, 2), 1)
    got = B.conv_transpose2d(asfake(x), asfake(w), asfake(b), opts)
    want = REF.conv_transpose2d(*(a.astype(np.float64) for a in (x, w, b)), opts)
    _close(got, want)
    assert _last(cp, "col2im")[2][0] > 1  # several blocks


def test_conv2d_bias_backward_grid_stride(env):
    B, cp = env
    g = _rand((3, 5, 14, 15), 7)  # 630 values per channel: more than the 512-thread block
    got = B.conv2d_bias_backward(None, None, np.zeros(5, np.float32), asfake(g))
    _close(got, g.astype(np.float64).sum(axis=(0, 2, 3)), rtol=1e-6)
    assert _last(cp, "sum_keep_mid")[2:4] == ((5,), (512,))


@pytest.mark.parametrize("dt", ["float32", "bfloat16", "float16"])
def test_conv2d_bias_backward_strided_and_half_take_the_kernel(dt):
    """A strided float32 gradient (copied once) and the half types (float64 sums, one rounding;
    bfloat16 without the float32 detour's conversion kernels) take `sum_keep_mid`, not cupy's
    multi-axis sum (30-70 us of host time per call)."""
    np_dt = {"bfloat16": ml_dtypes.bfloat16}.get(dt, dt)
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dt) as (B, cp):
        g = _rand((3, 5, 14, 15), 11).astype(np_dt)
        gd = asfake(g)
        if dt == "float32":
            gd = asfake(np.ascontiguousarray(np.swapaxes(g, 2, 3))).swapaxes(2, 3)
            assert not gd.flags.c_contiguous
        start = len(cp.launches)
        got = B.conv2d_bias_backward(None, None, asfake(np.zeros(5, np_dt)), gd)
        assert np.asarray(got).dtype == np.dtype(np_dt)
        ran = [launch.name for launch in cp.launches[start:]]
        assert ran == ["sum_keep_mid"] or (dt == "float32" and ran[-1] == "sum_keep_mid"), ran
        want = g.astype(np.float64).sum(axis=(0, 2, 3))
        np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32).astype(np_dt))
        assert _last(cp, "sum_keep_mid")[2:4] == ((5,), (512,))
        empty = B.conv2d_bias_backward(None, None, asfake(np.zeros(5, np_dt)), asfake(g[:0]))
        np.testing.assert_array_equal(np.asarray(empty, np.float64), np.zeros(5))


# -- pools -------------------------------------------------------------------------------------
def test_max_pool2d_and_backward(env):
    B, cp = env
    x = _rand((2, 3, 13, 12), 8)
    x[0, 0, 1, 1] = np.nan
    args = ((3, 2), (2, 1), (1, 1), (1, 2))
    out, idx = B.max_pool2d_with_indices(asfake(x), *args)
    want, widx = REF.max_pool2d_with_indices(x.astype(np.float64), *args)
    np.testing.assert_array_equal(np.asarray(out, np.float64), want)
    np.testing.assert_array_equal(np.asarray(idx), widx)
    g = _rand(want.shape, 9)
    got = B.max_pool2d_with_indices_backward(asfake(x), *args, asfake(g), idx)
    ref = REF.max_pool2d_with_indices_backward(x, *args, g.astype(np.float64), widx)
    _close(got, ref)


@pytest.mark.parametrize("cip", [True, False])
def test_avg_pool2d_and_backward(env, cip):
    B, _ = env
    x = _rand((2, 3, 11, 14), 10)
    args = ((3, 4), (2, 3), (1, 2))
    got = B.avg_pool2d(asfake(x), *args, cip)
    want = REF.avg_pool2d(x.astype(np.float64), *args, cip)
    _close(got, want)
    g = _rand(want.shape, 11)
    _close(
        B.avg_pool2d_backward(asfake(x), asfake(g), *args, cip),
        REF.avg_pool2d_backward(x.astype(np.float64), g.astype(np.float64), *args, cip),
    )


def test_adaptive_avg_pool2d_and_backward(env):
    B, _ = env
    x = _rand((2, 5, 13, 11), 12)
    got = B.adaptive_avg_pool2d(asfake(x), (5, 4))
    want = REF.adaptive_avg_pool2d(x.astype(np.float64), (5, 4))
    _close(got, want)
    g = _rand(want.shape, 13)
    _close(
        B.adaptive_avg_pool2d_backward(asfake(x), asfake(g)),
        REF.adaptive_avg_pool2d_backward(x.astype(np.float64), g.astype(np.float64)),
    )


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_forward_and_backward(env, mode):
    """burn_gpu's `GpuModuleOps` leaves interpolation to Cuda's own (burn_tensor's matrices):
    forward and backward against NdArray float64."""
    B, _ = env
    opts = InterpolateOptions(mode)
    x = _rand((2, 3, 9, 7), 15)
    want = REF.interpolate(x.astype(np.float64), (23, 17), opts)
    _close(B.interpolate(asfake(x), (23, 17), opts), want)
    g = _rand(want.shape, 16)
    _close(
        B.interpolate_backward(asfake(x), asfake(g), (23, 17), opts),
        REF.interpolate_backward(x.astype(np.float64), g.astype(np.float64), (23, 17), opts),
    )


# -- indexing, scans ---------------------------------------------------------------------------
def test_gather_and_scatter_on_strided_operands(env):
    B, cp = env
    rng = np.random.default_rng(14)
    x = asfake(_rand((7, 5, 13), 15)).transpose(2, 0, 1)  # strided [13, 7, 5]
    idx = asfake(rng.integers(0, 7, size=(13, 9, 5)).astype(np.int32))
    got = B.float_gather(1, x, idx)
    want = np.take_along_axis(np.asarray(x, np.float64), np.asarray(idx, np.int64), 1)
    _close(got, want)
    vals = asfake(_rand((9, 5, 13), 16)).transpose(2, 0, 1)  # strided values too
    got = B.float_scatter(1, x, idx, vals)
    ref = np.asarray(x, np.float64).copy()
    np.add.at(ref, (np.arange(13)[:, None, None], np.asarray(idx), np.arange(5)), np.asarray(vals))
    _close(got, ref)
    assert _last(cp, "gather")[2] == (3,) and _last(cp, "scatter_add")[2] == (3,)
    # select: the gather kernel over a 1-D index seen along every other dim; a negative index
    # counts from the end (as NdArray), one outside the dim reads 0
    sel = asfake(np.array([6, -1, 0, 9], np.int64))
    got = np.asarray(B.float_select(x, 1, sel), np.float64)
    xs = np.asarray(x, np.float64)
    _close(got[:, :3], xs[:, [6, 6, 0]])
    assert not got[:, 3].any()


def test_index_kernels_past_their_rank(env):
    """Rank 8 (> burn_gpu.RANK): the operands are made contiguous and merge down."""
    B, cp = env
    rng = np.random.default_rng(31)
    shape = (2, 3, 2, 2, 3, 2, 2, 3)
    x = _rand(shape, 32)
    xv = asfake(x).transpose(7, 6, 5, 4, 3, 2, 1, 0)  # strided: no two dims merge
    xs = x.transpose(7, 6, 5, 4, 3, 2, 1, 0).astype(np.float64)
    shape = xs.shape
    idx = rng.integers(0, shape[4], shape).astype(np.int64)
    _close(B.float_gather(4, xv, asfake(idx)), np.take_along_axis(xs, idx, 4))
    v = _rand(shape, 33)
    ref = xs.copy()
    pos = list(np.indices(shape, sparse=True))
    pos[4] = idx
    np.add.at(ref, tuple(pos), v)
    _close(B.float_scatter(4, xv, asfake(idx), asfake(v)), ref)


def test_select_assign_index_add(env):
    B, cp = env
    x = _rand((300, 3), 17)
    idx = asfake(np.array([5, 299, 5, 0], np.int32))
    v = _rand((4, 3), 18)
    got = B.float_select_assign(asfake(x), 0, idx, asfake(v))
    ref = x.astype(np.float64).copy()
    np.add.at(ref, np.array([5, 299, 5, 0]), v)
    _close(got, ref)
    assert _last(cp, "segment_add")


def test_select_assign_sums_in_index_order_bitwise(env):
    """The float sums run in index order (numpy's add.at in float32, bit for bit), whatever
    the threads' timing: an embedding gradient with many repeats (the atomic form differed
    between runs); along a middle dim, negative and outside indices (skipped), int32 index."""
    B, cp = env
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 7, 5)).astype(np.float32)
    idx = np.array([3, -1, 3, 0, 9, 3, 6, -8, 3, 0], np.int32)  # 9, -8: outside 7
    v = rng.standard_normal((2, 10, 5)).astype(np.float32)
    got = B.float_select_assign(asfake(x), 1, asfake(idx), asfake(v))
    assert _last(cp, "segment_add")
    ref = x.copy()
    keep = (idx >= -7) & (idx < 7)
    for j in np.flatnonzero(keep):  # sequential float32 adds in index order
        ref[:, idx[j] % 7, :] += v[:, j, :]
    np.testing.assert_array_equal(np.asarray(got), ref)
    assert not np.shares_memory(np.asarray(got), x)
    emb = rng.standard_normal((4, 3)).astype(np.float32)
    tokens = rng.integers(0, 4, 64).astype(np.int32)
    g = rng.standard_normal((64, 3)).astype(np.float32)
    want = emb.copy()
    np.add.at(want, tokens, g)
    got = B.float_select_assign(asfake(emb), 0, asfake(tokens), asfake(g))
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumulative_extremes(env, op):
    B, _ = env
    x = _rand((6, 300), 19)
    x[2, 7] = np.nan
    got = getattr(B, f"float_{op}")(asfake(x), 0)
    acc = np.maximum if op == "cummax" else np.minimum
    want = acc.accumulate(x.astype(np.float64), axis=0)
    np.testing.assert_array_equal(np.asarray(got, np.float64), want)


# -- random ------------------------------------------------------------------------------------
def _philox(n: int, key: int, call: int) -> np.ndarray:
    """Philox4x32-10 words (w0, w1) of elements 0..n-1, counter (i, call_lo, call_hi, 0): the
    semantics of burn_gpu's kernel (the same as OpenCl's), in numpy."""
    m = np.uint64(0xFFFFFFFF)
    c0 = np.arange(n, dtype=np.uint64)
    c1 = np.full(n, call & 0xFFFFFFFF, np.uint64)
    c2 = np.full(n, call >> 32, np.uint64)
    c3 = np.zeros(n, np.uint64)
    k0, k1 = np.uint64(key & 0xFFFFFFFF), np.uint64(key >> 32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return np.stack([c0, c1], 1).astype(np.uint32)


def test_philox_uniform_and_bernoulli_are_burn_gpus_semantics(env):
    """The shared `random` kernel through the CUDA launcher: a default draw is 24 bits of word 0
    scaled exactly, a bernoulli mask is `u < p` of the next call's words."""
    B, cp = env
    dev = B.device()
    B.seed(1234, dev)
    got = B.float_random((35, 20), Distribution.default(), dev, B.float_dtype)
    want = (_philox(700, 1234, 0)[:, 0] >> 8).astype(np.float64) * 2.0**-24
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), want.astype(np.float32))
    mask = B.float_random((35, 20), Distribution.bernoulli(0.3), dev, B.float_dtype)
    u = (_philox(700, 1234, 1)[:, 0] >> 8).astype(np.float64) * 2.0**-24
    np.testing.assert_array_equal(np.asarray(mask).reshape(-1), (u < 0.3).astype(np.float32))


# -- softmax -----------------------------------------------------------------------------------
def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.mark.parametrize("shape,dim", [((5, 700), 1), ((3, 5, 100), 1), ((2, 40), 1)])
def test_softmax_family(env, shape, dim):
    B, cp = env
    x = _rand(shape, 20, low=-4, high=4)
    x64 = x.astype(np.float64)
    s = _softmax(x64, dim)
    _close(B.softmax(asfake(x), dim), s)
    _close(B.log_softmax(asfake(x), dim), np.log(s))
    g = _rand(shape, 21)
    _close(
        B.softmax_backward(asfake(s.astype(np.float32)), asfake(g), dim),
        s * (g - (g * s).sum(dim, keepdims=True)),
    )
    _close(
        B.log_softmax_backward(asfake(np.log(s).astype(np.float32)), asfake(g), dim),
        g - s * g.sum(dim, keepdims=True),
    )


# -- bfloat16 ----------------------------------------------------------------------------------
def test_bf16_round_trip_kernels(env):
    _, cp = env
    x = _rand(700, 22, low=-100, high=100)
    x[:4] = [np.nan, np.inf, -0.0, 3.3895314e38]
    bits = _bf16.to_bf16(asfake(x))
    want = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(bits).view(np.uint16)[4:], want.view(np.uint16)[4:])
    assert np.isnan(np.asarray(bits, np.float32)[0])
    back = _bf16.to_f32(bits)
    np.testing.assert_array_equal(np.asarray(back)[1:], want.astype(np.float32)[1:])


# -- optimizer ---------------------------------------------------------------------------------
def _adam(p, g, m1, m2, lr, b1, b2, eps, t):
    m1 = b1 * m1 + (1 - b1) * g
    m2 = b2 * m2 + (1 - b2) * g * g
    bc2 = np.sqrt(1 - b2**t)
    return p - (m1 * (bc2 / (1 - b1**t)) / (np.sqrt(m2) + eps * bc2)) * lr, m1, m2


def test_adam_one_tensor_grid_stride_tail(env):
    B, cp = env
    n = 4096 * 256 + 300  # the grid is capped at 4096 blocks: the loop covers the rest
    p, g, m1 = _rand(n, 23), _rand(n, 24), _rand(n, 25)
    m2 = _rand(n, 26, low=0.0, high=1.0)
    hp = (1e-2, 0.9, 0.999, 1e-8, 3)
    got = B.float_adam_update(asfake(p), asfake(g), asfake(m1), asfake(m2), *hp)
    want = _adam(*(a.astype(np.float64) for a in (p, g, m1, m2)), *hp)
    for a, w in zip(got, want):
        _close(a, w, rtol=1e-4, atol=1e-6)
    assert _last(cp, "adam_update")[2] == (4096,)


def test_adam_strided_and_float16_take_the_same_kernel(env):
    """Strided operands are copied contiguous and float16 runs in float32 around burn_gpu's
    kernel (the ElementwiseKernel copy of the update is gone)."""
    B, cp = env
    p, g, m1 = _rand((40, 30), 50), _rand((40, 30), 51), _rand((40, 30), 52)
    m2 = _rand((40, 30), 53, low=0.0, high=1.0)
    hp = (1e-2, 0.9, 0.999, 1e-8, 2)
    want = _adam(*(a.astype(np.float64).T for a in (p, g, m1, m2)), *hp)
    got = B.float_adam_update(*(asfake(a).T for a in (p, g, m1, m2)), *hp)
    for a, w in zip(got, want):
        _close(a, w, rtol=1e-4, atol=1e-6)
    h = [a.astype(np.float16) for a in (p, g, m1, m2)]
    want = _adam(*(a.astype(np.float64) for a in h), *hp)
    got = B.float_adam_update(*(asfake(a) for a in h), *hp)
    for a, w in zip(got, want):
        assert a.dtype == np.float16
        _close(a, w, rtol=2e-3, atol=2e-3)
    assert _last(cp, "adam_update") is not None


def _adam_many_grids(B, cp, sizes, seed: int) -> list:
    """A first Adam step over float64 parameters of `sizes` through `float_adam_update_many`,
    checked against numpy float64; the grids of its `adam_many` launches."""
    ps = [_rand(s, seed + i, np.float64) for i, s in enumerate(sizes)]
    gs = [_rand(s, seed + 50 + i, np.float64) for i, s in enumerate(sizes)]
    hp = (1e-2, 0.9, 0.999, 1e-8, 1)
    before = len(cp.launches)
    news, m1s, m2s = B.float_adam_update_many(
        [asfake(p) for p in ps], [asfake(g) for g in gs], None, None, *hp
    )
    for p, g, a, b, c in zip(ps, gs, news, m1s, m2s):
        want = _adam(p, g, np.zeros_like(p), np.zeros_like(p), *hp)
        for got, w in zip((a, b, c), want):
            _close(got, w, rtol=1e-12, atol=1e-12)
    return [x[2] for x in cp.launches[before:] if x.name == "adam_many"]


def test_adam_many_tensors(env64):
    B, cp = env64
    sizes = [1, 300, 0, 5, 777] + [3] * 33  # 37 non-empty: two launches of <= 32 rows
    assert _adam_many_grids(B, cp, sizes, 30) == [(4, 32), (1, 5)]


def test_adam_many_caps_the_launch_not_the_work(env64):
    """32 tensors, one long: the grid is capped at MAX_BLOCKS over all rows (not the longest
    tensor's columns in every row), so the long one's blocks loop; every element is updated."""
    from burn_cuda import _optim_many

    B, cp = env64
    cols = _optim_many.MAX_BLOCKS // 32
    sizes = [cols * 256 * 2 + 7] + [5] * 31
    assert _adam_many_grids(B, cp, sizes, 130) == [(cols, 32)]


# -- hot path: several blocks and grid tails ---------------------------------------------------
def test_hot_path_multi_block(env):
    B, cp = env
    x, y = _rand((13, 301), 40), _rand((13, 301), 41)
    _close(B.float_add(asfake(x), asfake(y)), x.astype(np.float64) + y)
    _close(B.float_sub(asfake(x), asfake(y[:1])), x.astype(np.float64) - y[:1])
    _close(B.float_exp(asfake(x)), np.exp(x.astype(np.float64)))
    _close(B.float_mul_scalar(asfake(x), 1.5), x.astype(np.float64) * 1.5)
    _close(B.float_sum_dim(asfake(x), 1), x.astype(np.float64).sum(1, keepdims=True))
    _close(B.float_max_dim(asfake(x), 0), x.astype(np.float64).max(0, keepdims=True))
    _close(B.float_sum(asfake(x)), [x.astype(np.float64).sum()], rtol=1e-6)
    assert _last(cp, "burn_row_sum_float")[2] == (2,)  # 13 rows, 8 per block


def test_hot_path_unaligned_views(env):
    # a contiguous view one element in: not 16-byte aligned, so every thread takes the scalar
    # loop over its 4 elements (the vector load needs alignment)
    B, cp = env
    x, y = _rand(2 * 1024 + 7, 42), _rand(2 * 1024 + 7, 43)
    xs, ys = asfake(x)[1:], asfake(y)[1:]
    assert xs.data.ptr % 16 and xs._c_contiguous
    _close(B.float_add(xs, ys), x[1:].astype(np.float64) + y[1:])
    _close(B.float_exp(xs), np.exp(x[1:].astype(np.float64)))
    assert _last(cp, "burn_exp_float")[2] == (3,)  # 2054 elements, 1024 per block


# -- coverage: every kernel of burn_cuda ran -----------------------------------------------------
#: kernels outside `_kernel_source.SOURCES`, by their launched name (float32 where typed)
OTHER_KERNELS = {
    "bf16_to_f32", "f32_to_bf16", "adam_many",
    "burn_add_float", "burn_sub_bc_float", "burn_exp_float", "burn_mul_scalar_float",
    "burn_row_sum_float", "max_rows", "burn_sum_all_float",
    # burn_gpu's module ops (`GpuModuleOps`, `unfold`, `col2im`), launched by their name
    "avg_pool", "avg_pool_backward", "max_pool", "max_pool_backward", "adaptive_avg",
    "adaptive_avg_backward", "im2col", "col2im", "philox_random",
    "softmax_rows", "softmax_cols", "softmax_bwd_rows", "softmax_bwd_cols",
}  # fmt: skip


@pytest.mark.parametrize("k", [1, 13, 37])
def test_stable_rank_groups_loop_over_the_indices_they_do_not_cover(env, monkeypatch, k):
    """stable_rank's work-groups (8 indices of 32 lanes each) loop when fewer groups than
    k / 8 are launched; counts for k not a multiple of 8 or of 32 lanes: the same order as
    numpy's stable argsort."""
    from burn_cuda import _ops_tensor

    B, cp = env
    rng = np.random.default_rng(k)
    tokens = rng.integers(-5, 5, k).astype(np.int64)  # many repeats
    emb = rng.standard_normal((5, 3)).astype(np.float32)
    g = rng.standard_normal((k, 3)).astype(np.float32)
    monkeypatch.setattr(_ops_tensor, "rank_groups", lambda n: 2)  # 16 indices per sweep
    got = B.float_select_assign(asfake(emb), 0, asfake(tokens), asfake(g))
    want = emb.copy()
    for j in np.argsort(tokens % 5, kind="stable"):  # float32 adds in index order
        want[tokens[j] % 5] += g[j]
    np.testing.assert_array_equal(np.asarray(got), want)


def test_every_kernel_ran_on_the_cpu():
    """Runs last in this module: every own kernel was launched by the tests above (run alone,
    with -k, it reports what the selection left out)."""
    # the attention kernels: test_attention_cpu.py and test_attention_mma_cpu.py launch each
    # (and check they did); step capture's resident kernels: test_resident_cpu.py
    # and the capture copies' kernel: test_copies_cpu.py
    skip = set(_kernel_source.SIZED) | set(_kernel_source.RESIDENT) | set(_kernel_source.COPIES)
    want = (set(_kernel_source.SOURCES) - skip) | OTHER_KERNELS
    missing = sorted(want - LAUNCHED)
    assert not missing, f"kernels no CPU test launched: {missing}"


@pytest.mark.parametrize("launcher", ["driver", "raw"])
def test_int_random_takes_its_bounds_as_doubles(launcher):
    """burn_gpu's `draw` hands int bounds as (int, "float64") pairs: the driver launcher must
    store them as doubles (an int in the slot read as a double made `b - a` 0: SIGFPE)."""
    with cuda_on_cpu_backend(FakeCupy(driver=launcher == "driver")) as (B, _):
        r = np.asarray(B.int_random((2000,), Distribution.uniform(-3, 7), None, B.int_dtype))
        assert r.dtype == np.int32 and r.min() == -3 and r.max() == 6
        assert len(np.unique(r)) == 10


def test_burn_gpu_ops_through_cupys_rawkernel_call():
    """burn_gpu's ops written once (`CudaRuntime.call`) where the driver launcher is missing:
    cupy's RawKernel call packs each scalar by its numpy type, so an `int` geometry argument
    or a `float` bound passed as the wrong width shifts every later parameter. Pools (int32
    geometry), gather (int64), random (uint32 words, float bounds), softmax (mixed)."""
    with cuda_on_cpu_backend(FakeCupy(driver=False)) as (B, cp):
        x = _rand((2, 3, 9, 8), 21)
        got, idx = B.max_pool2d_with_indices(asfake(x), (3, 2), (2, 2), (1, 0), (1, 1))
        want, want_idx = REF.max_pool2d_with_indices(
            x.astype(np.float64), (3, 2), (2, 2), (1, 0), (1, 1)
        )
        _close(got, want)
        np.testing.assert_array_equal(np.asarray(idx), np.asarray(want_idx))
        i = np.random.default_rng(22).integers(0, 9, size=(2, 3, 4, 8)).astype(np.int32)
        _close(B.float_gather(2, asfake(x), asfake(i)), np.take_along_axis(x, i, 2))
        dist = Distribution.uniform(-3.0, 5.0)
        r = np.asarray(B.float_random((4096,), dist, None, B.float_dtype))
        assert r.min() >= -3.0 and r.max() < 5.0 and abs(r.mean() - 1.0) < 0.15
        s = _softmax(x.astype(np.float64), 3)
        _close(B.softmax(asfake(x), 3), s)
        assert {"max_pool", "gather", "philox_random", "softmax_rows"} <= {
            launch.name for launch in cp.launches
        }
        assert not hasattr(cp.cuda, "driver") or not hasattr(cp.cuda.driver, "launchKernel")


def test_conv2d_bias_backward_long_batch_takes_rows_then_columns(env):
    """Few channels over a long batch (>= 2^17 values per channel): a row reduction per
    (image, channel), then the column kernels over the batch, instead of `sum_keep_mid`'s one
    block per channel (84 us per call at the guide's batch 1024 on the H200)."""
    B, cp = env
    g = _rand((200, 2, 26, 26), 5)  # 135,200 values per channel
    start = len(cp.launches)
    got = B.conv2d_bias_backward(None, None, np.zeros(2, np.float32), asfake(g))
    ran = [launch.name for launch in cp.launches[start:]]
    assert "sum_keep_mid" not in ran and any("cols" in name for name in ran), ran
    _close(got, g.astype(np.float64).sum(axis=(0, 2, 3)), rtol=1e-5)


def test_select_assign_ranks_its_indices_without_a_sort_library(env, monkeypatch):
    """Up to RANK_SORT_MAX indices the order comes from burn_gpu's stable_rank kernel (no thrust
    sort, which a CUDA graph capture refuses): the same order, so the same bits, as the sort."""
    from burn_cuda import _ops_tensor

    B, cp = env
    rng = np.random.default_rng(8)
    emb = rng.standard_normal((9, 4)).astype(np.float32)
    tokens = rng.integers(-9, 9, 200).astype(np.int64)  # repeats and negatives
    g = rng.standard_normal((200, 4)).astype(np.float32)
    cp.launches.clear()
    ranked = B.float_select_assign(asfake(emb), 0, asfake(tokens), asfake(g))
    assert _last(cp, "stable_rank") and _last(cp, "segment_add")
    monkeypatch.setattr(_ops_tensor, "RANK_SORT_MAX", 0)  # the sort library's order instead
    sorted_ = B.float_select_assign(asfake(emb), 0, asfake(tokens), asfake(g))
    np.testing.assert_array_equal(np.asarray(ranked), np.asarray(sorted_))
    want = emb.copy()
    for j, t in enumerate(tokens):  # sequential float32 adds in index order
        want[t % 9] += g[j]
    np.testing.assert_array_equal(np.asarray(ranked), want)

