"""Convolution ops (NCHW): Conv, ConvTranspose, Col2Im. Constant weights become burn_nn layers."""

from __future__ import annotations

from ._context import lit
from ._conv_act import fused_activation
from ._qweights import conv_layout, qdq_conv
from ._registry import op
from ._types import FLOATS

CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _geometry(ctx, what: str = "convolutions", dims: tuple[int, ...] = (1, 2)):
    """(spatial, weight shape, kernel, strides, dilations) of a Conv-like node with `dims`
    spatial dims, the kernel from the weight's shape unless given, strides and dilations 1 by
    default."""
    rank = ctx.rank(0)
    spatial = rank - 2
    if spatial not in dims:
        names = " and ".join(f"{d}D" for d in dims)
        ctx.fail(f"only {names} {what} are supported (input rank {rank})")
    wshape = ctx.shape(1)
    if "kernel_shape" in ctx.attrs:
        kernel = ctx.ints("kernel_shape", None, spatial, 1)
    else:
        kernel = list(wshape[2:])
    strides = ctx.ints("strides", [1] * spatial, spatial, 1)
    dil = ctx.ints("dilations", [1] * spatial, spatial, 1)
    return spatial, wshape, kernel, strides, dil


def _pads(ctx, spatial: int, kernel, strides, dilations):
    """ONNX pads `[b1, b2, ..., e1, e2, ...]` (auto_pad resolved from static input dims)."""
    auto = ctx.attr("auto_pad", "NOTSET")
    pads = ctx.ints("pads", [0] * (2 * spatial), 2 * spatial, 0)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        dims = ctx.shape(0)[2:]
        if any(d is None for d in dims):
            ctx.fail("auto_pad SAME needs static spatial input dims")
        pads = [0] * (2 * spatial)
        for i, d in enumerate(dims):
            out = -(-d // strides[i])
            total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - d, 0)
            small, big = total // 2, total - total // 2
            pads[i], pads[i + spatial] = (small, big) if auto == "SAME_UPPER" else (big, small)
    elif auto == "VALID":
        pads = [0] * (2 * spatial)
    elif auto != "NOTSET":
        ctx.fail(f"auto_pad={auto!r}")
    return pads


@op("Conv", attrs=CONV_ATTRS)
def conv(ctx):
    spatial, wshape, kernel, strides, dil = _geometry(ctx, dims=(1, 2, 3))
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    group = ctx.attr("group", 1)
    pads = _pads(ctx, spatial, kernel, strides, dil)
    if spatial == 3:  # burn's module.conv3d (`_rt_conv3d`: asymmetric pads by hand)
        bias = ctx.x(2) if ctx.has(2) else "None"
        x, w = ctx.x(0), ctx.x(1)
        ctx.set(0, f"ops.conv3d({x}, {w}, {bias}, {strides}, {pads}, {dil}, {group})")
        return
    w, b = ctx.const(1), ctx.const(2) if ctx.has(2) else None
    ch = None  # per-output-channel scales applied to the layer's output (quantized weight)
    qw = ctx.qweight(1)
    held = w is None and qw is not None and (lay := conv_layout(qw)) is not None
    if held:
        w, ch = lay  # the layer holds the int8 weight quantized (`_qweights`)
    if w is not None and (not ctx.has(2) or b is not None):
        c_in, c_out = wshape[1] * group, wshape[0]
        rec = {"weight": w, "bias": b if ch is None else None}
        if ch is not None:
            b = None
        if spatial == 2:
            pad = f"PaddingConfig2d.Explicit({pads[0]}, {pads[1]}, {pads[2]}, {pads[3]})"
            init = (
                f"Conv2dConfig([{c_in}, {c_out}], {kernel}, stride={strides}, dilation={dil}, "
                f"groups={group}, padding={pad}, bias={b is not None}).init(device)"
            )
            name = ctx.add_field("conv2d", "Conv2d", init, rec)
        else:
            if pads[0] != pads[1]:
                ctx.fail("asymmetric 1D padding with constant weights")
            pad = f"PaddingConfig1d.Explicit({pads[0]})"
            init = (
                f"Conv1dConfig({c_in}, {c_out}, {kernel[0]}, stride={strides[0]}, "
                f"dilation={dil[0]}, groups={group}, padding={pad}, bias={b is not None})"
                ".init(device)"
            )
            name = ctx.add_field("conv1d", "Conv1d", init, rec)
        qa = ctx.gen.qacts.get(ctx.node.input[0]) if held and spatial == 2 else None
        if qa is not None:  # on the activation's integers
            qdq_conv(ctx, qa, name, qw if ch is not None else None)
            return
        act = fused_activation(ctx) if spatial == 2 and ch is None else None
        if act is not None:  # the activation after it, in the same call (`_conv_act`)
            ctx.set(0, f"self.{name}.forward({ctx.x(0)}, activation={act})")
            return
        expr = f"self.{name}.forward({ctx.x(0)})"
        if ch is not None:  # y = conv(x, q) * scale[c] + bias[c]
            shape = [1, c_out] + [1] * spatial
            expr += f".mul({ctx.gen.materialize(qw.scale_name)}.reshape({shape}))"
            if ctx.has(2):
                expr += f".add({ctx.x(2)}.reshape({shape}))"
        ctx.set(0, expr)
        return
    bias = ctx.x(2) if ctx.has(2) else "None"
    ctx.set(0, f"ops.conv({ctx.x(0)}, {ctx.x(1)}, {bias}, {strides}, {pads}, {dil}, {group})")


@op("ConvTranspose", attrs=CONV_ATTRS + ("output_padding", "output_shape"))
def conv_transpose(ctx):
    spatial, _, kernel, strides, dil = _geometry(ctx, "transposed convolutions", (1, 2, 3))
    group = ctx.attr("group", 1)
    out_pad = ctx.ints("output_padding", [0] * spatial, spatial, 0)
    auto = ctx.attr("auto_pad", "NOTSET")
    pads = ctx.ints("pads", [0] * (2 * spatial), 2 * spatial, 0)
    if len(ctx.attr("output_shape", [0] * spatial)) not in (spatial, spatial + 2):
        ctx.fail(f"attribute 'output_shape' needs {spatial} values (input rank {spatial + 2})")
    dims = ctx.shape(0)[2:]
    if "output_shape" in ctx.attrs and auto in ("NOTSET", "VALID"):
        # The given pads (none for VALID) stay, and the result is cropped or zero-extended at
        # the end to output_shape, as ONNX's reference (and torch's output_size) do; the
        # spec's formula that derives pads from output_shape is for SAME_* (below).
        if any(d is None for d in dims):
            ctx.fail("output_shape needs static input dims")
        if auto == "VALID":
            pads = [0] * (2 * spatial)
        target = list(ctx.attr("output_shape"))[-spatial:]
        for i in range(spatial):
            full = strides[i] * (dims[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1
            diff = target[i] - (full - pads[i] - pads[i + spatial])
            if diff >= 0:
                out_pad[i] += diff
            else:
                pads[i + spatial] -= diff
    elif "output_shape" in ctx.attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
        if any(d is None for d in dims):
            ctx.fail("output_shape/auto_pad need static input dims")
        target = list(ctx.attr("output_shape", [d * s for d, s in zip(dims, strides)]))[-spatial:]
        for i in range(spatial):
            full = strides[i] * (dims[i] - 1) + out_pad[i] + ((kernel[i] - 1) * dil[i] + 1)
            total = max(full - target[i], 0)
            small, big = total // 2, total - total // 2
            upper = auto != "SAME_LOWER"
            pads[i], pads[i + spatial] = (small, big) if upper else (big, small)
    elif auto == "VALID":
        pads = [0] * (2 * spatial)
    w, b = ctx.const(1), (ctx.const(2) if ctx.has(2) else None)
    symmetric = pads[:spatial] == pads[spatial:]
    if spatial == 2 and symmetric and w is not None and (not ctx.has(2) or b is not None):
        # burn_nn's ConvTranspose2d: weight [in, out / groups, kh, kw], as ONNX stores it.
        init = (
            f"ConvTranspose2dConfig([{w.shape[0]}, {w.shape[1] * group}], {kernel}, "
            f"stride={strides}, dilation={dil}, groups={group}, padding={pads[:2]}, "
            f"padding_out={out_pad}, bias={b is not None}).init(device)"
        )
        name = ctx.add_field(
            "conv_transpose2d", "ConvTranspose2d", init, {"weight": w, "bias": b}
        )
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    bias = ctx.x(2) if ctx.has(2) else "None"
    ctx.set(
        0,
        f"ops.conv_transpose({ctx.x(0)}, {ctx.x(1)}, {bias}, {strides}, {pads}, {dil}, "
        f"{group}, {out_pad})",
    )


@op("Col2Im", attrs=("dilations", "pads", "strides"))
def col2im(ctx):
    from ._ops_shape import ints_arg

    image, block = ints_arg(ctx, 1), ints_arg(ctx, 2)
    dil, pads, st = (list(ctx.attr(a, [])) for a in ("dilations", "pads", "strides"))
    ctx.set(0, f"ops.col2im({ctx.x(0)}, {image}, {block}, {dil}, {pads}, {st})")


@op("DeformConv", attrs=("dilations", "group", "kernel_shape", "offset_group", "pads", "strides"))
def deform_conv(ctx):
    """ONNX DeformConv (opset 19, 2-D) through `module.deform_conv2d`: inputs X, W, offset, B,
    mask as torchvision's (per tap a row then a column shift); symmetric pads only."""
    spatial, _, kernel, strides, dil = _geometry(ctx, "deformable convolutions", (2,))
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    pads = ctx.ints("pads", [0] * 4, 4, 0)
    if pads[:2] != pads[2:]:
        ctx.fail(f"asymmetric pads {pads}")
    group, offset_group = ctx.attr("group", 1), ctx.attr("offset_group", 1)
    bias = ctx.x(3) if ctx.has(3) else "None"
    mask = ctx.x(4) if ctx.has(4) else "None"
    ctx.set(
        0,
        f"F.deform_conv2d({ctx.x(0)}, {ctx.x(2)}, {ctx.x(1)}, {mask}, {bias}, {strides}, "
        f"{pads[:2]}, {dil}, {group}, {offset_group})",
    )
