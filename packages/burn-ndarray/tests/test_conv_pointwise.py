"""1x1 convs without padding: `_conv._pointwise` (one matmul on the strided input planes, the
small-input path, e.g. squeeze-excitation convs on 1x1 inputs) and the native task path's
copy-free GEMM on the input planes (`plain` in `_native/conv.c`), against float64 references;
stride 2, odd sizes, batch > 1, 1x1 spatial inputs, bias or none; native bits equal for 1, 2
and 4 threads."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _conv, _native
from burn_tensor.ops import ConvOptions

RNG = np.random.default_rng(5)
CASES = [  # x shape, c_out, stride
    ((1, 440, 1, 1), 110, (1, 1)),  # squeeze-excitation: 1x1 on a 1x1 input
    ((3, 7, 9, 11), 5, (2, 2)),  # stride 2, odd sizes, batch 3
    ((2, 4, 8, 5), 6, (1, 3)),  # mixed strides
    ((4, 16, 12, 12), 9, (1, 1)),
]


def ref(x, w, bias, stride):
    xs = x.astype(np.float64)[:, :, :: stride[0], :: stride[1]]
    out = np.einsum("nchw,oc->nohw", xs, w[:, :, 0, 0].astype(np.float64))
    return out if bias is None else out + bias.astype(np.float64).reshape(1, -1, 1, 1)


def inputs(case, dtype):
    xs, co, s = case
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, (co, xs[1], 1, 1)).astype(dtype)
    return x, w, RNG.uniform(-1, 1, co).astype(dtype), s


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_numpy_pointwise_against_float64(case, dtype, monkeypatch):
    def no_columns(*args):
        raise AssertionError("a 1x1 conv without padding built im2col columns")

    monkeypatch.setattr(_conv, "Columns", no_columns)  # the path is one matmul, no buffers
    x, w, bias, s = inputs(case, dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for b in (bias, None):
        got = _conv.conv2d(x, w, b, s, (0, 0), (1, 1), 1)
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_allclose(got, ref(x, w, b, s), rtol=tol, atol=tol * x.shape[1])
    # a smaller wanted output (the transposed-conv gradient's out_hw) keeps the first windows
    got = _conv.conv2d(x, w, bias, s, (0, 0), (1, 1), 1, out_hw=(1, 1))
    np.testing.assert_allclose(got, ref(x, w, bias, s)[:, :, :1, :1], rtol=tol, atol=tol * 16)


@pytest.mark.skipif(_native.lib() is None, reason="no native kernels (no compiler)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_native_plain_1x1_against_float64_and_threads(dtype):
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    x, w, bias, s = inputs(((3, 24, 40, 37), 20, (1, 1)), dtype)
    opt = ConvOptions(s, (0, 0), (1, 1), 1)
    outs = [NdArray(num_threads=t, parallel_min=1, **kw).conv2d(x, w, bias, opt) for t in (1, 2, 4)]
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(outs[0], ref(x, w, bias, s), rtol=tol, atol=tol * 24)
    for other in outs[1:]:
        np.testing.assert_array_equal(outs[0], other)


@pytest.mark.skipif(_native.lib() is None, reason="no native kernels (no compiler)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_small_pointwise_goes_straight_to_its_gemm(dtype, monkeypatch):
    """A small plain 1x1 conv (below the native size) on the native backend is one GEMM on the
    planes: not through the numpy conv entry (`_conv.conv2d`: options, geometry, classes per
    call, ~11 us for a squeeze-excitation conv's ~1 us of work); batch 1 and 3, 1x1 and 3x5
    planes, a transposed (non-contiguous) input, bias or none, equal filters kept equal."""

    def not_here(*args, **kwargs):
        raise AssertionError("a small plain 1x1 conv went through _conv.conv2d")

    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    b = NdArray(num_threads=1, **kw)
    monkeypatch.setattr(_conv, "conv2d", not_here)
    opt = ConvOptions((1, 1), (0, 0), (1, 1), 1)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for xs in ((1, 40, 1, 1), (3, 6, 3, 5), (1, 6, 5, 3)):
        x, w, bias, _ = inputs((xs, 7, (1, 1)), dtype)
        if xs[2] == 5:
            x = x.transpose(0, 1, 3, 2)  # [1, 6, 3, 5], not contiguous
        for bb in (bias, None):
            got = b.conv2d(x, w, bb, opt)
            assert got.dtype == dtype and got.shape == (xs[0], 7, *x.shape[2:])
            np.testing.assert_allclose(got, ref(x, w, bb, (1, 1)), rtol=tol, atol=tol * 40)
    w[3] = w[1]
    got = b.conv2d(x, w, None, opt)
    np.testing.assert_array_equal(got[:, 3], got[:, 1])
