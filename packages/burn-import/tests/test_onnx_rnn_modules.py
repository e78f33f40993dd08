"""Issue 37 item 3: an ONNX LSTM or GRU whose attributes match what burn_nn's recurrent layers
compute becomes an `Lstm` / `BiLstm` / `Gru` field (its weights saved in Burn's layout and
trainable), called through `ops.lstm` / `ops.gru`; zero initial states are not written into
the model. Other attributes (clip, ...) keep the generic `ops.rnn` call. Every case is checked
against ONNX's reference evaluator, and the field's own `forward` against the ONNX output."""

from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pytest
from burn_import.onnx import ModelGen
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

SEQ, BATCH, IN, H = 5, 2, 3, 4


def _rnn_model(kind, direction="forward", layout=0, zero_states=True, peepholes=False, **attrs):
    g = 4 if kind == "LSTM" else 3
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(11)
    inits = [
        nh.from_array(rng.uniform(-0.8, 0.8, (dirs, g * H, IN)).astype(np.float32), "onnx::W_1"),
        nh.from_array(rng.uniform(-0.8, 0.8, (dirs, g * H, H)).astype(np.float32), "onnx::R_2"),
        nh.from_array(rng.uniform(-0.5, 0.5, (dirs, 2 * g * H)).astype(np.float32), "onnx::B_3"),
    ]
    inputs = ["x", "onnx::W_1", "onnx::R_2", "onnx::B_3", ""]
    state = [BATCH, dirs, H] if layout else [dirs, BATCH, H]
    if zero_states:  # what torch's legacy exporter writes for `rnn(x)` without a state
        for name in ["/rnn/Expand_output_0"] + (["/rnn/Expand_1_output_0"] if kind == "LSTM" else []):
            inits.append(nh.from_array(np.zeros(state, np.float32), name))
            inputs.append(name)
    if peepholes:
        inits.append(nh.from_array(rng.uniform(-0.5, 0.5, (dirs, 3 * H)).astype(np.float32), "p"))
        inputs.append("p")
    x_shape = [BATCH, SEQ, IN] if layout else [SEQ, BATCH, IN]
    y_shape = [BATCH, SEQ, dirs, H] if layout else [SEQ, dirs, BATCH, H]
    outs = ["y", "y_h"] + (["y_c"] if kind == "LSTM" else [])
    node = h.make_node(kind, inputs, outs, name=f"/rnn/{kind}", hidden_size=H,
                       direction=direction, layout=layout, **attrs)  # fmt: skip
    graph = h.make_graph(
        [node],
        "rnn",
        [h.make_tensor_value_info("x", T.FLOAT, x_shape)],
        [h.make_tensor_value_info("y", T.FLOAT, y_shape)]
        + [h.make_tensor_value_info(o, T.FLOAT, state) for o in outs[1:]],
        initializer=inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])


def _generate(model, tmp_path):
    path = tmp_path / "rnn.onnx"
    path.write_bytes(model.SerializeToString())
    [py] = ModelGen().input(path).out_dir(tmp_path / "out").run()
    spec = importlib.util.spec_from_file_location(f"rnn_{tmp_path.name}", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return py.read_text(), mod


def _run(model, mod, layout=0):
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    shape = [BATCH, SEQ, IN] if layout else [SEQ, BATCH, IN]
    x = np.random.default_rng(5).uniform(-1, 1, shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    dev = NdArray().device()
    net = mod.Model.from_file(device=dev)
    got = net.forward(Tensor.from_data(x, dev))
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-5)
    return net, x, want


CASES = [
    # kind, direction, layout, attrs, the field declarations, the call
    ("LSTM", "forward", 0, {}, ["rnn: Lstm"], "ops.lstm(x, self.rnn)"),
    ("LSTM", "reverse", 1, {}, ["rnn: Lstm"], "ops.lstm(x, self.rnn, layout=1)"),
    ("LSTM", "bidirectional", 0, {}, ["rnn: BiLstm"], "ops.lstm(x, self.rnn)"),
    ("GRU", "bidirectional", 0, {"linear_before_reset": 1}, ["rnn: Gru", "rnn_reverse: Gru"],
     "ops.gru(x, (self.rnn, self.rnn_reverse))"),
    ("GRU", "reverse", 0, {}, ["rnn: Gru"], "ops.gru(x, self.rnn, reverse=True)"),
]  # fmt: skip


@pytest.mark.parametrize("kind,direction,layout,attrs,fields,call", CASES)
def test_rnn_becomes_burn_nn_layer(kind, direction, layout, attrs, fields, call, tmp_path):
    model = _rnn_model(kind, direction, layout, **attrs)
    src, mod = _generate(model, tmp_path)
    for f in fields:
        assert re.search(rf"^    {f}\b", src, re.M), src
    assert call in src, src
    # the zero initial states are neither fields nor literals
    assert "Param" not in src and "ops.const" not in src and "h0" not in src, src
    assert max(len(line) for line in src.splitlines()) <= 100
    net, x, want = _run(model, mod, layout)
    if kind == "LSTM" and direction != "bidirectional":
        # the field is an ordinary burn_nn Lstm: its own forward gives the ONNX output
        from burn_ndarray import NdArray
        from burn_tensor import Tensor

        y, state = net.rnn.forward(Tensor.from_data(x, NdArray().device()))
        dim = 2 if layout else 1
        np.testing.assert_allclose(y.numpy(), np.squeeze(want[0], dim), rtol=1e-5, atol=1e-5)
        assert net.rnn.input_gate.input_transform.weight.require_grad  # a trainable parameter


def test_rnn_weights_are_in_the_record(tmp_path):
    model = _rnn_model("GRU", "forward", linear_before_reset=1)
    _, mod = _generate(model, tmp_path)
    from burn_ndarray import NdArray

    net = mod.Model.from_file(device=NdArray().device())
    w = nh.to_array(model.graph.initializer[0])  # [1, 3H, IN]: z, r, h
    got = net.rnn.reset_gate.input_transform.weight.val().numpy()  # burn's [in, out]
    np.testing.assert_array_equal(got, w[0, H : 2 * H].T)
    b = nh.to_array(model.graph.initializer[2])[0]
    got = net.rnn.new_gate.hidden_transform.bias.val().numpy()
    np.testing.assert_array_equal(got, b[3 * H + 2 * H :])


def test_rnn_burn_nn_cannot_express_keeps_the_generic_call(tmp_path):
    model = _rnn_model("LSTM", "forward", peepholes=True)  # burn_nn's Lstm has no peepholes
    src, mod = _generate(model, tmp_path)
    assert "ops.rnn(" in src and "Lstm" not in src and "p=" in src, src
    assert "h0=" not in src and "c0=" not in src and "ops.const" not in src, src
    _run(model, mod)


def test_rnn_clip_is_not_burn_nn_clip():
    """ONNX clips the gates' inputs, burn_nn's Lstm/Gru the state: a clipped layer stays generic."""
    from burn_import.onnx._codegen import generate
    from burn_import.onnx._load import load_model

    src = generate(load_model(_rnn_model("GRU", "forward", clip=0.5))).source
    assert "ops.rnn(" in src and "clip=0.5" in src and "Gru" not in src, src


def test_rnn_field_trains_under_autodiff(tmp_path):
    """The packed weights are computed from the fields on every call under autodiff (never the
    inference cache), so the loss's gradient reaches the Lstm's gate weights."""
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    model = _rnn_model("LSTM", "forward")
    _, mod = _generate(model, tmp_path)
    dev = Autodiff(NdArray()).device()
    net = mod.Model.from_file(device=dev)
    x = np.random.default_rng(2).uniform(-1, 1, (SEQ, BATCH, IN)).astype(np.float32)
    for _ in range(2):  # the second call must not reuse a packing of the first graph
        y = net.forward(Tensor.from_data(x, dev))[0]
        loss = (y * y).mean()
        grads = loss.backward()
        g = net.rnn.forget_gate.hidden_transform.weight.val().grad(grads)
        assert g is not None and g.dims() == [H, H] and np.abs(g.numpy()).max() > 0
    # the gradient of ONNX's own formula, by central differences in float64
    w = nh.to_array(model.graph.initializer[1]).astype(np.float64)  # R [1, 4H, H]: i, o, f, c
    k, j, eps = 2 * H + 1, 3, 1e-6  # forget gate row 1, column 3 = burn's weight [3, 1]
    losses = []
    for d in (eps, -eps):
        m2 = _rnn_model("LSTM", "forward")
        r = w.copy()
        r[0, k, j] += d
        m2.graph.initializer[1].CopyFrom(nh.from_array(r, "onnx::R_2"))
        yy = ReferenceEvaluator(m2).run(None, {"x": x.astype(np.float64)})[0]
        losses.append((yy * yy).mean())
    want = (losses[0] - losses[1]) / (2 * eps)
    np.testing.assert_allclose(g.numpy()[j, 1], want, rtol=1e-3, atol=1e-6)


def test_unread_rnn_outputs_are_underscores(tmp_path):
    """torch lists Y_h and Y_c even when the model reads only Y: they are `_`, not names."""
    model = _rnn_model("LSTM", "forward")
    del model.graph.output[1:]
    src, mod = _generate(model, tmp_path)
    assert "y, _, _ = ops.lstm(x, self.rnn)" in src, src
    _run(model, mod)


def test_a_value_read_inside_a_loop_body_is_not_fused_away(tmp_path):
    """The MatMul's product is read by the Add and, from inside a Loop body, by a Relu: it
    stays a value of its own (the Linear does not take the bias)."""
    rng = np.random.default_rng(3)
    body = h.make_graph(
        [h.make_node("Relu", ["m"], ["r"]), h.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("r", T.FLOAT, [2, 3])],
    )
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["m"], name="/fc/MatMul"),
        h.make_node("Add", ["m", "fc.bias"], ["y"], name="/fc/Add"),
        h.make_node("Loop", ["trip", ""], ["z"], name="/loop/Loop", body=body),
    ]
    g = h.make_graph(
        nodes,
        "outer",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3]), h.make_tensor_value_info("z", T.FLOAT, [1, 2, 3])],
        initializer=[
            nh.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w"),
            nh.from_array(rng.standard_normal(3).astype(np.float32), "fc.bias"),
            nh.from_array(np.array(1, np.int64), "trip"),
        ],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    src, mod = _generate(model, tmp_path)
    assert "bias=False" in src, src
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    w, b = (nh.to_array(t).astype(np.float64) for t in model.graph.initializer[:2])
    m = x.astype(np.float64) @ w
    want = [m + b, np.maximum(m, 0)[None]]  # numpy float64 (onnx's reference Loop fails here)
    dev = NdArray().device()
    got = mod.Model.from_file(device=dev).forward(Tensor.from_data(x, dev))
    for g_, w_ in zip(got, want):
        np.testing.assert_allclose(g_.numpy(), w_, rtol=1e-5, atol=1e-6)


def test_unread_outputs_of_chained_layers_are_underscores(tmp_path):
    """Two layers, as torch's 2-layer LSTM exports: neither layer's Y_h / Y_c is read."""
    first = _rnn_model("LSTM", "forward")
    g = first.graph
    second = h.make_node("LSTM", ["y2d"] + list(g.node[0].input[1:]), ["z", "z_h", "z_c"],
                         name="/rnn/LSTM_1", hidden_size=H)  # fmt: skip
    g.node[0].output[:] = ["y", "y_h", "y_c"]
    w = nh.to_array(g.initializer[0])
    g.initializer[0].CopyFrom(nh.from_array(np.ascontiguousarray(w[:, :, :IN]), "onnx::W_1"))
    sq = h.make_node("Squeeze", ["y", "one"], ["y2"], name="/rnn/Squeeze")
    proj = h.make_node("Slice", ["y2", "zero", "three", "two"], ["y2d"], name="/rnn/Slice")
    g.node.extend([sq, proj, second])
    g.initializer.extend([
        nh.from_array(np.array([1], np.int64), "one"), nh.from_array(np.array([0], np.int64), "zero"),
        nh.from_array(np.array([IN], np.int64), "three"), nh.from_array(np.array([2], np.int64), "two"),
    ])  # fmt: skip
    del g.output[:]
    g.output.append(h.make_tensor_value_info("z", T.FLOAT, [SEQ, 1, BATCH, H]))
    src, mod = _generate(first, tmp_path)
    assert "y, _, _ = ops.lstm(x, self.rnn)" in src and "z, _, _ = ops.lstm(" in src, src
    _run(first, mod)
