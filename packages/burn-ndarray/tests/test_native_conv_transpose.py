"""conv_transpose2d on the native col2im kernel (`_native_conv_transpose`) against a float64
scatter reference: kernel = stride (U-Net upsampling), overlapping windows, padding, output
padding, dilation, batch > 1, bias or none, float32/float64; bits equal for 1, 2, 4 threads;
shapes it leaves to the numpy path."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_conv, _native_conv_grad
from burn_tensor.ops import ConvTransposeOptions

pytestmark = pytest.mark.skipif(
    _native.lib() is None or not _native_conv._Gemm.ready(_native.lib()),
    reason="no native kernels or no cblas GEMM",
)
RNG = np.random.default_rng(3)
CASES = [  # x shape, c_out, kernel, stride, padding, padding_out, dilation
    ((1, 8, 16, 16), 4, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1)),  # U-Net upsampling
    ((2, 5, 7, 9), 3, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1)),  # overlaps, output padding
    ((3, 4, 6, 5), 6, (3, 2), (1, 2), (2, 0), (0, 1), (2, 1)),  # dilation, mixed strides
    ((1, 3, 5, 5), 2, (4, 4), (3, 3), (1, 1), (2, 2), (1, 1)),
]


def ref(x, w, bias, s, p, po, d):
    n, _, h, wd = x.shape
    co, kh, kw = w.shape[1:]
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + po[0] + 1
    ow = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + po[1] + 1
    canvas = np.zeros((n, co, max((h - 1) * s[0] + d[0] * (kh - 1) + 1, p[0] + oh),
                       max((wd - 1) * s[1] + d[1] * (kw - 1) + 1, p[1] + ow)))  # fmt: skip
    for i in range(kh):
        for j in range(kw):
            wij = w[:, :, i, j].astype(np.float64)
            part = np.einsum("nchw,co->nohw", x.astype(np.float64), wij)
            canvas[:, :, i * d[0] : i * d[0] + (h - 1) * s[0] + 1 : s[0],
                   j * d[1] : j * d[1] + (wd - 1) * s[1] + 1 : s[1]] += part  # fmt: skip
    out = canvas[:, :, p[0] : p[0] + oh, p[1] : p[1] + ow]
    return out if bias is None else out + bias.astype(np.float64).reshape(1, -1, 1, 1)


def run(case, dtype, threads, with_bias=True):
    xs, co, k, s, p, po, d = case
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, (xs[1], co, *k)).astype(dtype)
    bias = RNG.uniform(-1, 1, co).astype(dtype) if with_bias else None
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    b = NdArray(num_threads=threads, parallel_min=1, **kw)
    return b.conv_transpose2d(x, w, bias, ConvTransposeOptions(s, p, po, d, 1)), (x, w, bias)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_float64(case, dtype, monkeypatch):
    ran = []
    real = _native_conv_grad._x_grad
    monkeypatch.setattr(_native_conv_grad, "_x_grad", lambda *a: ran.append(1) or real(*a))
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for with_bias in (True, False):
        got, (x, w, bias) = run(case, dtype, 2, with_bias)
        want = ref(x, w, bias, *case[3:])
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * x.shape[1])
    assert len(ran) == 2  # the native path ran


def test_bitwise_identical_for_1_2_4_threads():
    for case in CASES[:3]:
        outs = []
        for t in (1, 2, 4):
            global RNG
            RNG = np.random.default_rng(9)  # the same inputs for every thread count
            outs.append(run(case, np.float32, t)[0])
        for other in outs[1:]:
            np.testing.assert_array_equal(outs[0], other)


def test_output_padding_past_the_conv_geometry_keeps_the_numpy_path():
    # padding_out 2 >= stride 1 (allowed by dilation 3): not the input gradient of a conv
    case = ((1, 2, 5, 5), 3, (3, 3), (1, 1), (0, 0), (2, 2), (3, 3))
    got, (x, w, bias) = run(case, np.float64, 2)
    np.testing.assert_allclose(got, ref(x, w, bias, *case[3:]), rtol=1e-13, atol=1e-13)
