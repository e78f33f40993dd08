"""Fourier transforms: DFT and STFT."""

from __future__ import annotations

from ._registry import op


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
