"""A linear layer's weight and bias gradients as one cuBLASLt GEMM whose epilogue writes the
bias gradient (`_gemm_lt.weight_bias_grad`, `CUBLASLT_EPILOGUE_BGRADA`), on the CPU stand-in
(`fake_cublaslt.py` emulates the epilogue on the stand-in's memory): dW = x^T g and db = the row
sums of g against numpy float64 for the half types, one Lt call and no reduction kernel, the
separate ops where cuBLASLt refuses and for float32 (measured slower on the H200) and float64,
and Autodiff's `linear` rule asking for both in one op."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from test_gemm_lt_cpu import EPS, _np_dtype  # the forward's tolerances and dtypes

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")


def _io(be):
    from burn_tensor import TensorData

    dev = be.device()
    put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
    get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
    return put, get


def _close(got, want, dt, k):
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=2 * EPS[dt],
                               atol=4 * k * 2.0**-23 * scale + EPS[dt] * scale)  # fmt: skip


@pytest.mark.parametrize("dt", ("bfloat16", "float16"))
def test_weight_and_bias_gradients_in_one_lt_call(dt):
    from cpu_backend import cuda_on_cpu_backend

    npdt = _np_dtype(dt)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 5, 24)).astype(npdt)  # rows [10, 24]
    g = rng.standard_normal((2, 5, 12)).astype(npdt)
    x64, g64 = x.astype(np.float64).reshape(10, 24), g.astype(np.float64).reshape(10, 12)
    with cuda_on_cpu_backend(float_dtype=dt) as (be, fake):
        put, get = _io(be)
        px, pg = put(x), put(g)
        fake.launches.clear()
        fake.cublaslt.calls.clear()
        dw, db = be.linear_weight_bias_backward(px, pg)
        assert dw.shape == (24, 12) and db.shape == (12,) and db.dtype == npdt
        assert [launch.name for launch in fake.launches] == []  # no column-sum kernel
        assert fake.cublaslt.calls == [("matmul", 12, 24, 10)]  # D^T [d_out, d_in], k = rows
        _close(get(dw), x64.T @ g64, dt, 10)
        _close(get(db), g64.sum(0), dt, 10)


def test_refused_float32_and_float64_take_the_two_ops():
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(12)
    bf = _np_dtype("bfloat16")
    x, g = rng.standard_normal((7, 8)), rng.standard_normal((7, 4))
    with cuda_on_cpu_backend(float_dtype="bfloat16") as (be, fake):
        put, get = _io(be)
        fake.cublaslt.refuse = True  # no kernel for the shape: the GEMM and the column sum
        dw, db = be.linear_weight_bias_backward(put(x.astype(bf)), put(g.astype(bf)))
        assert fake.cublaslt.calls == []
        xb, gb = x.astype(bf).astype(np.float64), g.astype(bf).astype(np.float64)
        _close(get(dw), xb.T @ gb, "bfloat16", 7)
        _close(get(db), gb.sum(0), "bfloat16", 7)
    x32, g32 = x.astype(np.float32), g.astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):  # float32: BGRADA measured slower, not asked
        put, get = _io(be)
        dw, db = be.linear_weight_bias_backward(put(x32), put(g32))
        assert fake.cublaslt.calls == []
        _close(get(dw), x32.astype(np.float64).T @ g32, "float32", 7)
        _close(get(db), g32.astype(np.float64).sum(0), "float32", 7)
    with cuda_on_cpu_backend(float_dtype="float64") as (be, fake):
        put, get = _io(be)
        x64, g64 = x.astype(np.float64), g.astype(np.float64)
        dw, db = be.linear_weight_bias_backward(put(x64), put(g64))
        np.testing.assert_allclose(get(dw), x64.T @ g64, rtol=1e-12)
        np.testing.assert_allclose(get(db), g64.sum(0), rtol=1e-12)
        assert fake.cublaslt.calls == []


def test_autodiff_linear_asks_for_both_in_one_op():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from burn_autodiff import Autodiff
    from burn_tensor import Tensor, TensorData, module
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(13)
    bf = np.dtype(ml_dtypes.bfloat16)
    x, w = rng.standard_normal((4, 8)).astype(bf), rng.standard_normal((8, 4)).astype(bf)
    b = rng.standard_normal(4).astype(bf)
    with cuda_on_cpu_backend(float_dtype="bfloat16") as (inner, fake):
        ad = Autodiff(inner)
        dev = ad.device()
        tw = Tensor.from_data(TensorData(w), dev).require_grad()
        tb = Tensor.from_data(TensorData(b), dev).require_grad()
        tx = Tensor.from_data(TensorData(x), dev)
        fake.cublaslt.calls.clear()
        grads = (module.linear(tx, tw, tb) ** 2).sum().backward()
        gw = np.asarray(tw.grad(grads).into_data().array, np.float64)
        gb = np.asarray(tb.grad(grads).into_data().array, np.float64)
        # forward (bias epilogue) and backward (bias-gradient epilogue): two Lt calls
        assert [c[0] for c in fake.cublaslt.calls] == ["matmul", "matmul"]
    x64, w64, b64 = (v.astype(np.float64) for v in (x, w, b))
    # the forward output and the loss's gradient are rounded to bfloat16 on the way
    y = (x64 @ w64 + b64).astype(bf).astype(np.float64)
    tol = 2.0**-6 * 8 * float(np.abs(x64).max() * np.abs(y).max())
    np.testing.assert_allclose(gw, x64.T @ (2 * y), rtol=2.0**-6, atol=tol)
    np.testing.assert_allclose(gb, (2 * y).sum(0), rtol=2.0**-6, atol=tol)
