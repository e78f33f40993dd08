"""float16 sums and means accumulate in float32 and round once: the result is within one
float16 ulp of the exact (float64) sum of the float16 inputs, on the plain and threaded paths.

numpy alone reduces a float16 array over any axis but the last by adding rows into a float16
buffer (each partial sum rounded): 64 rows of N(0, 2) values came out 0.015 off."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor

BACKENDS = {
    "plain": NdArray(float_dtype="float16", num_threads=1),
    "threads2": NdArray(float_dtype="float16", num_threads=2, parallel_min=1),
}


def _ulp(x: np.ndarray) -> np.ndarray:
    """float16's spacing at |x| (its last bit there)."""
    x16 = np.abs(x).astype(np.float16)
    return (np.nextafter(x16, np.float16(np.inf)) - x16).astype(np.float64)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_float16_sums_are_within_one_ulp_of_the_exact_sum(name):
    dev = BACKENDS[name].device()
    x16 = (np.random.default_rng(0).normal(0.0, 2.0, (64, 300))).astype(np.float16)
    x = x16.astype(np.float64)  # the exact inputs the backend holds
    t = Tensor.from_data(x16, dev)
    for dim in (0, 1):
        want = x.sum(dim, keepdims=True)
        got = t.sum_dim(dim).numpy()
        assert got.dtype == np.float16
        assert np.all(np.abs(got.astype(np.float64) - want) <= _ulp(want)), dim
        mean = t.mean_dim(dim).numpy().astype(np.float64)
        wmean = want / x.shape[dim]
        assert np.all(np.abs(mean - wmean) <= _ulp(wmean)), dim
    total = x.sum()
    assert abs(float(t.sum().numpy()[0]) - total) <= _ulp(np.array(total))
    assert abs(float(t.mean().numpy()[0]) - x.mean()) <= _ulp(np.array(x.mean()))
