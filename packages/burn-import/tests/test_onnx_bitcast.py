"""ONNX BitCast against hand-derived bit patterns (IEEE 754 and two's complement)."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import OnnxImportError, backend
from onnx import TensorProto as T
from onnx import helper as h

CASES = [
    # (from, to, input, expected)
    (T.FLOAT, T.INT32, np.array([1.0, -2.0, 0.0], np.float32), [0x3F800000, -(2**30), 0]),
    (T.INT32, T.FLOAT, np.array([0x40490FDB, 0x7F800000], np.int32), [np.float32(np.pi), np.inf]),
    (T.DOUBLE, T.INT64, np.array([1.0], np.float64), [0x3FF0000000000000]),
    (T.UINT32, T.INT32, np.array([4294967295, 7], np.uint32), [-1, 7]),
    (T.UINT16, T.INT16, np.array([65535, 32768], np.uint16), [-1, -32768]),
    (T.INT8, T.UINT8, np.array([-1, -128, 5], np.int8), [255, 128, 5]),
    (T.BOOL, T.UINT8, np.array([True, False], np.bool_), [1, 0]),
]


@pytest.mark.parametrize(("src", "to", "x", "want"), CASES)
def test_bitcast(src, to, x, want):
    m = one_node(
        "BitCast", [("x", src, list(x.shape))], [("y", to, list(x.shape))], opset=26, to=to
    )
    (y,) = backend.prepare(m).run([x])
    assert y.dtype == h.tensor_dtype_to_np_dtype(to)
    assert y.tolist() == want


def test_bitcast_between_widths_is_refused():
    m = one_node("BitCast", [("x", T.FLOAT, [2])], [("y", T.INT64, [2])], opset=26, to=T.INT64)
    with pytest.raises(OnnxImportError, match="float32 and int64 differ in width"):
        backend.prepare(m)
