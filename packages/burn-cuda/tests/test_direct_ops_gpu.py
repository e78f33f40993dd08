"""The direct paths of linear, conv2d's backward passes, column sums and tensor creation
(`_ops_linear.py`, `_ops_module.py`, `_gemm.sum_rows`, `_ops_tensor._creator`) against numpy
float64, on the layouts that pick them and the ones that must fall back to the defaults."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, _gemm
from burn_tensor import DType
from burn_tensor.ops import ConvOptions

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

DTYPES = ["float32", "float64"]


def _tol(dtype, k):
    return 1e-4 * np.sqrt(k) if dtype == "float32" else 1e-11 * np.sqrt(k)


def _backend(dtype):
    return Cuda(float_dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, cols", [(1, 1), (64, 10), (3, 700), (2048, 257), (1 << 16, 8)])
def test_sum_rows_both_paths(dtype, rows, cols):
    """The sum_keep_mid kernel (<= SMALL_SUM elements) and the ones-GEMM (above) both sum columns."""
    import cupy as cp

    a = np.random.default_rng(1).standard_normal((rows, cols)).astype(dtype)
    got = _gemm.sum_rows(cp.asarray(a))
    assert got.shape == (cols,) and got.dtype == np.dtype(dtype)
    want = a.astype(np.float64).sum(axis=0)
    tol = _tol(dtype, rows)
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_and_its_backward_primitives(dtype, lead, bias):
    import cupy as cp

    b = _backend(dtype)
    rng = np.random.default_rng(2)
    d_in, d_out = 7, 4
    x = rng.standard_normal(lead + (d_in,)).astype(dtype)
    w = rng.standard_normal((d_in, d_out)).astype(dtype)
    bb = rng.standard_normal((d_out,)).astype(dtype)
    g = rng.standard_normal(lead + (d_out,)).astype(dtype)
    out = b.linear(cp.asarray(x), cp.asarray(w), cp.asarray(bb) if bias else None)
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    want = x64 @ w64 + (bb.astype(np.float64) if bias else 0.0)
    tol = _tol(dtype, d_in)
    assert out.shape == lead + (d_out,)
    np.testing.assert_allclose(cp.asnumpy(out), want, rtol=tol, atol=tol)
    dx = b.linear_x_backward(cp.asarray(w), cp.asarray(g))
    np.testing.assert_allclose(cp.asnumpy(dx), g64 @ w64.T, rtol=tol, atol=tol)
    dw = b.linear_weight_backward(cp.asarray(x), cp.asarray(g))
    rows = max(1, int(np.prod(lead)))
    want_dw = x64.reshape(rows, d_in).T @ g64.reshape(rows, d_out)
    np.testing.assert_allclose(cp.asnumpy(dw), want_dw, rtol=tol, atol=tol)
    db = b.linear_bias_backward(cp.asarray(g))
    assert db.shape == (d_out,)
    np.testing.assert_allclose(cp.asnumpy(db), g64.reshape(rows, d_out).sum(0), rtol=tol, atol=tol)


def test_linear_reads_a_transposed_input_and_falls_back_for_tf32():
    import cupy as cp

    rng = np.random.default_rng(3)
    xt = rng.standard_normal((6, 9)).astype(np.float32)  # x = xt.T, a transposed view
    w = rng.standard_normal((6, 3)).astype(np.float32)
    bias = rng.standard_normal((3,)).astype(np.float32)
    want = xt.T.astype(np.float64) @ w + bias
    for backend in (Cuda(), Cuda(allow_tf32=True)):
        got = backend.linear(cp.asarray(xt).T, cp.asarray(w), cp.asarray(bias))
        tol = 1e-4 if not backend.allow_tf32 else 2e-2
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=tol, atol=tol)


def _conv_ref(x, w, stride, padding, dilation):
    """float64 direct convolution (groups 1), and the input/weight gradients of sum(out * g)."""
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cols = np.empty((n, c, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[
                :, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw
            ]
    out = np.einsum("nckloq,dckl->ndoq", cols, w)
    return out, cols, (oh, ow), xp.shape


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "n, c, co, size, k, stride, padding, dilation",
    [
        (64, 8, 16, 26, 3, (1, 1), (0, 0), (1, 1)),  # the guide's second conv
        (1, 3, 5, 9, 3, (2, 1), (1, 2), (1, 1)),
        (2, 2, 3, 11, 2, (1, 2), (0, 1), (2, 2)),
    ],
)
def test_conv2d_backward_primitives(dtype, n, c, co, size, k, stride, padding, dilation):
    import cupy as cp

    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, c, size, size)).astype(dtype)
    w = rng.standard_normal((co, c, k, k)).astype(dtype)
    out, cols, (oh, ow), padded = _conv_ref(x.astype(np.float64), w.astype(np.float64), stride,
                                            padding, dilation)  # fmt: skip
    g = rng.standard_normal(out.shape).astype(dtype)
    g64 = g.astype(np.float64)
    want_dw = np.einsum("nckloq,ndoq->dckl", cols, g64)
    dcols = np.einsum("ndoq,dckl->nckloq", g64, w.astype(np.float64))
    dxp = np.zeros(padded)
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    for i in range(k):
        for j in range(k):
            dxp[:, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw] += dcols[
                :, :, i, j
            ]
    want_dx = dxp[:, :, ph : ph + size, pw : pw + size]
    b = _backend(dtype)
    o = ConvOptions(stride, padding, dilation, 1)
    xs, ws, gs = cp.asarray(x), cp.asarray(w), cp.asarray(g)
    tol = _tol(dtype, n * oh * ow)
    np.testing.assert_allclose(
        cp.asnumpy(b.conv2d_weight_backward(xs, ws, gs, o)), want_dw, rtol=tol, atol=tol
    )
    np.testing.assert_allclose(
        cp.asnumpy(b.conv2d_x_backward(xs, ws, gs, o)), want_dx, rtol=tol, atol=tol
    )
    bias = rng.standard_normal((co,)).astype(dtype)
    fwd = b.conv2d(xs, ws, cp.asarray(bias), o)
    np.testing.assert_allclose(cp.asnumpy(fwd), out + bias[None, :, None, None], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64, DType.I32, DType.BOOL])
def test_creation_values_bits_and_device(dtype):
    import cupy as cp

    b = Cuda()
    dev = b.device()
    shapes = [(0,), (3,), (2, 300)]
    values = [1, 0] if dtype in (DType.I32, DType.BOOL) else [1.0, -0.0, 0.0, float("nan"), 0.1]
    for shape in shapes:
        assert b.float_empty(shape, dev, dtype).shape == shape
        z = cp.asnumpy(b.float_zeros(shape, dev, dtype))
        np.testing.assert_array_equal(z, np.zeros(shape, dtype.np))
        np.testing.assert_array_equal(cp.asnumpy(b.float_ones(shape, dev, dtype)),
                                      np.ones(shape, dtype.np))  # fmt: skip
        for v in values:
            got = cp.asnumpy(b.float_full(shape, v, dev, dtype))
            want = np.full(shape, v, dtype.np)
            assert got.dtype == want.dtype
            # bits, so -0.0 stays negative and NaN is compared as itself
            assert got.tobytes() == want.tobytes(), (shape, v)
