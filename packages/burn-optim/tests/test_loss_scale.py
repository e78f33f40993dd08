"""`DynamicLossScaler.unscale` (float16 mixed precision, issue 34): the unscaled gradients are
`g * (1 / scale)` bit for bit, the overflow flag sees an inf or NaN in any gradient (never a
large finite sum), and the flag costs one gathered sum, not an add per parameter."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor

from burn_optim import DynamicLossScaler, GradientsParams


class _Counting(NdArray):
    """NdArray counting the float ops the scaler issues (the real ops run)."""

    calls: dict

    def float_add(self, a, b):
        type(self).calls["float_add"] = type(self).calls.get("float_add", 0) + 1
        return super().float_add(a, b)

    def float_cat(self, tensors, dim):
        type(self).calls["float_cat"] = type(self).calls.get("float_cat", 0) + 1
        return super().float_cat(tensors, dim)


def _grads(values):
    device = _Counting().device()
    grads = GradientsParams()
    for i, v in enumerate(values):
        grads.register(f"p{i}", Tensor.from_data(np.asarray(v, np.float32), device))
    return grads


def _values(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((3, i + 1)).astype(np.float32) * 1e4 for i in range(n)]


def test_unscale_is_one_gathered_probe_with_the_division_bits():
    values = _values()
    scaler = DynamicLossScaler(init_scale=1024.0)
    _Counting.calls = {}
    out, finite = scaler.unscale(_grads(values))
    assert finite
    # before: one float_add per parameter after the first (11 here), no cat
    assert _Counting.calls.get("float_add", 0) == 0, _Counting.calls
    assert _Counting.calls.get("float_cat", 0) == 1, _Counting.calls
    inv = np.float32(1.0 / 1024.0)
    for i, v in enumerate(values):
        assert out.get(f"p{i}").numpy().tobytes() == (v * inv).tobytes()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("where", [0, 5, 11])
def test_unscale_flags_an_inf_or_nan_in_any_gradient(bad, where):
    values = _values()
    values[where][1, 0] = bad
    _, finite = DynamicLossScaler().unscale(_grads(values))
    assert not finite


def test_unscale_large_finite_gradients_are_not_an_overflow():
    # their plain sum overflows float32; the probe sums 0 * g, which stays 0
    values = [np.full((4, 4), 3e38, np.float32) for _ in range(3)]
    _, finite = DynamicLossScaler(init_scale=1.0).unscale(_grads(values))
    assert finite


@pytest.mark.parametrize("n", [0, 1])
def test_unscale_of_no_or_one_gradient(n):
    values = _values(n)
    out, finite = DynamicLossScaler(init_scale=2.0).unscale(_grads(values))
    assert finite and len(list(out.items())) == n
