"""Rewrites of onnxruntime's fused float ops: convolution, GEMM and matmul with their fused
epilogues, layer norms with a skip connection, and the GELU family."""

from __future__ import annotations

import math

from ._contrib import Builder, contrib

CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


@contrib("FusedConv")
def fused_conv(b: Builder) -> None:
    """Conv(X, W, B) [+ Z] -> activation (`activation`, `activation_params`)."""
    conv_attrs = {k: b.attrs[k] for k in CONV_ATTRS if k in b.attrs}
    ins = [b.inp(0), b.inp(1)] + ([b.inp(2)] if b.inp(2) else [])
    y = b.add("Conv", ins, **conv_attrs)
    if b.inp(3):
        y = b.add("Add", [y, b.inp(3)])
    b.activation(y, b.attr("activation", ""), list(b.attr("activation_params", [])), b.out(0))


@contrib("FusedGemm")
def fused_gemm(b: Builder) -> None:
    """Gemm(A, B, C; alpha, beta, transA, transB) -> activation."""
    g = {k: b.attrs[k] for k in ("alpha", "beta", "transA", "transB") if k in b.attrs}
    ins = [b.inp(0), b.inp(1)] + ([b.inp(2)] if b.inp(2) else [])
    y = b.add("Gemm", ins, **g)
    kind = b.attr("activation", "")
    params = []
    if kind == "LeakyRelu":
        params = [b.attr("leaky_relu_alpha", b.attr("activation_alpha", 0.01))]
    elif kind in ("HardSigmoid", "Clip"):
        params = [b.attr("activation_alpha", 0.2), b.attr("activation_beta", 0.5)]
    b.activation(y, kind, params, b.out(0))


def _batch_first(b: Builder, x: str) -> str:
    """transBatch: axis 0 moves to just before the last axis ([S, B*N, h] -> [B*N, S, h]; the
    fused form of torch's `transpose(0, 1)` in attention)."""
    r = b.rank(x)
    if r <= 2:
        return x
    return b.add("Transpose", [x], perm=list(range(1, r - 1)) + [0, r - 1])


@contrib("FusedMatMul")
def fused_matmul(b: Builder) -> None:
    """alpha * op(A) @ op(B): `transBatch*` moves axis 1 before the last axis, then `trans*`
    swaps the last two axes (onnxruntime's order)."""
    a, w = b.inp(0), b.inp(1)
    if b.attr("transBatchA", 0):
        a = _batch_first(b, a)
    if b.attr("transBatchB", 0):
        w = _batch_first(b, w)
    a = b.swap_last(a) if b.attr("transA", 0) else a
    w = b.swap_last(w) if b.attr("transB", 0) else w
    alpha = float(b.attr("alpha", 1.0))
    if alpha == 1.0:
        b.add("MatMul", [a, w], b.out(0))
    else:
        b.add("Mul", [b.add("MatMul", [a, w]), b.const(alpha)], b.out(0))


@contrib("LayerNormalization")
def layer_norm(b: Builder) -> None:
    """The contrib op of the same name as ONNX's (opset 17), with the same attributes."""
    b.refuse_outputs(1, 2)
    b.layer_norm(b.inp(0), b.inp(1), b.inp(2), b.attr("epsilon", 1e-5), b.out(0), b.attr("axis", -1))


@contrib("SkipLayerNormalization")
def skip_layer_norm(b: Builder) -> None:
    """s = input + skip (+ bias); output = LayerNorm(s) over the last axis; output 3 = s."""
    b.refuse_outputs(1, 2)
    s = b.add("Add", [b.inp(0), b.inp(1)], None if b.inp(4) else (b.out(3) or None))
    if b.inp(4):
        s = b.add("Add", [s, b.inp(4)], b.out(3) or None)
    b.layer_norm(s, b.inp(2), b.inp(3), b.attr("epsilon", 1e-12), b.out(0))


def _rms_norm(b: Builder, x: str, gamma: str, eps: float, out: str) -> None:
    """x / sqrt(mean(x^2, last axis) + eps) * gamma (RMSNorm)."""
    if b.opset >= 18:
        ms = b.add("ReduceMean", [b.add("Mul", [x, x]), b.const([-1], dtype="int64")])
    else:
        ms = b.add("ReduceMean", [b.add("Mul", [x, x])], axes=[-1])
    rms = b.add("Sqrt", [b.add("Add", [ms, b.const(eps)])])
    b.add("Mul", [b.add("Div", [x, rms]), gamma], out)


@contrib("SimplifiedLayerNormalization")
def simplified_layer_norm(b: Builder) -> None:
    b.refuse_outputs(1)
    b.refuse_attrs(axis=(-1,))
    _rms_norm(b, b.inp(0), b.inp(1), b.attr("epsilon", 1e-5), b.out(0))


@contrib("SkipSimplifiedLayerNormalization")
def skip_simplified_layer_norm(b: Builder) -> None:
    b.refuse_outputs(1, 2)
    s = b.add("Add", [b.inp(0), b.inp(1)], None if b.inp(3) else (b.out(3) or None))
    if b.inp(3):
        s = b.add("Add", [s, b.inp(3)], b.out(3) or None)
    _rms_norm(b, s, b.inp(2), b.attr("epsilon", 1e-12), b.out(0))


def _gelu(b: Builder, x: str, out: str) -> None:
    """0.5 x (1 + erf(x / sqrt 2)): the exact GELU."""
    e = b.add("Erf", [b.add("Mul", [x, b.const(1.0 / math.sqrt(2.0))])])
    half_x = b.add("Mul", [x, b.const(0.5)])
    b.add("Mul", [half_x, b.add("Add", [e, b.const(1.0)])], out)


@contrib("Gelu")
def gelu(b: Builder) -> None:
    _gelu(b, b.inp(0), b.out(0))


@contrib("BiasGelu")
def bias_gelu(b: Builder) -> None:
    _gelu(b, b.add("Add", [b.inp(0), b.inp(1)]), b.out(0))


@contrib("FastGelu")
def fast_gelu(b: Builder) -> None:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = input (+ bias)."""
    x = b.add("Add", [b.inp(0), b.inp(1)]) if b.inp(1) else b.inp(0)
    x3 = b.add("Mul", [b.add("Mul", [x, x]), x])
    inner = b.add("Add", [x, b.add("Mul", [x3, b.const(0.044715)])])
    t = b.add("Tanh", [b.add("Mul", [inner, b.const(math.sqrt(2.0 / math.pi))])])
    half_x = b.add("Mul", [x, b.const(0.5)])
    b.add("Mul", [half_x, b.add("Add", [t, b.const(1.0)])], b.out(0))


@contrib("QuickGelu")
def quick_gelu(b: Builder) -> None:
    """x * sigmoid(alpha x), alpha 1.702 by default."""
    x = b.inp(0)
    s = b.add("Sigmoid", [b.add("Mul", [x, b.const(float(b.attr("alpha", 1.702)))])])
    b.add("Mul", [x, s], b.out(0))


@contrib("BiasAdd")
def bias_add(b: Builder) -> None:
    """X + bias + skip."""
    b.add("Add", [b.add("Add", [b.inp(0), b.inp(1)]), b.inp(2)], b.out(0))
