"""ModelGen end to end: generated source + record, loading, backends, training, options, CLI.

Expected values come from ONNX's reference implementation (`onnx.reference`), never from the
importer itself.
"""

from __future__ import annotations

import ast
import importlib.util
import sys

import numpy as np
import onnx
import pytest
from _onnx_helpers import one_node, reference, tiny_cnn
from _opencl_device import opencl_cpu_device
from burn_import.onnx import ModelGen, OnnxImportError, RecordType, backend, supported_ops
from burn_import.onnx.__main__ import main as cli_main
from burn_ndarray import NdArray
from burn_tensor import Tensor
from onnx import TensorProto as T
from onnx import helper as h


def _load(py, name="Model"):
    spec = importlib.util.spec_from_file_location(f"gen_{py.stem}_{id(py)}", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


@pytest.fixture()
def tiny(tmp_path):
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_cnn(), path)
    return path


@pytest.fixture()
def x():
    return np.random.default_rng(1).standard_normal((2, 3, 12, 12)).astype(np.float32)


def test_modelgen_writes_readable_module_and_record(tiny, tmp_path, x):
    out = tmp_path / "model"
    [py] = ModelGen().input(tiny).out_dir(out).run()
    assert py == out / "tiny.py" and (out / "tiny.mpk").is_file()
    src = py.read_text()
    ast.parse(src)
    # one field per weighted node, named after the node, the forward in graph order with the
    # ONNX names in comments
    assert "conv1: Conv2d  # Conv 'conv1'" in src and "fc: Linear  # Gemm 'fc'" in src
    fwd = src[src.index("def forward") :]
    assert fwd.index("# Conv 'conv1'") < fwd.index("# Relu 'relu1'") < fwd.index("# Gemm 'fc'")
    device = NdArray().device()
    model = _load(py).from_file(device=device)
    y = model.forward(Tensor.from_data(x, device)).numpy()
    np.testing.assert_allclose(y, reference(tiny_cnn(), {"x": x})[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("record_type", "ext"),
    [
        (RecordType.NamedMpk, ".mpk"),
        (RecordType.NamedMpkGz, ".mpk.gz"),
        (RecordType.Bincode, ".bin"),
        (RecordType.PrettyJson, ".json"),
        (RecordType.Json, ".json.gz"),
    ],
)
def test_record_types(tiny, tmp_path, x, record_type, ext):
    [py] = ModelGen().input(tiny).out_dir(tmp_path).record_type(record_type).run()
    assert (tmp_path / f"tiny{ext}").is_file()
    model = _load(py).from_file(device=NdArray().device())
    y = model.forward(Tensor.from_data(x, NdArray().device())).numpy()
    np.testing.assert_allclose(y, reference(tiny_cnn(), {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_half_precision_record_is_smaller_and_close(tiny, tmp_path, x):
    full = ModelGen().input(tiny).out_dir(tmp_path / "full").run()[0]
    half = ModelGen().input(tiny).out_dir(tmp_path / "half").half_precision().run()[0]
    assert (tmp_path / "half/tiny.mpk").stat().st_size < (tmp_path / "full/tiny.mpk").stat().st_size
    assert "HalfPrecisionSettings" in half.read_text() and full.is_file()
    model = _load(half).from_file(device=NdArray().device())
    y = model.forward(Tensor.from_data(x, NdArray().device())).numpy()
    np.testing.assert_allclose(y, reference(tiny_cnn(), {"x": x})[0], rtol=2e-2, atol=2e-2)


def test_generated_model_trains_under_autodiff(tiny, tmp_path, x):
    from burn_autodiff import Autodiff

    [py] = ModelGen().input(tiny).out_dir(tmp_path).run()
    device = Autodiff(NdArray()).device()
    model = _load(py).from_file(device=device)
    target = Tensor.from_data(np.zeros((2, 10), np.float32), device)

    def loss_of(m):
        d = m.forward(Tensor.from_data(x, device)) - target
        return (d * d).mean()

    loss = loss_of(model)
    grads = loss.backward()
    g = model.conv1.weight.val().grad(grads)
    assert g is not None and g.dims() == [4, 3, 3, 3] and np.isfinite(g.numpy()).all()
    # one plain gradient step lowers the loss: the imported weights are trainable parameters
    stepped = model.map(_Sgd(grads, 1e-3))
    assert float(loss_of(stepped).item()) < float(loss.item())


class _Sgd:
    def __init__(self, grads, lr):
        self.grads, self.lr = grads, lr

    def map_float(self, param):
        g = param.val().grad(self.grads)
        if g is None:
            return param
        return param.map(lambda t: Tensor.from_inner(t.inner() - g * self.lr))


def test_cli_writes_module(tiny, tmp_path, capsys):
    assert cli_main([str(tiny), str(tmp_path / "cli"), "--record-type", "Bincode"]) == 0
    assert (tmp_path / "cli/tiny.py").is_file() and (tmp_path / "cli/tiny.bin").is_file()
    assert "tiny.py" in capsys.readouterr().out


def test_cli_reports_unsupported_op(tmp_path, capsys):
    m = one_node("Foo", [("x", T.FLOAT, [2])], [("y", T.FLOAT, [2])])
    m.opset_import.append(h.make_opsetid("custom", 1))
    m.graph.node[0].domain = "custom"
    onnx.save(m, tmp_path / "foo.onnx")
    assert cli_main([str(tmp_path / "foo.onnx"), str(tmp_path / "o")]) == 1
    assert "Foo" in capsys.readouterr().err


def test_unsupported_op_raises_at_import_naming_op_node_opset():
    m = one_node("ImageDecoder", [("x", T.UINT8, [4])], [("y", T.UINT8, [None] * 3)], opset=20)
    with pytest.raises(OnnxImportError) as err:
        backend.prepare(m)
    msg = str(err.value)
    assert "'ImageDecoder'" in msg and "'n0'" in msg and "opset 20" in msg
    assert (err.value.op_type, err.value.node, err.value.opset) == ("ImageDecoder", "n0", 20)


def test_unsupported_attribute_value_raises_at_import():
    m = one_node(
        "Resize",
        [("x", T.FLOAT, [1, 1, 2, 2]), ("roi", T.FLOAT, [0]), ("scales", T.FLOAT, [4])],
        [("y", T.FLOAT, [1, 1, 4, 4])],
        opset=19,
        mode="nearest",
        antialias=1,
    )
    with pytest.raises(OnnxImportError, match=r"'Resize' \(node 'n0', opset 19\): antialias"):
        backend.prepare(m)


def test_unknown_attribute_is_refused_before_conversion():
    from burn_import.onnx import generate, load_model

    m = load_model(one_node("Relu", [("x", T.FLOAT, [2])], [("y", T.FLOAT, [2])], opset=17))
    m.graph.node[0].attribute.append(h.make_attribute("alpha", 1.0))  # past onnx's checker
    with pytest.raises(OnnxImportError, match=r"'Relu'.*attribute 'alpha' is not supported"):
        generate(m)


def test_old_opset_is_upgraded_not_refused(x):
    old = tiny_cnn(opset=7)
    rep = backend.prepare(old)
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, reference(tiny_cnn(), {"x": x})[0], rtol=1e-5, atol=1e-5)
    assert "opset 13" in rep.gen.source


def test_numpy_rank_promotion_is_explicit_unsqueeze():
    m = one_node("Add", [("a", T.FLOAT, [2, 3]), ("b", T.FLOAT, [3])], [("y", T.FLOAT, [2, 3])])
    rep = backend.prepare(m)
    assert "b.unsqueeze(2)" in rep.gen.source
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(rep.run([a, b])[0], a + b)


def test_runs_on_opencl(tiny, tmp_path, x):
    device = opencl_cpu_device()  # skips only when there is no OpenCL at all
    [py] = ModelGen().input(tiny).out_dir(tmp_path).run()
    model = _load(py).from_file(device=device)
    y = model.forward(Tensor.from_data(x, device)).numpy()
    np.testing.assert_allclose(y, reference(tiny_cnn(), {"x": x})[0], rtol=1e-4, atol=1e-4)


def test_supported_ops_table_lists_families():
    ops = supported_ops()
    assert {"Conv", "Gemm", "Attention", "Resize", "LSTM"} <= set(ops)
    assert ops["Conv"][2] == sorted(
        ["auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"]
    )
