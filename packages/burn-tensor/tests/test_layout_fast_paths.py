"""The direct paths of `narrow` (slices built without `normalize`), `flatten` (no `reshape`
checks) and `stack` (one backend cat of reshaped inputs) against numpy, zero-size dims and
negative dims included."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Tensor, TensorCheckError


@pytest.fixture
def dev():
    from burn_ndarray import NdArray

    return NdArray().device()


SHAPES = [(2, 3, 4), (1, 0, 5), (3,), (2, 1, 3, 2)]


@pytest.mark.parametrize("shape", SHAPES)
def test_narrow_flatten_stack_match_numpy(shape, dev):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = Tensor.from_data(x, dev)
    rank = len(shape)
    for d in range(-rank, rank):
        n = shape[d]
        for start in range(-n, n + 1):
            s = start + n if start < 0 else start
            for length in range(0, n - s + 1):
                want = np.take(x, range(s, s + length), axis=d)
                got = t.narrow(d, start, length)
                assert got.dims() == list(want.shape)
                np.testing.assert_array_equal(got.numpy(), want)
        for d2 in range(d % rank, rank):
            a = d % rank
            want = x.reshape(shape[:a] + (-1 if x.size else int(np.prod(shape[a : d2 + 1])),)
                             + shape[d2 + 1 :])  # fmt: skip
            got = t.flatten(a, d2)
            assert got.dims() == list(want.shape)
            np.testing.assert_array_equal(got.numpy(), want)
    assert t.flatten(0, 0) is t
    y = x + 100
    for d in range(-rank - 1, rank + 1):
        got = Tensor.stack([t, Tensor.from_data(y, dev), t], d)
        np.testing.assert_array_equal(got.numpy(), np.stack([x, y, x], d))
    np.testing.assert_array_equal(Tensor.stack([t], 0).numpy(), x[None])


def test_narrow_out_of_range_is_a_typed_error(dev):
    t = Tensor.from_data(np.zeros((2, 3), np.float32), dev)
    with pytest.raises(TensorCheckError, match="narrow"):
        t.narrow(1, 2, 2)
    with pytest.raises(TensorCheckError, match="narrow"):
        t.narrow(2, 0, 1)
