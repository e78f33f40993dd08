"""ONNX Unique, computed on the host: its output shapes depend on the values (as NonZero's)."""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor


def unique(x: Tensor, axis: int | None, sorted_: bool):
    """(Y, indices, inverse_indices, counts) of ONNX Unique.

    Without `axis` the input is flattened and Y holds its distinct elements; with it, Y holds
    the distinct slices along `axis`. Sorted (the default), Y is in ascending (lexicographic)
    order; otherwise in the order of first occurrence. `indices` are the first occurrences,
    `inverse_indices` map every element (slice) of x to its entry of Y, `counts` count them.

    Example:
        >>> from burn_ndarray import NdArray
        >>> t = Tensor.from_data(np.array([2.0, 1.0, 2.0, 3.0], np.float32), NdArray().device())
        >>> [v.numpy().tolist() for v in unique(t, None, False)]
        [[2.0, 1.0, 3.0], [0, 1, 3], [0, 1, 0, 2], [2, 1, 1]]
    """
    a = np.asarray(x.numpy())
    if axis is None:
        a, ax = a.reshape(-1), 0
    else:
        ax = axis % a.ndim
    y, first, inverse, counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True, axis=ax
    )
    inverse = inverse.reshape(-1)
    if not sorted_:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y, first, counts, inverse = (
            np.take(y, order, axis=ax),
            first[order],
            counts[order],
            rank[inverse],
        )
    dev = x.device

    def ids(v):
        return Tensor.from_data(np.asarray(v, np.int64), dev, DType.I64)

    return Tensor.from_data(y, dev, x.dtype), ids(first), ids(inverse), ids(counts)
