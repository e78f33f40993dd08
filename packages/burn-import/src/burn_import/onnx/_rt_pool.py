"""Pooling of any rank and dilation by strided slices (burn's pools cover 1D/2D only).

One strided slice of the padded input per kernel offset, combined with max or sum; averages
divide by a pooled mask so padding that must not count is left out.
"""

from __future__ import annotations

import itertools
import math

from burn_tensor import Tensor

from ._rt_basic import slice_


def _padded(x: Tensor, pads, value: float) -> Tensor:
    n = len(pads) // 2
    for i in range(n):
        b, e = pads[i], pads[i + n]
        if b or e:
            dims = x.dims()
            parts = []
            if b:
                parts.append(
                    Tensor.full(dims[: 2 + i] + [b] + dims[3 + i :], value, x.device, dtype=x.dtype)
                )
            parts.append(x)
            if e:
                parts.append(
                    Tensor.full(dims[: 2 + i] + [e] + dims[3 + i :], value, x.device, dtype=x.dtype)
                )
            x = Tensor.cat(parts, 2 + i)
    return x


def _windows(xp: Tensor, kernel, strides, dil):
    sp = xp.dims()[2:]
    n = len(kernel)
    out = [(sp[i] - ((kernel[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(n)]
    for offs in itertools.product(*[range(k) for k in kernel]):
        starts = [o * d for o, d in zip(offs, dil)]
        ends = [s + (o - 1) * st + 1 for s, o, st in zip(starts, out, strides)]
        yield slice_(xp, starts, ends, list(range(2, 2 + n)), list(strides))


def pool_nd(
    x: Tensor, kind: str, kernel, strides, pads, dil, count_include_pad=False, ceil_extra=None, p=2
):
    """`kind`: "max", "avg" or "lp" (LpPool's `p`-norm of each window)."""
    n = len(kernel)
    ceil_extra = ceil_extra or [0] * n
    full = list(pads[:n]) + [pads[n + i] + ceil_extra[i] for i in range(n)]
    if kind == "max":
        acc = None
        for w in _windows(_padded(x, full, -math.inf), kernel, strides, dil):
            acc = w if acc is None else acc.max_pair(w)
        return acc
    src = x.abs().powf_scalar(float(p)) if kind == "lp" else x
    total = None
    for w in _windows(_padded(src, full, 0.0), kernel, strides, dil):
        total = w if total is None else total + w
    if kind == "lp":
        return total.powf_scalar(1.0 / p)
    ones = Tensor.ones([1, 1] + x.dims()[2:], x.device, dtype=x.dtype)
    if count_include_pad:
        mask = _padded(_padded(ones, list(pads), 1.0), [0] * n + list(ceil_extra), 0.0)
    else:
        mask = _padded(ones, full, 0.0)
    count = None
    for w in _windows(mask, kernel, strides, dil):
        count = w if count is None else count + w
    return total / count


def col2im(x: Tensor, image_shape, block_shape, dilations, pads, strides) -> Tensor:
    """ONNX Col2Im: sums the columns `[N, C*prod(block), L]` back into `[N, C, *image]`."""
    import numpy as np
    from burn_tensor import DType

    image, block = [int(v) for v in image_shape], [int(v) for v in block_shape]
    k = len(image)
    dil = list(dilations) or [1] * k
    st = list(strides) or [1] * k
    pad = list(pads) or [0] * (2 * k)
    n, ck, length = x.dims()
    kprod = int(np.prod(block))
    c = ck // kprod
    padded = [image[i] + pad[i] + pad[i + k] for i in range(k)]
    outs = [(padded[i] - ((block[i] - 1) * dil[i] + 1)) // st[i] + 1 for i in range(k)]
    pos = np.stack(np.meshgrid(*[np.arange(o) for o in outs], indexing="ij"), -1).reshape(-1, k)
    strides_flat = [int(np.prod(padded[i + 1 :])) for i in range(k)]
    out = Tensor.zeros([n, c, int(np.prod(padded))], x.device, dtype=x.dtype)
    cols = x.reshape([n, c, kprod, length])
    for j, offs in enumerate(itertools.product(*[range(b) for b in block])):
        coords = pos * np.array(st) + np.array(offs) * np.array(dil)
        flat = (coords * np.array(strides_flat)).sum(-1).astype(np.int64)
        vals = cols.narrow(2, j, 1).squeeze_dim(2)
        out = out.select_add(2, Tensor.from_data(flat, x.device, DType.I64), vals)
    out = out.reshape([n, c] + padded)
    for i in range(k):
        out = out.narrow(2 + i, pad[i], image[i])
    return out
