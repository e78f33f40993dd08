"""QuantizeLinear's arithmetic: the division's precision and saturation to the declared type.

Expected values are derived by hand: float32(0.5) / float32(5/255) is exactly 25.5 in float32
(checked below with numpy), which rounds half to even to 26; in float64 the same quotient is
25.4999996 and rounds to 25.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import numpy_helper as nh

SCALE = np.float32(5 / 255)


def _model(zp, out_elem, opset=21, **attrs):
    return one_node(
        "QuantizeLinear",
        [("x", T.FLOAT, [3])],
        [("y", out_elem, [3])],
        opset=opset,
        inits=[nh.from_array(np.array(SCALE), "s"), nh.from_array(zp, "z")],
        **attrs,
    )


def test_division_in_float32_for_float32_inputs():
    assert np.float32(0.5) / SCALE == np.float32(25.5)
    assert 0.5 / np.float64(SCALE) < 25.5
    x = np.array([0.5, -0.5, 1.0], np.float32)
    (y,) = backend.prepare(_model(np.array(153, np.uint8), T.UINT8)).run([x])
    assert y.tolist() == [153 + 26, 153 - 26, 153 + 51]


def test_precision_attribute_chooses_the_division_type():
    x = np.array([0.5, -0.5, 1.0], np.float32)
    m = _model(np.array(153, np.uint8), T.UINT8, opset=28, precision=T.DOUBLE)
    (y,) = backend.prepare(m).run([x])
    assert y.tolist() == [153 + 25, 153 - 25, 153 + 51]


@pytest.mark.parametrize(
    ("zp", "elem", "want"),
    [
        (np.array(0, np.uint16), T.UINT16, [65535, 0, 51]),
        (np.array(0, np.int16), T.INT16, [32767, -32768, 51]),
        (np.array(10, np.uint8), T.UINT8, [255, 0, 61]),
        (np.array(0, np.int8), T.INT8, [127, -128, 51]),
    ],
)
def test_saturates_to_the_declared_type(zp, elem, want):
    x = np.array([1e6, -1e6, 1.0], np.float32)
    (y,) = backend.prepare(_model(zp, elem)).run([x])
    assert y.dtype == zp.dtype
    assert y.tolist() == want
