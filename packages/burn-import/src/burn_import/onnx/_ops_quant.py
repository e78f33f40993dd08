"""Quantization ops: QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked)."""

from __future__ import annotations

import numpy as np

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
    zp = ctx.x(2) if ctx.has(2) else "None"
    ctx.set(
        0, f"ops.dequantize({ctx.x(0)}, {ctx.x(1)}, {zp}, {axis}, {bs}, {rank}, {ctx.dtype(out)})"
    )


@op("QuantizeLinear", attrs=("axis", "block_size", "output_dtype", "saturate", "precision"))
def quantize(ctx):
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
    x, s, dt = ctx.x(0), ctx.x(1), ctx.dtype(out)
    info = np.iinfo(ctx.np_dtype(out))
    bounds = (int(info.min), int(info.max))
    ctx.set(0, f"ops.quantize({x}, {s}, {zp}, {axis}, {bs}, {rank}, {dt}, {prec}, {bounds})")


@op("DynamicQuantizeLinear")
def dynamic_quantize(ctx):
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
    ctx.emit(f"{outs} = ops.dynamic_quantize({ctx.x(0)})")


@op("MatMulInteger")
def matmul_integer(ctx):
    a, b = ctx.x(0), ctx.x(1)
    za = ctx.x(2) if ctx.has(2) else "None"
    zb = ctx.x(3) if ctx.has(3) else "None"
    ctx.set(0, f"ops.matmul_integer({a}, {b}, {za}, {zb}, {ctx.rank(0)}, {ctx.rank(1)})")


@op("ConvInteger", attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
def conv_integer(ctx):
    from ._ops_conv import _geometry, _pads

    spatial, _, kernel, strides, dil = _geometry(ctx)
    pads = _pads(ctx, spatial, kernel, strides, dil)
    zx = ctx.x(2) if ctx.has(2) else "None"
    zw = ctx.x(3) if ctx.has(3) else "None"
    ctx.set(
        0,
        f"ops.conv_integer({ctx.x(0)}, {ctx.x(1)}, {zx}, {zw}, {strides}, {pads}, {dil}, "
        f"{ctx.attr('group', 1)})",
    )


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
    args = ", ".join(ctx.x(i) if ctx.has(i) else "None" for i in range(8))
    ctx.set(
        0,
        f"ops.qlinear_matmul({args}, {ctx.rank(0)}, {ctx.rank(3)}, {ctx.dtype(out)}, "
        f"{(int(info.min), int(info.max))})",
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
    args = ", ".join(ctx.x(i) if ctx.has(i) else "None" for i in range(9))
    geometry = (strides, pads, dil, ctx.attr("group", 1))
    ctx.set(
        0,
        f"ops.qlinear_conv({args}, {geometry}, {ctx.dtype(out)}, {(int(info.min), int(info.max))})",
    )
