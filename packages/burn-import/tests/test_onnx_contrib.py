"""onnxruntime's contrib ops (`com.microsoft`, `_contrib*.py`): each rewrite against a numpy
float64 formula of onnxruntime's documented semantics (ContribOperators.md), on one-node models.

Real files (a torch TransformerEncoder and a small ResNet saved by onnxruntime's optimizer and
quantizers) were checked against onnxruntime itself; the numbers are in burn-import's README.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from burn_import.onnx import OnnxImportError, backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

MS = "com.microsoft"
rng = np.random.default_rng(42)


def _model(op, inputs, outputs, inits=(), opset=17, **attrs):
    """One `com.microsoft` node; `inputs` are (name, elem, shape) graph inputs, `inits` arrays
    by name (also node inputs, in the order given by `order` when present)."""
    order = attrs.pop("order", None)
    names = order or [i[0] for i in inputs] + [n for n, _ in inits]
    node = h.make_node(op, names, [o[0] for o in outputs], name="n0", domain=MS, **attrs)
    g = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info(*o) for o in outputs if o[0]],
        initializer=[nh.from_array(a, n) for n, a in inits],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset), h.make_opsetid(MS, 1)])


def _run(model, *xs):
    return backend.prepare(model).run(list(xs))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# -- fused float ops ------------------------------------------------------------------------------
def _conv2d(x, w, b, pad):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, hh, ww = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, hh - kh + 1, ww - kw + 1))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i : i + out.shape[2], j : j + out.shape[3]], w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize(
    "act,params,fn",
    [
        ("Relu", [], lambda v: np.maximum(v, 0)),
        ("LeakyRelu", [0.2], lambda v: np.where(v < 0, 0.2 * v, v)),
        ("Clip", [0.0, 6.0], lambda v: np.clip(v, 0, 6)),
        ("Sigmoid", [], lambda v: 1 / (1 + np.exp(-v))),
    ],
)
def test_fused_conv_with_residual_and_activation(act, params, fn):
    x, z = f32(1, 3, 6, 6), f32(1, 4, 6, 6)
    w, b = f32(4, 3, 3, 3), f32(4)
    attrs = dict(activation=act, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    if params:
        attrs["activation_params"] = params
    m = _model(
        "FusedConv",
        [("x", T.FLOAT, [1, 3, 6, 6]), ("z", T.FLOAT, [1, 4, 6, 6])],
        [("y", T.FLOAT, [1, 4, 6, 6])],
        [("w", w), ("b", b)],
        order=["x", "w", "b", "z"],
        **attrs,
    )
    (y,) = _run(m, x, z)
    np.testing.assert_allclose(y, fn(_conv2d(x, w, b, 1) + z), rtol=1e-4, atol=1e-5)


def test_fused_gemm_with_leaky_relu():
    a, w, c = f32(3, 5), f32(4, 5), f32(4)
    m = _model(
        "FusedGemm", [("a", T.FLOAT, [3, 5])], [("y", T.FLOAT, [3, 4])], [("w", w), ("c", c)],
        transB=1, alpha=0.5, beta=2.0, activation="LeakyRelu", leaky_relu_alpha=0.1,
    )  # fmt: skip
    (y,) = _run(m, a)
    v = 0.5 * a.astype(np.float64) @ w.T + 2.0 * c
    np.testing.assert_allclose(y, np.where(v < 0, 0.1 * v, v), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "a_shape,b_shape,attrs,ref",
    [
        ((2, 3, 4), (2, 5, 4), dict(transB=1, alpha=0.5), lambda a, b: 0.5 * a @ b.swapaxes(-1, -2)),
        ((2, 4, 3), (2, 4, 5), dict(transA=1), lambda a, b: a.swapaxes(-1, -2) @ b),
        # transBatch: axis 0 moves before the last axis ([S, BN, h] -> [BN, S, h]), then trans.
        (
            (3, 6, 4), (5, 6, 4), dict(transBatchA=1, transBatchB=1, transB=1),
            lambda a, b: a.transpose(1, 0, 2) @ b.transpose(1, 0, 2).swapaxes(-1, -2),
        ),
        (
            (3, 2, 6, 4), (2, 6, 4, 5), dict(transBatchA=1),
            lambda a, b: a.transpose(1, 2, 0, 3) @ b,
        ),
    ],
)  # fmt: skip
def test_fused_matmul(a_shape, b_shape, attrs, ref):
    a, b = f32(*a_shape), f32(*b_shape)
    want = ref(a.astype(np.float64), b.astype(np.float64))
    ins = [("a", T.FLOAT, list(a_shape)), ("b", T.FLOAT, list(b_shape))]
    m = _model("FusedMatMul", ins, [("y", T.FLOAT, list(want.shape))], **attrs)
    (y,) = _run(m, a, b)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def _ln(x, g, b, eps):
    x = x.astype(np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + (0 if b is None else b)


def test_skip_layer_norm_with_bias_and_sum_output():
    x, s = f32(2, 3, 8), f32(2, 3, 8)
    g, beta, bias = f32(8), f32(8), f32(8)
    m = _model(
        "SkipLayerNormalization",
        [("x", T.FLOAT, [2, 3, 8]), ("s", T.FLOAT, [2, 3, 8])],
        [("y", T.FLOAT, [2, 3, 8]), ("", 0, None), ("", 0, None), ("sum", T.FLOAT, [2, 3, 8])],
        [("g", g), ("beta", beta), ("bias", bias)],
        epsilon=1e-5,
    )
    y, total = _run(m, x, s)
    want_sum = x.astype(np.float64) + s + bias
    np.testing.assert_allclose(total, want_sum, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(y, _ln(want_sum, g, beta, 1e-5), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [13, 17])
def test_contrib_layer_norm_before_and_after_opset_17(opset):
    x, g, b = f32(4, 6), f32(6), f32(6)
    m = _model("LayerNormalization", [("x", T.FLOAT, [4, 6])], [("y", T.FLOAT, [4, 6])], [("g", g), ("b", b)], opset=opset, epsilon=1e-3)
    (y,) = _run(m, x)
    np.testing.assert_allclose(y, _ln(x, g, b, 1e-3), rtol=1e-4, atol=1e-5)


def test_simplified_layer_norms_are_rms_norms():
    x, s, g = f32(2, 8), f32(2, 8), f32(8)
    rms = lambda v: v / np.sqrt((v**2).mean(-1, keepdims=True) + 1e-6) * g  # noqa: E731
    m = _model("SimplifiedLayerNormalization", [("x", T.FLOAT, [2, 8])], [("y", T.FLOAT, [2, 8])], [("g", g)], epsilon=1e-6)
    np.testing.assert_allclose(_run(m, x)[0], rms(x.astype(np.float64)), rtol=1e-4, atol=1e-5)
    m = _model(
        "SkipSimplifiedLayerNormalization", [("x", T.FLOAT, [2, 8]), ("s", T.FLOAT, [2, 8])],
        [("y", T.FLOAT, [2, 8])], [("g", g)], epsilon=1e-6,
    )  # fmt: skip
    np.testing.assert_allclose(_run(m, x, s)[0], rms(x.astype(np.float64) + s), rtol=1e-4, atol=1e-5)


ERF = np.vectorize(math.erf)


@pytest.mark.parametrize(
    "op,with_bias,ref",
    [
        ("Gelu", False, lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2)))),
        ("BiasGelu", True, lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2)))),
        ("FastGelu", True, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))),
        ("FastGelu", False, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))),
        ("QuickGelu", False, lambda v: v / (1 + np.exp(-1.702 * v))),
    ],
)
def test_gelu_family(op, with_bias, ref):
    x, bias = f32(3, 8) * 2, f32(8)
    m = _model(op, [("x", T.FLOAT, [3, 8])], [("y", T.FLOAT, [3, 8])], [("bias", bias)] if with_bias else [])
    (y,) = _run(m, x)
    v = x.astype(np.float64) + (bias if with_bias else 0)
    np.testing.assert_allclose(y, ref(v), rtol=1e-5, atol=1e-5)


# -- attention ------------------------------------------------------------------------------------
def _mha(q, k, v, n, add=None):
    """softmax(q k^T / sqrt(h) + add) v per head; q [B, S, D], k/v [B, L, D]."""
    b, s, d = q.shape
    hd = d // n
    split = lambda t: t.reshape(b, t.shape[1], n, hd).transpose(0, 2, 1, 3)  # noqa: E731
    sc = split(q) @ split(k).transpose(0, 1, 3, 2) / math.sqrt(hd)
    if add is not None:
        sc = sc + add
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ split(v)).transpose(0, 2, 1, 3).reshape(b, s, d)


@pytest.mark.parametrize("kind", ["plain", "mask", "causal"])
def test_attention_with_input_projection(kind):
    bsz, s, d, n = 2, 5, 8, 2
    x, w, bias = f32(bsz, s, d), f32(d, 3 * d) * 0.5, f32(3 * d)
    mask = np.ones((bsz, s), np.int32)
    mask[1, 3:] = 0
    inputs = [("x", T.FLOAT, [bsz, s, d])] + ([("mask", T.INT32, [bsz, s])] if kind == "mask" else [])
    order = ["x", "w", "bias"] + (["mask"] if kind == "mask" else [])
    attrs = dict(num_heads=n) | (dict(unidirectional=1) if kind == "causal" else {})
    m = _model("Attention", inputs, [("y", T.FLOAT, [bsz, s, d])], [("w", w), ("bias", bias)], order=order, **attrs)
    feeds = [x] + ([mask] if kind == "mask" else [])
    (y,) = _run(m, *feeds)
    qkv = x.astype(np.float64) @ w + bias
    q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
    add = None
    if kind == "mask":
        add = ((1 - mask) * -10000.0)[:, None, None, :]
    if kind == "causal":
        add = np.triu(np.full((s, s), -10000.0), 1)
    np.testing.assert_allclose(y, _mha(q, k, v, n, add), rtol=1e-4, atol=1e-5)


def test_multi_head_attention_with_bias_and_key_padding_mask():
    bsz, s, lk, d, n = 2, 3, 4, 8, 4
    q, k, v, bias = f32(bsz, s, d), f32(bsz, lk, d), f32(bsz, lk, d), f32(3 * d)
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], np.int32)
    m = _model(
        "MultiHeadAttention",
        [("q", T.FLOAT, [bsz, s, d]), ("k", T.FLOAT, [bsz, lk, d]), ("v", T.FLOAT, [bsz, lk, d]), ("mask", T.INT32, [bsz, lk])],
        [("y", T.FLOAT, [bsz, s, d])],
        [("bias", bias)],
        order=["q", "k", "v", "bias", "mask"],
        num_heads=n,
    )
    (y,) = _run(m, q, k, v, mask)
    qq, kk, vv = (t.astype(np.float64) + bias[i * d : (i + 1) * d] for i, t in enumerate((q, k, v)))
    add = ((1 - mask) * -10000.0)[:, None, None, :]
    np.testing.assert_allclose(y, _mha(qq, kk, vv, n, add), rtol=1e-4, atol=1e-5)


def test_attention_with_a_cache_is_refused_by_name():
    d = 8
    m = _model(
        "Attention", [("x", T.FLOAT, [1, 2, d]), ("past", T.FLOAT, [2, 1, 2, 3, 4])], [("y", T.FLOAT, [1, 2, d])],
        [("w", f32(d, 3 * d)), ("bias", f32(3 * d))], order=["x", "w", "bias", "", "past"], num_heads=2,
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"'Attention'.*input 4 \(past"):
        backend.prepare(m)


# -- quantized ops --------------------------------------------------------------------------------
def _q8(v, scale, zp, lo=0, hi=255):
    return np.clip(np.rint(np.float32(v) / np.float32(scale)) + zp, lo, hi)


def _dq8(q, scale, zp):
    return (q.astype(np.float32) - np.float32(zp)) * np.float32(scale)


def _u8(*shape):
    return rng.integers(0, 256, shape).astype(np.uint8)


def _sc(v, dtype=np.float32):
    return np.array(v, dtype)


@pytest.mark.parametrize("op,fn", [("QLinearAdd", np.add), ("QLinearMul", np.multiply)])
def test_qlinear_binary(op, fn):
    a, c = _u8(3, 4), _u8(3, 4)
    inits = [
        ("as", _sc(0.05)), ("az", _sc(128, np.uint8)), ("cs", _sc(0.04)), ("cz", _sc(120, np.uint8)),
        ("ys", _sc(0.1 if op == "QLinearAdd" else 0.5)), ("yz", _sc(100, np.uint8)),
    ]  # fmt: skip
    m = _model(
        op, [("a", T.UINT8, [3, 4]), ("c", T.UINT8, [3, 4])], [("y", T.UINT8, [3, 4])], inits,
        order=["a", "as", "az", "c", "cs", "cz", "ys", "yz"],
    )  # fmt: skip
    (y,) = _run(m, a, c)
    want = _q8(fn(_dq8(a, 0.05, 128), _dq8(c, 0.04, 120)), inits[4][1], 100)
    assert np.abs(y.astype(int) - want).max() <= 1 and (y == want).mean() > 0.95


def test_qlinear_concat_global_pool_and_sigmoid():
    a, c = _u8(1, 2, 3, 3), _u8(1, 3, 3, 3)
    inits = [("ys", _sc(0.2)), ("yz", _sc(10, np.uint8)), ("as", _sc(0.1)), ("az", _sc(3, np.uint8)), ("cs", _sc(0.3)), ("cz", _sc(7, np.uint8))]
    m = _model(
        "QLinearConcat", [("a", T.UINT8, [1, 2, 3, 3]), ("c", T.UINT8, [1, 3, 3, 3])], [("y", T.UINT8, [1, 5, 3, 3])],
        inits, order=["ys", "yz", "a", "as", "az", "c", "cs", "cz"], axis=1,
    )  # fmt: skip
    (y,) = _run(m, a, c)
    want = _q8(np.concatenate([_dq8(a, 0.1, 3), _dq8(c, 0.3, 7)], 1), 0.2, 10)
    assert np.abs(y.astype(int) - want).max() <= 1 and (y == want).mean() > 0.95
    inits = [("xs", _sc(0.1)), ("xz", _sc(3, np.uint8)), ("ys", _sc(0.05)), ("yz", _sc(0, np.uint8))]
    m = _model("QLinearGlobalAveragePool", [("a", T.UINT8, [1, 2, 3, 3])], [("y", T.UINT8, [1, 2, 1, 1])], inits)
    (y,) = _run(m, a)
    want = _q8(_dq8(a, 0.1, 3).astype(np.float64).mean((2, 3), keepdims=True), 0.05, 0)
    assert np.abs(y.astype(int) - want).max() <= 1
    inits = [("xs", _sc(0.05)), ("xz", _sc(128, np.uint8)), ("ys", _sc(1 / 256)), ("yz", _sc(0, np.uint8))]
    m = _model("QLinearSigmoid", [("a", T.UINT8, [1, 2, 3, 3])], [("y", T.UINT8, [1, 2, 3, 3])], inits)
    (y,) = _run(m, a)
    want = _q8(1 / (1 + np.exp(-_dq8(a, 0.05, 128).astype(np.float64))), 1 / 256, 0)
    assert np.abs(y.astype(int) - want).max() <= 1


def test_qgemm_per_column_weights_and_int32_bias():
    a = _u8(2, 6)
    w = rng.integers(-127, 128, (4, 6)).astype(np.int8)
    bs = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    bias = rng.integers(-500, 500, 4).astype(np.int32)
    inits = [("as", _sc(0.05)), ("az", _sc(128, np.uint8)), ("w", w), ("bs", bs), ("bz", np.zeros(4, np.int8)), ("c", bias)]
    m = _model("QGemm", [("a", T.UINT8, [2, 6])], [("y", T.FLOAT, [2, 4])], inits, order=["a", "as", "az", "w", "bs", "bz", "c"], transB=1)
    (y,) = _run(m, a)
    want = _dq8(a, 0.05, 128).astype(np.float64) @ (w.astype(np.float64) * bs[:, None]).T + bias * 0.05 * bs
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_dynamic_quantize_matmul():
    a = f32(3, 8)
    w = rng.integers(-127, 128, (8, 5)).astype(np.int8)
    bs, bias = np.float32(0.02), f32(5)
    m = _model("DynamicQuantizeMatMul", [("a", T.FLOAT, [3, 8])], [("y", T.FLOAT, [3, 5])], [("w", w), ("bs", _sc(bs)), ("bz", _sc(0, np.int8)), ("bias", bias)])
    (y,) = _run(m, a)
    # DynamicQuantizeLinear (ONNX): uint8 over [min(0, a), max(0, a)], zero point rounded.
    lo, hi = min(0.0, float(a.min())), max(0.0, float(a.max()))
    sc = np.float32((hi - lo) / 255)
    zp = np.clip(np.rint(np.float32(-lo) / sc), 0, 255)
    aq = np.clip(np.rint(a / sc) + zp, 0, 255)
    want = ((aq - zp) @ w.astype(np.float64)) * sc * bs + bias
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("k,with_zeros", [(64, True), (48, False)])
def test_matmul_nbits_4bit_blocks(k, with_zeros):
    n, block, bits = 5, 32, 4
    n_blocks = -(-k // block)
    q = rng.integers(0, 16, (n, n_blocks * block)).astype(np.uint8)  # column n's values, padded
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(n, n_blocks, block // 2)
    scales = (rng.random(n * n_blocks) * 0.1 + 0.01).astype(np.float32)
    zq = rng.integers(0, 16, (n, n_blocks + n_blocks % 2)).astype(np.uint8)
    zpacked = (zq[:, 0::2] | (zq[:, 1::2] << 4)).reshape(-1)
    z = zq[:, :n_blocks] if with_zeros else np.full((n, n_blocks), 8)
    wt = (q.reshape(n, n_blocks, block).astype(np.float64) - z[..., None]) * scales.reshape(n, n_blocks, 1)
    w = wt.reshape(n, -1)[:, :k].T  # [K, N]
    a, bias = f32(2, k), f32(n)
    inits = [("b", packed), ("s", scales)] + ([("z", zpacked)] if with_zeros else [])
    order = ["a", "b", "s", "z" if with_zeros else "", "", "bias"]
    m = _model(
        "MatMulNBits", [("a", T.FLOAT, [2, k])], [("y", T.FLOAT, [2, n])], inits + [("bias", bias)],
        order=order, K=k, N=n, bits=bits, block_size=block,
    )  # fmt: skip
    (y,) = _run(m, a)
    np.testing.assert_allclose(y, a.astype(np.float64) @ w + bias, rtol=1e-4, atol=1e-4)


# -- what stays unsupported -----------------------------------------------------------------------
def test_every_unsupported_op_is_listed_at_once():
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="r"),
        h.make_node("GlobalLpPool", ["a"], ["b"], name="bad1"),
        h.make_node("GlobalLpPool", ["b"], ["c"], name="bad2"),
        h.make_node("EmbedLayerNormalizationX", ["c"], ["d"], name="ms1", domain=MS),
        h.make_node("Custom", ["d"], ["y"], name="cu", domain="org.example"),
    ]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1), h.make_opsetid("org.example", 1)])
    with pytest.raises(OnnxImportError) as err:
        backend.prepare(m)
    msg = str(err.value)
    assert "'GlobalLpPool' (node 'bad1', 2 nodes)" in msg
    assert "'EmbedLayerNormalizationX' (domain 'com.microsoft', node 'ms1': no rewrite" in msg
    assert "'Custom' (domain 'org.example', node 'cu': only the default and 'com.microsoft'" in msg
    assert err.value.op_type == "GlobalLpPool"


@pytest.mark.parametrize("k,n", [(0, 5), (64, -1)])
def test_matmul_nbits_refuses_non_positive_sizes(k, n):
    packed = np.zeros((5, 2, 16), np.uint8)
    m = _model(
        "MatMulNBits", [("a", T.FLOAT, [2, 64])], [("y", T.FLOAT, [2, 5])],
        [("b", packed), ("s", np.ones(10, np.float32))], K=k, N=n, bits=4, block_size=32,
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"'MatMulNBits'.*K=.*N=.*positive"):
        backend.prepare(m)


def test_attention_refuses_negative_hidden_sizes():
    d = 8
    m = _model(
        "Attention", [("x", T.FLOAT, [1, 2, d])], [("y", T.FLOAT, [1, 2, d])],
        [("w", f32(d, 3 * d)), ("bias", f32(3 * d))], num_heads=2, qkv_hidden_sizes=[-8, -8, 40],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"'Attention'.*qkv_hidden_sizes.*positive"):
        backend.prepare(m)
