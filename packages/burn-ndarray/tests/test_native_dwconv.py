"""Depthwise and grouped conv2d forward on the native kernels (`_native_dwconv`, `_native/dwconv.c`)
against float64 numpy references: channel multipliers, strides, paddings, dilations, odd sizes,
float32/float64, bitwise-identical results for 1, 2 and 4 threads, and that the native path (not
the per-group numpy path) runs."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_dwconv
from burn_tensor.ops import ConvOptions

pytestmark = pytest.mark.skipif(_native.lib() is None, reason="no native kernels (no compiler)")
RNG = np.random.default_rng(11)


def ref_conv(x, w, bias, s, p, d, groups) -> np.ndarray:
    """float64 direct grouped convolution, window by window."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    oh = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    out = np.zeros((n, co, oh, ow))
    cog = co // groups
    for oc in range(co):
        g = oc // cog
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cig : (g + 1) * cig,
                         i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
                         j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]  # fmt: skip
                out[:, oc] += np.einsum("ncyx,c->nyx", win, w[oc, :, i, j])
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out


# (x shape, weight shape, stride, padding, dilation, groups)
CASES = [
    ((2, 8, 13, 11), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), 8),  # mobilenet's 3x3 depthwise
    ((1, 6, 15, 14), (6, 1, 5, 5), (2, 2), (2, 2), (1, 1), 6),  # efficientnet's 5x5 stride 2
    ((2, 4, 9, 10), (12, 1, 3, 2), (1, 2), (0, 1), (2, 1), 4),  # multiplier 3, dilation, odd
    ((1, 3, 4, 4), (3, 1, 5, 5), (1, 1), (3, 3), (1, 1), 3),  # kernel larger than the input
    ((2, 6, 10, 10), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # grouped, 3 channels per group
    ((1, 12, 7, 9), (8, 3, 1, 1), (2, 1), (0, 0), (1, 1), 4),  # grouped 1x1, stride 2
]
TOL = {np.float32: 3e-6, np.float64: 1e-13}


def backend(dtype, threads):
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    return NdArray(num_threads=threads, parallel_min=1, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_matches_float64_reference(case, dtype):
    xs, ws, s, p, d, g = case
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, ws).astype(dtype)
    bias = RNG.uniform(-1, 1, ws[0]).astype(dtype)
    want = ref_conv(x, w, bias, s, p, d, g)
    for threads in (1, 2, 4):
        got = backend(dtype, threads).conv2d(x, w, bias, ConvOptions(s, p, d, g))
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * ws[1] * 25)
        if threads == 1:
            first = got
        np.testing.assert_array_equal(got, first)  # bitwise the same for every thread count
    got = backend(dtype, 2).conv2d(x, w, None, ConvOptions(s, p, d, g))
    np.testing.assert_allclose(got, ref_conv(x, w, None, s, p, d, g), atol=TOL[dtype] * 100)


def test_depthwise_runs_native(monkeypatch):
    """The depthwise shape reaches dwconv.c (the numpy per-group path never runs)."""
    calls = []
    real = _native_dwconv._grouped
    monkeypatch.setattr(
        _native_dwconv, "_grouped", lambda *a: calls.append(1) or real(*a)
    )
    b = backend(np.float32, 2)
    monkeypatch.setattr(type(b), "conv2d", lambda *a: pytest.fail("numpy conv path ran"))
    x = RNG.uniform(-1, 1, (1, 16, 20, 20)).astype(np.float32)
    w = RNG.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32)
    b.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), 16))
    assert calls == [1]


def test_channel_mismatch_is_a_clear_error():
    b = backend(np.float32, 2)
    x = np.zeros((1, 6, 5, 5), np.float32)
    w = np.zeros((6, 1, 3, 3), np.float32)
    with pytest.raises(Exception, match="groups"):
        b.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), 3))
