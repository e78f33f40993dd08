"""bfloat16 on NdArray: results stay bfloat16 and sums/matmuls accumulate in float32."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor


@pytest.mark.parametrize("threads", [1, 2])
def test_bf16_sum_accumulates_in_f32_and_rounds_once(threads):
    # 4096 x 0.01 = 40.96 -> 41.0 in bfloat16; a bfloat16 accumulator stalls near 4 (0.01 is
    # below half an ulp of the running sum from there on)
    x = np.full((4096,), 0.01, np.float32)
    d = NdArray(float_dtype="bfloat16", num_threads=threads).device()
    t = Tensor.from_data(x, d)
    assert t.dtype is DType.BF16
    for s in (t.sum(), t.sum_dim(0), t.mean().mul_scalar(4096.0)):
        assert s.dtype is DType.BF16
        assert s.item() == 41.0


def test_bf16_matmul_on_a_float32_backend_returns_bf16():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(5, 2))
    d = NdArray().device()
    ta = Tensor.from_data(a.astype(np.float32), d).cast("bfloat16")
    tb = Tensor.from_data(b.astype(np.float32), d).cast("bfloat16")
    out = ta @ tb
    assert out.dtype is DType.BF16  # ml_dtypes' own matmul hands back float32
    np.testing.assert_allclose(out.cast("float32").numpy(), a @ b, rtol=3e-2, atol=3e-2)


def test_bf16_scalar_ops_stay_bf16():
    d = NdArray(float_dtype="bfloat16").device()
    t = Tensor.from_data([1.0, 2.0, float("nan")], d)
    for r in (t.mul_scalar(0.5), t.add_scalar(1.0), t.exp(), t.lower_equal_elem(1.5).float()):
        assert r.dtype is DType.BF16, r.dtype
