"""2-D transposed convolution: one GEMM per group, then col2im as kh*kw strided scatter-adds."""

from __future__ import annotations

import numpy as np

from ._im2col import chunk_size


def transposed_size(size, kernel, stride, padding, padding_out, dilation) -> int:
    """(size - 1) * s - 2p + d(k - 1) + padding_out + 1, as PyTorch/Burn."""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1


def conv_transpose2d(x, weight, bias, stride, padding, padding_out, dilation, groups) -> np.ndarray:
    """Adjoint of `conv2d` wrt its input, plus bias.

    Shapes: x [n, c_in, h, w], weight [c_in, c_out/groups, kh, kw], bias [c_out] | None
    -> [n, c_out, oh, ow] with oh = `transposed_size(h, ...)`.
    """
    n, c_in, h, w = x.shape
    _, cog, kh, kw = weight.shape
    g = groups
    cig = c_in // g
    c_out = cog * g
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh = transposed_size(h, kh, sh, ph, padding_out[0], dh)
    ow = transposed_size(w, kw, sw, pw, padding_out[1], dw)
    # The uncropped canvas holds every product; `padding` crops it, `padding_out` may extend
    # it past the last product (those rows stay zero).
    hc = max((h - 1) * sh + dh * (kh - 1) + 1, ph + oh)
    wc = max((w - 1) * sw + dw * (kw - 1) + 1, pw + ow)
    dtype = x.dtype
    # [g, c_in/g, K] with K ordered (i, j, c_out/g) so each kernel offset is one slice.
    wm = weight.astype(dtype, copy=False).reshape(g, cig, cog, kh, kw)
    wm = np.ascontiguousarray(wm.transpose(0, 1, 3, 4, 2)).reshape(g, cig, kh * kw * cog)
    out = np.empty((n, c_out, oh, ow), dtype)
    per_image = h * w * kh * kw * c_out * dtype.itemsize
    chunk = chunk_size(n, per_image)
    # One canvas for all chunks: re-zeroing is cheaper than faulting in fresh pages.
    canvas_buf = np.empty((g, chunk, hc, wc, cog), dtype)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        b = e - s
        xs = x[s:e].reshape(b, g, cig, h, w).transpose(1, 0, 3, 4, 2).reshape(g, b * h * w, cig)
        cols = np.matmul(xs, wm).reshape(g, b, h, w, kh, kw, cog)
        canvas = canvas_buf[:, :b]
        canvas.fill(0)
        for i in range(kh):
            rows = slice(i * dh, i * dh + (h - 1) * sh + 1, sh)
            for j in range(kw):
                cols_j = slice(j * dw, j * dw + (w - 1) * sw + 1, sw)
                canvas[:, :, rows, cols_j, :] += cols[:, :, :, :, i, j, :]
        crop = canvas[:, :, ph : ph + oh, pw : pw + ow, :]
        out[s:e].reshape(b, g, cog, oh, ow)[...] = crop.transpose(1, 0, 4, 2, 3)
    if bias is not None:
        out += bias.astype(dtype, copy=False).reshape(1, c_out, 1, 1)
    return out
