"""float64 references of the convolution family, written from the definitions (never backend code).

Definitions (cross-correlation, channels first, as PyTorch and Burn), with `g(.)` the group of a
channel, `cg = c_in / groups`, `cog = c_out / groups` and positions outside the input reading 0:

    conv2d            out[n, o, y, x] = b[o] + sum_{c < cg, i, j} w[o, c, i, j]
                                          * x[n, g(o) cg + c, y s0 + i d0 - p0, x s1 + j d1 - p1]
    conv_transpose2d  out[n, g(c) cog + o, r s0 + i d0 - p0, q s1 + j d1 - p1] += x[n, c, r, q]
                                          * w[c, o, i, j]       (o < cog; then + b)
    unfold4d          out[n, (c kh + i) kw + j, y ow + x]
                                        = x[n, c, y s0 + i d0 - p0, x s1 + j d1 - p1]

The gradients are the partial derivatives of these sums: each output element of a kernel offset
(i, j) depends linearly on exactly one input pixel and one weight. Every reference loops in Python
over kernel offsets and groups and handles all batch, channel and pixel pairs of one offset with
one einsum, so it stays readable and fast enough for the suite's shapes.
"""

from __future__ import annotations

import numpy as np


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Windows along one dim: floor((size + 2p - d(k - 1) - 1) / s) + 1."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def transposed_size(size, kernel, stride, padding, padding_out, dilation) -> int:
    """Output length of a transposed conv: (size - 1) s - 2p + d(k - 1) + padding_out + 1."""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1


def _positions(count, stride, offset, dilation, padding, size):
    """Source positions t*s + offset*d - p for t < count, and which of them lie in [0, size)."""
    pos = np.arange(count) * stride + offset * dilation - padding
    return pos, (pos >= 0) & (pos < size)


def _gather(a, rows, cols):
    """a[..., rows, cols] as [..., len(rows), len(cols)], zero at positions outside `a`."""
    (r, rv), (c, cv) = rows, cols
    out = np.zeros(a.shape[:-2] + (len(r), len(c)))
    ri, ci = np.flatnonzero(rv), np.flatnonzero(cv)
    out[..., ri[:, None], ci] = a[..., r[ri][:, None], c[ci]]
    return out


def _scatter_add(out, rows, cols, vals):
    """out[..., rows, cols] += vals, dropping positions outside `out` (each position once)."""
    (r, rv), (c, cv) = rows, cols
    ri, ci = np.flatnonzero(rv), np.flatnonzero(cv)
    out[..., r[ri][:, None], c[ci]] += vals[..., ri[:, None], ci]


def _groups(groups, a_channels, b_channels):
    """(slice of a's channels, slice of b's channels) per group."""
    ag, bg = a_channels // groups, b_channels // groups
    return [(slice(k * ag, (k + 1) * ag), slice(k * bg, (k + 1) * bg)) for k in range(groups)]


def _ein(spec, a, b):
    return np.einsum(spec, a, b)


# -- convolution ---------------------------------------------------------------------------------
def conv2d(x, w, b, stride, padding, dilation, groups):
    """x [n, c_in, h, w], w [c_out, c_in/groups, kh, kw], b [c_out] | None -> [n, c_out, oh, ow]."""
    n, c_in, h, wd = x.shape
    c_out, _, kh, kw = w.shape
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(wd, kw, stride[1], padding[1], dilation[1])
    out = np.zeros((n, c_out, oh, ow))
    for i in range(kh):
        rows = _positions(oh, stride[0], i, dilation[0], padding[0], h)
        for j in range(kw):
            win = _gather(x, rows, _positions(ow, stride[1], j, dilation[1], padding[1], wd))
            for o, c in _groups(groups, c_out, c_in):
                out[:, o] += _ein("nchw,oc->nohw", win[:, c], w[o, :, i, j])
    if b is not None:
        out += np.asarray(b).reshape(1, c_out, 1, 1)
    return out


def conv2d_x_grad(x_shape, w, gy, stride, padding, dilation, groups):
    """dL/dx of conv2d for output gradient gy [n, c_out, oh, ow] -> [n, c_in, h, w]."""
    _, c_in, h, wd = x_shape
    c_out, _, kh, kw = w.shape
    oh, ow = gy.shape[2:]
    dx = np.zeros(x_shape)
    for i in range(kh):
        rows = _positions(oh, stride[0], i, dilation[0], padding[0], h)
        for j in range(kw):
            cols = _positions(ow, stride[1], j, dilation[1], padding[1], wd)
            for o, c in _groups(groups, c_out, c_in):
                contrib = _ein("nohw,oc->nchw", gy[:, o], w[o, :, i, j])
                _scatter_add(dx[:, c], rows, cols, contrib)
    return dx


def conv2d_w_grad(x, w_shape, gy, stride, padding, dilation, groups):
    """dL/dw of conv2d for output gradient gy -> [c_out, c_in/groups, kh, kw]."""
    _, c_in, h, wd = x.shape
    c_out, _, kh, kw = w_shape
    oh, ow = gy.shape[2:]
    dw = np.zeros(w_shape)
    for i in range(kh):
        rows = _positions(oh, stride[0], i, dilation[0], padding[0], h)
        for j in range(kw):
            win = _gather(x, rows, _positions(ow, stride[1], j, dilation[1], padding[1], wd))
            for o, c in _groups(groups, c_out, c_in):
                dw[o, :, i, j] = _ein("nohw,nchw->oc", gy[:, o], win[:, c])
    return dw


def conv2d_passes(x, w, stride, padding, dilation, gy=None):
    """(out, dx, dw) of conv2d (groups 1, no bias) for output gradient `gy` (None: out only,
    the gradients None): the three passes a backend's convolution kernels are checked by."""
    out = conv2d(x, w, None, stride, padding, dilation, 1)
    if gy is None:
        return out, None, None
    dx = conv2d_x_grad(x.shape, w, gy, stride, padding, dilation, 1)
    return out, dx, conv2d_w_grad(x, w.shape, gy, stride, padding, dilation, 1)


def bias_grad(gy):
    """dL/db of conv2d and conv_transpose2d: gy summed over batch and space -> [c_out]."""
    return np.asarray(gy, np.float64).sum(axis=(0, 2, 3))


# -- transposed convolution ---------------------------------------------------------------------
def conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups):
    """x [n, c_in, h, w], w [c_in, c_out/groups, kh, kw], b [c_out] | None -> [n, c_out, oh, ow]."""
    n, c_in, h, wd = x.shape
    _, cog, kh, kw = w.shape
    c_out = cog * groups
    oh = transposed_size(h, kh, stride[0], padding[0], padding_out[0], dilation[0])
    ow = transposed_size(wd, kw, stride[1], padding[1], padding_out[1], dilation[1])
    out = np.zeros((n, c_out, oh, ow))
    for i in range(kh):
        rows = _positions(h, stride[0], i, dilation[0], padding[0], oh)
        for j in range(kw):
            cols = _positions(wd, stride[1], j, dilation[1], padding[1], ow)
            for c, o in _groups(groups, c_in, c_out):
                _scatter_add(out[:, o], rows, cols, _ein("nchw,co->nohw", x[:, c], w[c, :, i, j]))
    if b is not None:
        out += np.asarray(b).reshape(1, c_out, 1, 1)
    return out


def conv_transpose2d_x_grad(x_shape, w, gy, stride, padding, dilation, groups):
    """dL/dx of conv_transpose2d for output gradient gy [n, c_out, oh, ow] -> x_shape."""
    _, c_in, h, wd = x_shape
    _, cog, kh, kw = w.shape
    oh, ow = gy.shape[2:]
    dx = np.zeros(x_shape)
    for i in range(kh):
        rows = _positions(h, stride[0], i, dilation[0], padding[0], oh)
        for j in range(kw):
            win = _gather(gy, rows, _positions(wd, stride[1], j, dilation[1], padding[1], ow))
            for c, o in _groups(groups, c_in, cog * groups):
                dx[:, c] += _ein("nohw,co->nchw", win[:, o], w[c, :, i, j])
    return dx


def conv_transpose2d_w_grad(x, w_shape, gy, stride, padding, dilation, groups):
    """dL/dw of conv_transpose2d for output gradient gy -> [c_in, c_out/groups, kh, kw]."""
    _, c_in, h, wd = x.shape
    _, cog, kh, kw = w_shape
    oh, ow = gy.shape[2:]
    dw = np.zeros(w_shape)
    for i in range(kh):
        rows = _positions(h, stride[0], i, dilation[0], padding[0], oh)
        for j in range(kw):
            win = _gather(gy, rows, _positions(wd, stride[1], j, dilation[1], padding[1], ow))
            for c, o in _groups(groups, c_in, cog * groups):
                dw[c, :, i, j] = _ein("nchw,nohw->co", x[:, c], win[:, o])
    return dw


# -- 1-D through a trailing unit width, and unfold ----------------------------------------------
def conv1d(x, w, b, stride, padding, dilation, groups):
    """x [n, c_in, l], w [c_out, c_in/groups, k] -> [n, c_out, l_out] (a conv2d of width 1)."""
    out = conv2d(x[..., None], w[..., None], b, (stride, 1), (padding, 0), (dilation, 1), groups)
    return out[..., 0]


def conv_transpose1d(x, w, b, stride, padding, padding_out, dilation, groups):
    """x [n, c_in, l], w [c_in, c_out/groups, k] -> [n, c_out, l_out] (width-1 conv_transpose2d)."""
    out = conv_transpose2d(
        x[..., None],
        w[..., None],
        b,
        (stride, 1),
        (padding, 0),
        (padding_out, 0),
        (dilation, 1),
        groups,
    )
    return out[..., 0]


def unfold4d(x, kernel, stride, padding, dilation):
    """im2col: x [n, c, h, w] -> [n, c * kh * kw, oh * ow], rows ordered (c, i, j)."""
    n, c, h, wd = x.shape
    kh, kw = kernel
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(wd, kw, stride[1], padding[1], dilation[1])
    out = np.zeros((n, c, kh, kw, oh, ow))
    for i in range(kh):
        rows = _positions(oh, stride[0], i, dilation[0], padding[0], h)
        for j in range(kw):
            cols = _positions(ow, stride[1], j, dilation[1], padding[1], wd)
            out[:, :, i, j] = _gather(x, rows, cols)
    return out.reshape(n, c * kh * kw, oh * ow)
