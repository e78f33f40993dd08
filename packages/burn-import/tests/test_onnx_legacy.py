"""Old-opset semantics that the version converter drops: PRelu's per-channel slope (opset < 7).

Expected values are the definition in numpy: x where x >= 0, slope * x elsewhere, with the
opset-6 slope taken per channel (axis 1) and the opset-7 slope broadcast from the right.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _prelu_model(x_shape, slope, opset, ir_version):
    g = h.make_graph(
        [h.make_node("PRelu", ["x", "s"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, list(x_shape))]
        + ([h.make_tensor_value_info("s", T.FLOAT, list(slope.shape))] if ir_version < 4 else []),
        [h.make_tensor_value_info("y", T.FLOAT, list(x_shape))],
        initializer=[nh.from_array(slope, "s")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir_version)


@pytest.mark.parametrize("x_shape", [(2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("ir_version", [3, 7])
def test_opset6_prelu_slope_is_per_channel(x_shape, ir_version):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(x_shape).astype(np.float32)
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    (y,) = backend.prepare(_prelu_model(x_shape, slope, 6, ir_version)).run([x])
    s = slope.reshape([3] + [1] * (len(x_shape) - 2))
    np.testing.assert_allclose(y, np.where(x < 0, x * s, x), rtol=1e-6)


def test_opset7_prelu_slope_broadcasts_from_the_right():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    slope = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    (y,) = backend.prepare(_prelu_model(x.shape, slope, 9, 7)).run([x])
    np.testing.assert_allclose(y, np.where(x < 0, x * slope, x), rtol=1e-6)
