"""Run-time helpers for conv, pooling, normalization, matmul and reductions (Tensor API only)."""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType, Tensor
from burn_tensor import module as F

from ._rt_basic import expand, ints


def _split_pads(pads: list[int]):
    n = len(pads) // 2
    begin, end = pads[:n], pads[n:]
    sym = [min(b, e) for b, e in zip(begin, end)]
    extra = [(b - s, e - s) for b, e, s in zip(begin, end, sym)]
    return sym, extra if any(a or b for a, b in extra) else None


def _pad_spatial(x: Tensor, extra, value: float) -> Tensor:
    flat: list[int] = []
    for before, after in reversed(extra):
        flat += [before, after]
    return x.pad(tuple(flat), value)


def conv(x, w, b, strides, pads, dilations, group):
    """ONNX Conv (1D/2D) through `burn_tensor.module.conv1d/conv2d`."""
    sym, extra = _split_pads(pads)
    if extra:
        x = _pad_spatial(x, extra, 0.0)
    b = b if b is not None else None
    fn = F.conv1d if x.rank() == 3 else F.conv2d
    if x.rank() == 3:
        return fn(x, w, b, stride=strides[0], padding=sym[0], dilation=dilations[0], groups=group)
    return fn(x, w, b, stride=strides, padding=sym, dilation=dilations, groups=group)


def conv_transpose(x, w, b, strides, pads, dilations, group, out_pad):
    n = len(strides)
    if n == 3:  # burn's conv_transpose3d (`_rt_conv3d`)
        from ._rt_conv3d import conv_transpose3d

        return conv_transpose3d(x, w, b, strides, pads, dilations, group, out_pad)
    begin, end = pads[:n], pads[n:]
    fn = F.conv_transpose1d if n == 1 else F.conv_transpose2d
    args = {
        "stride": strides,
        "padding": [0] * n,
        "padding_out": [0] * n,
        "dilation": dilations,
        "groups": group,
    }
    if n == 1:
        args = {k: (v[0] if isinstance(v, list) else v) for k, v in args.items()}
    y = fn(x, w, b, **args)
    dims = y.dims()
    for i in range(n):
        full = dims[2 + i] + out_pad[i]
        if out_pad[i]:
            y = _pad_dim(y, 2 + i, 0, out_pad[i])
        y = y.narrow(2 + i, begin[i], full - begin[i] - end[i])
    return y


def _pad_dim(x: Tensor, dim: int, before: int, after: int, value=0.0) -> Tensor:
    dims = x.dims()
    parts = []
    if before:
        parts.append(
            Tensor.full(dims[:dim] + [before] + dims[dim + 1 :], value, x.device, dtype=x.dtype)
        )
    parts.append(x)
    if after:
        parts.append(
            Tensor.full(dims[:dim] + [after] + dims[dim + 1 :], value, x.device, dtype=x.dtype)
        )
    return Tensor.cat(parts, dim) if len(parts) > 1 else x


def _too_wide(sym, kernel) -> bool:
    return any(p > k // 2 for p, k in zip(sym, kernel))


def max_pool(x, kernel, strides, pads, dilations):
    sym, extra = _split_pads(pads)
    if _too_wide(sym, kernel):  # burn pools pad at most half a kernel: pad by hand
        n = len(kernel)
        x = _pad_spatial(x, [(pads[i], pads[i + n]) for i in range(n)], -math.inf)
        sym, extra = [0] * n, None
    if extra:
        x = _pad_spatial(x, extra, -math.inf)
    if x.rank() == 3:
        return F.max_pool1d(x, kernel[0], strides[0], sym[0], dilations[0])
    return F.max_pool2d(x, kernel, strides, sym, dilations)


def max_pool_indices(x, kernel, strides, padding, dilations, storage_order=0):
    """2-D MaxPool and ONNX's Indices: flat positions in the whole `[N, C, H, W]` input
    (row major, or column major within each plane with `storage_order=1`)."""
    n, c, h, w = x.dims()
    y, idx = F.max_pool2d_with_indices(x, kernel, strides, padding, dilations)
    idx = idx.cast(DType.I64)
    if storage_order:
        idx = idx.remainder_scalar(w) * h + idx.div_scalar(w)
    base = Tensor.arange(0, n * c, x.device).cast(DType.I64).reshape([n, c, 1, 1]) * (h * w)
    return y, idx + base


def avg_pool(x, kernel, strides, pads, count_include_pad, ceil_extra=None):
    """ONNX AveragePool; padding that must not be counted is divided out with a pooled mask."""
    sym, extra = _split_pads(pads)
    if (
        not extra
        and not ceil_extra
        and (count_include_pad or not any(sym))
        and not _too_wide(sym, kernel)
    ):
        if x.rank() == 3:
            return F.avg_pool1d(x, kernel[0], strides[0], sym[0], True)
        return F.avg_pool2d(x, kernel, strides, sym, True)
    n = len(kernel)
    ceil_extra = ceil_extra or [0] * n
    full = [(pads[i], pads[i + n] + ceil_extra[i]) for i in range(n)]
    xp = _pad_spatial(x, full, 0.0)
    ones = Tensor.ones([1, 1] + x.dims()[2:], x.device, dtype=x.dtype)
    if count_include_pad:
        mask = _pad_spatial(
            _pad_spatial(ones, [(pads[i], pads[i + n]) for i in range(n)], 1.0),
            [(0, e) for e in ceil_extra],
            0.0,
        )
    else:
        mask = _pad_spatial(ones, full, 0.0)
    if x.rank() == 3:
        num = F.avg_pool1d(xp, kernel[0], strides[0], 0, True)
        den = F.avg_pool1d(mask, kernel[0], strides[0], 0, True)
    else:
        num = F.avg_pool2d(xp, kernel, strides, [0] * n, True)
        den = F.avg_pool2d(mask, kernel, strides, [0] * n, True)
    return num / den


def _channel(t: Tensor, rank: int) -> Tensor:
    """`[C]` -> `[1, C, 1, ...]` to broadcast over `[N, C, ...]`."""
    return t.reshape([1, t.dims()[0]] + [1] * (rank - 2))


def batch_norm(x, scale, bias, mean, var, eps):
    r = x.rank()
    inv = (_channel(var, r) + eps).sqrt().recip()
    return (x - _channel(mean, r)) * inv * _channel(scale, r) + _channel(bias, r)


def _moments(x, dims):
    """(mean, x - mean, biased variance) over `dims`, kept as size-1 dims: the statistics that
    batch (training), instance, layer and mean-variance normalization share."""
    mean = x
    for d in dims:
        mean = mean.mean_dim(d)
    c = x - mean
    var = c * c
    for d in dims:
        var = var.mean_dim(d)
    return mean, c, var


def instance_norm(x, scale, bias, eps):
    r = x.rank()
    _, c, var = _moments(x, range(2, r))
    return c / (var + eps).sqrt() * _channel(scale, r) + _channel(bias, r)


def layer_norm(x, scale, bias, axis, eps):
    r = x.rank()
    mean, c, var = _moments(x, range(axis, r))
    inv = (var + eps).sqrt().recip()
    y = c * inv * scale.unsqueeze(r)
    if bias is not None:
        y = y + bias.unsqueeze(r)
    return y, mean, inv


def group_norm(x, scale, bias, groups, eps):
    dims = x.dims()
    n = dims[0]
    g = x.reshape([n, groups, -1])
    mean = g.mean_dim(2)
    cen = g - mean
    var = (cen * cen).mean_dim(2)
    y = (cen / (var + eps).sqrt()).reshape(dims)
    return y * _channel(scale, len(dims)) + _channel(bias, len(dims))


def lrn(x, size, alpha, beta, bias):
    c = x.dims()[1]
    sq = x * x
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    padded = _pad_dim(sq, 1, lo, hi)
    acc = padded.narrow(1, 0, c)
    for i in range(1, size):
        acc = acc + padded.narrow(1, i, c)
    return x / (acc * (alpha / size) + bias).powf_scalar(beta)


def lp_normalize(x, axis, p):
    norm = x.abs().sum_dim(axis) if p == 1 else (x * x).sum_dim(axis).sqrt()
    zero = norm.equal_elem(0)
    return (x / norm.mask_fill(zero, 1.0)).mask_fill(zero.expand(x.dims()), 0.0)


def mean_variance_norm(x, axes):
    _, c, var = _moments(x, axes)
    return c / (var.sqrt() + 1e-9)


def matmul(a: Tensor, b: Tensor, ra: int, rb: int) -> Tensor:
    """ONNX MatMul (numpy's matmul): 1-D operands and batch broadcasting."""
    if ra == 1:
        a = a.unsqueeze(2)
    if rb == 1:
        b = b.reshape([-1, 1])
    r = max(a.rank(), b.rank())
    a, b = a.unsqueeze(r), b.unsqueeze(r)
    batch = [max(x, y) for x, y in zip(a.dims()[:-2], b.dims()[:-2])]
    if a.dims()[:-2] != batch:
        a = a.expand(batch + a.dims()[-2:])
    if b.dims()[:-2] != batch:
        b = b.expand(batch + b.dims()[-2:])
    y = a.matmul(b)
    dims = y.dims()
    if ra == 1:
        dims = dims[:-2] + dims[-1:]
    if rb == 1:
        dims = dims[:-1]
    return y.reshape(dims or [1])


def gemm(a, b, c, alpha, beta, ta, tb):
    a = a.transpose() if ta else a
    b = b.transpose() if tb else b
    y = a.matmul(b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        c = c * beta if beta != 1.0 else c
        y = y + expand(c, y.dims())
    return y


def reduce(x: Tensor, kind: str, axes, keepdims: bool, rank: int, noop: bool) -> Tensor:
    """ONNX ReduceX: empty axes reduce everything (or nothing with noop_with_empty_axes)."""
    axes = ints(axes)
    if not axes:
        if noop:
            return x
        axes = list(range(rank))
    axes = sorted({a % max(rank, 1) for a in axes})
    if x.numel() == 0 and kind in ("max", "min", "logsumexp"):
        return _empty_reduce(x, kind, axes, keepdims)
    if x.dtype == DType.BOOL:
        return reduce(x.int(), kind, axes, keepdims, rank, noop).bool()
    if kind == "l1":
        x, kind = x.abs(), "sum"
    elif kind in ("l2", "sumsquare"):
        x, kind = x * x, ("l2" if kind == "l2" else "sum")
    elif kind == "logsumexp":
        m = x
        for a in axes:
            m = m.max_dim(a)
        m = m.mask_fill(m.is_inf(), 0.0)
        s = (x - m).exp()
        for a in axes:
            s = s.sum_dim(a)
        y = s.log() + m
        return _finish(y, axes, keepdims)
    fn = {
        "sum": "sum_dim",
        "mean": "mean_dim",
        "max": "max_dim",
        "min": "min_dim",
        "prod": "prod_dim",
        "l2": "sum_dim",
        "logsum": "sum_dim",
    }[kind]
    first, last = axes[0], axes[-1]
    if len(axes) > 1 and last - first + 1 == len(axes) and x.rank() == rank:
        # one run of dims: one reduction over them merged (a global mean pool over
        # [1, 1024, 7, 7] took 53 us as two passes on NdArray, 16 as one over [1, 1024, 49])
        dims = x.dims()
        y = getattr(x.flatten(first, last), fn)(first)
        y = y.reshape(dims[:first] + [1] * len(axes) + dims[last + 1 :])
    else:
        y = x
        for a in axes:
            y = getattr(y, fn)(a)
    if kind == "l2":
        y = y.sqrt()
    elif kind == "logsum":
        y = y.log()
    return _finish(y, axes, keepdims)


def _empty_reduce(x: Tensor, kind: str, axes, keepdims: bool) -> Tensor:
    """ONNX's value for a max, min or log-sum-exp over an empty set: the identity of the
    reduction in x's type (False/True for bool, the int type's lowest/highest, -inf/inf;
    log-sum-exp: log 0 = -inf)."""
    dims = [1 if i in axes else d for i, d in enumerate(x.dims())]
    if x.dtype == DType.BOOL:
        val = kind == "min"
    elif x.dtype.is_float():
        val = math.inf if kind == "min" else -math.inf
    else:
        info = np.iinfo(x.dtype.np)
        val = int(info.max if kind == "min" else info.min)
    return _finish(Tensor.full(dims, val, x.device, dtype=x.dtype), axes, keepdims)


def _finish(y: Tensor, axes, keepdims: bool) -> Tensor:
    if keepdims:
        return y
    dims = [d for i, d in enumerate(y.dims()) if i not in axes]
    return y.reshape(dims or [1])


def arg_reduce(x: Tensor, fn: str, axis: int, keepdims: bool, last: bool) -> Tensor:
    if last:
        x = x.flip([axis])
    y = (x.argmax(axis) if fn == "argmax" else x.argmin(axis)).cast(DType.I64)
    if last:
        y = (y * -1).add_scalar(x.dims()[axis] - 1)
    return _finish(y, [axis], keepdims)


def cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = x.flip([axis])
    y = x.cumsum(axis)
    if exclusive:
        y = y - x
    return y.flip([axis]) if reverse else y


def batch_norm_training(x, scale, bias, mean, var, eps, momentum):
    """BatchNormalization with training_mode=1: batch statistics, updated running ones."""
    r = x.rank()
    m, c, v = _moments(x, [0] + list(range(2, r)))
    y = c / (v + eps).sqrt() * _channel(scale, r) + _channel(bias, r)
    bm, bv = m.reshape([-1]), v.reshape([-1])
    return y, mean * momentum + bm * (1 - momentum), var * momentum + bv * (1 - momentum)


def max_unpool(x, indices, inferred, shape):
    """ONNX MaxUnpool: each value goes to its flat index in a zero tensor of the pooled input's
    shape (`inferred`), which is then zero-padded at the end to `shape`."""
    total = 1
    for d in inferred:
        total *= d
    out = Tensor.zeros([total], x.device, dtype=x.dtype)
    out = out.select_add(0, indices.reshape([-1]).cast(DType.I64), x.reshape([-1]))
    out = out.reshape(list(inferred))
    for i, (have, want) in enumerate(zip(inferred, ints(shape))):
        if want > have:
            out = _pad_dim(out, i, 0, want - have)
    return out
