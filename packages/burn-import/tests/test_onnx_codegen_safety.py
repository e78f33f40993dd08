"""Generated ONNX code never runs model text, never merges or shadows names, and refuses
malformed attributes at import (security review findings F1-F3, F16-F18, F20, F21).

Each test is a review reproducer: a model whose text would run code drops a canary file
(`__import__('pathlib').Path(CANARY).touch()`), and the test asserts the canary is absent and
the model still computes what ONNX's reference computes. Memory bombs (F12, F19) are in
`test_onnx_fold_bomb.py`.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from _onnx_helpers import reference
from burn_import.onnx import ModelGen, OnnxImportError, backend, generate, load_model
from onnx import AttributeProto
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _model(nodes, inputs, outputs, inits=(), producer="", functions=(), opset=17, domains=()):
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info(*o) for o in outputs],
        initializer=list(inits),
    )
    imports = [h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains]
    return h.make_model(g, opset_imports=imports, producer_name=producer, functions=functions)


def _payload(canary) -> str:
    return f"__import__('pathlib').Path({str(canary)!r}).touch()"


# -- F1: value names in comments -------------------------------------------------------------


def _f1_model(canary):
    evil = f"a\n        pass\n{_payload(canary)}\nclass _Z:\n def _f(self):\n  if 1: #"
    nodes = [h.make_node("Relu", ["x"], [evil]), h.make_node("Relu", [evil], ["y"])]
    return _model(nodes, [("x", T.FLOAT, [2])], [("y", T.FLOAT, [2])])


def test_f1_newline_in_value_name_runs_nothing_modelgen(tmp_path):
    canary = tmp_path / "PWNED"
    src = tmp_path / "evil.onnx"
    onnx.save(_f1_model(canary), src)
    [py] = ModelGen().input(src).out_dir(tmp_path / "out").run()
    assert not canary.exists()
    text = py.read_text()
    assert text.isascii() and "touch" not in text and "\r" not in text
    rep = backend.prepare(_f1_model(canary))
    x = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(rep.run([x])[0], [0.0, 2.0])
    assert not canary.exists()


# -- F2: producer and file names in the docstring -----------------------------------------------


def _f2_model(canary):
    name = f"c''',{_payload(canary)}):#"
    return _model(
        [h.make_node("Add", ["x", name], ["y"])],
        [("x", T.FLOAT, [100])],
        [("y", T.FLOAT, [100])],
        inits=[nh.from_array(np.ones(100, np.float32), name)],
        producer="p\"\"\"\nclass _Q(r'''",
    )


def test_f2_docstring_injection_runs_nothing(tmp_path):
    canary = tmp_path / "PWNED2"
    src = tmp_path / "evil2.onnx"
    onnx.save(_f2_model(canary), src)
    [py] = ModelGen().input(src).out_dir(tmp_path / "out").run()
    assert not canary.exists()
    doc = py.read_text().split('"""')[1]
    assert not any(c in doc for c in "'\"\\#") and len(doc.splitlines()) == 5
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(backend.run_model(_f2_model(canary), [x])[0], x + 1)
    assert not canary.exists()


# -- F3: attribute types after model-local function inlining ------------------------------------


def _lrn_function_model(value, attr_type=AttributeProto.INT):
    body = h.make_node("LRN", ["a"], ["b"], name="lrn_in_body")
    body.attribute.append(AttributeProto(name="size", ref_attr_name="s", type=attr_type))
    fn = h.make_function(
        "local", "F", ["a"], ["b"], [body], [h.make_opsetid("", 17)], attributes=["s"]
    )
    call = h.make_node("F", ["x"], ["y"], domain="local", name="call")
    call.attribute.append(h.make_attribute("s", value))
    return _model(
        [call],
        [("x", T.FLOAT, [1, 3, 4, 4])],
        [("y", T.FLOAT, [1, 3, 4, 4])],
        functions=[fn],
        domains=["local"],
    )


@pytest.mark.parametrize("newline", ["", "\n"])
def test_f3_string_for_int_attribute_in_local_function_is_refused(tmp_path, newline):
    canary = tmp_path / "PWNED3"
    m = _lrn_function_model(f"{newline}{_payload(canary)} or 3")
    x = np.ones((1, 3, 4, 4), np.float32)
    with pytest.raises(OnnxImportError) as err:
        backend.run_model(m, [x])
    assert not canary.exists()
    msg = str(err.value)
    assert "LRN" in msg and "size" in msg and "INT" in msg


def test_f3_float_for_int_attribute_is_refused_after_inlining():
    with pytest.raises(OnnxImportError, match=r"LRN.*size"):
        backend.prepare(_lrn_function_model(3.0))


def _lrn64(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """ONNX's LRN in float64: the window over channels [c - (size-1)//2, c + ceil((size-1)/2)]."""
    x = x.astype(np.float64)
    out = np.empty_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1] - 1, c + size // 2)
        out[:, c] = x[:, c] / (bias + alpha / size * (x[:, lo : hi + 1] ** 2).sum(1)) ** beta
    return out


def test_f3_well_typed_local_function_still_imports():
    m = _lrn_function_model(3)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(backend.run_model(m, [x])[0], _lrn64(x, 3), rtol=1e-5, atol=1e-6)


def test_attribute_of_wrong_type_is_refused_by_the_converter_check():
    """A model edited after `load_model` (past onnx's checker) still meets the type check."""
    m = load_model(_model([h.make_node("LRN", ["x"], ["y"], name="n0", size=3)],
                          [("x", T.FLOAT, [1, 3, 4, 4])], [("y", T.FLOAT, [1, 3, 4, 4])]))
    del m.graph.node[0].attribute[:]
    m.graph.node[0].attribute.append(h.make_attribute("size", "3)+(1"))
    with pytest.raises(OnnxImportError, match=r"'LRN' \(node 'n0'.*attribute 'size'.*INT"):
        generate(m)


# -- F16: names equal after NFKC ------------------------------------------------------------------


def test_f16_nfkc_equal_names_stay_distinct():
    m = _model(
        [h.make_node("Relu", ["x"], ["\uff58"]), h.make_node("Add", ["x", "\uff58"], ["y"])],
        [("x", T.FLOAT, [2])],
        [("y", T.FLOAT, [2])],
    )
    x = np.array([-1.5, 2.0], np.float32)
    np.testing.assert_array_equal(backend.run_model(m, [x])[0], [-1.5, 4.0])


@pytest.mark.parametrize("name", ["a\u00b2", "\uff3f\uff3fdebug\uff3f\uff3f", "\ufb01", "1x", "é"])
def test_f16_names_that_are_not_identifiers_after_nfkc(name):
    m = _model(
        [h.make_node("Relu", ["x"], [name]), h.make_node("Neg", [name], ["y"])],
        [("x", T.FLOAT, [2])],
        [("y", T.FLOAT, [2])],
    )
    x = np.array([-1.0, 3.0], np.float32)
    np.testing.assert_array_equal(backend.run_model(m, [x])[0], [0.0, -3.0])
    assert generate(load_model(m)).source.isascii()


# -- F17: names shadowing the module's globals, builtins and keywords ----------------------------

SHADOWS = [
    "ops", "activation", "default_device", "pathlib", "RECORD", "Module", "Param", "Conv2d",
    "Conv2dConfig", "PaddingConfig2d", "np", "F", "Tensor", "DType", "Model", "self", "device",
    "NamedMpkFileRecorder", "FullPrecisionSettings", "annotations", "float", "int", "range",
    "len", "print", "nan", "inf", "None", "class", "match", "_", "__import__", "__file__",
]


@pytest.mark.parametrize("name", SHADOWS)
def test_f17_value_named_like_a_module_global(name):
    """The value names sit on a graph input, a Conv output, a constant and a sigmoid output, so
    the generated forward uses `ops`, `activation`, a `Conv2d` layer and `device`."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    nodes = [
        h.make_node("Conv", [name, "W"], [name + "c"], pads=[1, 1, 1, 1]),
        h.make_node("Sigmoid", [name + "c"], ["s"]),
        h.make_node("Mul", ["s", "k"], ["m"]),
        h.make_node("Pad", ["m", "pads"], ["y"]),
    ]
    m = _model(
        nodes,
        [(name, T.FLOAT, [1, 1, 4, 4])],
        [("y", T.FLOAT, [1, 2, 4, 6])],
        inits=[
            nh.from_array(w, "W"),
            nh.from_array(np.array([0.5, 2.0], np.float32).reshape(1, 2, 1, 1), "k"),
            nh.from_array(np.array([0, 0, 0, 1, 0, 0, 0, 1], np.int64), "pads"),
        ],
    )
    x = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(
        backend.run_model(m, [x])[0], reference(m, {name: x})[0], rtol=1e-5, atol=1e-6
    )


# -- F18: rank-dependent attributes ---------------------------------------------------------------


def _pool(**attrs):
    return _model(
        [h.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[1, 1], **attrs)],
        [("x", T.FLOAT, [1, 1, 4, 4])],
        [("y", T.FLOAT, [None] * 4)],
    )


@pytest.mark.parametrize(
    "attrs, name",
    [
        ({"pads": [1, 1, 1, 1, 5, 5]}, "pads"),
        ({"pads": [1, 1, 1]}, "pads"),
        ({"pads": [0] * 10}, "pads"),
        ({"pads": [-1, 0, 0, 0]}, "pads"),
        ({"strides": [1, 1, 1]}, "strides"),
        ({"strides": [0, 1]}, "strides"),
    ],
)
def test_f18_pool_attribute_lengths_and_values(attrs, name):
    with pytest.raises(OnnxImportError) as err:
        backend.prepare(_pool(**attrs))
    assert err.value.op_type == "AveragePool" and err.value.node == "pool"
    assert f"attribute {name!r}" in str(err.value)


def test_f18_conv_kernel_and_dilations_lengths():
    w = nh.from_array(np.ones((1, 1, 3, 3), np.float32), "W")
    for attrs, name in (({"kernel_shape": [3]}, "kernel_shape"), ({"dilations": [1]}, "dilations")):
        m = _model(
            [h.make_node("Conv", ["x", "W"], ["y"], name="c", **attrs)],
            [("x", T.FLOAT, [1, 1, 5, 5])],
            [("y", T.FLOAT, [None] * 4)],
            inits=[w],
        )
        with pytest.raises(OnnxImportError, match=rf"'Conv' \(node 'c'.*attribute '{name}'"):
            backend.prepare(m)


@pytest.mark.parametrize("axis", [5, 2, -3])
def test_f18_concat_axis_out_of_range(axis):
    m = _model(
        [h.make_node("Concat", ["a", "b"], ["y"], name="cat", axis=axis)],
        [("a", T.FLOAT, [2, 3]), ("b", T.FLOAT, [2, 3])],
        [("y", T.FLOAT, [None] * 2)],
    )
    with pytest.raises(OnnxImportError, match=r"'Concat' \(node 'cat'.*attribute 'axis'.*rank 2"):
        backend.prepare(m)


def test_f18_concat_negative_axis_in_range_still_works():
    m = _model(
        [h.make_node("Concat", ["a", "b"], ["y"], axis=-2)],
        [("a", T.FLOAT, [2, 3]), ("b", T.FLOAT, [1, 3])],
        [("y", T.FLOAT, [3, 3])],
    )
    a, b = np.ones((2, 3), np.float32), np.zeros((1, 3), np.float32)
    np.testing.assert_array_equal(backend.run_model(m, [a, b])[0], np.concatenate([a, b], 0))


def _slice(steps, axes=(0,)):
    inits = [
        nh.from_array(np.array([0], np.int64), "s"),
        nh.from_array(np.array([4], np.int64), "e"),
        nh.from_array(np.array(axes, np.int64), "ax"),
        nh.from_array(np.array(steps, np.int64), "st"),
    ]
    return _model(
        [h.make_node("Slice", ["x", "s", "e", "ax", "st"], ["y"], name="sl")],
        [("x", T.FLOAT, [4, 2])],
        [("y", T.FLOAT, [None] * 2)],
        inits=inits,
    )


def test_f18_slice_step_zero_is_refused():
    with pytest.raises(OnnxImportError, match=r"'Slice' \(node 'sl'.*step"):
        backend.prepare(_slice([0]))


def test_f18_slice_axis_out_of_range_is_refused():
    with pytest.raises(OnnxImportError, match=r"'Slice' \(node 'sl'.*axes"):
        backend.prepare(_slice([1], axes=[2]))


def test_f18_transpose_perm_must_be_a_permutation():
    m = _model(
        [h.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 0])],
        [("x", T.FLOAT, [2, 3])],
        [("y", T.FLOAT, [None] * 2)],
    )
    with pytest.raises(OnnxImportError, match=r"'Transpose' \(node 't'.*attribute 'perm'"):
        backend.prepare(m)


# -- F20: typed errors, and legitimate odd names ----------------------------------------------


@pytest.mark.parametrize("producer", ["C:\\Users\\me", 'x"""', "\\N{", "a\nb"])
def test_f20_odd_producer_names_import(producer):
    m = _model([h.make_node("Relu", ["x"], ["y"])], [("x", T.FLOAT, [2])],
               [("y", T.FLOAT, [2])], producer=producer)
    assert backend.run_model(m, [np.array([-1.0, 1.0], np.float32)])[0].tolist() == [0.0, 1.0]


@pytest.mark.parametrize("fname", ["my\\xmodel.onnx", 'q"""q.onnx', "q'''q.onnx", "a\nb.onnx"])
def test_f20_odd_file_names_import(tmp_path, fname):
    m = _model([h.make_node("Relu", ["x"], ["y"])], [("x", T.FLOAT, [2])], [("y", T.FLOAT, [2])])
    src = tmp_path / fname
    onnx.save(m, src)
    [py] = ModelGen().input(src).out_dir(tmp_path / "out").run()
    assert py.is_file() and py.read_text().isascii()


def test_f20_input_named_with_triple_quotes():
    m = _model([h.make_node("Relu", ['x"""'], ["y"])], [('x"""', T.FLOAT, [2])],
               [("y", T.FLOAT, [2])])
    assert backend.run_model(m, [np.array([-1.0, 1.0], np.float32)])[0].tolist() == [0.0, 1.0]


def test_f20_if_with_empty_constant_condition():
    out = h.make_tensor_value_info("o", T.FLOAT, [2])
    branch = h.make_graph([h.make_node("Identity", ["x"], ["o"])], "b", [], [out])
    m = _model(
        [h.make_node("If", ["c"], ["y"], name="if0", then_branch=branch, else_branch=branch)],
        [("x", T.FLOAT, [2])],
        [("y", T.FLOAT, [2])],
        inits=[nh.from_array(np.zeros([0], np.bool_), "c")],
    )
    with pytest.raises(OnnxImportError, match=r"'If' \(node 'if0'.*condition"):
        backend.prepare(m)


def test_f20_source_that_does_not_compile_is_a_typed_error():
    with pytest.raises(OnnxImportError, match="does not compile"):
        backend._exec_source("class Model(:\n", "Model")


# -- found by the fuzz -----------------------------------------------------------------------


@pytest.mark.parametrize("eq", ["file__", "_file_", "conv1/Relu:0Fmatch", "ab,cd->e"])
def test_bad_einsum_equation_is_refused_before_shape_inference(eq):
    """onnx 1.23's shape inference never returns on `file__` for a rank-4 input."""
    m = _model(
        [h.make_node("Einsum", ["x"], ["y"], name="ein", equation=eq)],
        [("x", T.FLOAT, [1, 2, 4, 4])],
        [("y", T.FLOAT, [None] * 4)],
        opset=20,
    )
    with pytest.raises(OnnxImportError, match=r"'Einsum' \(node 'ein'.*equation"):
        backend.prepare(m)


def test_einsum_term_longer_than_its_operand_is_refused():
    m = _model(
        [h.make_node("Einsum", ["x"], ["y"], name="ein", equation="abcde->a")],
        [("x", T.FLOAT, [1, 2, 4, 4])],
        [("y", T.FLOAT, [None])],
        opset=20,
    )
    with pytest.raises(OnnxImportError, match=r"'Einsum' \(node 'ein'.*rank 4"):
        backend.prepare(m)


def test_nan_attribute_is_a_literal_not_a_name():
    m = _model(
        [h.make_node("LeakyRelu", ["x"], ["y"], alpha=float("nan"))],
        [("x", T.FLOAT, [2])],
        [("y", T.FLOAT, [2])],
    )
    rep = backend.prepare(m)
    assert "float('nan')" in rep.gen.source
    out = rep.run([np.array([-1.0, 1.0], np.float32)])[0]
    assert np.isnan(out[0]) and out[1] == 1.0


# -- the last check on generated source ---------------------------------------------------------


GOOD = generate(load_model(_model([h.make_node("Relu", ["x"], ["y"])], [("x", T.FLOAT, [2])],
                                  [("y", T.FLOAT, [2])]))).source


@pytest.mark.parametrize(
    "line, why",
    [
        ("y = __import__('os')", "unknown name '__import__'"),
        ("y = x.__class__", "attribute '__class__'"),
        ("y = x.numpy().tofile('p')", "attribute 'tofile'"),
        ("y = ops.np", "ops.np"),
        ("y = (lambda: x)()", "Lambda"),
        ("y = f'{x}'", "JoinedStr"),
        ("import os", "an import"),
        ("y = open('p')", "unknown name 'open'"),
    ],
)
def test_verifier_refuses_code_outside_the_generators_shape(line, why):
    from burn_import.onnx._verify import verify_source

    verify_source(GOOD, "Model")
    bad = GOOD.replace("        return y\n", f"        {line}\n        return y\n")
    assert bad != GOOD
    with pytest.raises(OnnxImportError, match=why):
        verify_source(bad, "Model")


def test_verifier_refuses_extra_module_level_code():
    from burn_import.onnx._verify import verify_source

    with pytest.raises(OnnxImportError, match="module-level Expr"):
        verify_source(GOOD + "print(1)\n", "Model")


def test_depth_to_space_block_must_divide_the_channels():
    """Found by the long fuzz: blocksize 7 on 3 channels failed only at run time."""
    m = _model(
        [h.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=7)],
        [("x", T.FLOAT, [1, 3, 4, 4])],
        [("y", T.FLOAT, [None] * 4)],
    )
    with pytest.raises(OnnxImportError, match=r"'DepthToSpace' \(node 'd2s'.*multiple of 49"):
        backend.prepare(m)


def test_gelu_approximate_must_be_none_or_tanh():
    """Found by the long fuzz: any other string was passed on and meant the exact GELU."""
    m = _model(
        [h.make_node("Gelu", ["x"], ["y"], name="g", approximate="fast")],
        [("x", T.FLOAT, [2])],
        [("y", T.FLOAT, [2])],
        opset=20,
    )
    with pytest.raises(OnnxImportError, match=r"'Gelu' \(node 'g'.*'approximate' = 'fast'"):
        backend.prepare(m)
