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


@pytest.mark.parametrize("name", list(BACKENDS))
def test_float16_scatter_adds_and_cumsum_round_once(name):
    # Duplicate indices accumulate in float32: x + v1 + v2 + v3 rounded to float16 once
    # (per-add float16 rounding was 0.002 off on a result of -0.05 in the conformance case).
    dev = BACKENDS[name].device()
    g = np.random.default_rng(1)
    x16 = g.normal(0.0, 2.0, (4, 3)).astype(np.float16)
    v16 = g.normal(0.0, 2.0, (5, 3)).astype(np.float16)
    x, v = x16.astype(np.float64), v16.astype(np.float64)
    idx = np.array([1, 1, 3, 0, 1])
    want = x.copy()
    np.add.at(want, idx, v)
    t, tv = Tensor.from_data(x16, dev), Tensor.from_data(v16, dev)
    got = t.select_assign(0, Tensor.from_data(idx.astype(np.int32), dev), tv).numpy()
    assert np.all(np.abs(got.astype(np.float64) - want) <= _ulp(want) / 2)
    si = np.array([[1, 0, 2], [1, 1, 0], [1, 0, 0]])
    want = x.copy()
    for i in range(3):
        for j in range(3):
            want[si[i, j], j] += v[i, j]
    got = t.scatter(0, Tensor.from_data(si.astype(np.int32), dev), tv[:3]).numpy()
    assert np.all(np.abs(got.astype(np.float64) - want) <= _ulp(want) / 2)
    # cumsum: each prefix sum within an ulp of the exact one (float16 running sums drift)
    long16 = g.normal(0.0, 2.0, (300,)).astype(np.float16)
    want = np.cumsum(long16.astype(np.float64))
    got = Tensor.from_data(long16, dev).cumsum(0).numpy().astype(np.float64)
    assert np.all(np.abs(got - want) <= _ulp(want))


def test_float16_sums_through_another_array_namespace():
    # burn_cuda runs these same ops on cupy (`make_numeric("float", cupy)`): there the sum goes
    # through `xp.sum(..., dtype=...)`. A numpy stand-in that is not numpy itself takes that path;
    # asked for float16, numpy's sum over axis 0 would round every partial sum.
    import types

    from burn_tensor.array_api import make_numeric

    xp = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("__")})
    ops = make_numeric("float", xp)
    x16 = np.random.default_rng(0).normal(0.0, 2.0, (64, 300)).astype(np.float16)
    want = x16.astype(np.float64).sum(0, keepdims=True)
    for name, scale in (("sum_dim", 1.0), ("mean_dim", 1 / 64)):
        got = ops[name](None, x16, 0)
        assert got.dtype == np.float16
        assert np.all(np.abs(got.astype(np.float64) - want * scale) <= _ulp(want * scale)), name
    got = ops["cumsum"](None, x16, 0)
    assert got.dtype == np.float16
    want = np.cumsum(x16.astype(np.float64), 0)
    assert np.all(np.abs(got.astype(np.float64) - want) <= _ulp(want))
