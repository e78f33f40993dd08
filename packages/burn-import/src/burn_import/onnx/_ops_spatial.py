"""Sampling on spatial grids: GridSample, AffineGrid, RoiAlign."""

from __future__ import annotations

from ._registry import op


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
