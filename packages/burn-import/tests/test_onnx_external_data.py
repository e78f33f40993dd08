"""Weights saved as external data (torch's dynamo exporter's default): read from beside the
.onnx file, and only from there."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from _onnx_helpers import reference, tiny_cnn
from burn_import.onnx import ModelGen, OnnxImportError, backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

X = np.random.default_rng(3).standard_normal((2, 3, 12, 12)).astype(np.float32)


def _save_external(model, folder, location="w.data", threshold=0):
    path = folder / "net.onnx"
    model = onnx.ModelProto.FromString(model.SerializeToString())  # onnx.save edits its argument
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location=location, size_threshold=threshold, convert_attribute=True)  # fmt: skip
    return path


def _external_init(model, name):
    (t,) = [t for t in model.graph.initializer if t.name == name]
    return t


def test_a_model_with_external_weights_imports_and_matches_the_reference(tmp_path):
    model = tiny_cnn()
    path = _save_external(model, tmp_path)
    assert (tmp_path / "w.data").stat().st_size > 0
    saved = onnx.load(str(path), load_external_data=False)
    assert all(t.data_location == T.EXTERNAL for t in saved.graph.initializer)
    (want,) = reference(model, {"x": X})
    (got,) = backend.prepare(str(path)).run({"x": X})
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # and through ModelGen: the record holds the weights (the .data file is not needed after)
    [py] = ModelGen().input(path).out_dir(tmp_path / "gen").run()
    assert py.exists() and py.with_suffix(".mpk").exists()


def test_external_constant_attribute_and_offsets_into_one_file(tmp_path):
    """A Constant node's tensor can be external too; tensors share the file at offsets."""
    c = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.full((2, 3), 0.5, np.float32)
    nodes = [
        h.make_node("Constant", [], ["c"], name="k", value=nh.from_array(c, "c")),
        h.make_node("Add", ["x", "c"], ["s"]),
        h.make_node("Mul", ["s", "b"], ["y"]),
    ]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [nh.from_array(b, "b")])  # fmt: skip
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = _save_external(model, tmp_path)
    saved = onnx.load(str(path), load_external_data=False)
    assert saved.graph.node[0].attribute[0].t.data_location == T.EXTERNAL
    x = np.ones((2, 3), np.float32)
    (got,) = backend.prepare(str(path)).run({"x": x})
    np.testing.assert_array_equal(np.asarray(got), (x + c) * b)


def _tamper(tmp_path, **entries):
    """The tiny CNN saved with external data, then one entry of its first weight rewritten."""
    path = _save_external(tiny_cnn(), tmp_path)
    model = onnx.load(str(path), load_external_data=False)
    t = model.graph.initializer[0]
    info = {e.key: e.value for e in t.external_data}
    info.update(entries)
    del t.external_data[:]
    for k, v in info.items():
        if v is not None:
            t.external_data.add(key=k, value=v)
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize(
    "location, match",
    [
        ("/etc/passwd", "must be a relative path"),
        ("../w.data", "must be a relative path"),
        ("sub/../../w.data", "must be a relative path"),
        ("C:\\\\Windows\\\\win.ini", "must be a relative path"),
        ("missing.data", "does not exist"),
        ("", "without a 'location'"),
    ],
)
def test_locations_outside_the_folder_or_missing_are_refused(tmp_path, location, match):
    path = _tamper(tmp_path, location=location)
    with pytest.raises(OnnxImportError, match=match):
        backend.prepare(str(path))


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    outside = tmp_path / "secret"
    outside.write_bytes(b"\0" * 4096)
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    path = _save_external(tiny_cnn(), model_dir)
    os.symlink(outside, model_dir / "link.data")
    model = onnx.load(str(path), load_external_data=False)
    for t in model.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "link.data"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(OnnxImportError, match="outside the model's folder"):
        backend.prepare(str(path))


def test_a_directory_is_not_a_data_file(tmp_path):
    (tmp_path / "d").mkdir()
    path = _tamper(tmp_path, location="d")
    with pytest.raises(OnnxImportError, match="is not a regular file"):
        backend.prepare(str(path))


@pytest.mark.parametrize(
    "entries, match",
    [
        ({"length": "4"}, "does not match its shape"),
        ({"offset": "999999999"}, "past the end"),
        ({"offset": "-4"}, "is negative"),
        ({"length": "lots"}, "not an integer"),
    ],
)
def test_offsets_and_lengths_are_checked_before_reading(tmp_path, entries, match):
    path = _tamper(tmp_path, **entries)
    with pytest.raises(OnnxImportError, match=match):
        backend.prepare(str(path))


def test_a_truncated_data_file_is_refused(tmp_path):
    path = _save_external(tiny_cnn(), tmp_path)
    data = tmp_path / "w.data"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(OnnxImportError, match="past the end|does not match"):
        backend.prepare(str(path))


def test_bytes_or_a_modelproto_with_external_data_say_to_pass_the_path(tmp_path):
    path = _save_external(tiny_cnn(), tmp_path)
    with pytest.raises(OnnxImportError, match="pass the file's path"):
        backend.prepare(path.read_bytes())
    with pytest.raises(OnnxImportError, match="pass the file's path"):
        backend.prepare(onnx.load(str(path), load_external_data=False))
    # onnx.load(path) reads the data itself: that ModelProto imports
    (got,) = backend.prepare(onnx.load(str(path))).run({"x": X})
    assert np.asarray(got).shape == (2, 10)
