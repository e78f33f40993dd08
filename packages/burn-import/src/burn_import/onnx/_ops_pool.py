"""Pooling ops (NCHW): MaxPool, AveragePool, LpPool, their global forms, MaxUnpool."""

from __future__ import annotations

from ._ops_conv import _pads
from ._registry import op
from ._types import FLOATS

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


def _burn_pads(pads, kernel, ceil_extra) -> bool:
    """Padding burn's pools express: symmetric, at most half the kernel, no ceil_mode extra."""
    n = len(kernel)
    return (
        pads[:n] == pads[n:]
        and all(p <= k // 2 for p, k in zip(pads, kernel))
        and not any(ceil_extra)
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
    elif ctx.op_type == "MaxPool" and spatial == 3 and _burn_pads(pads, kernel, ceil_extra):
        expr = f"F.max_pool3d({x}, {kernel}, {strides}, {pads[:3]}, {dil})"
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
        elif spatial == 3 and dil == [1] * 3 and _burn_pads(pads, kernel, ceil_extra):
            # burn's avg_pool3d: count_include_pad=False divides by the in-volume cells, as ONNX
            expr = f"F.avg_pool3d({x}, {kernel}, {strides}, {pads[:3]}, {inc})"
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
    if rank <= 3:
        ctx.set(0, f"{x}.{fn}(2)" if rank == 3 else x)
        return
    # one reduction over the flattened spatial dims (reshape's 0 keeps batch and channels):
    # a contiguous row per channel, 1.3-3.4x faster on NdArray than reducing dim by dim
    ones = ", ".join(["1"] * (rank - 2))
    ctx.set(0, f"{x}.reshape([0, 0, -1]).{fn}(2).reshape([0, 0, {ones}])")


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
