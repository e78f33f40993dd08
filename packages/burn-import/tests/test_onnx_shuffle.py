"""Issue 37: ShuffleNet's Concat + channel shuffle (Reshape [n, g, c, h, w] -> Transpose
(0, 2, 1, 3, 4) -> Reshape), as torch's legacy exporter writes a ShuffleNetV2 unit (the split a
`chunk` whose bounds are shape arithmetic, the Reshapes' Constant nodes after the Concat),
becomes one `Tensor.stack([..], 2).flatten(1, 2)` line; a variation that is not a shuffle of
the concatenation stays nodes. Every model is checked against ONNX's reference evaluator."""

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

N, C, H, W = 2, 8, 3, 5


def _unit(
    perm=(0, 2, 1, 3, 4), split=(N, 2, C // 2, H, W), merge=(0, -1, H, W), extra_out=False,
    cut=None,
):
    """x -> chunk(2, 1) -> (x1, relu(x2 * 3)) -> cat -> shuffle(2) -> y (+ the cat output)."""
    nodes = []

    def const(name, value):
        nodes.append(h.make_node("Constant", [], [name], name=name,
                                 value=nh.from_array(np.array(value, np.int64))))  # fmt: skip
        return name

    def node(op, ins, name, **attrs):
        nodes.append(h.make_node(op, ins, [name], name=f"/unit/{name}", **attrs))
        return name

    # torch's chunk: the half of dim 1 from Shape -> Gather -> Add -> Div -> Mul
    dim = node("Gather", [node("Shape", ["x"], "shape"), const("one", 1)], "dim", axis=0)
    half = node("Div", [node("Add", [dim, const("c1", [1])], "add"), const("c2", [2])], "half")
    end0 = node("Mul", [half, const("c3", [1])], "end0") if cut is None else const("e0", [cut])
    end1 = node("Mul", [half, const("c4", [2])], "end1") if cut is None else const("e1", [C])
    x1 = node("Slice", ["x", const("s0", [0]), end0, const("ax", [1])], "slice")
    x2 = node("Slice", ["x", end0, end1, "ax"], "slice_1")
    b = node("Relu", [node("Mul", [x2, "three"], "mul")], "relu")
    cat = node("Concat", [x1, b], "cat", axis=1)
    r = node("Reshape", [cat, const("split", list(split))], "reshape")
    t = node("Transpose", [r], "transpose", perm=list(perm))
    nodes.append(h.make_node("Reshape", [t, const("merge", list(merge))], ["y"], name="/unit/y"))
    outs = [h.make_tensor_value_info("y", T.FLOAT, list("abcd"))]
    if extra_out:
        outs.append(h.make_tensor_value_info("cat", T.FLOAT, list("efgh")))
    g = h.make_graph(
        nodes,
        "unit",
        [h.make_tensor_value_info("x", T.FLOAT, [N, C, H, W])],
        outs,
        initializer=[nh.from_array(np.array(3.0, np.float32), "three")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _run(model, tmp_path):
    path = tmp_path / "unit.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    src = py.read_text()
    spec = importlib.util.spec_from_file_location(f"unit_{tmp_path.name}", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    x = np.random.default_rng(37).standard_normal((N, C, H, W)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    got = mod.Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)  # a permutation of the inputs: exact
    return src


def test_the_exported_unit_becomes_one_stack_line(tmp_path):
    src = _run(_unit(), tmp_path)
    assert "cat = Tensor.stack([slice_, relu], 2).flatten(1, 2)" in src, src
    assert "return cat" in src and "permute" not in src and "reshape" not in src, src
    # the chunk's bounds folded, its dims inferred again: plain narrows
    assert "slice_ = x.narrow(1, 0, 4)" in src and "x.narrow(1, 4, 4)" in src, src


@pytest.mark.parametrize(
    "change",
    [
        {"perm": (0, 1, 2, 4, 3)},  # a transpose of the spatial dims, not the groups
        {"split": (N, C // 2, 2, H, W), "perm": (0, 2, 1, 3, 4)},  # groups of 4, not 2 inputs
        {"merge": (N, C, H * W, 1)},  # not back to the concatenation's shape
        {"extra_out": True},  # the concatenation is read elsewhere too
        {"cut": 3},  # inputs of 3 and 5 channels: a reshape of their concatenation, no stack
    ],
)
def test_anything_else_stays_nodes(change, tmp_path):
    src = _run(_unit(**change), tmp_path)
    assert "Tensor.stack" not in src and "permute" in src, src
