"""Run-time helpers for indexing ops (gathers, scatters, one-hot, top-k, depth/space)."""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor

from ._rt_basic import ints
from ._rt_nn import _pad_dim
from ._rt_scatter import element_targets, scatter_rows


def _wrap(idx: Tensor, n: int) -> Tensor:
    return idx.mask_where(idx.lower_elem(0), idx.add_scalar(n))


def gather_elements(x, idx, axis):
    return x.gather(axis, _wrap(idx, x.dims()[axis]).cast(DType.I64))


def scatter_elements(x, idx, updates, axis, reduction):
    if reduction in ("mul", "max", "min"):  # on rows of a flat view, indices read on the host
        shape = x.dims()
        flat = element_targets(shape, np.asarray(idx.numpy()), axis)
        out = scatter_rows(x.reshape([-1, 1]), flat, updates.reshape([-1, 1]), reduction)
        return out.reshape(shape)
    idx = _wrap(idx, x.dims()[axis])
    if reduction == "add":
        return x.scatter(axis, idx, updates)
    if reduction != "none":
        raise ValueError(f"ScatterElements reduction {reduction!r} is not supported")
    # scatter adds (Burn), so clear the targets first: x - x*mask + scatter(updates)
    mask = x.zeros_like().scatter(axis, idx, updates.ones_like())
    return x.mask_fill(mask.not_equal_elem(0), 0).scatter(axis, idx, updates)


def one_hot(indices, depth, values, axis, rank):
    d = int(np.asarray(depth.numpy()).reshape(-1)[0])
    idx = indices.int() if indices.dtype in (DType.F32, DType.F64, DType.F16) else indices
    idx = _wrap(idx, d)
    out_rank = rank + 1
    axis %= out_rank
    shape = [1] * out_rank
    shape[axis] = d
    ar = Tensor.arange(0, d, idx.device).cast(idx.dtype).reshape(shape)
    dims = list(idx.dims()) if rank else []
    dims.insert(axis, 1)
    hot = (
        idx.reshape(dims).equal(
            ar.expand([d if i == axis else dims[i] for i in range(out_rank)]) if False else ar
        )
        if False
        else _eq_bcast(idx.reshape(dims), ar)
    )
    off, on = values.slice(slice(0, 1)), values.slice(slice(1, 2))
    base = off.reshape([1] * out_rank).expand(hot.dims())
    return base.mask_where(hot, on.reshape([1] * out_rank).expand(hot.dims()))


def _eq_bcast(a, b):
    from ._rt_basic import broadcast_shape, expand

    target = broadcast_shape(a.dims(), b.dims())
    return expand(a, target).equal(expand(b, target))


def topk(x, k, axis, largest):
    k = ints(k)[0]
    if not largest:
        v, i = (-x).topk_with_indices(k, axis)
        return -v, i.cast(DType.I64)
    v, i = x.topk_with_indices(k, axis)
    return v, i.cast(DType.I64)


def nonzero(x):
    arr = np.asarray(x.numpy())
    return Tensor.from_data(
        np.array(np.nonzero(arr), dtype=np.int64).reshape(arr.ndim, -1), x.device, DType.I64
    )


def gather_nd(x, idx, batch_dims):
    data, ind = np.asarray(x.numpy()), np.asarray(idx.numpy())
    # index arithmetic on the host, the gather itself on the device (select over a flat view)
    shape = data.shape
    b = batch_dims
    m = ind.shape[-1]
    batch = int(np.prod(shape[:b])) if b else 1
    inner = shape[b:]
    lead = ind.reshape(batch, -1, m)
    strides = np.array([int(np.prod(inner[i + 1 : m])) for i in range(m)], dtype=np.int64)
    lead = np.where(lead < 0, lead + np.array(inner[:m]), lead)
    flat = (lead * strides).sum(-1) + (np.arange(batch) * int(np.prod(inner[:m])))[:, None]
    rest = list(inner[m:])
    src = x.reshape([batch * int(np.prod(inner[:m]))] + (rest or [1]))
    out = src.select(0, Tensor.from_data(flat.reshape(-1), x.device, DType.I64))
    new = list(ind.shape[:-1]) + rest
    return out.reshape(new or [1])


def scatter_nd(x, idx, updates, reduction):
    shape = x.dims()
    ind = np.asarray(idx.numpy())
    m = ind.shape[-1]
    ind = np.where(ind < 0, ind + np.array(shape[:m]), ind)
    strides = np.array([int(np.prod(shape[i + 1 : m])) for i in range(m)], dtype=np.int64)
    flat = (ind.reshape(-1, m) * strides).sum(-1)
    rest = shape[m:]
    n = int(np.prod(shape[:m]))
    src = x.reshape([n] + (rest or [1]))
    upd = updates.reshape([len(flat)] + (rest or [1]))
    return scatter_rows(src, flat, upd, reduction).reshape(shape)


def depth_to_space(x, b, mode):
    n, c, h, w = x.dims()
    if mode == "DCR":
        y = x.reshape([n, b, b, c // (b * b), h, w]).permute([0, 3, 4, 1, 5, 2])
    else:
        y = x.reshape([n, c // (b * b), b, b, h, w]).permute([0, 1, 4, 2, 5, 3])
    return y.reshape([n, c // (b * b), h * b, w * b])


def space_to_depth(x, b, mode="DCR"):
    n, c, h, w = x.dims()
    y = x.reshape([n, c, h // b, b, w // b, b])
    y = y.permute([0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4])
    return y.reshape([n, c * b * b, h // b, w // b])


def center_crop_pad(x, shape, axes):
    for a, target in zip(axes, ints(shape)):
        d = x.dims()[a]
        if target < d:
            x = x.narrow(a, (d - target) // 2, target)
        elif target > d:
            before = (target - d) // 2
            x = pad(x, [before, target - d - before], "constant", 0, [a])
    return x


def compress(x, cond, axis):
    keep = np.nonzero(np.asarray(cond.numpy()).reshape(-1))[0].astype(np.int64)
    if axis is None:
        x, axis = x.reshape([-1]), 0
    keep = keep[keep < x.dims()[axis]]
    return x.select(axis, Tensor.from_data(keep, x.device, DType.I64))


def window(kind, size, periodic, dtype, device):
    n = ints(size)[0]
    denom = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    if kind == "hann":
        w = 0.5 - 0.5 * np.cos(2 * np.pi * k / denom)
    elif kind == "hamming":
        w = 25 / 46 - 21 / 46 * np.cos(2 * np.pi * k / denom)
    else:
        w = 0.42 - 0.5 * np.cos(2 * np.pi * k / denom) + 0.08 * np.cos(4 * np.pi * k / denom)
    return Tensor.from_data(
        w.astype({DType.F64: np.float64, DType.F16: np.float16}.get(dtype, np.float32)),
        device,
        dtype,
    )


def eye_like(x, k, dtype):
    r, c = x.dims()
    return Tensor.from_data(np.eye(r, c, k), x.device, dtype)


def pad(x, pads, mode, value, axes):
    pads = ints(pads)
    rank = x.rank()
    axes = [a % rank for a in ints(axes)] if axes is not None else list(range(rank))
    n = len(axes)
    for i, a in enumerate(axes):
        before, after = pads[i], pads[i + n]
        if before < 0:
            x = x.narrow(a, -before, x.dims()[a] + before)
            before = 0
        if after < 0:
            x = x.narrow(a, 0, x.dims()[a] + after)
            after = 0
        if not before and not after:
            continue
        d = x.dims()[a]
        if mode == "constant":
            x = _pad_dim(x, a, before, after, value)
            continue
        if mode == "edge":
            idx = np.clip(np.arange(-before, d + after), 0, d - 1)
        elif mode == "reflect":
            idx = np.arange(-before, d + after)
            period = 2 * (d - 1) if d > 1 else 1
            idx = np.abs(idx) % period if d > 1 else np.zeros_like(idx)
            idx = np.where(idx >= d, period - idx, idx)
        else:  # wrap
            idx = np.arange(-before, d + after) % d
        x = x.select(a, Tensor.from_data(idx.astype(np.int64), x.device, DType.I64))
    return x


def _per_axis(t, axis, block, rank, like):
    """A scale/zero point as a tensor that broadcasts over `like` (per tensor, axis or block)."""
    rank = max(rank, 1)
    if t.numel() == 1:
        return t.reshape([1] * rank)
    if t.rank() == 1 and not block:
        shape = [1] * rank
        shape[axis] = t.dims()[0]
        return t.reshape(shape)
    d = like.dims()[axis]
    idx = Tensor.from_data(np.arange(d, dtype=np.int64) // block, t.device, DType.I64)
    return t.select(axis, idx)


#: integer dtypes whose values float32 holds exactly (|v| < 2^24): (v - zp) * s can be computed in
#: float32 with the same result as in float64 (see `dequantize`)
_EXACT_IN_F32 = (DType.I8, DType.U8, DType.I16)


def dequantize(x, scale, zp, axis, block, rank, dtype):
    s = _per_axis(scale, axis, block, rank, x)
    if (
        dtype == DType.F32
        and scale.dtype == DType.F32
        and not x.is_quantized()
        and x.dtype in _EXACT_IN_F32
        and (zp is None or zp.dtype in _EXACT_IN_F32)
    ):
        # The same bits as the float64 formula below in half the passes: x - zp is a small
        # integer (exact in float32) and its product with a float32 scale is exact in float64,
        # so rounding it once to float32 equals the float32 product's single rounding.
        xf = x.float().cast(DType.F32)
        if zp is not None:
            xf = xf - _per_axis(zp, axis, block, rank, x).float().cast(DType.F32)
        return xf * s
    # an 8-bit constant is held as a unit-scale quantized field: dequantizing it is exact
    xf = (x.dequantize() if x.is_quantized() else x.float()).cast(DType.F64)
    if zp is not None:
        xf = xf - _per_axis(zp, axis, block, rank, x).float().cast(DType.F64)
    return (xf * s.cast(DType.F64)).cast(dtype)


def quantize(x, scale, zp, axis, block, rank, dtype, precision, bounds):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero_point).

    `bounds` is the declared output type's range: uint16 is held in int32 and must still
    saturate at 65535.

    The division is done in `precision` if given, else in the type numpy promotes x and the
    scale to (float32 / float32 stays float32, as in ONNX's reference and onnxruntime): in
    float64, 0.5 / float32(5/255) is 25.4999996 and rounds to 25, in float32 it is 25.5 -> 26.
    """
    work = precision or DType.from_np(np.result_type(x.dtype.np, scale.dtype.np))
    s = _per_axis(scale, axis, block, rank, x).cast(work)
    xw = (x if x.dtype.is_float() else x.float()).cast(work)
    lo, hi = bounds
    if work == DType.F32 and -(1 << 16) <= lo and hi <= 1 << 16:
        # Adding the zero point in float32 is exact while |x / s| < 2^24; beyond that the sum
        # may round, but it lies far outside the bounds either way and saturates the same.
        y = (xw / s).round()
        if zp is not None:
            y = y + _per_axis(zp, axis, block, rank, x).float().cast(DType.F32)
        return y.clamp(float(lo), float(hi)).int().cast(dtype)
    y = (xw / s).round().cast(DType.F64)
    if zp is not None:
        y = y + _per_axis(zp, axis, block, rank, x).float().cast(DType.F64)
    return y.clamp(float(lo), float(hi)).int().cast(dtype)


def dynamic_quantize(x):
    lo = min(float(np.asarray(x.min().numpy()).reshape(-1)[0]), 0.0)
    hi = max(float(np.asarray(x.max().numpy()).reshape(-1)[0]), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = np.clip(np.round(np.float32(0 - lo) / scale), 0, 255) if scale else np.float32(0)
    y = (x / float(scale) if scale else x * 0).round() + float(zp)
    y = y.clamp(0.0, 255.0).int().cast(DType.U8)
    s = Tensor.from_data(np.array([scale], np.float32), x.device, DType.F32)
    z = Tensor.from_data(np.array([zp], np.uint8), x.device, DType.U8)
    return y, s, z


def _centered(t, zp):
    """Integers minus their zero point, in f64 (exact for 8-bit products summed below 2^53)."""
    t = t.float().cast(DType.F64)
    return t if zp is None else t - zp.float().cast(DType.F64).reshape([-1]).unsqueeze(t.rank())


def matmul_integer(a, b, za, zb, ra, rb):
    from ._rt_nn import matmul

    a = _centered(a, za)
    b = b.float().cast(DType.F64)
    if zb is not None:  # per-column zero point of B: [N] over the last dim
        b = b - zb.float().cast(DType.F64).reshape([-1]).unsqueeze(b.rank())
    return matmul(a, b, ra, rb).int().cast(DType.I32)


def conv_integer(x, w, zx, zw, strides, pads, dil, group):
    from ._rt_nn import conv

    xf = x.float().cast(DType.F64)
    if zx is not None:
        xf = xf - zx.float().cast(DType.F64).reshape([1] * x.rank())
    # a quantized weight field holds the integers with a unit scale: dequantizing is exact
    wf = (w.dequantize() if w.is_quantized() else w.float()).cast(DType.F64)
    if zw is not None:
        z = zw.float().cast(DType.F64).reshape([-1])
        wf = wf - z.reshape([z.dims()[0]] + [1] * (w.rank() - 1))
    return conv(xf, wf, None, strides, pads, dil, group).round().int().cast(DType.I32)


def reverse_sequence(x, lens, batch_axis, time_axis):
    lens = np.asarray(lens.numpy()).reshape(-1)
    dims = x.dims()
    t_len = dims[time_axis]
    idx = np.tile(np.arange(t_len), (len(lens), 1))
    for b, n in enumerate(lens):
        idx[b, :n] = idx[b, :n][::-1]
    shape = [1] * len(dims)
    shape[batch_axis], shape[time_axis] = dims[batch_axis], t_len
    order = np.argsort([batch_axis, time_axis])
    idx = idx.transpose(order).reshape(shape)
    it = Tensor.from_data(idx.astype(np.int64), x.device, DType.I64).expand(dims)
    return x.gather(time_axis, it)
