"""ONNX Loop as a generated while loop, against hand-derived sums.

The body adds the iteration number (cast to float) to a carried value, emits the new value
per iteration, and continues while the value stays below a limit: with a trip count of 5 the
values are 0, 1, 3, 6, 10; with the limit 5 and no trip count the loop stops after the
iteration that reaches 6 (its value is still emitted, as ONNX checks the condition before the
next iteration).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _body():
    return h.make_graph(
        [
            h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
            h.make_node("Add", ["acc_in", "fi"], ["acc_out"]),
            h.make_node("Less", ["acc_out", "limit"], ["cond_out"]),
            h.make_node("Identity", ["acc_out"], ["each"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("acc_in", T.FLOAT, [1]),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, [1]),
            h.make_tensor_value_info("acc_out", T.FLOAT, [1]),
            h.make_tensor_value_info("each", T.FLOAT, [1]),
        ],
    )


def _model(with_trip: bool, limit: float):
    ins = [h.make_tensor_value_info("acc0", T.FLOAT, [1])]
    inits = [nh.from_array(np.array([limit], np.float32), "limit")]
    if with_trip:
        inits.append(nh.from_array(np.array(5, np.int64), "M"))
    inits.append(nh.from_array(np.array(True), "c"))
    node = h.make_node(
        "Loop", ["M" if with_trip else "", "c", "acc0"], ["acc", "all"], body=_body()
    )
    g = h.make_graph(
        [node],
        "g",
        ins,
        [
            h.make_tensor_value_info("acc", T.FLOAT, [1]),
            h.make_tensor_value_info("all", T.FLOAT, [None, 1]),
        ],
        initializer=inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("with_trip", "limit", "want"),
    [(True, 100.0, [0, 1, 3, 6, 10]), (False, 5.0, [0, 1, 3, 6]), (True, 2.0, [0, 1, 3])],
)
def test_loop(with_trip, limit, want):
    acc, each = backend.prepare(_model(with_trip, limit)).run([np.zeros(1, np.float32)])
    assert each.reshape(-1).tolist() == want
    assert acc.tolist() == [want[-1]]


def test_if_on_a_run_time_condition():
    then = h.make_graph(
        [h.make_node("Mul", ["x", "two"], ["y_then"])],
        "then",
        [],
        [h.make_tensor_value_info("y_then", T.FLOAT, [3])],
        initializer=[nh.from_array(np.array([2.0], np.float32), "two")],
    )
    other = h.make_graph(
        [h.make_node("Sub", ["x", "one"], ["y_else"])],
        "else",
        [],
        [h.make_tensor_value_info("y_else", T.FLOAT, [3])],
        initializer=[nh.from_array(np.array([1.0], np.float32), "one")],
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [3])],
        [h.make_tensor_value_info("y", T.FLOAT, [3])],
    )
    rep = backend.prepare(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    x = np.array([1.0, -2.0, 3.5], np.float32)
    np.testing.assert_array_equal(rep.run([np.array(True), x])[0], x * 2)
    np.testing.assert_array_equal(rep.run([np.array(False), x])[0], x - 1)


def test_constant_first_used_in_a_branch_is_written_again_outside():
    """`k` is first used inside the then-branch; the Add after the If needs it too, also when
    the else-branch ran."""
    then = h.make_graph(
        [h.make_node("Mul", ["x", "k"], ["y_then"])],
        "then",
        [],
        [h.make_tensor_value_info("y_then", T.FLOAT, [3])],
    )
    other = h.make_graph(
        [h.make_node("Neg", ["x"], ["y_else"])],
        "else",
        [],
        [h.make_tensor_value_info("y_else", T.FLOAT, [3])],
    )
    g = h.make_graph(
        [
            h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
            h.make_node("Add", ["y", "k"], ["z"]),
        ],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [3])],
        [h.make_tensor_value_info("z", T.FLOAT, [3])],
        initializer=[nh.from_array(np.array([3.0], np.float32), "k")],
    )
    rep = backend.prepare(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(rep.run([np.array(True), x])[0], x * 3 + 3)
    np.testing.assert_array_equal(rep.run([np.array(False), x])[0], -x + 3)
