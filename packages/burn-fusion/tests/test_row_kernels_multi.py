"""Row kernels of several reductions along one dim (`burn_gpu/_render_rows.py`, issue 35 item 3:
layer norm in one kernel): reductions of one level share a walk over the row, a reduction that
reads another's value takes the next walk, the epilogue the last; every held result is written.
Values against numpy in float64."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import inner_backend
from burn_fusion import Fusion
from burn_tensor import Tensor

RNG = np.random.default_rng(11)


def _device(f64: bool = False):
    inner = inner_backend("f64-i64" if f64 else "f32-i32")
    return Fusion(inner).device()


def _kernels(device, fn):
    device.sync()
    before = device.fusion_stats()
    out = fn()
    after = device.fusion_stats()
    return out, {k: after[k] - before[k] for k in ("kernels_launched", "ops_unfused")}


@pytest.mark.parametrize("shape,dim", [((7, 33), 1), ((5, 6, 4), 1), ((3, 300), 1), ((9, 2), 0)])
def test_layer_norm_forward_is_one_kernel(shape, dim):
    device = _device()
    a = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
    g = RNG.standard_normal([s if d == dim else 1 for d, s in enumerate(shape)]).astype(np.float32)
    x, gamma = Tensor.from_data(a, device), Tensor.from_data(g, device)

    def ln():
        c = x - x.mean_dim(dim)
        return (c / ((c * c).mean_dim(dim) + 1e-5).sqrt() * gamma + 0.5).numpy()

    got, d = _kernels(device, ln)
    assert d == {"kernels_launched": 1, "ops_unfused": 1}, d  # the one unfused op: the read
    a64 = a.astype(np.float64)
    c = a64 - a64.mean(dim, keepdims=True)
    want = c / np.sqrt((c * c).mean(dim, keepdims=True) + 1e-5) * g + 0.5
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_three_levels_two_kinds_and_every_held_result_written():
    """Layer norm's backward statistics: mean(x) and max|g| (level 0), the variance (1), the
    mean of g * xhat (2); the statistics, rstd ([rows, 1]) and dx are all held and read."""
    device = _device(f64=True)
    a = RNG.standard_normal((6, 45))
    gv = RNG.standard_normal((6, 45))
    x, g = Tensor.from_data(a, device), Tensor.from_data(gv, device)

    def backward():
        mean = x.mean_dim(1)
        gmax = g.abs().max_dim(1)
        c = x - mean
        var = (c * c).mean_dim(1)
        rstd = (var + 1e-5).sqrt().recip()
        xhat = c * rstd
        mgx = (g * xhat).mean_dim(1)
        dx = (g / gmax - xhat * mgx) * rstd
        return [t.numpy() for t in (dx, mean, gmax, var, rstd, mgx)]

    got, d = _kernels(device, backward)
    assert d["kernels_launched"] == 1 and d["ops_unfused"] == 6, d  # unfused: the 6 reads
    mean = a.mean(1, keepdims=True)
    gmax = np.abs(gv).max(1, keepdims=True)
    c = a - mean
    var = (c * c).mean(1, keepdims=True)
    rstd = 1 / np.sqrt(var + 1e-5)
    xhat = c * rstd
    mgx = (gv * xhat).mean(1, keepdims=True)
    dx = (gv / gmax - xhat * mgx) * rstd
    for got_v, want in zip(got, (dx, mean, gmax, var, rstd, mgx)):
        np.testing.assert_allclose(got_v, want, rtol=1e-10, atol=1e-12)


def test_a_reduction_along_another_dim_runs_the_pending_ones_first():
    device = _device()
    a = RNG.standard_normal((8, 12)).astype(np.float32)
    x = Tensor.from_data(a, device)

    def two_dims():
        e = x.exp()
        s1, m1 = e.sum_dim(1), e.max_dim(1)  # both pending, along 1
        s0 = e.sum_dim(0)  # along 0: the two along 1 run first (one row kernel)
        return (s1 + s0 - m1).numpy()

    got, d = _kernels(device, two_dims)
    assert d["kernels_launched"] == 2, d
    e = np.exp(a.astype(np.float64))
    want = e.sum(1, keepdims=True) + e.sum(0, keepdims=True) - e.max(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_layer_norm_is_one_kernel_accumulating_in_float32(dt):
    """Half types: the two reductions accumulate in float32, each value rounded to the type
    where the unfused op would store it; against numpy in float64 within the type's epsilon."""
    pytest.importorskip("ml_dtypes")
    from _fusion_testlib import DEVICE_TYPE
    from burn_opencl import OpenCl

    device = Fusion(OpenCl(DEVICE_TYPE, float_dtype=dt)).device()
    a = RNG.uniform(-2, 2, (5, 40))
    x = Tensor.from_data(a, device)

    def ln():
        c = x - x.mean_dim(1)
        return (c / ((c * c).mean_dim(1) + 1e-3).sqrt()).into_data().array

    got, d = _kernels(device, ln)
    assert d["kernels_launched"] == 1, d
    assert got.dtype.name == dt
    xh = np.asarray(Tensor.from_data(a, device).into_data().array, np.float64)  # rounded input
    c = xh - xh.mean(1, keepdims=True)
    want = c / np.sqrt((c * c).mean(1, keepdims=True) + 1e-3)
    eps = 2.0**-10 if dt == "float16" else 2.0**-7
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=8 * eps, atol=8 * eps)
