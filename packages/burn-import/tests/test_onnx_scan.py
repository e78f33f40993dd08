"""ONNX Scan as a generated loop, against the same recurrences written out in numpy float64."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import OnnxImportError, backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

F = T.FLOAT


def _scan_model(body, inputs, outputs, opset=17, inits=(), **attrs):
    return one_node("Scan", inputs, outputs, opset, inits, init_inputs=False, body=body, **attrs)


def _running_sum_body(scale=None):
    """state' = state + x_t (* scale, an outer value, if given); per-step output: state'."""
    nodes = [h.make_node("Add", ["s_in", "x_t"], ["s_out"])]
    if scale:
        nodes = [
            h.make_node("Mul", ["x_t", scale], ["xs"]),
            h.make_node("Add", ["s_in", "xs"], ["s_out"]),
        ]
    nodes.append(h.make_node("Identity", ["s_out"], ["y_t"]))
    return h.make_graph(
        nodes,
        "body",
        [h.make_tensor_value_info("s_in", F, [2]), h.make_tensor_value_info("x_t", F, [2])],
        [h.make_tensor_value_info("s_out", F, [2]), h.make_tensor_value_info("y_t", F, [2])],
    )


def test_running_sum():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    init = np.array([10, 20], np.float32)
    m = _scan_model(
        _running_sum_body(),
        [("init", F, [2]), ("x", F, [4, 2])],
        [("final", F, [2]), ("ys", F, [4, 2])],
        num_scan_inputs=1,
    )
    final, ys = backend.prepare(m).run([init, x])
    want = init.astype(np.float64) + np.cumsum(x, axis=0)
    np.testing.assert_array_equal(ys, want)
    np.testing.assert_array_equal(final, want[-1])


@pytest.mark.parametrize("in_dir", [0, 1])
@pytest.mark.parametrize("out_dir", [0, 1])
def test_axes_directions_and_an_outer_value(in_dir, out_dir):
    x = np.arange(10, dtype=np.float32).reshape(2, 5)  # scanned along axis 1
    init = np.zeros(2, np.float32)
    scale = nh.from_array(np.array([1.0, -2.0], np.float32), "scale")
    m = _scan_model(
        _running_sum_body("scale"),
        [("init", F, [2]), ("x", F, [2, 5])],
        [("final", F, [2]), ("ys", F, [2, 5])],
        inits=[scale],
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[in_dir],
        scan_output_axes=[1],
        scan_output_directions=[out_dir],
    )
    final, ys = backend.prepare(m).run([init, x])
    steps = x.T[::-1] if in_dir else x.T  # [5, 2], in visiting order
    sums = np.cumsum(steps.astype(np.float64) * np.array([1.0, -2.0]), axis=0)
    want = (sums[::-1] if out_dir else sums).T
    np.testing.assert_array_equal(ys, want)
    np.testing.assert_array_equal(final, sums[-1])


def test_opset8_scan_is_refused():
    body = _running_sum_body()
    m = _scan_model(
        body,
        [("init", F, [1, 2]), ("x", F, [1, 4, 2])],
        [("final", F, [1, 2]), ("ys", F, [1, 4, 2])],
        opset=8,
        num_scan_inputs=1,
    )
    m.graph.node[0].input.insert(0, "")  # opset 8: sequence_lens first
    with pytest.raises(OnnxImportError, match="opset-8 Scan"):
        backend.prepare(m)
