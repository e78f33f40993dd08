"""Tests written for mutants of `_custom.py` that the suite let survive (tools/mutation)."""

from __future__ import annotations

import numpy as np
from burn_autodiff import reduce_to_shape
from burn_ndarray import NdArray
from burn_tensor import Tensor


def test_reduce_to_shape_sums_an_empty_broadcast_dim_to_zeros():
    # a [1, 3] bias broadcast over an empty batch: its gradient is [1, 3] zeros, not [0, 3]
    # (`have != 1` must sum a size-0 dim too, not only dims of size > 1)
    d = NdArray().device()
    g = reduce_to_shape(Tensor.zeros([0, 3], d), [1, 3])
    assert g.dims() == [1, 3]
    np.testing.assert_array_equal(g.numpy(), np.zeros((1, 3)))


def test_reduce_to_shape_keeps_size_one_dims_and_sums_broadcast_ones():
    d = NdArray(float_dtype="float64").device()
    x = np.arange(6.0).reshape(2, 1, 3)
    g = reduce_to_shape(Tensor.from_data(x, d), [1, 1, 3])
    np.testing.assert_array_equal(g.numpy(), x.sum(0, keepdims=True))
