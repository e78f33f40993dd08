"""Autocast's linear on Cuda (`CudaLinearHalfOps`, `_gemm_lt.linear_wide` / `grads_wide`) on
the CPU stand-in (cuBLASLt emulated by `fake_cublaslt.py` on the stand-in's memory): the
forward is the two casts and one cuBLASLt GEMM of the half copies writing float32 with the
float32 bias in its epilogue (no widening cast, no bias kernel), the backward the gradient's
cast and two GEMMs writing float32 (the bias gradient in the weight GEMM's epilogue); values
against numpy float64 of the rounded operands, and the default's ops where cuBLASLt has no
kernel."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

HALVES = ("bfloat16", "float16")
#: launches the stand-in records per cast to the half type (float16's is cupy's astype)
CASTS = {"bfloat16": 1, "float16": 0}


def _half(name):
    from burn_tensor import DType

    return {"bfloat16": DType.BF16, "float16": DType.F16}[name]


def _io(be):
    from burn_tensor import TensorData

    dev = be.device()
    put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
    get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
    return put, get


def _r(a, h):
    """`a` rounded to half dtype `h` (a burn DType), as float64."""
    return np.asarray(a).astype(h.np).astype(np.float64)


def _f32_close(got, want, scale, k):
    # float32 sums of k products of exactly representable halves: no half rounding of the result
    np.testing.assert_allclose(got, want, rtol=0, atol=4 * k * 2.0**-23 * scale + 1e-7)


@pytest.mark.parametrize("half", HALVES)
def test_forward_is_two_casts_and_one_gemm_writing_float32(half):
    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    h = _half(half)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 24)).astype(np.float32)
    w = rng.standard_normal((24, 12)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _io(be)
        px, pw, pb = put(x), put(w), put(b)
        fake.launches.clear()
        fake.cublas.calls.clear()
        out, xh, wh = be.linear_half(px, pw, pb, h)
        assert out.shape == (2, 5, 12) and out.dtype == np.float32
        assert xh.dtype == h.np and wh.dtype == h.np
        # the two casts (bfloat16's are our kernel, float16's cupy's astype, not counted here):
        # no widening cast, no bias kernel
        assert len(fake.launches) == CASTS[half] * 2
        assert fake.cublas.calls == []
        assert fake.cublaslt.calls == [("matmul", 12, 10, 24)]
        np.testing.assert_array_equal(get(xh), _r(x, h))
        np.testing.assert_array_equal(get(wh), _r(w, h))
        want = _r(x, h) @ _r(w, h) + b
        _f32_close(get(out), want, float(np.abs(want).max()), 24)
        (key,) = _gemm_lt._PLANS
        assert key[-1] == np.float32 and key[-2] == _gemm_lt._BIAS


@pytest.mark.parametrize("half", HALVES)
def test_backward_is_one_cast_and_two_gemms_writing_float32(half):
    from burn_tensor import DType
    from cpu_backend import cuda_on_cpu_backend

    h = _half(half)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 16)).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    g = rng.standard_normal((3, 4, 8)).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _io(be)
        _, xh, wh = be.linear_half(put(x), put(w), None, h)
        pg = put(g)
        fake.launches.clear()
        fake.cublaslt.calls.clear()
        f32 = DType.F32
        dx, dw, db = be.linear_half_backward(xh, wh, pg, (f32, f32, f32))
        assert len(fake.launches) == CASTS[half]  # the gradient's cast
        assert fake.cublaslt.calls == [("matmul", 16, 12, 8), ("matmul", 8, 16, 12)]
        assert dx.dtype == dw.dtype == db.dtype == np.float32
        assert dx.shape == (3, 4, 16) and dw.shape == (16, 8) and db.shape == (8,)
        hx, hw, hg = _r(x, h).reshape(12, 16), _r(w, h), _r(g, h).reshape(12, 8)
        _f32_close(get(dx).reshape(12, 16), hg @ hw.T, float(np.abs(hg @ hw.T).max()), 8)
        _f32_close(get(dw), hx.T @ hg, float(np.abs(hx.T @ hg).max()), 12)
        # the bias gradient: the sums of the half output gradient (torch autocast's addmm)
        _f32_close(get(db), hg.sum(0), float(np.abs(hg).sum(0).max()), 12)
        # only what is asked for
        dx2, dw2, db2 = be.linear_half_backward(xh, wh, pg, (None, f32, None))
        assert dx2 is None and db2 is None
        np.testing.assert_array_equal(get(dw2), get(dw))


def test_refused_gemms_take_the_default_ops():
    from burn_tensor import DType
    from cpu_backend import cuda_on_cpu_backend

    h = DType.BF16
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal((6, 4)).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        fake.cublaslt.refuse = True
        put, get = _io(be)
        out, xh, wh = be.linear_half(put(x), put(w), put(b), h)
        assert out.dtype == np.float32
        want = _r(x, h) @ _r(w, h) + b  # the default rounds the product to bf16 first
        np.testing.assert_allclose(get(out), want, rtol=2**-7, atol=2**-7 * np.abs(want).max())
        f32 = DType.F32
        dx, dw, db = be.linear_half_backward(xh, wh, put(g), (f32, f32, f32))
        hg = _r(g, h)
        for got, ref in ((dx, hg @ _r(w, h).T), (dw, _r(x, h).T @ hg), (db, g.sum(0))):
            assert got.dtype == np.float32
            np.testing.assert_allclose(get(got), ref, rtol=2**-7, atol=2**-7 * np.abs(ref).max())


def test_autocast_linear_is_one_node_and_gradients_are_float32():
    from burn_autodiff import Autodiff
    from burn_tensor import DType, Tensor, autocast, module
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(4)
    with cuda_on_cpu_backend() as (be, fake):
        dev = Autodiff(be).device()
        t = lambda a: Tensor.from_data(a.astype(np.float32), dev).require_grad()  # noqa: E731
        x, w = t(rng.standard_normal((4, 16))), t(rng.standard_normal((16, 8)))
        b = t(rng.standard_normal(8))
        fake.launches.clear()
        fake.cublaslt.calls.clear()
        with autocast("bf16"):
            y = module.linear(x, w, b)
        assert y.dtype is DType.F32
        assert len(fake.launches) == 2 and len(fake.cublaslt.calls) == 1
        grads = y.sum().backward()
        for p in (x, w, b):
            assert p.grad(grads).dtype is DType.F32
        # d(sum y)/db = the row count; d/dx = rows of sum_n w (rounded to bf16)
        np.testing.assert_allclose(b.grad(grads).numpy(), np.full(8, 4.0))
        hw = _r(w.numpy(), DType.BF16)
        np.testing.assert_allclose(x.grad(grads).numpy(), np.tile(hw.sum(1), (4, 1)), rtol=1e-6)
