"""The generated module reads as hand-written (issue 37 item 3): fields named after the source
model's module paths, every float initializer a saved and trainable parameter (small ones
too), keyword arguments for the runtime helpers, no line over 100 characters."""

from __future__ import annotations

import ast
import re
import importlib.util
import sys

import numpy as np
import pytest
from burn_import.onnx import ModelGen
from burn_import.onnx._fieldnames import node_field_hint, scope_path, shorter_value_name
from burn_import.onnx._style import with_keywords, wrap
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _torchlike() -> "onnx.ModelProto":  # noqa: F821
    """A legacy-exporter-shaped graph: scoped node names, a conv with a folded (`onnx::`)
    weight, a Linear with a state-dict weight, a 16-element scale initializer, a reshape."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    scale = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)  # 4 elements: a weight
    lw = rng.standard_normal((10, 4 * 8 * 8)).astype(np.float32) * 0.1
    lb = rng.standard_normal(10).astype(np.float32)
    nodes = [
        h.make_node("Conv", ["x", "onnx::Conv_61", "onnx::Conv_62"], ["/layer1/layer1.0/conv1/Conv_output_0"],
                    name="/layer1/layer1.0/conv1/Conv", pads=[1, 1, 1, 1]),
        h.make_node("Mul", ["/layer1/layer1.0/conv1/Conv_output_0", "layer1.0.scale"], ["/layer1/layer1.0/Mul_output_0"],
                    name="/layer1/layer1.0/Mul"),
        h.make_node("Flatten", ["/layer1/layer1.0/Mul_output_0"], ["/Flatten_output_0"], name="/Flatten"),
        h.make_node("Gemm", ["/Flatten_output_0", "head.fc.weight", "head.fc.bias"], ["y"], name="/head/fc/Gemm", transB=1),
    ]  # fmt: skip
    g = h.make_graph(
        nodes,
        "torchlike",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 10])],
        initializer=[
            nh.from_array(w, "onnx::Conv_61"), nh.from_array(b, "onnx::Conv_62"),
            nh.from_array(scale, "layer1.0.scale"), nh.from_array(lw, "head.fc.weight"),
            nh.from_array(lb, "head.fc.bias"),
        ],  # fmt: skip
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _load(py):
    spec = importlib.util.spec_from_file_location(f"style_{py.stem}", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_fields_are_named_after_module_paths_and_small_weights_are_params(tmp_path):
    path = tmp_path / "torchlike.onnx"
    path.write_bytes(_torchlike().SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "    layer1_0_conv1: Conv2d" in src  # from the node's scope (folded weight name)
    assert "    head_fc: Linear" in src  # from the weight's state-dict key
    assert "    layer1_0_scale: Param" in src  # 4 elements, still a saved parameter
    assert "ops.const" not in src  # no weight written into forward as a literal
    assert re.search(r"layer1_0_scale=ops\.param\(\[1, 4, 1, 1\],.*trainable=True\)", src)
    assert max(len(line) for line in src.splitlines()) <= 100
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    model = _load(py).Model.from_file(device=NdArray().device())
    scale = model.layer1_0_scale.val().numpy()
    np.testing.assert_array_equal(scale.reshape(-1), nh.to_array(_torchlike().graph.initializer[2]).reshape(-1))
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    from onnx.reference import ReferenceEvaluator

    (want,) = ReferenceEvaluator(_torchlike()).run(None, {"x": x})
    got = model.forward(Tensor.from_data(x, NdArray().device())).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_scope_paths_and_hints():
    assert scope_path("/layer4/layer4.0/conv2/Conv") == "layer4.0.conv2"
    assert scope_path("/enc/layers.1/self_attn/Gemm") == "enc.layers.1.self_attn"
    assert scope_path("/Flatten") is None and scope_path("conv1") is None
    node = h.make_node("Conv", ["x", "features.3.weight", "features.3.bias"], ["y"], name="node_Conv_7")
    assert node_field_hint(node, {"features.3.weight", "features.3.bias"}) == "features.3"
    assert node_field_hint(h.make_node("Conv", ["x", "w"], ["y"], name="node_Conv_7"), {"w"}) is None
    assert shorter_value_name("/a/Conv_output_0") == "/a/Conv" and shorter_value_name("t:0") == "t"


def test_runtime_helpers_get_keyword_arguments():
    line = "y = ops.gather(x, idx, 0, 1)"
    assert with_keywords(line) == "y = ops.gather(x, indices=idx, axis=0, idx_rank=1)"
    assert with_keywords("y = ops.gather(x, idx)") == "y = ops.gather(x, idx)"  # two: as written
    assert with_keywords("for i in range(n):") == "for i in range(n):"
    # burn's functional API too; an argument equal to the parameter's default is left out
    line = "y = F.max_pool2d(x, [3, 3], [2, 2], [1, 1], [2, 2])"
    assert with_keywords(line) == (
        "y = F.max_pool2d(x, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[2, 2])"
    )
    # burn's functional int arguments stand for every dim: [1, 1] is the default 1
    line = "y = F.max_pool2d(x, [3, 3], [2, 2], [0, 0], [1, 1])"
    assert with_keywords(line) == "y = F.max_pool2d(x, kernel_size=[3, 3], stride=[2, 2])"
    assert with_keywords("y = ops.slice_(x, [0], [24], [1], None)") == (
        "y = ops.slice_(x, starts=[0], ends=[24], axes=[1])"
    )
    assert with_keywords("y = ops.reshape(x, [2, -1], 0)") == "y = ops.reshape(x, shape=[2, -1])"
    assert with_keywords("y = ops.reshape(x, [2, -1], False)") == (
        "y = ops.reshape(x, shape=[2, -1], allowzero=False)"  # not the int default: kept
    )


def test_pool_call_reads_with_keywords(tmp_path):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    model = _one(h.make_node("MaxPool", ["x"], ["y"], name="/maxpool/MaxPool", kernel_shape=[3, 3],
                             strides=[2, 2], pads=[1, 1, 1, 1]),
                 [("x", T.FLOAT, [1, 2, 7, 7])], [("y", T.FLOAT, [1, 2, 4, 4])], [])  # fmt: skip
    path = tmp_path / "pool.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "y = F.max_pool2d(x, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])" in src, src
    assert "burn_import.onnx import ops" not in src  # no helper called: no import of them
    x = np.random.default_rng(9).standard_normal((1, 2, 7, 7)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize(
    "line",
    [
        "        v = ops.resize(" + ", ".join(f"argument_number_{i}" for i in range(9)) + ")",
        "        total = " + " + ".join(f"a_rather_long_variable_name_{i}" for i in range(5)),
        "        w = a * -b + c_rather_long_name_for_a_value_that_makes_the_line_too_long_0123456789",
        # one parenthesized condition: wrapping must not turn it into a one-element tuple
        "        while (a_rather_long_trip_count_name is None or a_rather_long_counter_name < a_rather_long_trip_count_name) and go:\n            pass",
        "        y = x_rather_long_name_for_a_tensor_value[some_rather_long_index_expression_name_0123456789 + 1]",
        # the call's head alone is too long: the expression goes in parentheses
        "        features_1_block_1_scale_activ = self.layers_encoder_layer_0_self_attention_out_proj_w.forward(x)",
    ],
)
def test_wrapped_lines_fit_and_mean_the_same(line):
    head, _, rest = line.partition("\n")
    out = wrap(head) + ([rest] if rest else [])
    assert all(len(piece) <= 100 for piece in out)
    assert ast.dump(ast.parse(line.strip())) == ast.dump(ast.parse("\n".join(p[8:] for p in out)))


def _one(node, inputs, outputs, inits, opset=17):
    g = h.make_graph(
        [node],
        "one",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info(*o) for o in outputs],
        initializer=[nh.from_array(a, n) for n, a in inits],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


rng = np.random.default_rng(7)
MODULE_CASES = {
    "LayerNorm": (
        _one(h.make_node("LayerNormalization", ["x", "ln.weight", "ln.bias"], ["y"], name="/ln/LayerNormalization", epsilon=1e-3),
             [("x", T.FLOAT, [2, 3, 6])], [("y", T.FLOAT, [2, 3, 6])],
             [("ln.weight", rng.standard_normal(6).astype(np.float32)), ("ln.bias", rng.standard_normal(6).astype(np.float32))]),
        {"x": rng.standard_normal((2, 3, 6)).astype(np.float32)},
    ),
    "GroupNorm": (
        _one(h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="/gn/GroupNormalization", num_groups=2, epsilon=1e-5),
             [("x", T.FLOAT, [1, 4, 3, 3])], [("y", T.FLOAT, [1, 4, 3, 3])],
             [("s", rng.standard_normal(4).astype(np.float32)), ("b", rng.standard_normal(4).astype(np.float32))], opset=21),
        {"x": rng.standard_normal((1, 4, 3, 3)).astype(np.float32)},
    ),
    "ConvTranspose2d": (
        _one(h.make_node("ConvTranspose", ["x", "up.weight", "up.bias"], ["y"], name="/up/ConvTranspose", strides=[2, 2], pads=[1, 1, 1, 1]),
             [("x", T.FLOAT, [1, 3, 4, 4])], [("y", T.FLOAT, [1, 2, 7, 7])],
             [("up.weight", rng.standard_normal((3, 2, 3, 3)).astype(np.float32)), ("up.bias", rng.standard_normal(2).astype(np.float32))]),
        {"x": rng.standard_normal((1, 3, 4, 4)).astype(np.float32)},
    ),
    "Embedding": (
        _one(h.make_node("Gather", ["emb.weight", "ids"], ["y"], name="/emb/Gather"),
             [("ids", T.INT64, [2, 5])], [("y", T.FLOAT, [2, 5, 4])],
             [("emb.weight", rng.standard_normal((10, 4)).astype(np.float32))]),
        {"ids": rng.integers(0, 10, (2, 5)).astype(np.int64)},
    ),
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(MODULE_CASES))
def test_layers_become_burn_nn_modules(module, tmp_path):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    model, feeds = MODULE_CASES[module]
    path = tmp_path / f"{module.lower()}.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert re.search(rf"^    \w+: {module}\b", src, re.M), src
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(next(iter(feeds.values())), dev))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def _se_block() -> "onnx.ModelProto":  # noqa: F821
    """A mobilenet-shaped squeeze-excitation block as the legacy exporter names it: every value
    name spells the whole module scope (the generated locals were 50 characters long)."""
    rng = np.random.default_rng(3)
    p = "/features/features.1/block"
    nodes = [
        h.make_node("Conv", ["x", "onnx::Conv_7", "onnx::Conv_8"], [f"{p}/block.0/block.0.0/Conv_output_0"],
                    name=f"{p}/block.0/block.0.0/Conv", pads=[1, 1, 1, 1]),
        h.make_node("Relu", [f"{p}/block.0/block.0.0/Conv_output_0"], [f"{p}/block.0/block.0.2/Relu_output_0"],
                    name=f"{p}/block.0/block.0.2/Relu"),
        h.make_node("GlobalAveragePool", [f"{p}/block.0/block.0.2/Relu_output_0"],
                    [f"{p}/block.1/avgpool/GlobalAveragePool_output_0"], name=f"{p}/block.1/avgpool/GlobalAveragePool"),
        h.make_node("Mul", [f"{p}/block.1/avgpool/GlobalAveragePool_output_0", f"{p}/block.0/block.0.2/Relu_output_0"],
                    [f"{p}/block.1/Mul_output_0"], name=f"{p}/block.1/Mul"),
        h.make_node("Add", [f"{p}/block.1/Mul_output_0", f"{p}/block.1/Mul_output_0"],
                    ["/features/features.1/Add_output_0"], name="/features/features.1/Add"),
    ]  # fmt: skip
    g = h.make_graph(
        nodes,
        "se",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 5, 5])],
        [h.make_tensor_value_info("/features/features.1/Add_output_0", T.FLOAT, [1, 4, 5, 5])],
        initializer=[
            nh.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "onnx::Conv_7"),
            nh.from_array(rng.standard_normal(4).astype(np.float32), "onnx::Conv_8"),
        ],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_locals_are_short_module_paths_and_lines_fit(tmp_path):
    path = tmp_path / "se.onnx"
    path.write_bytes(_se_block().SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    fwd = src[src.index("def forward") :]
    # a leaf module's only node: named after the module; other nodes: the module and the op
    # (the Conv and its Relu: one call, the value named after the Relu's module: `_conv_act`)
    call = r'self\.features_1_block_0_0\.forward\(x, activation="relu"\)'
    fused = r"^        features_1_block_0_2 = " + call + "$"
    assert re.search(fused, fwd, re.M), fwd
    assert re.search(r"^        features_1_block_1_avgpool = ", fwd, re.M), fwd
    assert re.search(r"^        features_1_block_1_mul = ", fwd, re.M), fwd
    assert re.search(r"^        features_1_add = ", fwd, re.M), fwd
    # the ONNX name once, whole, in the field's comment; a line whose variable spells the
    # node's whole module path needs no comment
    assert "features_1_block_0_0: Conv2d  # Conv '/features/features.1/block/block.0/block.0.0/Conv'" in src
    assert "# GlobalAveragePool" not in fwd and "# Conv" not in fwd, fwd
    assert max(len(line) for line in src.splitlines()) <= 100
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(4).standard_normal((1, 3, 5, 5)).astype(np.float32)
    (want,) = ReferenceEvaluator(_se_block()).run(None, {"x": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def test_long_names_shortened_without_losing_their_ends():
    from burn_import.onnx._fieldnames import field_path, local_names

    assert scope_path("/trunk_output/block1/block1-0/proj/proj.0/Conv") == "trunk_output.block1-0.proj.0"
    key = "encoder.layers.encoder_layer_0.self_attention.in_proj_bias"
    assert field_path(key) == "encoder_layer_0_self_attention_in_proj_bias"
    assert field_path("layer4.0.conv2") == "layer4_0_conv2"
    names = local_names(_se_block().graph.node)
    assert names["/features/features.1/block/block.1/avgpool/GlobalAveragePool_output_0"] == "features_1_block_1_avgpool"
    scope = "/encoder/layers/encoder_layer_0/self_attention"
    t = f"{scope}/Transpose_1_output_0"
    node = h.make_node("Transpose", ["a"], [t], name=f"{scope}/Transpose_1")
    other = h.make_node("MatMul", [t, t], ["logits"], name=f"{scope}/MatMul")
    names = local_names([node, other])
    assert names[t] == "self_attention_transpose_1"
    assert "logits" not in names  # a graph output's own name stays


def _shuffle() -> "onnx.ModelProto":  # noqa: F821
    """shufflenet's channel split and shuffle as the legacy exporter writes them: constant
    Slice bounds (one past the end, as torch writes `x[:, 24:]`) and Reshapes with 0 and -1."""
    nodes = [
        h.make_node("Slice", ["x", "s0", "e0", "ax"], ["a"], name="/s/Slice"),
        h.make_node("Slice", ["x", "s1", "e1", "ax"], ["b"], name="/s/Slice_1"),
        h.make_node("Concat", ["b", "a"], ["c"], name="/s/Concat", axis=1),
        h.make_node("Reshape", ["c", "shape"], ["r"], name="/s/Reshape"),
        h.make_node("Transpose", ["r"], ["t"], name="/s/Transpose", perm=[0, 2, 1, 3, 4]),
        h.make_node("Reshape", ["t", "back"], ["u"], name="/s/Reshape_1"),
        h.make_node("Unsqueeze", ["u", "ax"], ["v"], name="/s/Unsqueeze"),
        h.make_node("Squeeze", ["v", "ax"], ["y"], name="/s/Squeeze"),
    ]
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    g = h.make_graph(
        nodes,
        "shuffle",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 6, 2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 6, 2, 3])],
        initializer=[
            nh.from_array(i64([0]), "s0"), nh.from_array(i64([2]), "e0"),
            nh.from_array(i64([-4]), "s1"), nh.from_array(i64([2**62]), "e1"),
            nh.from_array(i64([1]), "ax"), nh.from_array(i64([0, 2, 3, 0, -1]), "shape"),
            nh.from_array(i64([1, -1, 2, 3]), "back"),
        ],  # fmt: skip
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_constant_slices_reshapes_and_squeezes_are_tensor_methods(tmp_path):
    path = tmp_path / "shuffle.onnx"
    path.write_bytes(_shuffle().SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "x.narrow(1, 0, 2)" in src and "x.narrow(1, 2, 4)" in src, src
    assert ".reshape([1, 2, 3, 3, 2])" in src and ".reshape([1, 6, 2, 3])" in src, src
    assert ".unsqueeze_dim(1)" in src and "v.squeeze_dim(1)" in src, src
    assert "c = Tensor.cat([b, a], 1)" in src, src
    assert "ops.slice_" not in src and "ops.reshape" not in src and "squeeze(" not in src, src
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    x = np.arange(36, dtype=np.float32).reshape(1, 6, 2, 3)
    (want,) = ReferenceEvaluator(_shuffle()).run(None, {"x": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_array_equal(got.numpy(), want)


def _matmul_add(bias_first: bool, extra_reader: bool, bias="fc.bias") -> "onnx.ModelProto":  # noqa: F821
    """torch's legacy export of a Linear on a 3-D input: MatMul, then Add of the bias."""
    rng = np.random.default_rng(6)
    add_in = [bias, "/fc/MatMul_output_0"] if bias_first else ["/fc/MatMul_output_0", bias]
    nodes = [
        h.make_node("MatMul", ["x", "onnx::MatMul_9"], ["/fc/MatMul_output_0"], name="/fc/MatMul"),
        h.make_node("Add", add_in, ["y"], name="/fc/Add"),
    ]
    outputs = [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 5])]
    if extra_reader:  # the product is read twice: it stays a value of its own
        nodes.append(h.make_node("Relu", ["/fc/MatMul_output_0"], ["z"], name="/relu/Relu"))
        outputs.append(h.make_tensor_value_info("z", T.FLOAT, [2, 3, 5]))
    g = h.make_graph(
        nodes,
        "linear",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
        outputs,
        initializer=[
            nh.from_array(rng.standard_normal((4, 5)).astype(np.float32), "onnx::MatMul_9"),
            nh.from_array(rng.standard_normal(5).astype(np.float32), bias),
        ],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_fused_linear_named_after_its_bias_key(tmp_path):
    """MultiheadAttention's in-projection: the MatMul's scope is `self_attn`, its bias key
    `...self_attn.in_proj_bias` names the layer."""
    model = _matmul_add(True, False, bias="enc.layers.0.self_attn.in_proj_bias")
    path = tmp_path / "inproj.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "    enc_layers_0_self_attn_in_proj: Linear" in src, src


@pytest.mark.parametrize("bias_first,extra_reader", [(True, False), (False, False), (False, True)])
def test_matmul_then_bias_add_is_one_linear(bias_first, extra_reader, tmp_path):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    model = _matmul_add(bias_first, extra_reader)
    path = tmp_path / "linear.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    if extra_reader:
        assert "LinearConfig(4, 5, bias=False)" in src and "fc_bias: Param" in src, src
    else:
        assert "fc=LinearConfig(4, 5).init(device)" in src and "Param" not in src, src
        assert "        y = self.fc.forward(x)\n" in src, src
    x = np.random.default_rng(8).standard_normal((2, 3, 4)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-5)


def test_scalar_constants_are_literals_and_scalar_weights_stay_params(tmp_path):
    """ViT's attention scale and GELU's constants (Constant nodes) become Python floats; a
    one-element initializer is a weight and stays a saved Param."""
    const = lambda name, v: h.make_node(  # noqa: E731
        "Constant", [], [name], name=f"/{name}", value=nh.from_array(np.array(v, np.float32)))
    nodes = [
        const("scale", [0.35355339]), const("half", 0.5), const("one", [1.0]),
        h.make_node("Mul", ["x", "scale"], ["a"], name="/attn/Mul"),
        h.make_node("Div", ["a", "half"], ["b"], name="/mlp/Div"),
        h.make_node("Add", ["one", "b"], ["c"], name="/mlp/Add"),
        h.make_node("Sub", ["c", "one"], ["d"], name="/mlp/Sub"),
        h.make_node("Mul", ["d", "gamma"], ["y"], name="/ls/Mul"),
    ]  # fmt: skip
    g = h.make_graph(
        nodes,
        "scalars",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
        initializer=[nh.from_array(np.array([1.5], np.float32), "ls.gamma")],
    )
    g.node[-1].input[1] = "ls.gamma"
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = tmp_path / "scalars.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "a = x * 0.3535533845424652" in src and "b = a / 0.5" in src, src
    assert "c = b + 1.0" in src and "d = c - 1.0" in src, src
    assert "ops.const" not in src and "ls_gamma: Param" in src, src
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(10).standard_normal((2, 3)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_array_equal(got.numpy(), want)


def test_attention_core_reads_as_tensor_methods(tmp_path):
    """torch's legacy MultiheadAttention core: q, k, v picked from a stacked tensor by constant
    Gathers, and two batched MatMuls of equal ranks: `qkv.narrow(0, 1, 1).squeeze_dim(0)`
    and `q.matmul(k)` instead of ops.gather / ops.matmul calls."""
    const = lambda name, v: h.make_node(  # noqa: E731
        "Constant", [], [name], name=f"/{name}", value=nh.from_array(np.array(v, np.int64)))
    nodes = [
        const("i0", 0), const("i1", 1), const("i2", -1),
        h.make_node("Gather", ["qkv", "i0"], ["q"], name="/attn/Gather", axis=0),
        h.make_node("Gather", ["qkv", "i1"], ["k"], name="/attn/Gather_1", axis=0),
        h.make_node("Gather", ["qkv", "i2"], ["v"], name="/attn/Gather_2", axis=0),
        h.make_node("Transpose", ["k"], ["kt"], name="/attn/Transpose", perm=[0, 2, 1]),
        h.make_node("MatMul", ["q", "kt"], ["s"], name="/attn/MatMul"),
        h.make_node("Softmax", ["s"], ["p"], name="/attn/Softmax", axis=-1),
        h.make_node("MatMul", ["p", "v"], ["y"], name="/attn/MatMul_1"),
    ]  # fmt: skip
    g = h.make_graph(
        nodes,
        "attn",
        [h.make_tensor_value_info("qkv", T.FLOAT, [3, 2, 4, 5])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 4, 5])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = tmp_path / "attn.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "q = qkv.narrow(0, 0, 1).squeeze_dim(0)" in src, src
    assert "v = qkv.narrow(0, 2, 1).squeeze_dim(0)" in src, src
    assert "s = q.matmul(kt)" in src and "y = p.matmul(v)" in src, src
    assert "ops." not in src.split("def forward")[1], src
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(12).standard_normal((3, 2, 4, 5)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"qkv": x})
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_layer_configs_leave_out_their_defaults():
    from burn_import.onnx._style import without_config_defaults

    code = (
        "Conv2dConfig([3, 64], [3, 3], stride=[1, 1], dilation=[1, 1], groups=1, "
        "padding=PaddingConfig2d.Explicit(1, 1, 1, 1), bias=True).init(device)"
    )
    assert without_config_defaults(code) == (
        "Conv2dConfig([3, 64], [3, 3], padding=PaddingConfig2d.Explicit(1, 1, 1, 1)).init(device)"
    )
    code = "Conv2dConfig([3, 64], [7, 7], stride=[2, 2], groups=64, bias=False).init(device)"
    assert without_config_defaults(code) == code  # nothing equal to a default
    assert without_config_defaults("LinearConfig(4, 5, bias=True).init(device)") == (
        "LinearConfig(4, 5).init(device)"
    )
    assert without_config_defaults("ops.param([4], DType.F32, device, trainable=True)") == (
        "ops.param([4], DType.F32, device, trainable=True)"  # not a config
    )


def test_folded_initializers_named_after_their_scope(tmp_path):
    """An initializer the legacy exporter folded (`/Expand_output_0`: ViT's class token) is
    a field and a local named `expand`, not `constant1` and `Expand`."""
    rng = np.random.default_rng(13)
    token = rng.standard_normal((1, 1, 4)).astype(np.float32)
    nodes = [h.make_node("Concat", ["/Expand_output_0", "x"], ["y"], name="/Concat", axis=1)]
    g = h.make_graph(
        nodes,
        "token",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 4])],
        initializer=[nh.from_array(token, "/Expand_output_0")],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = tmp_path / "token.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    assert "    expand: Param  # initializer '/Expand_output_0'" in src, src
    assert "expand = self.expand.val()" in src, src
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    x = rng.standard_normal((1, 3, 4)).astype(np.float32)
    dev = NdArray().device()
    got = _load(py).Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    np.testing.assert_array_equal(got.numpy(), np.concatenate([token, x], 1))
