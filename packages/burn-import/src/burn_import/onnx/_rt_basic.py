"""Run-time helpers for ONNX semantics that are more than one Tensor method (layout, dtypes).

The generated code calls these as `ops.<name>`; each is written with the public Tensor API only,
so it runs on every backend and is differentiable under Autodiff.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import Bool, DType, Float, Int, Tensor

_FLOAT = {DType.F64, DType.F32, DType.F16}
_NP = {
    DType.F64: np.float64,
    DType.F32: np.float32,
    DType.F16: np.float16,
    DType.I64: np.int64,
    DType.I32: np.int32,
    DType.I16: np.int16,
    DType.I8: np.int8,
    DType.U8: np.uint8,
    DType.BOOL: np.bool_,
}


def const(values, shape, dtype, device) -> Tensor:
    """A constant written into the generated code: `ops.const([1.0, 2.0], [2], DType.F32, device)`."""
    arr = np.asarray(values, dtype=_NP[dtype]).reshape(shape)
    return Tensor.from_data(arr, device, dtype)


def param(shape, dtype, device, trainable: bool = True):
    """A zero-filled Param of the given shape and dtype (the record fills in the values)."""
    from burn_nn import Param

    t = Tensor.from_data(np.zeros(shape, dtype=_NP[dtype]), device, dtype)
    return Param.from_tensor(t, require_grad=trainable and dtype in _FLOAT)


def cast(x: Tensor, dtype) -> Tensor:
    """ONNX Cast: float -> int truncates toward zero, anything -> bool is `!= 0`."""
    if x.dtype == dtype:
        return x
    if dtype == DType.BOOL:
        return x if x.kind is Bool else x.not_equal_elem(0)
    if dtype in _FLOAT:
        return (x.float() if x.kind is not Float else x).cast(dtype)
    if x.kind is Float:
        x = x.trunc()
    return (x.int() if x.kind is not Int else x).cast(dtype)


def shape(x: Tensor, start: int = 0, end: int | None = None) -> Tensor:
    dims = x.dims()[start:end]
    return Tensor.from_data(np.array(dims, dtype=np.int64).reshape(-1), x.device, DType.I64)


def ints(x) -> list[int]:
    """A run-time Int tensor (or a list) as a Python list of ints (shape arguments)."""
    if isinstance(x, Tensor):
        return [int(v) for v in np.asarray(x.numpy()).reshape(-1)]
    return [int(v) for v in x]


def reshape(x: Tensor, shape, allowzero: int = 0) -> Tensor:
    """ONNX Reshape: 0 copies the input dim (unless allowzero), -1 is inferred."""
    shape = ints(shape)
    dims = x.dims()
    if not allowzero:
        shape = [dims[i] if s == 0 else s for i, s in enumerate(shape)]
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape[shape.index(-1)] = (int(np.prod(dims)) // known) if known else 0
    if 0 in shape:
        # Burn's reshape reads 0 as "keep this dim"; a literal 0 (allowzero, or a copied empty
        # dim) means an empty result, whose shape says everything.
        if x.numel() != 0:
            raise ValueError(f"Reshape: {dims} has {x.numel()} elements, {shape} has none")
        return Tensor.full(shape, 0, x.device, dtype=x.dtype)
    return x.reshape(shape or [1])


def trilu(x: Tensor, k: int, upper: bool) -> Tensor:
    """ONNX Trilu: keep the upper (or lower) triangle from diagonal k. An empty matrix is its own
    result (burn's triangle masks cannot be shaped to a zero-sized dim)."""
    if x.numel() == 0:
        return x
    return x.triu(k) if upper else x.tril(k)


def squeeze(x: Tensor, axes, rank: int) -> Tensor:
    """ONNX Squeeze (`axes` None: every size-1 dim); a rank-0 result is held as `[1]`."""
    dims = x.dims()
    axes = (
        [a % rank for a in ints(axes)]
        if axes is not None
        else [i for i, d in enumerate(dims) if d == 1]
    )
    keep = [d for i, d in enumerate(dims) if i not in axes]
    return x.reshape(keep or [1])


def unsqueeze(x: Tensor, axes, rank: int) -> Tensor:
    """ONNX Unsqueeze of a rank-`rank` input (rank 0 is held as `[1]`)."""
    axes = ints(axes)
    out_rank = rank + len(axes)
    axes = sorted(a % out_rank for a in axes)
    dims = list(x.dims()) if rank else []
    for a in axes:
        dims.insert(a, 1)
    return x.reshape(dims)


def flatten(x: Tensor, axis: int) -> Tensor:
    dims = x.dims()
    outer = int(np.prod(dims[:axis])) if axis else 1
    return x.reshape([outer, int(np.prod(dims[axis:]))])


def broadcast_shape(*shapes) -> list[int]:
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        ds = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        if len(ds) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(ds.pop() if ds else 1)
    return out


def expand(x: Tensor, shape) -> Tensor:
    """ONNX Expand: numpy's two-way broadcast of `x` with `shape`."""
    target = broadcast_shape(x.dims(), ints(shape))
    x = x.unsqueeze(len(target)) if len(target) > x.rank() else x
    return x if x.dims() == target else x.expand(target)


def where(c: Tensor, a: Tensor, b: Tensor) -> Tensor:
    target = broadcast_shape(c.dims(), a.dims(), b.dims())
    c, a, b = (expand(t, target) for t in (c, a, b))
    return b.mask_where(c, a)


def concat(xs: list[Tensor], axis: int) -> Tensor:
    xs = [x for x in xs if x.numel() > 0] or xs[:1]
    return xs[0] if len(xs) == 1 else Tensor.cat(xs, axis)


def slice_(x: Tensor, starts, ends, axes=None, steps=None) -> Tensor:
    """ONNX Slice: clamped bounds per axis, negative steps walk backwards."""
    starts, ends = ints(starts), ints(ends)
    dims = x.dims()
    axes = ints(axes) if axes is not None else list(range(len(starts)))
    steps = ints(steps) if steps is not None else [1] * len(starts)
    for s, e, a, st in zip(starts, ends, axes, steps):
        if st == 0 or not -len(dims) <= a < len(dims):  # values known only at run time
            raise ValueError(f"Slice: step {st} / axis {a} on a rank-{len(dims)} tensor")
        a %= len(dims)
        n = dims[a]
        if st > 0:
            s = min(max(s + n if s < 0 else s, 0), n)
            e = min(max(e + n if e < 0 else e, 0), n)
            if e <= s:
                x = x.narrow(a, 0, 0) if n else x
                continue
            x = x.narrow(a, s, e - s)
            if st > 1:
                idx = Tensor.arange_step(0, e - s, st, x.device)
                x = x.select(a, idx)
        else:
            s = min(max(s + n if s < 0 else s, -1), n - 1)
            e = min(max(e + n if e < 0 else e, -1), n - 1)
            if s <= e:
                x = x.narrow(a, 0, 0)
                continue
            x = x.narrow(a, e + 1, s - e).flip([a])
            if st < -1:
                idx = Tensor.arange_step(0, s - e, -st, x.device)
                x = x.select(a, idx)
        dims = x.dims()
    return x


def split(x: Tensor, axis: int, sizes: list[int]) -> list[Tensor]:
    out, start = [], 0
    for s in sizes:
        out.append(x.narrow(axis, start, s))
        start += s
    return out


def gather(x: Tensor, indices: Tensor, axis: int, idx_rank: int) -> Tensor:
    """ONNX Gather: `x.shape[:axis] + indices.shape + x.shape[axis+1:]` (negative indices wrap)."""
    dims = x.dims()
    axis %= len(dims)
    flat = indices.reshape([-1])
    flat = flat.mask_where(flat.lower_elem(0), flat.add_scalar(dims[axis]))
    out = x.select(axis, flat)
    idx_dims = indices.dims() if idx_rank else []
    new = dims[:axis] + idx_dims + dims[axis + 1 :]
    return out.reshape(new or [1])


def range_(start, limit, delta, dtype, device) -> Tensor:
    s, lim, d = (
        float(np.asarray(v.numpy()).reshape(-1)[0]) if isinstance(v, Tensor) else v
        for v in (start, limit, delta)
    )
    n = max(int(np.ceil((lim - s) / d)), 0)
    arr = (s + d * np.arange(n)).astype(_NP[dtype])
    return Tensor.from_data(arr, device, dtype)


def constant_of_shape(shape, value, dtype, device) -> Tensor:
    shp = ints(shape)
    return Tensor.from_data(np.full(shp, value, dtype=_NP[dtype]), device, dtype)


def transpose(x: Tensor, perm) -> Tensor:
    return x.permute(list(perm))


def bitcast(x: Tensor, src: str, dst: str, held) -> Tensor:
    """ONNX BitCast: the bits of each element read as another type of the same width.

    burn has no reinterpreting op, so the bits are read on the host. `src`/`dst` are the
    declared ONNX types as numpy names: a uint16/uint32 value is held in a wider signed type
    and is narrowed back to its own bits first; the result is stored in `held`.
    """
    bits = np.ascontiguousarray(np.asarray(x.numpy()).astype(src)).view(dst)
    return Tensor.from_data(bits, x.device, held)
