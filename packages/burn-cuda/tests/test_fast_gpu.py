"""The hot path on the GPU: every kernel compiles under NVRTC (a failure would only fall back
to cupy, so it is asserted here), results equal numpy float64 on contiguous, broadcast and
large tensors, and the ops take the kernels (no cupy ufunc on the way)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, _fast, _fast_source
from burn_tensor import Tensor

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_every_hot_kernel_compiles(dtype):
    import cupy as cp

    kernels = _fast._Kernels(cp)
    ints = dtype.startswith("int")
    dt = np.dtype(dtype)
    for op in _fast_source.BINARY:
        if not (ints and op in _fast_source.FLOAT_ONLY):
            assert kernels.get("binary", op, dt) is not None, _fast.FAILED
            assert kernels.get("bc", op, dt) is not None, _fast.FAILED
    for op in _fast_source.UNARY:
        if not (ints and op in _fast_source.FLOAT_ONLY):
            assert kernels.get("unary", op, dt) is not None, _fast.FAILED
    for op in _fast_source.SCALAR:
        if not (ints and op in _fast_source.FLOAT_ONLY):
            assert kernels.get("scalar", op, dt) is not None, _fast.FAILED
    if not ints:
        for op in ("sum", "mean", "max"):
            assert kernels.get("row", op, dt) is not None, _fast.FAILED
            assert kernels.get("mid", op, dt) is not None, _fast.FAILED
        assert kernels.get("sum_all", "", dt) is not None, _fast.FAILED
        for op in ("sum", "max", "min"):
            for name in (f"{op}_cols", f"{op}_cols_fin"):
                assert kernels.get("col", name, dt) is not None, _fast.FAILED


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_against_numpy_float64(dtype):
    dev = Cuda(float_dtype=dtype).device()
    rng = np.random.default_rng(0)
    tol = 1e-6 if dtype == "float32" else 1e-13
    for sa, sb in [
        ((1000, 37), (1000, 37)),
        ((64, 512), (1, 512)),
        ((64, 10), (64, 1)),
        ((8, 16, 5, 5), (1, 16, 1, 1)),
        ((3,), (3,)),
        ((2**20 + 3,), (2**20 + 3,)),
    ]:
        a = rng.uniform(0.5, 2.0, sa)
        b = rng.uniform(0.5, 2.0, sb)
        ra, rb = a.astype(dtype).astype(np.float64), b.astype(dtype).astype(np.float64)
        ta, tb = Tensor.from_data(a, dev), Tensor.from_data(b, dev)
        for got, want in [
            (ta + tb, ra + rb),
            (ta - tb, ra - rb),
            (ta * tb, ra * rb),
            (ta / tb, ra / rb),
            (ta * 1.5 + 0.25, ra * 1.5 + 0.25),
        ]:
            np.testing.assert_allclose(got.numpy(), want, rtol=tol * 4, atol=tol)
    x = rng.standard_normal((33, 65))
    rx = x.astype(dtype).astype(np.float64)
    t = Tensor.from_data(x, dev)
    np.testing.assert_allclose(t.exp().numpy(), np.exp(rx), rtol=tol * 4)
    np.testing.assert_allclose(t.abs().sqrt().numpy(), np.sqrt(np.abs(rx)), rtol=tol * 4)
    np.testing.assert_allclose(t.tanh().numpy(), np.tanh(rx), rtol=tol * 4, atol=tol)
    np.testing.assert_allclose(t.sum().numpy(), [rx.sum()], rtol=tol * 10)
    for d in (0, 1):
        np.testing.assert_allclose(
            t.sum_dim(d).numpy(), rx.sum(d, keepdims=True), rtol=tol * 10, atol=tol * 10
        )
        np.testing.assert_allclose(
            t.mean_dim(d).numpy(), rx.mean(d, keepdims=True), rtol=tol * 10, atol=tol * 10
        )
        np.testing.assert_array_equal(t.max_dim(d).numpy(), rx.max(d, keepdims=True))


def test_ops_take_the_kernels():
    dev = Cuda().device()
    a = Tensor.from_data(np.ones((4, 4), np.float32), dev)
    (a + a).numpy()
    (a + a[0:1]).numpy()
    a.sum_dim(0).numpy()
    # kernels are compiled on first use: these are the ones the three ops ran
    assert {("binary", "add", "float32"), ("bc", "add", "float32")} <= _fast.COMPILED
    assert ("mid", "sum", "float32") in _fast.COMPILED


def test_big_add_is_exact_and_vectorised():
    dev = Cuda().device()
    n = 2**22 + 5  # not a multiple of the vector width: the tail runs element by element
    x = np.arange(n, dtype=np.float32)
    t = Tensor.from_data(x, dev)
    np.testing.assert_array_equal((t + t).numpy(), x + x)
    np.testing.assert_array_equal((t[1:] + t[1:]).numpy(), x[1:] + x[1:])  # misaligned view


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("shape,dim", [((4096, 512), 0), ((4096, 2048), 0), ((32, 128, 512), 1)])
def test_bias_gradient_shapes_take_the_column_kernels(dtype, shape, dim):
    """The transformer's bias-gradient sums (few outputs, a long dim other than the last):
    burn_gpu's column kernels, against numpy float64 on the stored values, the same bits twice
    (no atomics), float32 partials for the half types (one rounding)."""
    dev = Cuda(float_dtype=dtype).device()
    x = np.random.default_rng(1).standard_normal(shape)
    t = Tensor.from_data(x, dev)
    rx = np.asarray(t.into_data().array, np.float64)
    scale = np.abs(rx).sum(dim, keepdims=True)
    bound = {"float32": 4e-6, "float64": 1e-14}.get(dtype, 2.0**-8)  # chains of ~22 adds
    for op, ref in (("sum_dim", rx.sum), ("mean_dim", rx.mean)):
        got = getattr(t, op)(dim).numpy().astype(np.float64)
        want = ref(dim, keepdims=True)
        div = 1 if op == "sum_dim" else shape[dim]
        assert np.all(np.abs(got - want) <= bound * scale / div + 1e-30), (op, dtype)
    np.testing.assert_array_equal(t.max_dim(dim).numpy().astype(np.float64), rx.max(dim, keepdims=True))
    a, b = t.sum_dim(dim).into_data().array, t.sum_dim(dim).into_data().array
    assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    if dtype in ("float32", "float64"):
        assert ("col", "sum_cols", dtype) in _fast.COMPILED
