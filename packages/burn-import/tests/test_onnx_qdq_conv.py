"""QDQ convolutions (`DequantizeLinear(8-bit activation) -> Conv(DequantizeLinear(int8 W))`) run
on the activation's integers (`ops.qdq_conv`; NdArray's `qdq_conv2d`: exact int32 sums).

Graphs are built with `onnx.helper` as onnxruntime's `quantize_static` writes them (a float
input quantized by QuantizeLinear, int8 weights per tensor or per output channel, an int32 bias
dequantized with s_x * s_w); the expected values are onnx's reference evaluator's."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from burn_import.onnx import backend
from burn_ndarray import _native_quant
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

RNG = np.random.default_rng(37)


def _qdq_conv_model(
    signed, zp, per_channel, stride, pads, batch=2, c=5, hw=(9, 11), co=6, requantize=False
):
    """x -> QuantizeLinear -> DequantizeLinear -> Conv(DQ(int8 W), DQ(int32 bias)) -> y; with
    `requantize`, y -> QuantizeLinear(uint8) -> DequantizeLinear -> z, and y is an output too
    when requantize == "both" (two readers: the conv writes float)."""
    sx = np.float32(0.04)
    w = RNG.integers(-128, 128, (co, c, 3, 3)).astype(np.int8)
    w[0, 0] = -128  # the weight value int8 cannot negate
    w[1, 0] = 127
    sw = (RNG.random(co) * 0.02 + 0.002).astype(np.float32) if per_channel else np.float32(0.01)
    sw = np.asarray(sw, np.float32)
    bq = RNG.integers(-3000, 3000, co).astype(np.int32)
    sb = (np.float32(sx) * sw).astype(np.float32).reshape(-1)
    sb = sb if per_channel else sb.reshape(())
    zpa = np.asarray(zp, np.int8 if signed else np.uint8)
    inits = {"sx": np.asarray(sx), "zx": zpa, "wq": w, "sw": sw, "bq": bq, "sb": sb}
    nodes = [
        h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        h.make_node("DequantizeLinear", ["wq", "sw"], ["w"], axis=0),
        h.make_node("DequantizeLinear", ["bq", "sb"], ["b"], axis=0),
        h.make_node("Conv", ["xd", "w", "b"], ["y"], strides=stride, pads=pads),
    ]
    out = [(n + pads[i] + pads[i + 2] - 3) // stride[i] + 1 for i, n in enumerate(hw)]
    outputs = [h.make_tensor_value_info("y", T.FLOAT, [batch, co, *out])]
    if requantize:
        inits.update(sy=np.asarray(np.float32(0.05)), zy=np.asarray(np.uint8(17)))
        nodes += [
            h.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"]),
            h.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["z"]),
        ]
        z = h.make_tensor_value_info("z", T.FLOAT, [batch, co, *out])
        outputs = [z] + (outputs if requantize == "both" else [])
    g = h.make_graph(
        nodes,
        "qdq_conv",
        [h.make_tensor_value_info("x", T.FLOAT, [batch, c, *hw])],
        outputs,
        initializer=[nh.from_array(v, k) for k, v in inits.items()],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    x = RNG.standard_normal((batch, c, *hw)).astype(np.float32) * 3
    x[0, 0, 0, :4] = [-100, 100, 0, -0.0]  # saturates at both ends of the type; zeros
    return m, x


@pytest.mark.parametrize(
    "signed,zp,per_channel,stride,pads",
    [
        (False, 128, False, [1, 1], [1, 1, 1, 1]),
        (False, 0, True, [2, 2], [1, 1, 1, 1]),
        (False, 255, True, [1, 2], [0, 2, 1, 0]),
        (True, -3, False, [2, 1], [1, 0, 0, 1]),
    ],
)
def test_qdq_conv_matches_the_reference_evaluator(signed, zp, per_channel, stride, pads):
    m, x = _qdq_conv_model(signed, zp, per_channel, stride, pads)
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    src = rep.gen.source
    assert "ops.qdq_conv(" in src
    assert "ops.dequantize(" not in src  # the activation's float value is never written


@pytest.mark.skipif(_native_quant.lib() is None, reason=_native_quant.status())
@pytest.mark.parametrize("requantize", [False, True])
def test_without_the_native_kernel_the_conv_runs_dequantized(monkeypatch, requantize):
    """Where the backend's `qdq_conv2d` declines (here: no native library), `ops.qdq_conv`
    dequantizes and runs the layer (then quantizes, when it took a QuantizeLinear): the same
    values to float rounding (to one step of the output scale once quantized)."""
    m, x = _qdq_conv_model(False, 128, True, [1, 1], [1, 1, 1, 1], requantize=requantize)
    rep = backend.prepare(m)
    (native,) = rep.run([x])
    monkeypatch.setitem(_native_quant._STATE, "lib", None)
    (fallback,) = rep.run([x])
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    tol = 0.05 * 1.0001 if requantize else 1e-5 * np.abs(want).max()
    np.testing.assert_allclose(fallback, want, rtol=1e-5, atol=tol)
    if not requantize:
        assert not np.array_equal(native, fallback)  # another arithmetic ran (float conv)


@pytest.mark.parametrize("requantize", [False, True])
def test_under_autodiff(tmp_path, requantize):
    """On Autodiff(NdArray()) the op reaches NdArray's `qdq_conv2d` with Autodiff's wrapped
    values, which it declines (they are not numpy arrays): the dequantized path runs."""
    import onnx
    from burn_autodiff import Autodiff
    from burn_import.onnx import ModelGen
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    m, x = _qdq_conv_model(False, 3, False, [2, 2], [1, 1, 1, 1], requantize=requantize)
    onnx.save(m, tmp_path / "qc.onnx")
    ModelGen().input(str(tmp_path / "qc.onnx")).out_dir(str(tmp_path)).run()
    spec = importlib.util.spec_from_file_location("qc_autodiff", tmp_path / "qc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    dev = Autodiff(NdArray()).device()
    y = mod.Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    tol = 0.05 * 1.0001 if requantize else 1e-5 * np.abs(want).max()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=tol)


@pytest.mark.parametrize("readers", ["one", "both"])
def test_conv_then_quantize_writes_the_bytes(readers):
    """Conv -> QuantizeLinear (its only reader): one `ops.qdq_conv` call with the output's
    scale and zero point (the conv writes uint8); with a second reader (y is also a graph
    output) the conv writes float and QuantizeLinear runs on it. Either way, the reference
    evaluator's values to one step of the output scale (a float32 rounding of y may cross a
    rounding boundary of the quantization)."""
    m, x = _qdq_conv_model(False, 128, True, [1, 1], [1, 1, 1, 1], requantize=True if readers == "one" else "both")
    want = ReferenceEvaluator(m).run(None, {"x": x})
    rep = backend.prepare(m)
    got = rep.run([x])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=0.05 * 1.0001)
    src = rep.gen.source
    assert src.count("ops.qdq_conv(") == 1
    assert ("out_scale=" in src) is (readers == "one")
    assert src.count("ops.quantize(") == (1 if readers == "one" else 2)  # x's, and y's if float
