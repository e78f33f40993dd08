"""2-D convolution forward and weight gradient: NHWC im2col + GEMMs per group, in batch chunks.

Stride-1 3x3 convolutions with enough channels go to Winograd F(2x2, 3x3) (`_winograd`), which
needs 2.25x fewer multiply-adds; everything else uses the im2col path here.
"""

from __future__ import annotations

import numpy as np

from . import _winograd
from ._filter_classes import cached_filter_classes, filter_classes
from ._im2col import Columns, chunk_size, out_size


def conv2d(x, weight, bias, stride, padding, dilation, groups, out_hw=None) -> np.ndarray:
    """Cross-correlation as PyTorch/Burn.

    Shapes: x [n, c_in, h, w], weight [c_out, c_in/groups, kh, kw], bias [c_out] | None
    -> [n, c_out, oh, ow]. `out_hw` computes only the first (oh, ow) windows (used by the
    transposed-conv gradient, whose natural size can exceed the wanted one).
    """
    n, c_in, h, w = x.shape
    c_out, cg, kh, kw = weight.shape
    g = groups
    cog = c_out // g
    if out_hw is None:
        out_hw = (
            out_size(h, kh, stride[0], padding[0], dilation[0]),
            out_size(w, kw, stride[1], padding[1], dilation[1]),
        )
    oh, ow = out_hw
    if g == 1 and (classes := cached_filter_classes(weight, bias)) is not None:
        # Equal filters must give equal channels, which one GEMM does not guarantee
        # (`_filter_classes`): compute each distinct filter once and copy its channel.
        keep, inverse = classes
        b = None if bias is None else bias[keep]
        out = conv2d(x, weight[keep], b, stride, padding, dilation, 1, out_hw)
        return np.take(out, inverse, axis=1)
    if (kh, kw) == (1, 1) and g == 1 and tuple(padding) == (0, 0):
        return _pointwise(x, weight, bias, stride, out_hw)
    if _winograd.suits(x.shape, weight.shape, stride, padding, dilation, groups, out_hw):
        return _winograd.conv2d_3x3(x, weight, bias, padding)
    dtype = x.dtype
    # [g, c_out/g, K (+1)] with K ordered (i, j, c) to match the NHWC window copy; the bias, if
    # any, is a last weight column that meets the columns' column of ones.
    wm = weight.astype(dtype, copy=False).reshape(g, cog, cg, kh, kw).transpose(0, 1, 3, 4, 2)
    wm = wm.reshape(g, cog, kh * kw * cg)
    if bias is not None:
        wm = np.concatenate([wm, bias.astype(dtype, copy=False).reshape(g, cog, 1)], axis=2)
    wm = np.ascontiguousarray(wm)
    # Grouped: equal filters within a group (the bias is wm's last column) are computed once.
    classes = [filter_classes(wm[gi]) if g > 1 else None for gi in range(g)]
    out = np.empty((n, g, cog, oh * ow), dtype)
    per_image = oh * ow * kh * kw * c_in * dtype.itemsize
    chunk = chunk_size(n, per_image)
    buf = Columns(chunk, (h, w), c_in, padding, (kh, kw), out_hw, g, dtype, bias is not None)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        cols = buf.fill(x[s:e], (kh, kw), stride, dilation, out_hw)
        for gi in range(g):
            # [c_out/g, K] @ [K, oh*ow] per image: BLAS reads the transposed columns in place
            # and writes NCHW directly, saving an NHWC -> NCHW transpose of the output.
            if classes[gi] is None:
                np.matmul(wm[gi], cols[gi].transpose(0, 2, 1), out=out[s:e, gi])
            else:
                keep, inverse = classes[gi]
                part = np.matmul(wm[gi, keep], cols[gi].transpose(0, 2, 1))
                out[s:e, gi] = np.take(part, inverse, axis=1)
    return out.reshape(n, c_out, oh, ow)


def _pointwise(x, weight, bias, stride, out_hw) -> np.ndarray:
    """A 1x1 conv without padding is `weight [co, c] @ x [c, pixels]` per image: one matmul on
    the (strided) input planes, no NHWC copy or column buffer (squeeze-excitation convs on 1x1
    inputs measured ~70 us per call on the im2col path, ~5 us here)."""
    (oh, ow), (sh, sw) = out_hw, stride
    if (sh, sw) != (1, 1) or (oh, ow) != x.shape[2:]:  # strided, or only the first windows
        x = x[:, :, : (oh - 1) * sh + 1 : sh, : (ow - 1) * sw + 1 : sw]
    return pointwise(x, weight.astype(x.dtype, copy=False), bias)


def pointwise(x, weight, bias) -> np.ndarray:
    """x [n, c, h, w] (any strides), weight [co, c, 1, 1] and bias [co] | None of x's dtype ->
    [n, co, h, w]: one GEMM (GEMV for 1x1 planes) per batch with the bias added in place."""
    n, c, h, w = x.shape
    co = weight.shape[0]
    wm = weight.reshape(co, c)
    if n == 1:
        out = np.dot(wm, x.reshape(c, h * w))
    else:
        out = np.matmul(wm, x.reshape(n, c, h * w))
    if bias is not None:
        out += bias.astype(x.dtype, copy=False).reshape(co, 1)
    return out.reshape(n, co, h, w)


def conv2d_weight_grad(x, grad, kernel, stride, padding, dilation, groups) -> np.ndarray:
    """dL/dW of `conv2d`: sum over batch and windows of grad x window.

    Shapes: x [n, c_in, h, w], grad [n, c_out, oh, ow] -> [c_out, c_in/groups, kh, kw].
    Only the (oh, ow) windows that `grad` covers are read.
    """
    n, c_in = x.shape[:2]
    c_out, oh, ow = grad.shape[1:]
    kh, kw = kernel
    g = groups
    cg, cog = c_in // g, c_out // g
    dtype = x.dtype
    acc = np.zeros((g, cog, kh * kw * cg), dtype)
    per_image = oh * ow * kh * kw * c_in * dtype.itemsize
    chunk = chunk_size(n, per_image)
    buf = Columns(chunk, x.shape[2:], c_in, padding, kernel, (oh, ow), g, dtype)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        cols = buf.fill(x[s:e], kernel, stride, dilation, (oh, ow))
        cols = cols.reshape(g, (e - s) * oh * ow, -1)
        gr = grad[s:e].astype(dtype, copy=False).reshape(e - s, g, cog, oh, ow)
        gr = np.ascontiguousarray(gr.transpose(1, 2, 0, 3, 4)).reshape(g, cog, (e - s) * oh * ow)
        acc += np.matmul(gr, cols)  # [g, c_out/g, K]
    dw = acc.reshape(c_out, kh, kw, cg).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(dw)
