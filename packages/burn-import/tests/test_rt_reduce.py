"""`ops.reduce` (ONNX's ReduceX at run time): a run of consecutive axes is reduced as one merged
dim (ShuffleNet's global mean pool over [2, 3]), other axis sets dim by dim; both against numpy
float64 for every kind, with and without keepdims, negative axes included."""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import ops

RNG = np.random.default_rng(37)
X = RNG.uniform(0.5, 1.5, (2, 3, 4, 5))

NUMPY = {
    "sum": lambda x, ax: x.sum(ax, keepdims=True),
    "mean": lambda x, ax: x.mean(ax, keepdims=True),
    "max": lambda x, ax: x.max(ax, keepdims=True),
    "min": lambda x, ax: x.min(ax, keepdims=True),
    "prod": lambda x, ax: x.prod(ax, keepdims=True),
    "l1": lambda x, ax: np.abs(x).sum(ax, keepdims=True),
    "l2": lambda x, ax: np.sqrt((x * x).sum(ax, keepdims=True)),
    "logsum": lambda x, ax: np.log(x.sum(ax, keepdims=True)),
    "sumsquare": lambda x, ax: (x * x).sum(ax, keepdims=True),
    "logsumexp": lambda x, ax: np.log(np.exp(x).sum(ax, keepdims=True)),
}


@pytest.mark.parametrize("kind", sorted(NUMPY))
@pytest.mark.parametrize("axes", [[2, 3], [-2, -1], [1, 2, 3], [0, 1], [1, 3], [2]])
@pytest.mark.parametrize("keepdims", [True, False])
def test_reduce_against_numpy(kind, axes, keepdims):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    dev = NdArray().device()
    x = Tensor.from_data(X.astype(np.float32), dev)
    got = ops.reduce(x, kind, axes, keepdims, 4, False).numpy()
    norm = tuple(sorted(a % 4 for a in axes))
    want = NUMPY[kind](X, norm)
    if not keepdims:
        want = want.squeeze(norm)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
