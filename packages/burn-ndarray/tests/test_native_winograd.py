"""The native Winograd F(2x2, 3x3) conv2d (`_native_winograd`, `_native/winograd.c`) against
float64 references: odd output sizes (tiles overhanging the edge), paddings 0-2, batch 1 and
many, blocks of tiles over partial tile rows, bias or none, float32/float64; bitwise-identical
results for 1, 2 and 4 threads; the filter transform and its per-weight cache."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_conv, _native_winograd
from burn_tensor.ops import ConvOptions

pytestmark = pytest.mark.skipif(
    _native.lib() is None or not _native_conv._Gemm.ready(_native.lib()),
    reason="no native kernels or no cblas GEMM",
)
RNG = np.random.default_rng(11)

CASES = [  # x shape, c_out, padding
    ((1, 16, 14, 14), 16, (1, 1)),  # the smallest taken shape, one block
    ((3, 17, 17, 15), 19, (1, 1)),  # odd output sizes, batch 3
    ((2, 40, 33, 29), 24, (0, 2)),  # asymmetric padding, several blocks over partial rows
    ((1, 64, 20, 18), 32, (2, 0)),
    ((1, 24, 16, 40), 16, (1, 1)),  # wide: tile rows longer than one block
]
TOL = {np.float32: 2e-6, np.float64: 1e-14}


def ref_conv(x, w, bias, padding):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    out = np.einsum("ncyxij,ocij->noyx", win, w.astype(np.float64))
    return out if bias is None else out + bias.astype(np.float64).reshape(1, -1, 1, 1)


def backend(dtype, threads):
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    return NdArray(num_threads=threads, parallel_min=1, **kw)


def inputs(case, dtype):
    xs, co, p = case
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, (co, xs[1], 3, 3)).astype(dtype)
    bias = RNG.uniform(-1, 1, co).astype(dtype)
    return x, w, bias, ConvOptions((1, 1), p, (1, 1), 1)


def taken(case) -> bool:
    xs, co, p = case
    hw = (xs[2] + 2 * p[0] - 2, xs[3] + 2 * p[1] - 2)
    return _native_winograd.suits(xs, (co, xs[1], 3, 3), (1, 1), p, (1, 1), hw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_against_float64(case, dtype):
    assert taken(case)
    x, w, bias, opt = inputs(case, dtype)
    b = backend(dtype, 2)
    k = w[0].size
    for bb in (bias, None):
        got = b.conv2d(x, w, bb, opt)
        want = ref_conv(x, w, bb, opt.padding)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype] * k)
    assert id(w) in _native_winograd._Transforms.cache  # the Winograd path ran


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_bitwise_identical_for_1_2_4_threads(dtype):
    for case in CASES[1:3]:
        x, w, bias, opt = inputs(case, dtype)
        outs = [backend(dtype, t).conv2d(x, w, bias, opt) for t in (1, 2, 4)]
        for other in outs[1:]:
            np.testing.assert_array_equal(outs[0], other)


def test_filter_transform_against_float64():
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    for dtype, tol in ((np.float32, 1e-6), (np.float64, 1e-15)):
        w = RNG.uniform(-1, 1, (5, 7, 3, 3)).astype(dtype)
        u = _native_winograd.filter_transform(_native.lib(), 2, w)
        want = np.einsum("ai,ocij,bj->aboc", g, w.astype(np.float64), g).reshape(16, 5, 7)
        assert u.dtype == dtype
        np.testing.assert_allclose(u, want, rtol=tol, atol=tol)


def test_transform_cache_follows_the_weight_array():
    """One transform per live weight array; another array (other values) is never served a
    stale one, and an entry goes with its array."""
    x, w, bias, opt = inputs(CASES[1], np.float32)
    b = backend(np.float32, 1)
    first = b.conv2d(x, w, bias, opt)
    u = _native_winograd._Transforms.cache[id(w)][2]
    np.testing.assert_array_equal(b.conv2d(x, w, bias, opt), first)
    assert _native_winograd._Transforms.cache[id(w)][2] is u  # reused, not recomputed
    w2 = w * 2  # other values
    np.testing.assert_allclose(b.conv2d(x, w2, None, opt), (first - bias[:, None, None]) * 2,
                               rtol=1e-5, atol=1e-4)  # fmt: skip
    key = id(w2)
    del w2
    gc.collect()
    assert key not in _native_winograd._Transforms.cache


def test_tile_block_depends_on_shapes_only():
    assert _native_winograd.tile_block(49, 64, 64, 4) == 49  # one task per image
    tb = _native_winograd.tile_block(784, 64, 64, 4)
    assert tb % 8 == 0 and tb >= _native_winograd.MIN_TILES
    assert tb * 16 * 128 * 4 <= _native_winograd.TASK_BYTES + 8 * 16 * 128 * 4
    assert _native_winograd.tile_block(3, 10**6, 10**6, 8) == 3  # never more than the image


def test_shapes_it_leaves_to_the_task_path():
    s1, d1 = (1, 1), (1, 1)
    assert not _native_winograd.suits((1, 64, 7, 7), (64, 64, 3, 3), s1, s1, d1, (7, 7))
    assert not _native_winograd.suits((1, 8, 32, 32), (64, 8, 3, 3), s1, s1, d1, (32, 32))
    assert not _native_winograd.suits((1, 64, 32, 32), (64, 64, 3, 3), (2, 2), s1, d1, (16, 16))
    assert not _native_winograd.suits((1, 64, 32, 32), (64, 64, 3, 3), s1, s1, (2, 2), (30, 30))
    assert not _native_winograd.suits((1, 64, 32, 32), (64, 64, 5, 5), s1, s1, d1, (30, 30))
