"""Under autocast only the products run in half: a layer's bias is added to the widened output,
so no elementwise op (forward or backward) sees a half operand. Cuda's bfloat16 on a float32
backend is storage for its GEMMs only: a half bias add there failed ("data type 'E' not
understood", the H200 run of the transformer_precision bench)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray

from burn_tensor import DType, Tensor, autocast, module

HALF = {np.dtype("float16"), "bfloat16"}


class _Watch(NdArray):
    """NdArray that records the dtypes reaching its elementwise add (forward and backward)."""

    seen: list

    def float_add(self, a, b):
        type(self).seen.append({str(np.asarray(a).dtype), str(np.asarray(b).dtype)})
        return super().float_add(a, b)


def _half_dtypes(seen):
    return [s for s in seen if s & {"float16", "bfloat16"}]


@pytest.mark.parametrize("half", ["bf16", "f16"])
def test_linear_bias_is_added_in_float32(half):
    _Watch.seen = []
    device = Autodiff(_Watch()).device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((4, 3)).astype(np.float32), device).require_grad()
    w = Tensor.from_data(rng.standard_normal((3, 2)).astype(np.float32), device).require_grad()
    b = Tensor.from_data(np.array([0.5, -1.0], np.float32), device).require_grad()
    with autocast(half):
        y = module.linear(x, w, b)
    assert y.dtype is DType.F32
    grads = (y * y).sum().backward()
    assert _half_dtypes(_Watch.seen) == [], _Watch.seen
    # the values: a half product (rounded inputs) plus the exact bias
    hx = x.cast(half_dt := (DType.BF16 if half == "bf16" else DType.F16)).cast(DType.F32).numpy()
    hw = w.cast(half_dt).cast(DType.F32).numpy()
    np.testing.assert_allclose(y.numpy(), hx @ hw + b.numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(b.grad(grads).numpy(), (2 * y.numpy()).sum(0), rtol=1e-5)


def test_conv2d_bias_is_added_in_float32():
    _Watch.seen = []
    device = Autodiff(_Watch()).device()
    rng = np.random.default_rng(1)
    x = Tensor.from_data(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), device)
    w = Tensor.from_data(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), device)
    b = Tensor.from_data(np.array([1.0, 2.0, 3.0], np.float32), device).require_grad()
    with autocast("bf16"):
        y = module.conv2d(x, w, b)
    assert y.dtype is DType.F32 and y.dims() == [1, 3, 3, 3]
    grads = y.sum().backward()
    assert _half_dtypes(_Watch.seen) == [], _Watch.seen
    np.testing.assert_allclose(b.grad(grads).numpy(), [9.0, 9.0, 9.0])
    no_bias = module.conv2d(x, w).numpy()  # float32, no autocast
    got = y.numpy() - b.numpy()[None, :, None, None]
    np.testing.assert_allclose(got, no_bias, rtol=0.05, atol=0.1)
