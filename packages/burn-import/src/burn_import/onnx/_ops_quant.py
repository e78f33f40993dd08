"""Quantization ops: QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked),
DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

Where burn's quantized tensors hold the ONNX values (`_qweights.py`), constant weights become
quantized fields and integer matmuls run on the backend's int8 `q_matmul` (`_rt_qmatmul.py`);
everything else is the spec's arithmetic in float, and each such DequantizeLinear says why in a
`# float emulation: ...` line of the generated code.
"""

from __future__ import annotations

import numpy as np

from onnx import TensorProto

from ._fold import FOLD_LIMIT
from ._qweights import (
    expand,
    fused_quantize,
    int8_param,
    new_const,
    qact_of,
    qweight_of,
    reason_not,
    value,
)
from ._registry import op
from ._types import FLOATS, INTS


@op("DequantizeLinear", attrs=("axis", "block_size", "output_dtype"))
def dequantize(ctx):
    if ctx.elem(0) not in INTS:
        ctx.fail("only 8/16/32-bit integer inputs are supported")
    rank = ctx.rank(0)
    axis = ctx.attr("axis", 1) % max(rank, 1)
    bs = ctx.attr("block_size", 0)
    out = ctx.out_elem(0)
    qw = qweight_of(ctx) if out == TensorProto.FLOAT else None
    if qw is not None:  # a constant int8 weight: a quantized field, written where it is read
        ctx.gen.qweights[ctx.node.output[0]] = qw
        return
    if _fold_int32(ctx):
        return
    # Fallback: float emulation of (x - zero_point) * scale, because burn's quantized tensors
    # cannot hold this case (`_qweights.reason_not` names it in the comment).
    why = reason_not(ctx) if out == TensorProto.FLOAT else "a float16/float64 output"
    float_expr = f"ops.dequantize({{}}, {{}}, {{}}, {axis}, {bs}, {rank}, {ctx.dtype(out)})"
    qa = qact_of(ctx, "", why)
    if qa is not None:  # an 8-bit activation: matmuls read its integers, others its float value
        qa.float_expr = float_expr.format(qa.q, qa.scale, qa.zp)
        ctx.gen.qacts[ctx.node.output[0]] = qa
        return
    ctx.emit(f"# float emulation: {why}")  # our own fixed text, no model text
    # A constant 8-bit input is still stored as int8 (a unit-scale quantized field, uint8
    # shifted into its zero point), not as the record's widened integers.
    held = int8_param(ctx, 0, 2) if ctx.has(2) or ctx.elem(0) == TensorProto.UINT8 else None
    x, zp = (held[0], held[1]) if held else (ctx.x(0), ctx.x(2) if ctx.has(2) else "None")
    ctx.set(0, f"ops.dequantize({x}, {ctx.x(1)}, {zp}, {axis}, {bs}, {rank}, {ctx.dtype(out)})")


def _fold_int32(ctx) -> bool:
    """A DequantizeLinear of int32 constants (a quantized bias) is computed at import:
    float32 takes the same bytes as int32, and the layer then reads its bias as a constant.
    Same arithmetic as `ops.dequantize`: (x - zp) * scale in float64, one rounding to float32.
    True when folded (per tensor or per axis; blocked scales are left to run time)."""
    if ctx.elem(0) != TensorProto.INT32 or ctx.attr("block_size", 0):
        return False
    x, s = ctx.const(0), ctx.const(1)
    zp = ctx.const(2) if ctx.has(2) else np.zeros(1, np.int32)
    if x is None or s is None or zp is None or s.dtype != np.float32 or x.size > FOLD_LIMIT:
        return False
    axis = ctx.attr("axis", 1) % max(x.ndim, 1)
    s64, z64 = (expand(v.astype(np.float64), axis, 0, x.shape) for v in (s, zp))
    ctx.fold(0, ((x.astype(np.float64) - z64) * s64).astype(np.float32))
    return True


def _fold_quantize(ctx, axis: int, block: int, out: int) -> bool:
    """QuantizeLinear of a constant float32 (or of a quantized weight's value) with float32
    constant scales, computed at import by the spec: saturate(round_half_even(x / scale) + zp),
    x / scale in float32. True when folded."""
    qw = ctx.qweight(0)
    x = value(qw) if qw is not None else ctx.const(0)
    s = ctx.const(1)
    zp = ctx.const(2) if ctx.has(2) else np.zeros((), ctx.np_dtype(out))
    if x is None or s is None or zp is None or "precision" in ctx.attrs or x.size > FOLD_LIMIT:
        return False
    if x.dtype != np.float32 or s.dtype != np.float32 or x.ndim == 0:
        return False
    y = np.rint(x / expand(s, axis, block, x.shape)).astype(np.float64)
    y += expand(zp.astype(np.float64), axis, block, x.shape)
    info = np.iinfo(ctx.np_dtype(out))
    ctx.fold(0, np.clip(y, info.min, info.max).astype(ctx.np_dtype(out)))
    return True


@op("QuantizeLinear", attrs=("axis", "block_size", "output_dtype", "saturate", "precision"))
def quantize(ctx):
    if fused_quantize(ctx):  # a QDQ conv's output: the conv writes the bytes
        return
    if ctx.elem(0) not in FLOATS | {6}:
        ctx.fail("only float and int32 inputs are supported")
    rank = ctx.rank(0)
    axis = ctx.attr("axis", 1) % max(rank, 1)
    bs = ctx.attr("block_size", 0)
    out = ctx.out_elem(0)
    if out not in INTS:
        ctx.fail("only 8/16/32-bit integer outputs are supported")
    zp = ctx.x(2) if ctx.has(2) else "None"
    prec = ctx.attr("precision", 0)
    if prec and prec not in FLOATS:
        ctx.fail(f"precision {prec} is not a float type burn tensors hold")
    prec = ctx.dtype(prec) if prec else "None"
    if out in (TensorProto.INT8, TensorProto.UINT8) and _fold_quantize(ctx, axis, bs, out):
        return  # a float weight quantized in the file: its int8 values are a constant
    x, s, dt = ctx.x(0), ctx.x(1), ctx.dtype(out)
    info = np.iinfo(ctx.np_dtype(out))
    bounds = (int(info.min), int(info.max))
    # Explicit: burn's `quantize` rounds half away from zero and has no zero point; ONNX
    # rounds half to even and saturates to the declared type, so the spec's formula runs.
    ctx.emit("# float emulation: ONNX rounds half to even (burn's quantize: half away from zero)")
    ctx.set(0, f"ops.quantize({x}, {s}, {zp}, {axis}, {bs}, {rank}, {dt}, {prec}, {bounds})")


@op("DynamicQuantizeLinear")
def dynamic_quantize(ctx):
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
    ctx.emit(f"{outs} = ops.dynamic_quantize({ctx.x(0)})")


@op("MatMulInteger")
def matmul_integer(ctx):
    """Through `ops.int_matmul` (the backend's int8 `q_matmul`) when B is a matrix and A's
    zero point one value; float emulation otherwise (batched B, per-row A zero points)."""
    a, ra = ctx.x(0), ctx.rank(0)
    za = ctx.x(2) if ctx.has(2) else "None"
    if ctx.rank(1) == 2 and _one_value(ctx, 2):
        b, zb, b_sum = _int8_matrix(ctx, 1, 3)
        ctx.set(0, f"ops.int_matmul({a}, {b}, {za}, {zb}, {ra}, {b_sum})")
        return
    zb = ctx.x(3) if ctx.has(3) else "None"
    ctx.emit("# float emulation: batched B or per-row zero points of A (q_matmul is 2-D)")
    ctx.set(0, f"ops.matmul_integer({a}, {ctx.x(1)}, {za}, {zb}, {ra}, {ctx.rank(1)})")


def _one_value(ctx, i: int) -> bool:
    if not ctx.has(i):
        return True
    shape = ctx.shape(i)
    return all(d is not None for d in shape) and int(np.prod(shape)) == 1


def _int8_matrix(ctx, i: int, zp_i: int):
    """(B, its zero point, its int8 column sums or "None") as expressions: a constant 8-bit
    B is a unit-scale quantized field (`_qweights.int8_param`), its column sums computed here."""
    p = int8_param(ctx, i, zp_i)
    if p is None:
        return ctx.x(i), ctx.x(zp_i) if ctx.has(zp_i) else "None", "None"
    expr, zexpr, q = p
    sums = q.astype(np.int32).sum(0).astype(np.int32)
    return expr, zexpr, ctx.gen.materialize(new_const(ctx.gen, f"{ctx.node.input[i]}_colsum", sums))


@op("ConvInteger", attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
def conv_integer(ctx):
    from ._ops_conv import _geometry, _pads

    spatial, _, kernel, strides, dil = _geometry(ctx)
    pads = _pads(ctx, spatial, kernel, strides, dil)
    zx = ctx.x(2) if ctx.has(2) else "None"
    w, zw = _int8_weight(ctx, 1, 3)
    ctx.set(
        0,
        f"ops.conv_integer({ctx.x(0)}, {w}, {zx}, {zw}, {strides}, {pads}, {dil}, "
        f"{ctx.attr('group', 1)})",
    )


def _int8_weight(ctx, i: int, zp_i: int):
    """(weight, zero point) expressions; a constant 8-bit weight is a quantized field. burn has
    no integer convolution: the conv runs on its exact integers in float64 (an emulation)."""
    p = int8_param(ctx, i, zp_i)
    if p is None:
        return ctx.x(i), ctx.x(zp_i) if ctx.has(zp_i) else "None"
    return p[0], p[1]


@op("QLinearMatMul")
def qlinear_matmul(ctx):
    for i in (1, 2, 4, 5, 6, 7):  # per-tensor quantization only
        shape = ctx.shape(i) if ctx.has(i) else [1]
        if shape is None or any(d is None for d in shape) or int(np.prod(shape)) != 1:
            ctx.fail("only per-tensor (one-element) scales and zero points are supported")
    out = ctx.out_elem(0)
    if out not in INTS:
        ctx.fail("only integer outputs are supported")
    info = np.iinfo(ctx.np_dtype(out))
    b, zb, b_sum = _int8_matrix(ctx, 3, 5) if ctx.rank(3) == 2 else (None, None, "None")
    args = [ctx.x(i) if ctx.has(i) else "None" for i in range(8)] if b is None else [
        ctx.x(i) if ctx.has(i) else "None" for i in range(3)
    ] + [b, ctx.x(4), zb, ctx.x(6), ctx.x(7) if ctx.has(7) else "None"]
    ctx.set(
        0,
        f"ops.qlinear_matmul({', '.join(args)}, {ctx.rank(0)}, {ctx.rank(3)}, {ctx.dtype(out)}, "
        f"{(int(info.min), int(info.max))}, {b_sum})",
    )


@op("QLinearConv", attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
def qlinear_conv(ctx):
    from ._ops_conv import _geometry, _pads

    spatial, _, kernel, strides, dil = _geometry(ctx)
    pads = _pads(ctx, spatial, kernel, strides, dil)
    for i, what in ((1, "x_scale"), (2, "x_zero_point"), (6, "y_scale"), (7, "y_zero_point")):
        shape = ctx.shape(i) if ctx.has(i) else [1]
        if shape is None or any(d is None for d in shape) or int(np.prod(shape)) != 1:
            ctx.fail(f"{what} must have one element")
    out = ctx.out_elem(0)
    info = np.iinfo(ctx.np_dtype(out))
    w, zw = _int8_weight(ctx, 3, 5)
    args = [ctx.x(i) if ctx.has(i) else "None" for i in range(3)] + [w, ctx.x(4), zw]
    args = ", ".join(args + [ctx.x(i) if ctx.has(i) else "None" for i in range(6, 9)])
    geometry = (strides, pads, dil, ctx.attr("group", 1))
    ctx.set(
        0,
        f"ops.qlinear_conv({args}, {geometry}, {ctx.dtype(out)}, {(int(info.min), int(info.max))})",
    )
