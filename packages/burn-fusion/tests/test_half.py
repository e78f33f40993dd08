"""Fusion over a half-type inner backend (OpenCl float16 / bfloat16 on PoCL): elementwise chains
and a softmax-shaped row reduction fuse into one kernel each, the conversions inside it, and
give the bits of the same ops run unfused (every half-typed value is rounded to its type in
the kernel, as an unfused op stores it)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyopencl")
ml_dtypes = pytest.importorskip("ml_dtypes")


def _pair(dt):
    from _fusion_testlib import DEVICE_TYPE
    from burn_fusion import Fusion
    from burn_opencl import OpenCl

    inner = OpenCl(DEVICE_TYPE, float_dtype=dt)
    return Fusion(inner).device(), inner.device()


def _chain(t):
    from burn_tensor import activation

    y = activation.sigmoid((t * 0.75 + 0.5).exp() - t)
    return y, y / y.sum_dim(1)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_chain_fuses_and_gives_the_unfused_bits(dt):
    from burn_tensor import Tensor

    fused_dev, plain_dev = _pair(dt)
    x = np.random.default_rng(4).uniform(-2, 2, (6, 50))
    before = fused_dev.fusion_stats()
    fy, fs = _chain(Tensor.from_data(x, fused_dev))
    got_y, got_s = fy.into_data().array, fs.into_data().array
    stats = fused_dev.fusion_stats()
    launched = stats["kernels_launched"] - before["kernels_launched"]
    recorded = stats["ops_recorded"] - before["ops_recorded"]
    assert recorded >= 7 and launched == 1, stats  # 5 elementwise ops, the sum, the division
    assert stats["reductions_fused"] > before["reductions_fused"]
    py, ps = _chain(Tensor.from_data(x, plain_dev))
    want_y, want_s = py.into_data().array, ps.into_data().array
    assert got_y.dtype == want_y.dtype and got_y.dtype.name == dt
    np.testing.assert_array_equal(got_y.view(np.uint16), want_y.view(np.uint16))
    # the row sum: float32 in the fused kernel and in the unfused reduction, in another order
    eps = 2.0**-10 if dt == "float16" else 2.0**-7
    np.testing.assert_allclose(
        got_s.astype(np.float64), want_s.astype(np.float64), rtol=eps, atol=0
    )
