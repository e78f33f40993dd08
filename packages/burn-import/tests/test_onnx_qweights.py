"""Quantized ONNX graphs on burn's quantized tensors (issue 39, item 5).

Each model is built with `onnx.helper` here; expected values are the ONNX spec formulas in numpy
float64 (DequantizeLinear: (q - zp) * scale; MatMulInteger: (a - za) @ (b - zb) in integers),
never our code. Besides the values, each test checks the form: the weight is a quantized tensor
in the imported module, the record stores it as integers, and the code the importer writes
either uses the quantized path or says `# float emulation` where burn's scheme cannot hold it.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

RNG = np.random.default_rng(39)


def _model(nodes, inputs, outputs, inits, opset=21):
    g = h.make_graph(
        nodes,
        "q",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info(*o) for o in outputs],
        initializer=[nh.from_array(v, k) for k, v in inits.items()],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _dq(name, q, scale, zp=None, **attrs):
    ins = [f"{name}_q", f"{name}_s"] + ([f"{name}_z"] if zp is not None else [])
    inits = {f"{name}_q": q, f"{name}_s": scale}
    if zp is not None:
        inits[f"{name}_z"] = zp
    return h.make_node("DequantizeLinear", ins, [name], **attrs), inits


def _deq64(q, scale, axis=None, zp=0):
    """The spec's (q - zp) * scale in float64; `axis`: the scales run along it."""
    s = scale.astype(np.float64)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        s = s.reshape(shape)
    return (q.astype(np.float64) - zp) * s


def _fields(rep):
    """{field name: field} of the imported module."""
    return dict(vars(rep.module))


def _quantized_params(module):
    return [p for _, p in module.named_parameters() if p.val().is_quantized()]


def _int8(shape):
    return RNG.integers(-128, 128, shape).astype(np.int8)


@pytest.mark.parametrize("per_column", [False, True])
def test_matmul_weight_is_a_quantized_linear(per_column):
    """MatMul(x, DequantizeLinear(int8 W)): a Linear whose weight is quantized (q_linear);
    per-column scales multiply its output."""
    w = _int8((16, 12))
    s = (RNG.random(12) * 0.02 + 0.001).astype(np.float32) if per_column else np.float32(0.013)
    s = np.asarray(s, np.float32)
    dq, inits = _dq("w", w, s, axis=1)
    m = _model(
        [dq, h.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [2, 3, 16])],
        [("y", T.FLOAT, [2, 3, 12])],
        inits,
    )
    x = RNG.standard_normal((2, 3, 16)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    want = x.astype(np.float64) @ _deq64(w, s, 1 if per_column else None)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    linears = [f for f in _fields(rep).values() if type(f).__name__ == "Linear"]
    assert len(linears) == 1 and linears[0].weight.val().is_quantized()
    assert ("float emulation" in rep.gen.source) is False


def test_gemm_trans_b_per_channel_with_int32_bias():
    """QDQ Gemm as onnxruntime writes it: int8 weight [N, K] per output channel (axis 0),
    int32 bias dequantized at scale_x * scale_w (folded at import)."""
    w = _int8((10, 16))
    sw = (RNG.random(10) * 0.01 + 0.001).astype(np.float32)
    bias = RNG.integers(-3000, 3000, 10).astype(np.int32)
    sb = np.asarray(np.float32(0.0007))
    dqw, iw = _dq("w", w, sw, axis=0)
    dqb, ib = _dq("b", bias, sb.reshape(1), np.zeros((), np.int32))
    m = _model(
        [dqw, dqb, h.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
        [("x", T.FLOAT, [4, 16])],
        [("y", T.FLOAT, [4, 10])],
        {**iw, **ib},
    )
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    want = x.astype(np.float64) @ _deq64(w, sw, 0).T + bias * np.float64(sb)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    assert len(_quantized_params(rep.module)) == 1
    assert "ops.dequantize(" not in rep.gen.source  # the bias became a constant


@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_weight_is_quantized(per_channel):
    w = _int8((4, 3, 3, 3))
    s = (RNG.random(4) * 0.02 + 0.001).astype(np.float32) if per_channel else np.float32(0.02)
    s = np.asarray(s, np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    dq, inits = _dq("w", w, s, axis=0)
    inits["b"] = b
    m = _model(
        [dq, h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
        [("x", T.FLOAT, [1, 3, 5, 6])],
        [("y", T.FLOAT, [1, 4, 5, 6])],
        inits,
    )
    x = RNG.standard_normal((1, 3, 5, 6)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    wf = _deq64(w, s, 0 if per_channel else None)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 4, 5, 6)) + b.reshape(1, 4, 1, 1)
    for i, j in np.ndindex(3, 3):
        want += np.einsum("nchw,oc->nohw", xp[:, :, i : i + 5, j : j + 6], wf[:, :, i, j])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    convs = [f for f in _fields(rep).values() if type(f).__name__ == "Conv2d"]
    assert len(convs) == 1 and convs[0].weight.val().is_quantized()


def test_blocked_weight_keeps_its_blocks():
    """Blocks along the last axis are Burn's `QuantLevel.block`: one Linear, block scheme."""
    w = _int8((8, 12))
    s = (RNG.random((8, 3)) * 0.02 + 0.001).astype(np.float32)
    dq, inits = _dq("w", w, s, axis=1, block_size=4)
    m = _model(
        [dq, h.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [5, 8])],
        [("y", T.FLOAT, [5, 12])],
        inits,
    )
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    want = x.astype(np.float64) @ (w.astype(np.float64) * np.repeat(s.astype(np.float64), 4, 1))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    (p,) = _quantized_params(rep.module)
    assert p.val().quantization_scheme().level.block_size == 4


def test_weight_read_as_float_is_dequantized_from_the_field():
    """Any other consumer (here Add) reads the float value of the quantized field, per axis."""
    w = _int8((3, 4))
    s = np.array([0.5, 0.25, 0.125], np.float32)
    dq, inits = _dq("w", w, s, axis=0)
    m = _model(
        [dq, h.make_node("Add", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [3, 4])],
        [("y", T.FLOAT, [3, 4])],
        inits,
    )
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, x + _deq64(w, s, 0), rtol=1e-6, atol=1e-6)
    assert "ops.dequantize_weight(" in rep.gen.source
    assert len(_quantized_params(rep.module)) == 1


def test_nonzero_zero_point_falls_back_explicitly():
    """uint8 with a zero point is not burn's symmetric scheme: float emulation, said in code;
    the integers are still held as int8 (the shift by -128 moved into the zero point)."""
    w = RNG.integers(0, 256, (4, 5)).astype(np.uint8)
    s, z = np.float32(0.1), np.uint8(120)
    dq, inits = _dq("w", w, np.asarray(s), np.asarray(z))
    m = _model(
        [dq, h.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [2, 4])],
        [("y", T.FLOAT, [2, 5])],
        inits,
    )
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, x @ _deq64(w, np.asarray(s), zp=120), rtol=1e-5, atol=1e-5)
    assert "# float emulation: input type not int8" in rep.gen.source
    assert "ops.dequantize(" in rep.gen.source
    # the integers are still stored 1 byte a value: uint8 - 128 under a unit scale
    (p,) = _quantized_params(rep.module)
    np.testing.assert_array_equal(p.val().quantized_data().dequantize(), w.astype(np.float64) - 128)


def test_float_weight_quantized_in_the_file_and_shared_through_identity():
    """Q(const float W) -> DQ -> Identity -> MatMul at opset 17 (onnxruntime's quantizer writes
    this for weights shared between layers): the Q is computed at import by the spec (round
    half to even of W / s in float32, saturation), so the MatMul gets a quantized Linear."""
    wf = (RNG.standard_normal((6, 4)) * 0.3).astype(np.float32)
    wf[0, 0] = np.float32(2.5) * np.float32(0.02)  # at (or 1 ulp below) the 2.5 tie: 2 either way
    wf[0, 1] = 10.0  # saturates to 127
    s = np.asarray(np.float32(0.02))
    nodes = [
        h.make_node("QuantizeLinear", ["wf", "s", "z"], ["wq"]),
        h.make_node("DequantizeLinear", ["wq", "s", "z"], ["wd"]),
        h.make_node("Identity", ["wd"], ["wi"]),
        h.make_node("MatMul", ["x", "wi"], ["y"]),
    ]
    m = _model(
        nodes,
        [("x", T.FLOAT, [2, 6])],
        [("y", T.FLOAT, [2, 4])],
        {"wf": wf, "s": s, "z": np.asarray(np.int8(0))},
        opset=17,
    )
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    q = np.clip(np.rint(wf / s), -128, 127)  # float32 division, as the spec
    assert q[0, 0] == 2 and q[0, 1] == 127
    np.testing.assert_allclose(y, x.astype(np.float64) @ (q * np.float64(s)), rtol=1e-5, atol=1e-5)
    linears = [f for f in _fields(rep).values() if type(f).__name__ == "Linear"]
    assert len(linears) == 1 and linears[0].weight.val().is_quantized()
    assert "float emulation" not in rep.gen.source


@pytest.mark.parametrize("op", ["MatMul", "Gemm"])
def test_qdq_activation_times_int8_weight_runs_on_q_matmul(op):
    """DQ(uint8 activation, zp) @ DQ(int8 weight, per output column) (+ bias): the integer
    product on `q_matmul` (`ops.qdq_matmul`), the activation's float value never written."""
    shape = [6, 10] if op == "Gemm" else [2, 3, 10]
    a = RNG.integers(0, 256, shape).astype(np.uint8)
    sa, za = np.asarray(np.float32(0.03)), np.asarray(np.uint8(121))
    w = _int8((6, 10)) if op == "Gemm" else _int8((10, 6))
    sw = (RNG.random(6) * 0.02 + 0.001).astype(np.float32)
    bias = RNG.standard_normal(6).astype(np.float32)
    dqw, inits = _dq("w", w, sw, axis=0 if op == "Gemm" else 1)
    nodes = [h.make_node("DequantizeLinear", ["a", "sa", "za"], ["ad"]), dqw]
    if op == "Gemm":
        nodes.append(h.make_node("Gemm", ["ad", "w", "bias"], ["y"], transB=1))
    else:
        nodes.append(h.make_node("MatMul", ["ad", "w"], ["y"]))
    out = [("y", T.FLOAT, shape[:-1] + [6])]
    m = _model(nodes, [("a", T.UINT8, shape)], out, {**inits, "sa": sa, "za": za, "bias": bias})
    rep = backend.prepare(m)
    (y,) = rep.run([a])
    af = (a.astype(np.float64) - 121) * np.float64(sa)
    want = af @ _deq64(w, sw, 0).T + bias if op == "Gemm" else af @ _deq64(w, sw, 1)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    src = rep.gen.source
    assert "ops.qdq_matmul(" in src and "ops.dequantize(" not in src
    assert len(_quantized_params(rep.module)) == 1


def test_dequantized_activation_as_graph_output():
    """A DequantizeLinear of an activation that is a graph output is written as float."""
    a = RNG.integers(-128, 128, (5,)).astype(np.int8)
    m = _model(
        [h.make_node("DequantizeLinear", ["a", "s"], ["y"])],
        [("a", T.INT8, [5])],
        [("y", T.FLOAT, [5])],
        {"s": np.asarray(np.float32(0.5))},
    )
    (y,) = backend.prepare(m).run([a])
    np.testing.assert_array_equal(y, a.astype(np.float64) * 0.5)


def _mmi_ref(a, za, b, zb):
    return (a.astype(np.int64) - np.int64(za)) @ (b.astype(np.int64) - zb.astype(np.int64))


@pytest.mark.parametrize(
    "atype,btype,k",
    [(np.uint8, np.int8, 24), (np.int8, np.uint8, 24), (np.uint8, np.uint8, 1101)],
)
def test_matmul_integer_through_int8_q_matmul(atype, btype, k):
    """MatMulInteger with a constant B: B a unit-scale int8 field (uint8 shifted by -128),
    the product by `q_matmul`, offsets and zero points as exact integer corrections. K = 1101
    with extreme values needs the chunked path (|acc| > 2^24)."""
    ai, bi = np.iinfo(atype), np.iinfo(btype)
    if k > 1024:
        a = np.full((2, 3, k), ai.max, atype)
        b = np.full((k, 5), bi.min + 1, btype)  # odd sums: float32 would round them
    else:
        a = RNG.integers(ai.min, ai.max + 1, (2, 3, k)).astype(atype)
        b = RNG.integers(bi.min, bi.max + 1, (k, 5)).astype(btype)
    za = np.asarray(atype(7))
    zb = np.arange(5).astype(btype) + btype(3)  # per column
    m = _model(
        [h.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])],
        [("a", h.np_dtype_to_tensor_dtype(np.dtype(atype)), [2, 3, k])],
        [("y", T.INT32, [2, 3, 5])],
        {"b": b, "za": za, "zb": zb},
    )
    rep = backend.prepare(m)
    (y,) = rep.run([a])
    want = _mmi_ref(a, za, b, zb)
    oa, ob = (128 if t is np.uint8 else 0 for t in (atype, btype))
    int8_product = (a.astype(np.int64) - oa) @ (b.astype(np.int64) - ob)  # what q_matmul sums
    assert np.abs(int8_product).max() > 2**24 or k <= 1024
    np.testing.assert_array_equal(y, want)
    assert "ops.int_matmul(" in rep.gen.source
    assert len(_quantized_params(rep.module)) == 1


def test_qlinear_matmul_constant_b_is_quantized():
    a = RNG.integers(0, 256, (4, 6)).astype(np.uint8)
    b = RNG.integers(0, 256, (6, 3)).astype(np.uint8)
    sa, sb, sy = (np.asarray(np.float32(v)) for v in (0.02, 0.05, 0.05))
    za, zb, zy = (np.asarray(np.uint8(v)) for v in (3, 130, 1))
    m = _model(
        [h.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
        [("a", T.UINT8, [4, 6])],
        [("y", T.UINT8, [4, 3])],
        {"sa": sa, "za": za, "b": b, "sb": sb, "zb": zb, "sy": sy, "zy": zy},
    )
    rep = backend.prepare(m)
    (y,) = rep.run([a])
    c = _mmi_ref(a, za, b, zb)
    want = np.clip(np.rint(c * np.float64(sa * sb / sy)) + 1, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(y, want)
    assert len(_quantized_params(rep.module)) == 1


def test_conv_integer_constant_weight_is_quantized():
    """ConvInteger with a constant uint8 weight and per-channel zero points: the weight is a
    unit-scale int8 field (shifted by -128 into its zero points); the sums stay exact."""
    x = RNG.integers(0, 256, (1, 2, 4, 5)).astype(np.uint8)
    w = RNG.integers(0, 256, (3, 2, 2, 2)).astype(np.uint8)
    zx, zw = np.asarray(np.uint8(100)), np.array([128, 3, 250], np.uint8)
    m = _model(
        [h.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"])],
        [("x", T.UINT8, [1, 2, 4, 5])],
        [("y", T.INT32, [1, 3, 3, 4])],
        {"w": w, "zx": zx, "zw": zw},
    )
    rep = backend.prepare(m)
    (y,) = rep.run([x])
    xc = x.astype(np.int64) - 100
    wc = w.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
    want = np.zeros((1, 3, 3, 4), np.int64)
    for i, j in np.ndindex(2, 2):
        want += np.einsum("nchw,oc->nohw", xc[:, :, i : i + 3, j : j + 4], wc[:, :, i, j])
    np.testing.assert_array_equal(y, want)
    (p,) = _quantized_params(rep.module)
    np.testing.assert_array_equal(p.val().quantized_data().dequantize(), w.astype(np.float64) - 128)


def test_record_keeps_weights_quantized(tmp_path):
    """ModelGen's record holds the int8 weight (1 byte a value), and `from_file` restores it
    quantized: a [128, 128] int8 weight takes ~16 KiB, not the 64 KiB of float32."""
    import importlib.util
    import sys

    import onnx
    from burn_import.onnx import ModelGen

    w = _int8((128, 128))
    dq, inits = _dq("w", w, np.asarray(np.float32(0.01)))
    m = _model(
        [dq, h.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [1, 128])],
        [("y", T.FLOAT, [1, 128])],
        inits,
    )
    onnx.save(m, tmp_path / "qmm.onnx")
    (py,) = ModelGen().input(tmp_path / "qmm.onnx").out_dir(tmp_path / "out").run()
    size = (tmp_path / "out" / "qmm.mpk").stat().st_size
    assert 128 * 128 <= size < 128 * 128 * 1.25, size
    spec = importlib.util.spec_from_file_location("qmm_gen", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
        model = mod.Model.from_file()
    finally:
        sys.modules.pop(spec.name, None)
    (p,) = _quantized_params(model)
    np.testing.assert_array_equal(p.val().quantized_data().dequantize(), w * np.float64(np.float32(0.01)))


def test_opencl_runs_the_quantized_kernels():
    """The same rules on OpenCl (PoCL in CI): a quantized Linear (`qlin_packed`) and a uint8
    MatMulInteger (`qmm_i8` through `int_matmul`), against the spec in float64."""
    from _opencl_device import opencl_cpu_device

    dev = opencl_cpu_device()
    w = _int8((8, 8))
    b = RNG.integers(0, 256, (8, 4)).astype(np.uint8)
    dq, inits = _dq("w", w, np.asarray(np.float32(0.05)))
    nodes = [
        dq,
        h.make_node("MatMul", ["x", "w"], ["f"]),
        h.make_node("MatMulInteger", ["a", "b", "za"], ["y"]),
    ]
    inits.update({"b": b, "za": np.asarray(np.uint8(9))})
    ins = [("x", T.FLOAT, [3, 8]), ("a", T.UINT8, [3, 8])]
    m = _model(nodes, ins, [("f", T.FLOAT, [3, 8]), ("y", T.INT32, [3, 4])], inits)
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    a = RNG.integers(0, 256, (3, 8)).astype(np.uint8)
    rep = backend.BurnBackend.with_device(dev).prepare(m)
    f, y = rep.run([x, a])
    np.testing.assert_allclose(f, x @ _deq64(w, np.asarray(np.float32(0.05))), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y, _mmi_ref(a, 9, b, np.zeros(4, np.int64)))
    assert len(_quantized_params(rep.module)) == 2


def test_bincode_record_keeps_plain_int8_fields(tmp_path):
    """Burn's binary record stores no quantized tensors: with `RecordType.Bincode` the weights
    stay plain fields (float emulation, said in the code) and the model still imports."""
    import onnx
    from burn_import.onnx import ModelGen, RecordType

    w = _int8((8, 4))
    dq, inits = _dq("w", w, np.asarray(np.float32(0.1)))
    m = _model(
        [dq, h.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", T.FLOAT, [1, 8])],
        [("y", T.FLOAT, [1, 4])],
        inits,
    )
    onnx.save(m, tmp_path / "qbin.onnx")
    (py,) = ModelGen().input(tmp_path / "qbin.onnx").out_dir(tmp_path).record_type(RecordType.Bincode).run()
    assert "# float emulation: the Bincode record stores no quantized tensors" in py.read_text()
