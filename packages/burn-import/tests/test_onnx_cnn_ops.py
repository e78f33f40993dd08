"""The code emitted for the activations and pools of imported CNNs (issue 37 item 4): single
backend ops (HardSigmoid -> `activation.hard_sigmoid`, HardSwish -> `activation.hard_swish`,
a global pool as one reduction over the flattened spatial dims), against numpy float64."""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h

RNG = np.random.default_rng(37)


def _chain(x_shape):
    """HardSwish -> HardSigmoid(alpha 0.25, beta 0.4) -> * x -> GlobalAveragePool."""
    nodes = [
        h.make_node("HardSwish", ["x"], ["hs"], name="hswish"),
        h.make_node("HardSigmoid", ["hs"], ["hg"], name="hsig", alpha=0.25, beta=0.4),
        h.make_node("Mul", ["hg", "x"], ["m"], name="mul"),
        h.make_node("GlobalAveragePool", ["m"], ["y"], name="gap"),
    ]
    out = list(x_shape[:2]) + [1] * (len(x_shape) - 2)
    g = h.make_graph(
        nodes,
        "cnn_ops",
        [h.make_tensor_value_info("x", T.FLOAT, list(x_shape))],
        [h.make_tensor_value_info("y", T.FLOAT, out)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _chain64(x):
    x = x.astype(np.float64)
    hs = x * np.clip(x / 6 + 0.5, 0, 1)
    hg = np.clip(0.25 * hs + 0.4, 0, 1)
    return (hg * x).mean(axis=tuple(range(2, x.ndim)), keepdims=True)


@pytest.mark.parametrize("shape", [(1, 8, 5, 6), (2, 3, 4), (1, 2, 3, 4, 5), (1, 64, 40, 40)])
def test_activations_and_global_pool_are_single_ops(shape):
    rep = backend.prepare(_chain(shape))
    src = rep.gen.source
    assert "activation.hard_swish(" in src
    assert "activation.hard_sigmoid(" in src and "alpha=0.25" in src
    assert "ops.hard_sigmoid" not in src and "clamp" not in src
    if len(shape) > 3:  # one reduction, not one per spatial dim
        assert ".reshape([0, 0, -1]).mean_dim(2)" in src and "mean_dim(3)" not in src
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    (got,) = rep.run([x])
    assert got.shape == tuple(shape[:2]) + (1,) * (len(shape) - 2)
    np.testing.assert_allclose(got, _chain64(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 8, 5, 6), (2, 3, 2, 2, 3)])
def test_global_max_pool_one_reduction(shape):
    out = list(shape[:2]) + [1] * (len(shape) - 2)
    g = h.make_graph(
        [h.make_node("GlobalMaxPool", ["x"], ["y"], name="gmp")],
        "gmp",
        [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
        [h.make_tensor_value_info("y", T.FLOAT, out)],
    )
    rep = backend.prepare(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert ".reshape([0, 0, -1]).max_dim(2)" in rep.gen.source
    x = RNG.standard_normal(shape).astype(np.float32)
    x.flat[3] = np.nan  # NaN wins its channel, as ONNX's reference (max propagates NaN)
    (got,) = rep.run([x])
    np.testing.assert_array_equal(got, x.max(axis=tuple(range(2, x.ndim)), keepdims=True))


def _silu_graph(extra_reader: bool, swapped: bool):
    """Conv-free SiLU as exporters write it: s = Sigmoid(x); m = Mul(x, s) (or Mul(s, x));
    with `extra_reader` s is also a graph output (so it must stay a sigmoid)."""
    mul_in = ["s", "x"] if swapped else ["x", "s"]
    nodes = [
        h.make_node("Sigmoid", ["x"], ["s"], name="sig"),
        h.make_node("Mul", mul_in, ["m"], name="mul"),
    ]
    outs = [h.make_tensor_value_info("m", T.FLOAT, [2, 3, 4])]
    if extra_reader:
        outs.append(h.make_tensor_value_info("s", T.FLOAT, [2, 3, 4]))
    g = h.make_graph(nodes, "silu", [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])], outs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("extra_reader", [False, True])
def test_sigmoid_times_its_input_is_one_silu(extra_reader, swapped):
    """Mul(x, Sigmoid(x)) whose sigmoid nothing else reads is one `activation.silu(x)` (one
    native pass on NdArray); a sigmoid read elsewhere stays a sigmoid and the Mul a product."""
    rep = backend.prepare(_silu_graph(extra_reader, swapped))
    src = rep.gen.source
    if extra_reader:
        assert "activation.silu(" not in src and "activation.sigmoid(" in src
    else:
        assert "activation.silu(" in src and "activation.sigmoid(" not in src
    x = (RNG.standard_normal((2, 3, 4)) * 6).astype(np.float32)
    got = rep.run([x])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[0], x64 / (1 + np.exp(-x64)), rtol=1e-5, atol=1e-6)
    if extra_reader:
        np.testing.assert_allclose(got[1], 1 / (1 + np.exp(-x64)), rtol=1e-5, atol=1e-7)


def test_silu_fusion_is_linear_in_the_graph_size():
    """The x * sigmoid(x) pairs are found in one pass: a first version scanned the whole graph
    for every Mul and Sigmoid, quadratic in the node count (6,000 nodes: ~1 min of import)."""
    import time

    from onnx import TensorProto as T
    from onnx import helper as h

    n = 3000
    nodes, x = [], "x"
    for i in range(n):
        nodes += [h.make_node("Sigmoid", [x], [f"s{i}"]), h.make_node("Mul", [x, f"s{i}"], [f"m{i}"])]
        x = f"m{i}"
    g = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, [4])],
                     [h.make_tensor_value_info(x, T.FLOAT, [4])])  # fmt: skip
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    from burn_import.onnx._codegen import generate

    t = time.process_time()
    gen = generate(model, "Model", "chain.onnx", None)
    took = time.process_time() - t
    assert gen.source.count("activation.silu(") == n
    assert took < 15, f"generating {2 * n} nodes took {took:.1f} s of CPU"
