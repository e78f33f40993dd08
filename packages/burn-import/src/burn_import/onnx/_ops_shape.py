"""Layout ops: reshape, transpose, squeeze, concat, split, slice, pad, constants of a shape."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ._codegen_shuffle import shuffle_concat
from ._context import lit
from ._registry import op


def ints_arg(ctx, i: int):
    """Input i as a Python list literal when constant, else a run-time `ops.ints(...)`."""
    c = ctx.const(i)
    if c is not None:
        return [int(v) for v in c.reshape(-1)]
    return f"ops.ints({ctx.x(i)})"


@op(
    "Constant",
    attrs=(
        "value",
        "value_float",
        "value_floats",
        "value_int",
        "value_ints",
        "sparse_value",
        "value_string",
        "value_strings",
    ),
)
def constant(ctx):
    a = ctx.node.attribute[0]
    if a.name == "value":
        arr = numpy_helper.to_array(a.t)
    elif a.name == "value_float":
        arr = np.array(a.f, np.float32)
    elif a.name == "value_floats":
        arr = np.array(list(a.floats), np.float32)
    elif a.name == "value_int":
        arr = np.array(a.i, np.int64)
    elif a.name == "value_ints":
        arr = np.array(list(a.ints), np.int64)
    else:
        ctx.fail(f"attribute {a.name!r} is not supported")
    ctx.fold(0, arr)


def _static_dims(ctx, i: int) -> list[int] | None:
    """Input i's dims when every one is known at import time (none for rank 0)."""
    vt = ctx.vt(i)
    if not vt.shape or any(not isinstance(d, int) or d < 0 for d in vt.shape):
        return None
    return list(vt.shape)


def _plain_reshape(ctx, shape) -> list[int] | None:
    """The target of a Reshape as burn's `reshape` takes it, when the input's dims are known:
    ONNX's 0 (copy the dim) resolved, every dim positive (at most one -1)."""
    dims = _static_dims(ctx, 0)
    if not isinstance(shape, list) or not shape or dims is None or ctx.attr("allowzero", 0):
        return None
    if any(s == 0 and i >= len(dims) for i, s in enumerate(shape)):
        return None
    out = [dims[i] if s == 0 else s for i, s in enumerate(shape)]
    if out.count(-1) > 1 or any(s < -1 or s == 0 for s in out) or not all(dims):
        return None
    total, known = int(np.prod(dims)), int(np.prod([s for s in out if s != -1]))
    if -1 in out:
        if total % known:
            return None
        out[out.index(-1)] = total // known
    return out if int(np.prod(out)) == total else None


@op("Reshape", attrs=("allowzero",))
def reshape(ctx):
    shape = ints_arg(ctx, 1)
    plain = _plain_reshape(ctx, shape)
    if plain is not None:  # what a person writes: `x.reshape([1, 2, 24, 28, 28])`
        ctx.set(0, f"{ctx.x(0)}.reshape({plain})")
        return
    ctx.set(0, f"ops.reshape({ctx.x(0)}, {shape}, {ctx.attr('allowzero', 0)})")


@op("Flatten", attrs=("axis",))
def flatten(ctx):
    axis, rank = ctx.attr("axis", 1), ctx.rank(0)
    if not -rank <= axis <= rank:  # Flatten's axis may equal the rank
        ctx.fail(f"attribute 'axis' = {axis} is outside [{-rank}, {rank}] for input rank {rank}")
    axis = axis + rank if axis < 0 else axis
    if axis == 1 and ctx.rank(0) >= 2:
        ctx.set(0, f"{ctx.x(0)}.flatten(1, -1)")
    else:
        ctx.set(0, f"ops.flatten({ctx.x(0)}, {axis})")


@op("Transpose", attrs=("perm",))
def transpose(ctx):
    rank = ctx.rank(0)
    perm = ctx.ints("perm", list(range(rank))[::-1])
    if sorted(perm) != list(range(rank)):
        ctx.fail(f"attribute 'perm' = {perm} is not a permutation of the {rank} input dims")
    if rank <= 1:
        ctx.alias(0, 0)
        return
    ctx.set(0, f"{ctx.x(0)}.permute({perm})")


def _dims_call(method: str, axes: list[int]) -> str:
    """`.squeeze_dim(1)` for one axis, `.squeeze_dims([0, 2])` for more (burn's methods)."""
    return f".{method}_dim({axes[0]})" if len(axes) == 1 else f".{method}_dims({axes})"


@op("Squeeze", attrs=("axes",))
def squeeze(ctx):
    axes = ints_arg(ctx, 1) if ctx.has(1) else None
    rank = ctx.rank(0)
    if isinstance(axes, list) and 0 < len(axes) < rank and all(-rank <= a < rank for a in axes):
        norm = sorted({a % rank for a in axes})
        if len(norm) == len(axes):  # a rank >= 1 result: burn's own method says it
            ctx.set(0, ctx.x(0) + _dims_call("squeeze", norm))
            return
    ctx.set(0, f"ops.squeeze({ctx.x(0)}, {axes}, {rank})")


@op("Unsqueeze", attrs=("axes",))
def unsqueeze(ctx):
    axes = ints_arg(ctx, 1)
    rank = ctx.rank(0)
    out = rank + len(axes) if isinstance(axes, list) else 0
    if rank >= 1 and isinstance(axes, list) and axes and all(-out <= a < out for a in axes):
        norm = sorted({a % out for a in axes})
        if len(norm) == len(axes):  # (a rank-0 input is held as [1]: the helper knows)
            ctx.set(0, ctx.x(0) + _dims_call("unsqueeze", norm))
            return
    ctx.set(0, f"ops.unsqueeze({ctx.x(0)}, {axes}, {rank})")


@op("Concat", attrs=("axis",))
def concat(ctx):
    rank = ctx.rank(0)
    axis = ctx.axis("axis", None, rank)
    xs = ", ".join(ctx.x(i) for i in range(ctx.n_in))
    dims = [_static_dims(ctx, i) for i in range(ctx.n_in)]
    if ctx.n_in >= 2 and all(d is not None and all(d) for d in dims):
        shuffled = shuffle_concat(ctx)  # ShuffleNet's Concat + channel shuffle, as one line
        # no empty input to drop: burn's own cat
        ctx.set(0, shuffled or f"Tensor.cat([{xs}], {axis})")
        return
    ctx.set(0, f"ops.concat([{xs}], {axis})")


@op("Split", attrs=("axis", "num_outputs"))
def split(ctx):
    rank = ctx.rank(0)
    axis = ctx.axis("axis", 0, rank)
    dim = ctx.shape(0)[axis]
    if ctx.has(1):
        sizes = ints_arg(ctx, 1)
    else:
        if dim is None:
            ctx.fail("splitting a dynamic dim needs the `split` input")
        n = ctx.attr("num_outputs", ctx.n_out)
        chunk = -(-dim // n)
        sizes = [min(chunk, dim - i * chunk) for i in range(n)]
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(ctx.n_out))
    ctx.emit(f"{outs}, = ops.split({ctx.x(0)}, {axis}, {sizes})")


@op("Slice")
def slice_(ctx):
    args = [ints_arg(ctx, i) if ctx.has(i) else None for i in range(1, 5)]
    starts, _, axes, steps = args
    rank = ctx.rank(0)
    if isinstance(axes, list):
        if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) < len(axes):
            ctx.fail(f"input 'axes' = {axes}: axes must be distinct and in [{-rank}, {rank - 1}]")
    if isinstance(steps, list) and 0 in steps:
        ctx.fail(f"input 'steps' = {steps}: a step cannot be 0")
    lengths = {len(a) for a in args if isinstance(a, list)}
    if len(lengths) > 1:
        ctx.fail(f"starts, ends, axes and steps have different lengths {sorted(lengths)}")
    narrows = _narrows(ctx, args, rank)
    if narrows is not None:  # `x.narrow(1, 24, 24)`: the slice as a person writes it
        ctx.set(0, ctx.x(0) + "".join(f".narrow({a}, {b}, {n})" for a, b, n in narrows))
        return
    ctx.set(0, f"ops.slice_({ctx.x(0)}, {args[0]}, {args[1]}, {args[2]}, {args[3]})")


def _narrows(ctx, args, rank) -> list[tuple[int, int, int]] | None:
    """A constant unit-step Slice over known dims as (axis, start, length) narrows (ONNX's
    clamping done here); None when it is anything else or leaves a dim empty."""
    starts, ends, axes, steps = args
    dims = _static_dims(ctx, 0)
    if not (isinstance(starts, list) and isinstance(ends, list)) or dims is None:
        return None
    if not (axes is None or isinstance(axes, list)) or not (steps is None or isinstance(steps, list)):
        return None
    if steps is not None and any(st != 1 for st in steps):
        return None
    axes = list(range(len(starts))) if axes is None else [a % rank for a in axes]
    out = []
    for b, e, a in zip(starts, ends, axes):
        d = dims[a]
        b = min(max(b + d if b < 0 else b, 0), d)
        e = min(max(e + d if e < 0 else e, 0), d)
        if e <= b:
            return None
        if e - b != d:
            out.append((a, b, e - b))
    return out


@op("Expand")
def expand(ctx):
    ctx.set(0, f"ops.expand({ctx.x(0)}, {ints_arg(ctx, 1)})")


@op("Tile")
def tile(ctx):
    ctx.set(0, f"{ctx.x(0)}.repeat({ints_arg(ctx, 1)})")


@op("Pad", attrs=("mode",))
def pad(ctx):
    mode = ctx.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        ctx.fail(f"mode {mode!r}")
    value = "0"
    if ctx.has(2):
        c = ctx.const(2)
        value = lit(c.reshape(-1)[0].item()) if c is not None else f"ops.scalar({ctx.x(2)})"
    axes = ints_arg(ctx, 3) if ctx.has(3) else None
    ctx.set(0, f"ops.pad({ctx.x(0)}, {ints_arg(ctx, 1)}, {mode!r}, {value}, {axes})")


@op("ConstantOfShape", attrs=("value",))
def constant_of_shape(ctx):
    v = ctx.attrs.get("value")
    arr = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
    elem = ctx.out_elem(0)
    ctx.set(
        0,
        f"ops.constant_of_shape({ints_arg(ctx, 0)}, {lit(arr.reshape(-1)[0].item())}, "
        f"{ctx.dtype(elem)}, device)",
    )


@op("Range")
def range_(ctx):
    args = []
    for i in range(3):
        c = ctx.const(i)
        args.append(lit(c.reshape(-1)[0].item()) if c is not None else ctx.x(i))
    ctx.set(0, f"ops.range_({', '.join(args)}, {ctx.dtype(ctx.out_elem(0))}, device)")


@op("Shape", attrs=("start", "end"))
def shape(ctx):
    start, end = ctx.attr("start", 0), ctx.attr("end")
    ctx.set(0, f"ops.shape({ctx.x(0)}, {start}, {end})")


@op("Size")
def size(ctx):
    ctx.set(0, f"ops.const([{ctx.x(0)}.numel()], [1], DType.I64, device)")


def _block(ctx, multiples) -> tuple[int, str]:
    """DepthToSpace/SpaceToDepth's blocksize and mode, checked on a rank-4 input whose static
    dims must be multiples of `multiples(b)` ({dim index: multiple})."""
    b, mode = ctx.attr("blocksize"), ctx.attr("mode", "DCR")
    if b < 1:
        ctx.fail(f"attribute 'blocksize' = {b} must be >= 1")
    if mode not in ("DCR", "CRD"):
        ctx.fail(f"attribute 'mode' = {mode!r}: DCR or CRD expected")
    if ctx.rank(0) != 4:
        ctx.fail(f"input rank {ctx.rank(0)}: 4 expected")
    dims = ctx.shape(0)
    for i, k in multiples(b).items():
        if dims[i] is not None and dims[i] % k:
            ctx.fail(f"input dim {i} ({dims[i]}) is not a multiple of {k} (blocksize {b})")
    return b, mode


@op("DepthToSpace", attrs=("blocksize", "mode"))
def depth_to_space(ctx):
    b, mode = _block(ctx, lambda b: {1: b * b})
    ctx.set(0, f"ops.depth_to_space({ctx.x(0)}, {b}, {mode!r})")


@op("SpaceToDepth", attrs=("blocksize", "mode"))
def space_to_depth(ctx):
    b, mode = _block(ctx, lambda b: {2: b, 3: b})
    ctx.set(0, f"ops.space_to_depth({ctx.x(0)}, {b}, {mode!r})")


@op("CenterCropPad", attrs=("axes",))
def center_crop_pad(ctx):
    rank = ctx.rank(0)
    axes = ctx.ints("axes", list(range(rank)))
    if any(not -rank <= a < rank for a in axes):
        ctx.fail(f"attribute 'axes' = {axes}: every axis must be in [{-rank}, {rank - 1}]")
    axes = [a % rank for a in axes]
    ctx.set(0, f"ops.center_crop_pad({ctx.x(0)}, {ints_arg(ctx, 1)}, {axes})")


@op("Compress", attrs=("axis",))
def compress(ctx):
    axis = ctx.axis("axis", None, ctx.rank(0)) if "axis" in ctx.attrs else None
    ctx.set(0, f"ops.compress({ctx.x(0)}, {ctx.x(1)}, {axis})")


@op("HannWindow", "HammingWindow", "BlackmanWindow", attrs=("output_datatype", "periodic"))
def window(ctx):
    elem = ctx.attr("output_datatype", 1)
    per = bool(ctx.attr("periodic", 1))
    kind = ctx.op_type[: -len("Window")].lower()
    ctx.set(0, f"ops.window({kind!r}, {ints_arg(ctx, 0)}, {per}, {ctx.dtype(elem)}, device)")


@op("EyeLike", attrs=("dtype", "k"))
def eye_like(ctx):
    elem = ctx.attr("dtype", ctx.elem(0))
    ctx.set(0, f"ops.eye_like({ctx.x(0)}, {ctx.attr('k', 0)}, {ctx.dtype(elem)})")
