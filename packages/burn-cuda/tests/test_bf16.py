"""bfloat16 on Cuda: `Cuda(float_dtype="bfloat16")` (matmul native on tensor cores, the other
ops through float32) and bf16 tensors cast on a float32 Cuda(), against numpy float64 after
rounding the inputs to bfloat16. The conversion kernels compile with nvcc here (CPU), the rest
runs on the GPU machine."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import _bf16

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)


def _r(x) -> np.ndarray:
    """float64 values of x rounded to bfloat16 (what the tensor holds)."""
    return np.asarray(x, np.float64).astype(BF16).astype(np.float64)


@pytest.mark.parametrize("name", sorted(_bf16.SOURCES))
def test_conversion_kernels_compile(nvcc_ptx, name):
    proc, ptx = nvcc_ptx(name, _bf16.SOURCES[name])
    assert proc.returncode == 0, proc.stderr
    assert f".entry {name}(" in ptx.read_text()


@pytest.fixture(scope="module")
def bf(cuda_ready):
    from burn_cuda import Cuda

    return Cuda(float_dtype="bfloat16")


@pytest.mark.gpu
def test_round_trip_and_rounding(bf):
    from burn_tensor import DType, Tensor

    dev = bf.device()
    vals = np.array(
        [1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5, 0.1, 3.0e38, np.inf, -np.inf, np.nan, -0.0]
    )
    t = Tensor.from_data(vals, dev)
    assert t.dtype is DType.BF16
    got = t.into_data().array
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.astype(np.float64), _r(vals))  # nearest even, NaN kept
    # our f32 -> bf16 kernel agrees with ml_dtypes bit for bit on random float32 values
    import cupy as cp

    x = np.random.default_rng(0).standard_normal(100_000).astype(np.float32) * 1e3
    x[::97] = np.float32(np.nan)
    mine = cp.asnumpy(_bf16.to_bf16(cp.asarray(x)).view(np.uint16))
    ref = x.astype(BF16).view(np.uint16)
    ok = (mine == ref) | np.isnan(x)
    assert ok.all(), np.flatnonzero(~ok)[:5]
    back = cp.asnumpy(_bf16.to_f32(cp.asarray(ref.view(BF16))))
    np.testing.assert_array_equal(back, ref.view(BF16).astype(np.float32))


@pytest.mark.gpu
def test_ops_through_float32_and_native_matmul(bf):
    from burn_tensor import Tensor, activation
    from burn_tensor import module as F

    dev = bf.device()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 96)), rng.standard_normal((96, 32))
    ta, tb = Tensor.from_data(a, dev), Tensor.from_data(b, dev)
    ra, rb = _r(a), _r(b)
    mm = (ta @ tb).into_data().array.astype(np.float64)
    np.testing.assert_allclose(mm, ra @ rb, rtol=2e-2, atol=0.15)
    e = ta.exp().sum_dim(1).into_data().array.astype(np.float64)
    np.testing.assert_allclose(e, np.exp(ra).sum(1, keepdims=True), rtol=2e-2)
    sm = activation.softmax(ta, 1).into_data().array.astype(np.float64)
    np.testing.assert_allclose(sm.sum(1), 1.0, atol=2e-2)
    x = rng.standard_normal((2, 3, 8, 8))
    w = rng.standard_normal((4, 3, 3, 3)) * 0.2
    out = F.conv2d(Tensor.from_data(x, dev), Tensor.from_data(w, dev), None, padding=[1, 1])
    assert out.dtype.value == "bfloat16" and out.shape.dims == [2, 4, 8, 8]
    assert (ta.permute([1, 0]) + 1.0).dtype.value == "bfloat16"
    assert ta.argmax(1).dtype.value == "int32"


@pytest.mark.gpu
def test_training_step_on_bf16(bf):
    from burn_autodiff import Autodiff
    from burn_tensor import Tensor, activation

    dev = Autodiff(bf).device()
    w = Tensor.from_data(np.full((4, 3), 0.5), dev).require_grad()
    x = Tensor.from_data(np.ones((2, 4)), dev)
    loss = activation.relu(x @ w).sum()
    g = w.grad(loss.backward())
    assert g.dtype.value == "bfloat16"
    np.testing.assert_array_equal(g.into_data().array.astype(np.float64), np.full((4, 3), 2.0))


@pytest.mark.gpu
def test_bf16_cast_on_float32_backend_keeps_native_matmul(cuda_ready):
    from burn_cuda import Cuda
    from burn_tensor import DType, Tensor

    dev = Cuda().device()
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((128, 64)), rng.standard_normal((64, 128))
    ta = Tensor.from_data(a, dev).cast("bfloat16")
    tb = Tensor.from_data(b, dev).cast(DType.BF16)
    assert ta.dtype is DType.BF16
    c = ta @ tb
    assert c.dtype is DType.BF16
    got = c.cast("float32").into_data().array.astype(np.float64)
    np.testing.assert_allclose(got, _r(a) @ _r(b), rtol=2e-2, atol=0.15)
    np.testing.assert_array_equal(c.into_data().array.astype(np.float64), _r(got))


@pytest.mark.gpu
def test_host_paths_on_real_cupy(bf):
    """Issue 34's host paths where only real cupy can tell: views run on the bf16 array itself
    (no kernel reads ml_dtypes' dtype), the allocator's constructor-or-view choice, batched and
    permuted-head bf16 matmuls on cublasGemmStridedBatchedEx without a conversion kernel, the
    half linear ops and the multi-tensor half Adam."""
    import cupy as cp
    from burn_cuda import _half_ops, _optim_many
    from burn_tensor import Tensor

    dev = bf.device()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 4, 8))
    t = Tensor.from_data(x, dev)
    rx = _r(x)
    got = lambda v: v.into_data().array.astype(np.float64)
    np.testing.assert_array_equal(got(t.swap_dims(1, 2)), np.swapaxes(rx, 1, 2))
    np.testing.assert_array_equal(got(t.permute([3, 0, 2, 1])), rx.transpose(3, 0, 2, 1))
    np.testing.assert_array_equal(got(t.reshape([12, 32])), rx.reshape(12, 32))
    np.testing.assert_array_equal(got(t.swap_dims(1, 2).reshape([8, 48])),
                                  np.swapaxes(rx, 1, 2).reshape(8, 48))  # fmt: skip
    np.testing.assert_array_equal(got(t.slice([slice(0, 1), slice(1, 5), slice(0, 4), slice(2, 6)])),
                                  rx[0:1, 1:5, :, 2:6])  # fmt: skip
    np.testing.assert_array_equal(got(t[:, :1].expand([2, 3, 4, 8])),
                                  np.broadcast_to(rx[:, :1], (2, 3, 4, 8)))  # fmt: skip
    a = _half_ops.empty((3, 5), BF16)
    assert a.dtype == BF16 and a.shape == (3, 5) and a.nbytes == 30
    # attention's scores: heads permuted out of [b, s, h, e], then q @ k^T per (b, h)
    compiled_before = set(_bf16._K)
    q = Tensor.from_data(rng.standard_normal((2, 16, 4, 8)), dev)
    k = Tensor.from_data(rng.standard_normal((2, 16, 4, 8)), dev)
    s = q.swap_dims(1, 2).matmul(k.swap_dims(1, 2).swap_dims(2, 3))
    rq, rk = _r(q.into_data().array), _r(k.into_data().array)
    want = np.swapaxes(rq, 1, 2) @ np.swapaxes(np.swapaxes(rk, 1, 2), 2, 3)
    np.testing.assert_allclose(got(s), want, rtol=2e-2, atol=0.1)
    assert set(_bf16._K) == compiled_before, "a bf16 matmul took the float32 detour"
    w, bias = rng.standard_normal((8, 5)), rng.standard_normal(5)
    tw, tb = Tensor.from_data(w, dev), Tensor.from_data(bias, dev)
    out = bf.linear(t.into_primitive(), tw.into_primitive(), tb.into_primitive())
    want = _r(_r(rx @ _r(w)) + _r(bias))
    np.testing.assert_allclose(_bits(cp, out).view(BF16).astype(np.float64), want, rtol=3e-2,
                               atol=0.1)  # fmt: skip

    def half(n):
        return cp.asarray(rng.uniform(0.1, 2, n).astype(BF16).view(np.uint16)).view(BF16)

    ps, gs = [half(5), half(300)], [half(5), half(300)]
    assert _optim_many._fits(ps, gs, None, None) == BF16
    many = bf.float_adam_update_many(ps, gs, None, None, 0.01, 0.9, 0.999, 1e-5, 1)
    for i, (p, g) in enumerate(zip(ps, gs)):
        one = bf.float_adam_update(p, g, None, None, 0.01, 0.9, 0.999, 1e-5, 1)
        for m, o in zip((many[0][i], many[1][i], many[2][i]), one):
            np.testing.assert_array_equal(_bits(cp, m), _bits(cp, o))


def _bits(cp, x) -> np.ndarray:
    """A 16-bit cupy array's bit patterns on the host (uint16)."""
    return cp.asnumpy(cp.ascontiguousarray(x.view(np.uint16)))
