"""Empty tensors through ONNX ops: reductions over an empty set, Reshape to a zero dim, Trilu.

The expected values are ONNX's definitions written out by hand: a max over nothing is the
lowest value of the type (False for bool, -inf for floats), a min the highest, a log-sum-exp
log(0) = -inf; a reshape or triangle of an empty tensor is empty, with the requested shape.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import numpy_helper as nh

EMPTY_REDUCE = [
    ("ReduceMax", T.FLOAT, np.float32, -np.inf),
    ("ReduceMin", T.FLOAT, np.float32, np.inf),
    ("ReduceLogSumExp", T.FLOAT, np.float32, -np.inf),
    ("ReduceMax", T.BOOL, np.bool_, False),
    ("ReduceMin", T.BOOL, np.bool_, True),
    ("ReduceMax", T.INT32, np.int32, np.iinfo(np.int32).min),
    ("ReduceMin", T.INT64, np.int64, np.iinfo(np.int64).max),
]


@pytest.mark.parametrize(("op", "elem", "np_type", "want"), EMPTY_REDUCE)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_over_an_empty_axis(op, elem, np_type, want, keepdims):
    x = np.zeros((2, 0, 4), np_type)
    axes = nh.from_array(np.array([1], np.int64), "axes")
    out_shape = [2, 1, 4] if keepdims else [2, 4]
    m = one_node(
        op,
        [("x", elem, [2, 0, 4])],
        [("y", elem, out_shape)],
        opset=18,
        inits=[axes],
        keepdims=keepdims,
    )
    (y,) = backend.prepare(m).run([x])
    assert y.shape == tuple(out_shape)
    assert y.dtype == np_type
    assert (y == want).all()


def test_reshape_allowzero_gives_the_zero_dim():
    x = np.zeros((0, 3, 4), np.float32)
    m = one_node(
        "Reshape",
        [("x", T.FLOAT, [0, 3, 4]), ("s", T.INT64, [3])],
        [("y", T.FLOAT, [3, 4, 0])],
        opset=14,
        allowzero=1,
    )
    (y,) = backend.prepare(m).run([x, np.array([3, 4, 0], np.int64)])
    assert y.shape == (3, 4, 0)


def test_reshape_without_allowzero_still_copies_dims():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    m = one_node(
        "Reshape",
        [("x", T.FLOAT, [2, 3, 4]), ("s", T.INT64, [2])],
        [("y", T.FLOAT, [2, 12])],
        opset=14,
    )
    (y,) = backend.prepare(m).run([x, np.array([0, -1], np.int64)])
    np.testing.assert_array_equal(y, x.reshape(2, 12))


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_of_an_empty_matrix(upper):
    x = np.zeros((3, 0, 5), np.float32)
    m = one_node(
        "Trilu", [("x", T.FLOAT, [3, 0, 5])], [("y", T.FLOAT, [3, 0, 5])], opset=14, upper=upper
    )
    (y,) = backend.prepare(m).run([x])
    assert y.shape == (3, 0, 5)


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_keeps_its_triangle(upper):
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    m = one_node("Trilu", [("x", T.FLOAT, [3, 4])], [("y", T.FLOAT, [3, 4])], opset=14, upper=upper)
    (y,) = backend.prepare(m).run([x])
    np.testing.assert_array_equal(y, np.triu(x) if upper else np.tril(x))
