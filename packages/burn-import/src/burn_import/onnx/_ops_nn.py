"""Resampling (Resize; opset-9 Upsample arrives here upgraded), losses and RMS normalization."""

from __future__ import annotations

from ._ops_shape import ints_arg
from ._registry import op
from ._types import FLOATS

RESIZE_ATTRS = (
    "antialias",
    "axes",
    "coordinate_transformation_mode",
    "cubic_coeff_a",
    "exclude_outside",
    "extrapolation_value",
    "keep_aspect_ratio_policy",
    "mode",
    "nearest_mode",
)


def _floats_arg(ctx, i):
    c = ctx.const(i) if ctx.has(i) else None
    if ctx.has(i) and c is None:
        return (
            f"ops.ints({ctx.x(i)})"
            if False
            else f"[float(v) for v in {ctx.x(i)}.numpy().reshape(-1)]"
        )
    return None if c is None or c.size == 0 else [float(v) for v in c.reshape(-1)]


@op("Resize", attrs=RESIZE_ATTRS)
def resize(ctx):
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        ctx.fail(f"mode {mode!r}")
    if ctx.attr("antialias", 0) and mode == "nearest":
        ctx.fail("antialias with mode 'nearest'")
    roi = _floats_arg(ctx, 1) if ctx.has(1) else None
    scales = _floats_arg(ctx, 2) if ctx.has(2) else None
    sizes = ints_arg(ctx, 3) if ctx.has(3) else None
    axes = list(ctx.attr("axes")) if "axes" in ctx.attrs else None
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel")
    nm = ctx.attr("nearest_mode", "round_prefer_floor")
    a = ctx.attr("cubic_coeff_a", -0.75)
    ex = bool(ctx.attr("exclude_outside", 0))
    ev = ctx.attr("extrapolation_value", 0.0)
    pol = ctx.attr("keep_aspect_ratio_policy", "stretch")
    aa = bool(ctx.attr("antialias", 0))
    ctx.set(
        0,
        f"ops.resize({ctx.x(0)}, {sizes}, {scales}, {axes}, {mode!r}, {ctm!r}, {nm!r}, "
        f"{a!r}, {ex}, {roi}, {ev!r}, {pol!r}, {aa})",
    )


@op("NegativeLogLikelihoodLoss", attrs=("ignore_index", "reduction"))
def nll(ctx):
    ign = ctx.attr("ignore_index")
    w = ctx.x(2) if ctx.has(2) else "None"
    red = ctx.attr("reduction", "mean")
    ctx.set(0, f"ops.nll_loss({ctx.x(0)}, {ctx.x(1)}, {w}, {red!r}, {ign})")


@op("SoftmaxCrossEntropyLoss", attrs=("ignore_index", "reduction"))
def sce(ctx):
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float scores are supported")
    ign = ctx.attr("ignore_index")
    w = ctx.x(2) if ctx.has(2) else "None"
    red = ctx.attr("reduction", "mean")
    logp = ctx.out(1) if ctx.has_out(1) else "_"
    ctx.emit(f"{logp} = activation.log_softmax({ctx.x(0)}, 1)")
    ctx.set(0, f"ops.nll_loss({logp}, {ctx.x(1)}, {w}, {red!r}, {ign})")


@op("RMSNormalization", attrs=("axis", "epsilon", "stash_type"))
def rms_norm(ctx):
    axis = ctx.axis("axis", -1, ctx.rank(0))
    eps = ctx.attr("epsilon", 1e-5)
    r = ctx.rank(0)
    ctx.set(0, f"ops.rms_norm({ctx.x(0)}, {ctx.xr(1, r)}, {axis}, {eps!r})")
