"""A Conv whose only reader is its Relu / HardSwish / HardSigmoid is written as one call,
`self.conv.forward(x, activation=...)` (`onnx/_conv_act.py`: NdArray fuses it into its conv
kernels), its value named after the activation's output; a Conv read elsewhere too, or a graph
output, keeps its own activation call. Values against ONNX's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import reference
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

RNG = np.random.default_rng(38)


def _graph(act: str, attrs: dict, extra_reader: bool = False, conv_output: bool = False,
           silu: bool = False, gate=("Sigmoid", {})):
    """x -> Conv(3x3, stride 2, pad 1, 8 -> 12) -> act -> y (and `extra_reader`: the conv's
    output also goes through a Neg to output z; `conv_output`: the conv's output is output c;
    `silu`: y = c * gate(c) instead of act(c), `gate` (op, attributes) a Sigmoid unless
    given, its output s a graph output too when `extra_reader`)."""
    w = (RNG.standard_normal((12, 8, 3, 3)) * 0.3).astype(np.float32)
    b = RNG.standard_normal(12).astype(np.float32)
    nodes = [
        h.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node(act, ["c"], ["y"], name="act", **attrs),
    ]
    shape = [1, 12, 10, 10]
    outs = [h.make_tensor_value_info("y", T.FLOAT, shape)]
    if silu:
        nodes[1:] = [
            h.make_node(gate[0], ["c"], ["s"], name="sig", **gate[1]),
            h.make_node("Mul", ["s", "c"], ["y"], name="mul"),
        ]
        if extra_reader:
            outs.append(h.make_tensor_value_info("s", T.FLOAT, shape))
    elif extra_reader:
        nodes.append(h.make_node("Neg", ["c"], ["z"], name="neg"))
        outs.append(h.make_tensor_value_info("z", T.FLOAT, shape))
    if conv_output:
        outs.append(h.make_tensor_value_info("c", T.FLOAT, shape))
    g = h.make_graph(
        nodes,
        "conv_act",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 20, 20])],
        outs,
        initializer=[nh.from_array(w, "W"), nh.from_array(b, "B")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


CASES = [
    ("Relu", {}, 'activation="relu"'),
    ("HardSwish", {}, 'activation="hard_swish"'),
    ("Sigmoid", {}, 'activation="sigmoid"'),
    ("HardSigmoid", {}, 'activation=("hard_sigmoid", 0.2, 0.5)'),
    ("HardSigmoid", {"alpha": 0.25, "beta": 0.375}, 'activation=("hard_sigmoid", 0.25, 0.375)'),
]


@pytest.mark.parametrize("act, attrs, call", CASES, ids=[c[2] for c in CASES])
def test_conv_then_its_activation_is_one_call(act, attrs, call):
    model = _graph(act, attrs)
    rep = backend.prepare(model)
    src = rep.gen.source
    assert call in src, src
    assert "activation.relu(" not in src and "activation.hard_s" not in src
    assert "activation.sigmoid(" not in src
    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32)
    got = rep.run([x])[0]
    want = reference(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("extra_reader, conv_output", [(True, False), (False, True)])
def test_conv_read_elsewhere_keeps_its_activation(extra_reader, conv_output):
    model = _graph("Relu", {}, extra_reader, conv_output)
    rep = backend.prepare(model)
    src = rep.gen.source
    assert "activation=" not in src and "activation.relu(" in src
    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32)
    got = rep.run([x])
    want = reference(model, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sigmoid_output", [False, True])
def test_conv_then_silu_is_one_call(sigmoid_output):
    """Conv -> Sigmoid -> Mul(sigmoid, conv): one `activation="silu"` call; a sigmoid that is
    also a graph output keeps the pair as `activation.sigmoid` and a product."""
    model = _graph("Relu", {}, extra_reader=sigmoid_output, silu=True)
    rep = backend.prepare(model)
    src = rep.gen.source
    if sigmoid_output:
        assert "activation=" not in src and "activation.sigmoid(" in src
    else:
        assert 'activation="silu"' in src and "activation.s" not in src, src
    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32)
    got = rep.run([x])
    want = reference(model, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


HARD_SWISH = ("HardSigmoid", {"alpha": 1 / 6, "beta": 0.5})


@pytest.mark.parametrize("gate, call", [
    (HARD_SWISH, 'activation="hard_swish"'),
    (("HardSigmoid", {"alpha": 0.2, "beta": 0.5}), "activation.hard_sigmoid("),
], ids=["hardswish-constants", "other-constants"])  # fmt: skip
def test_conv_then_x_times_hard_sigmoid(gate, call):
    """onnxruntime's optimizer writes HardSwish as HardSigmoid(1/6, 1/2) and Mul: after a Conv
    it is one `activation="hard_swish"` call; with other constants it is no HardSwish and the
    gate and product stay."""
    model = _graph("Relu", {}, silu=True, gate=gate)
    rep = backend.prepare(model)
    src = rep.gen.source
    assert call in src, src
    if gate is HARD_SWISH:
        assert "activation.hard_s" not in src, src
    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32) * 4  # past the gate's corners
    got = rep.run([x])[0]
    want = reference(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_x_times_hard_sigmoid_alone_is_hard_swish():
    """Without a Conv before it, the pair is one `activation.hard_swish(x)`."""
    nodes = [h.make_node("HardSigmoid", ["x"], ["s"], alpha=1 / 6, beta=0.5),
             h.make_node("Mul", ["x", "s"], ["y"])]  # fmt: skip
    vi = [h.make_tensor_value_info(n, T.FLOAT, [2, 50]) for n in ("x", "y")]
    model = h.make_model(h.make_graph(nodes, "hs", vi[:1], vi[1:]),
                         opset_imports=[h.make_opsetid("", 17)])  # fmt: skip
    rep = backend.prepare(model)
    src = rep.gen.source
    assert "activation.hard_swish(" in src and "activation.hard_sigmoid(" not in src, src
    x = np.linspace(-5, 5, 100, dtype=np.float32).reshape(2, 50)
    np.testing.assert_allclose(rep.run([x])[0], reference(model, {"x": x})[0], rtol=1e-6,
                               atol=1e-6)  # fmt: skip
