"""Small ONNX models built with `onnx.helper` for the importer's tests (never committed as files)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def tiny_cnn(opset: int = 13, seed: int = 0) -> onnx.ModelProto:
    """Conv(pad 1) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(transB): `[N, 3, 12, 12]` -> `[N, 10]`."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    lw = (rng.standard_normal((10, 4 * 6 * 6)) * 0.1).astype(np.float32)
    lb = rng.standard_normal(10).astype(np.float32)
    nodes = [
        h.make_node("Conv", ["x", "W", "B"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c"], ["r"], name="relu1"),
        h.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Flatten", ["p"], ["f"], name="flat"),
        h.make_node("Gemm", ["f", "L", "LB"], ["y"], name="fc", transB=1),
    ]
    g = h.make_graph(
        nodes,
        "tiny",
        [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 12, 12])],
        [h.make_tensor_value_info("y", T.FLOAT, ["N", 10])],
        initializer=[
            nh.from_array(w, "W"),
            nh.from_array(b, "B"),
            nh.from_array(lw, "L"),
            nh.from_array(lb, "LB"),
        ],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def reference(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """ONNX's own reference implementation (the expected values)."""
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)


def one_node(
    op: str, inputs, outputs, opset: int = 17, inits=(), init_inputs: bool = True, **attrs
) -> onnx.ModelProto:
    """A one-node model; `inputs`/`outputs` are (name, elem type, shape) triples. `inits` are
    graph initializers, also the node's last inputs unless `init_inputs=False` (outer-scope
    values a subgraph attribute reads by name, as Scan/Loop bodies do)."""
    node = h.make_node(
        op,
        [i[0] for i in inputs] + ([i.name for i in inits] if init_inputs else []),
        [o[0] for o in outputs],
        name="n0",
        **attrs,
    )
    g = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info(*o) for o in outputs],
        initializer=list(inits),
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
