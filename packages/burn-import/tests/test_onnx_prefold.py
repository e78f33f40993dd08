"""Folding before shape inference (`_prefold.py`): the shape arithmetic torch's legacy exporter
writes for `dynamic_axes` (`Slice(Shape(x), Reshape(Mod(c1, c2)), ...)`, seen in a real
TransformerEncoder export, ../shared/reviews/onnx-real.md) must give downstream ranks, so an
op the importer supports is not refused for a rank only a fold could tell.

Expected values are numpy's reshape of the input (hand-derived), and ONNX's reference evaluator.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from burn_import.onnx import backend
from burn_import.onnx._load import load_model
from onnx import TensorProto as T
from onnx import helper as h


def _c(name, values):
    return h.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.array(values, np.int64)))


def _legacy_shape_chain() -> onnx.ModelProto:
    """x[b, s, 8] -> Reshape(x, [Shape(x)[Mod(-2, 3) : 2], 2, 4]) -> Unsqueeze(axis 0): [1, b, s, 2, 4].

    `Mod(-2, 3)` is 1 only at evaluation, so ONNX's inference alone cannot tell the slice's
    length, hence the Reshape's rank, hence the Unsqueeze's."""
    nodes = [
        _c("a", [-2]), _c("m", [3]), _c("shape1", [1]), _c("end", [2]), _c("zero", [0]),
        _c("tail", [2, 4]), _c("ax0", [0]),
        h.make_node("Mod", ["a", "m"], ["mod"]),  # 1 (ONNX's Mod with fmod=0 follows Python)
        h.make_node("Reshape", ["mod", "shape1"], ["start"]),
        h.make_node("Shape", ["x"], ["sh"]),
        h.make_node("Slice", ["sh", "zero", "start"], ["lead0"]),  # [b]
        h.make_node("Slice", ["sh", "start", "end"], ["lead1"]),  # [s]
        h.make_node("Concat", ["lead0", "lead1", "tail"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["r"]),
        h.make_node("Unsqueeze", ["r", "ax0"], ["y"]),
    ]  # fmt: skip
    g = h.make_graph(
        nodes,
        "legacy_chain",
        [h.make_tensor_value_info("x", T.FLOAT, ["b", "s", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["o0", "o1", "o2", "o3", "o4"])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_rank_from_folded_shape_arithmetic_imports_and_runs():
    model = _legacy_shape_chain()
    x = np.random.default_rng(0).standard_normal((3, 5, 8)).astype(np.float32)
    (y,) = backend.prepare(model).run([x])
    np.testing.assert_array_equal(y, x.reshape(1, 3, 5, 2, 4))


def test_prefold_leaves_dynamic_values_and_gives_the_rank():
    inferred = load_model(_legacy_shape_chain())
    ops = [n.op_type for n in inferred.graph.node]
    # Mod and its Reshape became constants; Shape of the dynamic input did not.
    assert "Mod" not in ops and ops.count("Reshape") == 1 and "Shape" in ops
    ranks = {
        vi.name: len(vi.type.tensor_type.shape.dim)
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
        if vi.type.tensor_type.HasField("shape")
    }
    assert ranks["r"] == 4 and ranks["y"] == 5


def test_prefold_respects_the_fold_limit():
    """A huge all-constant output is not computed before inference (the generator's bound)."""
    nodes = [
        _c("dims", [1 << 15, 1 << 14]),
        h.make_node("ConstantOfShape", ["dims"], ["big"]),
        h.make_node("Shape", ["big"], ["y"]),
    ]
    g = h.make_graph(nodes, "big", [], [h.make_tensor_value_info("y", T.INT64, [2])])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    inferred = load_model(model)
    assert [n.op_type for n in inferred.graph.node].count("ConstantOfShape") == 1


@pytest.mark.parametrize("shape", [(1, 2, 8), (4, 3, 8)])
def test_matches_the_onnx_reference(shape):
    from onnx.reference import ReferenceEvaluator

    model = _legacy_shape_chain()
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = backend.prepare(model).run([x])
    np.testing.assert_array_equal(got, want)


def test_a_rank_nothing_can_tell_is_reported_as_unknown_not_unsupported():
    """Reshape by a run-time shape input of unknown length: the Unsqueeze after it cannot know
    its input's rank. The error says what could not be inferred and that the op is supported."""
    from burn_import.onnx import OnnxImportError

    g = h.make_graph(
        [
            h.make_node("Reshape", ["x", "t"], ["r"], name="reshape"),
            _c("ax0", [0]),
            h.make_node("Unsqueeze", ["r", "ax0"], ["y"], name="unsq"),
        ],
        "unknown_rank",
        [h.make_tensor_value_info("x", T.FLOAT, [6]), h.make_tensor_value_info("t", T.INT64, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, ["p", "q"])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError) as err:
        backend.prepare(model)
    msg = str(err.value)
    assert "could not be inferred" in msg and "the op is supported" in msg
    assert "unsupported" not in msg
