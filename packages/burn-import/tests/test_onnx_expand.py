"""Ops without a converter that ONNX defines as functions run as their function bodies.

CausalConvWithState (a context-dependent function of opset 27) is checked against its
definition written in numpy float64: the past state (or zeros) is prepended to the input, each
channel is correlated with its own k taps, the bias added, SiLU applied if asked, and the last
k - 1 positions of the padded sequence are the new state. A model-local function is inlined
the same way, and an error inside a body names the op that was expanded.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import OnnxImportError, backend
from onnx import TensorProto as T
from onnx import helper as h


def causal_conv_ref(x, w, b, past, activation):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, length = x.shape
    k = w.shape[2]
    past = np.zeros((n, c, k - 1)) if past is None else past.astype(np.float64)
    padded = np.concatenate([past, x], axis=2)
    y = np.zeros((n, c, length))
    for j in range(k):
        y += w[None, :, 0, j, None] * padded[:, :, j : j + length]
    if b is not None:
        y += b.astype(np.float64)[None, :, None]
    if activation in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return y, padded[:, :, -(k - 1) :]


@pytest.mark.parametrize("activation", ["none", "silu"])
@pytest.mark.parametrize("with_past", [False, True])
def test_causal_conv_with_state_runs_as_its_function(activation, with_past):
    rng = np.random.default_rng(7)
    n, c, length, k = 2, 3, 5, 4
    x = rng.standard_normal((n, c, length)).astype(np.float32)
    w = rng.standard_normal((c, 1, k)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    past = rng.standard_normal((n, c, k - 1)).astype(np.float32) if with_past else None
    ins = [("x", T.FLOAT, [n, c, length]), ("w", T.FLOAT, [c, 1, k]), ("b", T.FLOAT, [c])]
    if with_past:
        ins.append(("p", T.FLOAT, [n, c, k - 1]))
    outs = [("y", T.FLOAT, [n, c, length]), ("s", T.FLOAT, [n, c, k - 1])]
    m = one_node("CausalConvWithState", ins, outs, opset=27, activation=activation)
    rep = backend.prepare(m)
    y, state = rep.run([x, w, b] + ([past] if with_past else []))
    want_y, want_state = causal_conv_ref(x, w, b, past, activation)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(state, want_state.astype(np.float32))
    assert "CausalConvWithState" not in rep.gen.ops_used  # converted as the ops of its body
    assert "Conv" in rep.gen.ops_used or "Mul" in rep.gen.ops_used


def test_model_local_function_is_inlined():
    # custom.AddMul(a, b) = (a + b) * b
    fn = h.make_function(
        "custom",
        "AddMul",
        ["a", "b"],
        ["y"],
        [h.make_node("Add", ["a", "b"], ["s"]), h.make_node("Mul", ["s", "b"], ["y"])],
        [h.make_opsetid("", 17)],
    )
    g = h.make_graph(
        [h.make_node("AddMul", ["x", "z"], ["out"], domain="custom")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("z", T.FLOAT, [3])],
        [h.make_tensor_value_info("out", T.FLOAT, [3])],
    )
    m = h.make_model(
        g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("custom", 1)], functions=[fn]
    )
    onnx.checker.check_model(m)
    x, z = np.array([1, 2, 3], np.float32), np.array([4, 5, -6], np.float32)
    (y,) = backend.prepare(m).run([x, z])
    np.testing.assert_array_equal(y, (x + z) * z)


def test_error_in_a_body_names_the_expanded_op():
    m = one_node("Bernoulli", [("x", T.FLOAT, [4])], [("y", T.FLOAT, [4])], opset=17)
    with pytest.raises(OnnxImportError, match=r"'RandomUniformLike'.*function body of 'Bernoulli'"):
        backend.prepare(m)


def test_callers_model_is_not_modified():
    m = one_node(
        "CausalConvWithState",
        [("x", T.FLOAT, [1, 2, 3]), ("w", T.FLOAT, [2, 1, 2])],
        [("y", T.FLOAT, [1, 2, 3]), ("s", T.FLOAT, [1, 2, 1])],
        opset=27,
    )
    before = m.SerializeToString()
    backend.prepare(m)
    assert m.SerializeToString() == before


def test_models_without_function_ops_are_returned_as_they_are():
    from burn_import.onnx._expand import expand_functions
    from burn_import.onnx._registry import load_all

    m = one_node("Relu", [("x", T.FLOAT, [2])], [("y", T.FLOAT, [2])], opset=17)
    assert expand_functions(m, load_all()) is m
