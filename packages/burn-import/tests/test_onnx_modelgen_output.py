"""What `ModelGen` writes, and what it refuses to write (security review finding F21): output
names that collide or shadow importable modules, class names that shadow builtins or the
module's own globals, and nothing left on disk when an import fails."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from burn_import.onnx import ModelGen, OnnxImportError
from burn_import.onnx.__main__ import main as cli_main
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _relu():
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _bad_groups():
    """Valid for onnx.checker, but its Conv layer cannot be built (4 output channels, 3 groups):
    the generated module fails in `init`, after the source was generated."""
    g = h.make_graph(
        [h.make_node("Conv", ["x", "W"], ["y"], group=3)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [None] * 4)],
        initializer=[nh.from_array(np.ones((4, 1, 1, 1), np.float32), "W")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_stems_that_sanitize_alike_are_refused_before_writing(tmp_path):
    for name in ("a-b.onnx", "a_b.onnx"):
        onnx.save(_relu(), tmp_path / name)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"a-b\.onnx.*a_b\.onnx.*'a_b'"):
        ModelGen().input(tmp_path / "a-b.onnx").input(tmp_path / "a_b.onnx").out_dir(out).run()
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("stem", ["numpy", "os", "json", "burn_tensor", "onnx", "class", "ops"])
def test_module_names_that_shadow_importable_modules_get_a_suffix(tmp_path, stem):
    onnx.save(_relu(), tmp_path / f"{stem}.onnx")
    [py] = ModelGen().input(tmp_path / f"{stem}.onnx").out_dir(tmp_path / "out").run()
    assert py.name == f"{stem}_model.py"
    assert (tmp_path / "out" / f"{stem}_model.mpk").is_file()
    assert not (tmp_path / "out" / f"{stem}.py").exists()


@pytest.mark.parametrize(
    "name",
    ["class", "None", "ops", "match", "case", "type", "_", "print", "Module", "Tensor", "RECORD",
     "pathlib", "default_device", "Conv2d", "NamedMpkFileRecorder", "\uff2d", "Mod\u00e9l", "1M"],
)
def test_class_names_that_shadow_or_are_not_plain_identifiers_are_refused(name):
    with pytest.raises(ValueError, match="class_name"):
        ModelGen().class_name(name)


def test_plain_class_name_is_used(tmp_path):
    onnx.save(_relu(), tmp_path / "m.onnx")
    [py] = ModelGen().input(tmp_path / "m.onnx").out_dir(tmp_path / "out").class_name("Net").run()
    assert "class Net(Module):" in py.read_text()


def test_failed_import_leaves_nothing_on_disk(tmp_path):
    onnx.save(_bad_groups(), tmp_path / "bad.onnx")
    out = tmp_path / "out"
    with pytest.raises(OnnxImportError, match="cannot be built"):
        ModelGen().input(tmp_path / "bad.onnx").out_dir(out).development().run()
    assert sorted(p.name for p in out.rglob("*")) == []


def test_module_that_cannot_be_built_is_a_typed_error_in_prepare():
    from burn_import.onnx import backend

    with pytest.raises(OnnxImportError, match="cannot be built"):
        backend.prepare(_bad_groups())


def test_failed_record_write_leaves_no_module(tmp_path):
    onnx.save(_relu(), tmp_path / "m.onnx")
    out = tmp_path / "out"
    (out / "m.mpk").mkdir(parents=True)  # the record cannot be written there
    with pytest.raises(OSError):
        ModelGen().input(tmp_path / "m.onnx").out_dir(out).run()
    assert sorted(p.name for p in out.iterdir()) == ["m.mpk"]


def test_cli_reports_refused_class_name(tmp_path, capsys):
    onnx.save(_relu(), tmp_path / "m.onnx")
    assert cli_main([str(tmp_path / "m.onnx"), str(tmp_path / "o"), "--class-name", "ops"]) == 1
    assert "class_name" in capsys.readouterr().err
