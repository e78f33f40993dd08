"""Malformed, truncated and hostile .onnx files: a clear OnnxImportError, never a hang or crash."""

from __future__ import annotations

import time

import numpy as np
import pytest
from _onnx_helpers import one_node, tiny_cnn
from burn_import.onnx import ModelGen, OnnxImportError, backend, load_model
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _refused(source, match: str):
    t0 = time.perf_counter()
    with pytest.raises(OnnxImportError, match=match):
        backend.prepare(source)
    assert time.perf_counter() - t0 < 10, "refusing a file must be quick"


def test_empty_and_garbage_bytes():
    _refused(b"", "not a valid ONNX model")
    _refused(b"\x08\x07\x12", "not a valid ONNX model")
    _refused(bytes(range(256)) * 4, "not a valid ONNX model")


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_file(tmp_path, fraction):
    data = tiny_cnn().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(OnnxImportError):
        ModelGen().input(path).out_dir(tmp_path / "out").run()
    assert not (tmp_path / "out/cut.py").exists()


def test_missing_file(tmp_path):
    with pytest.raises(OnnxImportError, match="not found"):
        ModelGen().input(tmp_path / "nope.onnx").out_dir(tmp_path).run()


def test_wrong_types_are_refused():
    m = one_node("Add", [("a", T.FLOAT, [2]), ("b", T.INT64, [2])], [("y", T.FLOAT, [2])])
    _refused(m, "invalid ONNX model|type")


def test_cycle_is_refused():
    nodes = [
        h.make_node("Relu", ["b"], ["a"], name="first"),
        h.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    g = h.make_graph(
        nodes,
        "cyc",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("a", T.FLOAT, [2])],
    )
    _refused(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), "cycle")


def test_missing_initializer_is_refused():
    m = tiny_cnn()
    del m.graph.initializer[0]  # W is read by conv1 but defined nowhere
    _refused(m, r"'W'.*missing initializer")


def test_huge_declared_input_shape_is_refused():
    m = one_node("Relu", [("x", T.FLOAT, [2**40, 2**40])], [("y", T.FLOAT, [2**40, 2**40])])
    _refused(m, "more than")


def test_huge_initializer_shape_without_data_is_refused():
    m = tiny_cnn()
    w = m.graph.initializer[0]
    del w.dims[:]
    w.dims.extend([2**20, 2**20, 3, 3])
    _refused(m, "initializer 'W'")


def test_initializer_with_short_data_is_refused():
    m = tiny_cnn()
    t = nh.from_array(np.zeros((4, 3, 3, 3), np.float32), "W")
    t.raw_data = t.raw_data[:10]
    m.graph.initializer[0].CopyFrom(t)
    _refused(m, "bytes of data")


def test_negative_dims_are_refused():
    m = tiny_cnn()
    m.graph.initializer[1].dims[0] = -4
    _refused(m, "negative dimension")


def test_duplicate_output_names_are_refused():
    nodes = [
        h.make_node("Relu", ["x"], ["y"], name="a"),
        h.make_node("Relu", ["x"], ["y"], name="b"),
    ]
    g = h.make_graph(
        nodes,
        "dup",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    _refused(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), "produced twice")


def test_graph_output_nobody_produces():
    g = h.make_graph(
        [],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("ghost", T.FLOAT, [2])],
    )
    _refused(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), "ghost")


def test_no_default_opset():
    g = h.make_graph(
        [],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("ai.onnx.ml", 3)])
    _refused(m, "no opset for the default ONNX domain")


def test_external_data_is_refused():
    m = tiny_cnn()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    del w.float_data[:]
    w.data_location = T.EXTERNAL
    w.external_data.add(key="location", value="../../etc/passwd")
    _refused(m, "external data")


def test_unsupported_dtype_input():
    m = one_node("Identity", [("x", T.STRING, [2])], [("y", T.STRING, [2])])
    _refused(m, "string is not supported")


def test_fuzzed_bytes_never_crash(tmp_path):
    rng = np.random.default_rng(0)
    data = bytearray(tiny_cnn().SerializeToString())
    for _ in range(60):
        mutated = bytearray(data)
        for pos in rng.integers(0, len(data), size=8):
            mutated[pos] = int(rng.integers(0, 256))
        try:
            load_model(bytes(mutated))
        except OnnxImportError:
            pass
