"""Issue 37 item 3: torch's `nn.MultiheadAttention` (self-attention, batch_first, no mask), as
the legacy exporter writes it (~25 nodes), becomes burn_nn's `MultiHeadAttention` field called
once; anything that departs from the pattern (here: a scale that is not d^-1/2) stays nodes.
Both are checked against ONNX's reference evaluator."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from burn_import.onnx import ModelGen
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

N, L, E, H = 2, 3, 8, 2
D = E // H


def _mha(scale: float) -> "onnx.ModelProto":  # noqa: F821
    rng = np.random.default_rng(21)
    p = "/enc/layers.0/self_attn"
    inits = [
        nh.from_array((rng.standard_normal((E, 3 * E)) * 0.3).astype(np.float32), "onnx::MatMul_1"),
        nh.from_array((rng.standard_normal(3 * E) * 0.3).astype(np.float32), "enc.layers.0.self_attn.in_proj_bias"),
        nh.from_array((rng.standard_normal((E, E)) * 0.3).astype(np.float32), "enc.layers.0.self_attn.out_proj.weight"),
        nh.from_array((rng.standard_normal(E) * 0.3).astype(np.float32), "enc.layers.0.self_attn.out_proj.bias"),
    ]  # fmt: skip
    nodes = []

    def const(name, value):
        nodes.append(h.make_node("Constant", [], [f"{p}/{name}_output_0"], name=f"{p}/{name}",
                                 value=nh.from_array(np.array(value))))  # fmt: skip
        return f"{p}/{name}_output_0"

    def node(op, ins, name, **attrs):
        nodes.append(h.make_node(op, ins, [f"{p}/{name}_output_0"], name=f"{p}/{name}", **attrs))
        return f"{p}/{name}_output_0"

    a = node("Transpose", ["x"], "Transpose", perm=[1, 0, 2])
    m = node("MatMul", [a, "onnx::MatMul_1"], "MatMul")
    qkv = node("Add", ["enc.layers.0.self_attn.in_proj_bias", m], "Add")
    node("Shape", [qkv], "Shape")  # the exporter's shape arithmetic reads it too (folded)
    r = node("Reshape", [qkv, const("C0", np.array([L, N, 3, E], np.int64))], "Reshape_2")
    u = node("Unsqueeze", [r, const("C1", np.array([0], np.int64))], "Unsqueeze")
    t = node("Transpose", [u], "Transpose_1", perm=[3, 1, 2, 0, 4])
    s = node("Squeeze", [t, const("C2", np.array([3], np.int64))], "Squeeze")
    heads = []
    for i in range(3):
        g = node("Gather", [s, const(f"I{i}", np.array(i, np.int64))], f"Gather_{i}", axis=0)
        g = node("Reshape", [g, const(f"S{i}", np.array([L, N * H, D], np.int64))], f"Reshape_{3 + i}")
        g = node("Transpose", [g], f"Transpose_{2 + i}", perm=[1, 0, 2])
        heads.append(node("Reshape", [g, const(f"B{i}", np.array([N, H, L, D], np.int64))], f"Reshape_{6 + i}"))
    q, k, v = heads
    kt = node("Transpose", [k], "Transpose_5", perm=[0, 1, 3, 2])
    qs = node("Mul", [q, const("Sq", np.array(scale, np.float32))], "Mul")
    ks = node("Mul", [kt, const("Sk", np.array(scale, np.float32))], "Mul_1")
    w = node("Softmax", [node("MatMul", [qs, ks], "MatMul_1")], "Softmax", axis=-1)
    o = node("Transpose", [node("MatMul", [w, v], "MatMul_2")], "Transpose_6", perm=[2, 0, 1, 3])
    o = node("Reshape", [o, const("C9", np.array([L * N, E], np.int64))], "Reshape_9")
    o = node("Gemm", [o, "enc.layers.0.self_attn.out_proj.weight", "enc.layers.0.self_attn.out_proj.bias"],
             "Gemm", transB=1)  # fmt: skip
    o = node("Reshape", [o, const("C10", np.array([L, N, E], np.int64))], "Reshape_10")
    nodes.append(h.make_node("Transpose", [o], ["y"], name=f"{p}/Transpose_7", perm=[1, 0, 2]))
    g = h.make_graph(
        nodes,
        "mha",
        [h.make_tensor_value_info("x", T.FLOAT, [N, L, E])],
        [h.make_tensor_value_info("y", T.FLOAT, [N, L, E])],
        initializer=inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("scale,layer", [(D**-0.25, True), (1.0, False)])
def test_torch_multihead_attention_becomes_the_burn_nn_layer(scale, layer, tmp_path):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    model = _mha(scale)
    path = tmp_path / "mha.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    if layer:
        assert "    enc_layers_0_self_attn: MultiHeadAttention" in src, src
        assert "MultiHeadAttentionConfig(8, 2, dropout=0.0)" in src, src
        assert "y = self.enc_layers_0_self_attn.forward(MhaInput.self_attn(x)).context" in src, src
        assert "softmax" not in src and "permute" not in src, src
    else:
        assert "MultiHeadAttention" not in src and "activation.softmax" in src, src
    assert max(len(line) for line in src.splitlines()) <= 100
    spec = importlib.util.spec_from_file_location(f"mha_{tmp_path.name}", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    x = np.random.default_rng(22).standard_normal((N, L, E)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    got = mod.Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
