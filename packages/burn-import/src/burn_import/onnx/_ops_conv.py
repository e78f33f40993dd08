"""Convolution, pooling and normalization ops (NCHW). Constant weights become burn_nn layers."""

from __future__ import annotations

from ._context import lit
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
    if spatial == 3:  # no burn layer: 2-D convs per depth tap (`_rt_conv3d`)
        bias = ctx.x(2) if ctx.has(2) else "None"
        x, w = ctx.x(0), ctx.x(1)
        ctx.set(0, f"ops.conv3d({x}, {w}, {bias}, {strides}, {pads}, {dil}, {group})")
        return
    w, b = ctx.const(1), ctx.const(2) if ctx.has(2) else None
    if w is not None and (not ctx.has(2) or b is not None):
        c_in, c_out = wshape[1] * group, wshape[0]
        rec = {"weight": w, "bias": b}
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
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
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
    bias = ctx.x(2) if ctx.has(2) else "None"
    ctx.set(
        0,
        f"ops.conv_transpose({ctx.x(0)}, {ctx.x(1)}, {bias}, {strides}, {pads}, {dil}, "
        f"{group}, {out_pad})",
    )


POOL_ATTRS = (
    "auto_pad",
    "ceil_mode",
    "dilations",
    "kernel_shape",
    "pads",
    "strides",
    "storage_order",
    "count_include_pad",
)


@op("MaxPool", "AveragePool", "LpPool", attrs=POOL_ATTRS + ("p",))
def pool(ctx):
    rank = ctx.rank(0)
    spatial = rank - 2
    if spatial < 1:
        ctx.fail(f"input rank {rank}")
    if ctx.has_out(1) and (ctx.op_type != "MaxPool" or spatial != 2):
        ctx.fail("the Indices output is supported for 2-D MaxPool only")
    if "p" in ctx.attrs and ctx.op_type != "LpPool":
        ctx.fail("attribute 'p' is not supported")
    kernel = ctx.ints("kernel_shape", None, spatial, 1)
    strides = ctx.ints("strides", [1] * spatial, spatial, 1)
    dil = ctx.ints("dilations", [1] * spatial, spatial, 1)
    pads = _pads(ctx, spatial, kernel, strides, dil)
    ceil = ctx.attr("ceil_mode", 0)
    ceil_extra = [0] * spatial
    if ceil:
        dims = ctx.shape(0)[2:]
        if any(d is None for d in dims):
            ctx.fail("ceil_mode needs static spatial input dims")
        for i, d in enumerate(dims):
            span = d + pads[i] + pads[i + spatial] - ((kernel[i] - 1) * dil[i] + 1)
            n_floor, n_ceil = span // strides[i] + 1, -(-span // strides[i]) + 1
            if (n_ceil - 1) * strides[i] >= d + pads[i]:
                n_ceil -= 1  # the last window must start inside the input or left padding
            ceil_extra[i] = (n_ceil - n_floor) * strides[i]
    x = ctx.x(0)
    is_float = ctx.elem(0) in FLOATS
    if not is_float and ctx.op_type != "MaxPool":
        ctx.fail("only float inputs are supported")
    if not is_float:
        x = f"ops.cast({x}, DType.F64)"
    if ctx.op_type == "LpPool":
        expr = f"ops.pool_nd({x}, 'lp', {kernel}, {strides}, {pads}, {dil}, p={ctx.attr('p', 2)})"
    elif ctx.op_type == "MaxPool" and ctx.has_out(1):
        mp = [p + (ceil_extra[i % spatial] if i >= spatial else 0) for i, p in enumerate(pads)]
        if not is_float:
            ctx.fail("Indices of a non-float input")
        if mp[:2] != mp[2:] or any(p > k // 2 for p, k in zip(mp, kernel)):
            ctx.fail("Indices with asymmetric padding or padding over half the kernel")
        order = ctx.attr("storage_order", 0)
        ctx.emit(
            f"{ctx.out(0)}, {ctx.out(1)} = ops.max_pool_indices({x}, {kernel}, {strides}, "
            f"{mp[:2]}, {dil}, {order})"
        )
        return
    elif ctx.op_type == "MaxPool" and spatial <= 2:
        mp = [p + (ceil_extra[i % spatial] if i >= spatial else 0) for i, p in enumerate(pads)]
        sym = mp[:spatial] == mp[spatial:] and all(p <= k // 2 for p, k in zip(mp, kernel))
        if sym and spatial == 2:  # burn's own op when the padding is one it can express
            expr = f"F.max_pool2d({x}, {kernel}, {strides}, {mp[:2]}, {dil})"
        else:
            expr = f"ops.max_pool({x}, {kernel}, {strides}, {mp}, {dil})"
    elif ctx.op_type == "MaxPool":
        expr = (
            f"ops.pool_nd({x}, 'max', {kernel}, {strides}, {pads}, {dil}, ceil_extra={ceil_extra})"
        )
    else:
        inc = bool(ctx.attr("count_include_pad", 0))
        sym = pads[:spatial] == pads[spatial:] and all(p <= k // 2 for p, k in zip(pads, kernel))
        if (
            spatial == 2
            and dil == [1, 1]
            and not any(ceil_extra)
            and sym
            and (inc or not any(pads))
        ):  # burn's own op when it computes exactly ONNX's average
            expr = f"F.avg_pool2d({x}, {kernel}, {strides}, {pads[:2]}, True)"
        elif spatial <= 2 and dil == [1] * spatial:
            extra = f", {ceil_extra}" if any(ceil_extra) else ""
            expr = f"ops.avg_pool({x}, {kernel}, {strides}, {pads}, {inc}{extra})"
        else:
            expr = (
                f"ops.pool_nd({x}, 'avg', {kernel}, {strides}, {pads}, {dil}, {inc}, {ceil_extra})"
            )
    if not is_float:
        expr = f"ops.cast({expr}, {ctx.dtype(ctx.elem(0))})"
    ctx.set(0, expr)


@op("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx):
    rank = ctx.rank(0)
    fn = "mean_dim" if ctx.op_type == "GlobalAveragePool" else "max_dim"
    x = ctx.x(0)
    for d in range(2, rank):
        x = f"{x}.{fn}({d})"
    ctx.set(0, x)


@op("BatchNormalization", attrs=("epsilon", "momentum", "training_mode"))
def batch_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    if ctx.attr("training_mode", 0):
        mom = ctx.attr("momentum", 0.9)
        xs = ", ".join(ctx.x(i) for i in range(5))
        outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
        ctx.emit(f"{outs} = ops.batch_norm_training({xs}, {eps!r}, {mom!r})")
        return
    if ctx.n_out > 1:
        ctx.fail("running statistics outputs need training_mode=1")
    consts = [ctx.const(i) for i in range(1, 5)]
    if all(c is not None for c in consts) and ctx.elem(0) == 1 and ctx.rank(0) >= 2:
        scale, bias, mean, var = consts
        n = scale.shape[0]
        mom = lit(1 - ctx.attr("momentum", 0.9))
        init = f"BatchNormConfig({n}, epsilon={eps!r}, momentum={mom}).init(device)"
        rec = {"gamma": scale, "beta": bias, "running_mean": mean, "running_var": var}
        name = ctx.add_field("batchnorm", "BatchNorm", init, rec)
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    xs = ", ".join(ctx.x(i) for i in range(5))
    ctx.set(0, f"ops.batch_norm({xs}, {eps!r})")


@op("InstanceNormalization", attrs=("epsilon",))
def instance_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    ctx.set(0, f"ops.instance_norm({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {eps!r})")


@op("LayerNormalization", attrs=("axis", "epsilon", "stash_type"))
def layer_norm(ctx):
    if ctx.n_out > 1 and any(ctx.has_out(i) for i in (1, 2)):
        mean, inv = (ctx.out(i) if ctx.has_out(i) else "_" for i in (1, 2))
        target = f"{ctx.out(0)}, {mean}, {inv}"
    else:
        target = f"{ctx.out(0)}, _, _"
    axis = ctx.axis("axis", -1, ctx.rank(0))
    eps = ctx.attr("epsilon", 1e-5)
    bias = ctx.x(2) if ctx.has(2) else "None"
    ctx.emit(f"{target} = ops.layer_norm({ctx.x(0)}, {ctx.x(1)}, {bias}, {axis}, {eps!r})")


@op("GroupNormalization", attrs=("epsilon", "num_groups", "stash_type"))
def group_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    g = ctx.attr("num_groups")
    ctx.set(0, f"ops.group_norm({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {g}, {eps!r})")


@op("LRN", attrs=("alpha", "beta", "bias", "size"))
def lrn(ctx):
    a, b, k = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    size = ctx.attr("size")
    if size < 1:
        ctx.fail(f"attribute 'size' = {size} must be >= 1")
    ctx.set(0, f"ops.lrn({ctx.x(0)}, {size}, {a!r}, {b!r}, {k!r})")


@op("LpNormalization", attrs=("axis", "p"))
def lp_norm(ctx):
    axis = ctx.axis("axis", -1, ctx.rank(0))
    ctx.set(0, f"ops.lp_normalize({ctx.x(0)}, {axis}, {ctx.attr('p', 2)})")


@op("MeanVarianceNormalization", attrs=("axes",))
def mvn(ctx):
    axes, rank = ctx.ints("axes", [0, 2, 3]), ctx.rank(0)
    if any(not -rank <= a < rank for a in axes):
        ctx.fail(f"attribute 'axes' = {axes}: every axis must be in [{-rank}, {rank - 1}]")
    ctx.set(0, f"ops.mean_variance_norm({ctx.x(0)}, {axes})")


@op("GridSample", attrs=("align_corners", "mode", "padding_mode"))
def grid_sample(ctx):
    mode = ctx.attr("mode", "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    pad = ctx.attr("padding_mode", "zeros")
    if mode not in ("nearest", "linear", "cubic") or pad not in ("zeros", "border", "reflection"):
        ctx.fail(f"mode {mode!r} / padding_mode {pad!r}")
    align = bool(ctx.attr("align_corners", 0))
    ctx.set(0, f"ops.grid_sample({ctx.x(0)}, {ctx.x(1)}, {mode!r}, {pad!r}, {align})")


@op("AffineGrid", attrs=("align_corners",))
def affine_grid(ctx):
    size = ctx.const(1)
    size = [int(v) for v in size] if size is not None else f"ops.ints({ctx.x(1)})"
    align = bool(ctx.attr("align_corners", 0))
    ctx.set(0, f"ops.affine_grid({ctx.x(0)}, {size}, {align})")


@op("DFT", attrs=("axis", "inverse", "onesided"))
def dft(ctx):
    rank = ctx.rank(0)
    if "axis" in ctx.attrs:
        axis = ctx.attr("axis")
    elif ctx.has(2) and ctx.const(2) is not None:
        axis = int(ctx.const(2).reshape(-1)[0])
    elif ctx.has(2):
        axis = f"int(ops.scalar({ctx.x(2)})) % {rank}"
    else:
        axis = 1 if ctx.opset < 20 else -2
    if isinstance(axis, int):
        if not -rank <= axis < rank:
            ctx.fail(f"axis {axis} is outside [{-rank}, {rank - 1}] for input rank {rank}")
        axis %= rank
        if axis == rank - 1:
            ctx.fail("the transform axis cannot be the complex (last) dim")
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    length = None
    if ctx.has(1):
        c = ctx.const(1)
        length = int(c.reshape(-1)[0]) if c is not None else f"int(ops.scalar({ctx.x(1)}))"
    ctx.set(0, f"ops.dft({ctx.x(0)}, {length}, {axis}, {inverse}, {onesided})")


@op("Col2Im", attrs=("dilations", "pads", "strides"))
def col2im(ctx):
    from ._ops_shape import ints_arg

    image, block = ints_arg(ctx, 1), ints_arg(ctx, 2)
    dil, pads, st = (list(ctx.attr(a, [])) for a in ("dilations", "pads", "strides"))
    ctx.set(0, f"ops.col2im({ctx.x(0)}, {image}, {block}, {dil}, {pads}, {st})")


@op("MaxUnpool", attrs=("kernel_shape", "pads", "strides"))
def max_unpool(ctx):
    from ._ops_shape import ints_arg

    spatial = ctx.rank(0) - 2
    kernel = ctx.ints("kernel_shape", None, spatial, 1)
    strides = ctx.ints("strides", [1] * spatial, spatial, 1)
    pads = ctx.ints("pads", [0] * (2 * spatial), 2 * spatial, 0)
    dims = ctx.shape(0)
    if any(d is None for d in dims):
        ctx.fail("MaxUnpool needs static input dims")
    # the indices address the shape MaxPool's input had; output_shape may pad it at the end
    inferred = dims[:2] + [
        (dims[2 + i] - 1) * strides[i] - pads[i] - pads[i + spatial] + kernel[i]
        for i in range(spatial)
    ]
    shape = ints_arg(ctx, 2) if ctx.has(2) else inferred
    ctx.set(0, f"ops.max_unpool({ctx.x(0)}, {ctx.x(1)}, {inferred}, {shape})")


@op("Det")
def det(ctx):
    ctx.set(0, f"ops.det({ctx.x(0)})")


@op("STFT", attrs=("onesided",))
def stft(ctx):
    from ._ops_shape import ints_arg

    step = ints_arg(ctx, 1)
    step = step[0] if isinstance(step, list) else f"{step}[0]"
    window = ctx.x(2) if ctx.has(2) else "None"
    length = ints_arg(ctx, 3) if ctx.has(3) else None
    length = length[0] if isinstance(length, list) else (f"{length}[0]" if length else None)
    if not ctx.has(2) and length is None:
        ctx.fail("needs a window or a frame_length")
    onesided = bool(ctx.attr("onesided", 1))
    ctx.set(0, f"ops.stft({ctx.x(0)}, {step}, {window}, {length}, {onesided})")


@op(
    "RoiAlign",
    attrs=(
        "coordinate_transformation_mode",
        "mode",
        "output_height",
        "output_width",
        "sampling_ratio",
        "spatial_scale",
    ),
)
def roi_align(ctx):
    legacy = "output_half_pixel" if ctx.opset < 16 else "half_pixel"
    ctm = ctx.attr("coordinate_transformation_mode", legacy)
    mode = ctx.attr("mode", "avg")
    if ctm not in ("half_pixel", "output_half_pixel") or mode not in ("avg", "max"):
        ctx.fail(f"coordinate_transformation_mode {ctm!r}, mode {mode!r}")
    out_hw = (ctx.attr("output_height", 1), ctx.attr("output_width", 1))
    ratio, scale = ctx.attr("sampling_ratio", 0), float(ctx.attr("spatial_scale", 1.0))
    ctx.set(
        0,
        f"ops.roi_align({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {mode!r}, {out_hw}, {ratio}, "
        f"{scale!r}, {ctm == 'half_pixel'})",
    )
