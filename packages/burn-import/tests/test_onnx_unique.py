"""ONNX Unique against hand-derived outputs (sorted or by first occurrence, flat or along an axis)."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T


def _run(x, outs, **attrs):
    y_rank = x.ndim if "axis" in attrs else 1
    m = one_node(
        "Unique",
        [("x", T.FLOAT, list(x.shape))],
        [(n, T.FLOAT, [None] * y_rank) if n == "y" else (n, T.INT64, [None]) for n in outs],
        opset=11,
        **attrs,
    )
    return backend.prepare(m).run([x])


def test_flat_by_first_occurrence():
    x = np.array([[2.0, 1.0], [1.0, 3.0], [2.0, 2.0]], np.float32)
    y, idx, inv, cnt = _run(x, ["y", "i", "v", "c"], sorted=0)
    assert y.tolist() == [2.0, 1.0, 3.0]
    assert idx.tolist() == [0, 1, 3]  # first positions in the flattened input
    assert inv.tolist() == [0, 1, 1, 2, 0, 0]
    assert cnt.tolist() == [3, 2, 1]


def test_flat_sorted():
    x = np.array([2.0, 1.0, 1.0, 3.0, 2.0], np.float32)
    y, idx, inv, cnt = _run(x, ["y", "i", "v", "c"])
    assert (y.tolist(), idx.tolist(), inv.tolist(), cnt.tolist()) == (
        [1.0, 2.0, 3.0],
        [1, 0, 3],
        [1, 0, 0, 2, 1],
        [2, 2, 1],
    )


@pytest.mark.parametrize("sorted_", [0, 1])
def test_rows_along_an_axis(sorted_):
    x = np.array([[3.0, 0.0], [1.0, 5.0], [3.0, 0.0], [1.0, 4.0]], np.float32)
    y, idx, inv, cnt = _run(x, ["y", "i", "v", "c"], axis=0, sorted=sorted_)
    if sorted_:  # rows in lexicographic order: [1, 4] < [1, 5] < [3, 0]
        assert y.tolist() == [[1.0, 4.0], [1.0, 5.0], [3.0, 0.0]]
        assert (idx.tolist(), inv.tolist(), cnt.tolist()) == ([3, 1, 0], [2, 1, 2, 0], [1, 1, 2])
    else:
        assert y.tolist() == [[3.0, 0.0], [1.0, 5.0], [1.0, 4.0]]
        assert (idx.tolist(), inv.tolist(), cnt.tolist()) == ([0, 1, 3], [0, 1, 0, 2], [2, 1, 1])


def test_only_the_values_requested():
    (y,) = _run(np.array([5.0, 5.0, -1.0], np.float32), ["y"], sorted=1)
    assert y.tolist() == [-1.0, 5.0]
