"""Average and max pooling (and their gradients) as kh*kw vectorised passes over strided slices.

A pass per kernel offset touches each output once with a whole-tensor numpy op, which is much
faster than reducing a 6-D window view whose innermost axes are only kh and kw long.
"""

from __future__ import annotations

import functools

import numpy as np

from ._im2col import out_size


def _offsets(kernel, stride, dilation, out_hw):
    """Yield (i, j, rows, cols): the padded-input slices read by kernel offset (i, j)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    for i in range(kh):
        rows = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
        for j in range(kw):
            yield i, j, rows, slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)


def _pad(x, padding, value):
    n, c, h, w = x.shape
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), value, x.dtype)
    xp[:, :, ph : ph + h, pw : pw + w] = x
    return xp


def _avg_divisor(shape_hw, kernel, stride, padding, out_hw, count_include_pad, dtype):
    """[oh, ow] window sizes: kh*kw, or the number of non-padding cells in each window."""
    if count_include_pad:
        return np.asarray(kernel[0] * kernel[1], dtype)
    counts = []
    for size, k, s, p, o in zip(shape_hw, kernel, stride, padding, out_hw):
        start = np.arange(o) * s - p
        counts.append(np.minimum(start + k, size) - np.maximum(start, 0))
    return np.outer(counts[0], counts[1]).astype(dtype)


def avg_pool2d(x, kernel, stride, padding, count_include_pad) -> np.ndarray:
    """Shapes: [n, c, h, w] -> [n, c, oh, ow]; padding counts as zeros."""
    h, w = x.shape[2:]
    out_hw = (
        out_size(h, kernel[0], stride[0], padding[0], 1),
        out_size(w, kernel[1], stride[1], padding[1], 1),
    )
    xp = _pad(x, padding, 0)
    acc = np.zeros(x.shape[:2] + out_hw, x.dtype)
    for _, _, rows, cols in _offsets(kernel, stride, (1, 1), out_hw):
        acc += xp[:, :, rows, cols]
    acc /= _avg_divisor((h, w), kernel, stride, padding, out_hw, count_include_pad, x.dtype)
    return acc


def avg_pool2d_backward(x, grad, kernel, stride, padding, count_include_pad) -> np.ndarray:
    """Adjoint of `avg_pool2d`. Shapes: x [n, c, h, w], grad [n, c, oh, ow] -> [n, c, h, w]."""
    n, c, h, w = x.shape
    ph, pw = padding
    out_hw = tuple(grad.shape[2:])
    div = _avg_divisor((h, w), kernel, stride, padding, out_hw, count_include_pad, x.dtype)
    g = grad.astype(x.dtype, copy=False) / div
    gp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    for _, _, rows, cols in _offsets(kernel, stride, (1, 1), out_hw):
        gp[:, :, rows, cols] += g
    return np.ascontiguousarray(gp[:, :, ph : ph + h, pw : pw + w])


def max_pool2d_with_indices(x, kernel, stride, padding, dilation, index_dtype):
    """Max over each window and the flat `h * w` index of the max in its unpadded input plane.

    Ties keep the first window position (row-major over the kernel); NaN wins, as PyTorch.
    Shapes: [n, c, h, w] -> ([n, c, oh, ow], int [n, c, oh, ow]).
    """
    h, w = x.shape[2:]
    out_hw = (
        out_size(h, kernel[0], stride[0], padding[0], dilation[0]),
        out_size(w, kernel[1], stride[1], padding[1], dilation[1]),
    )
    xp = _pad(x, padding, -np.inf)
    # Flat input index of window (0, 0)'s corner at every output, shifted per kernel offset.
    rows0 = np.arange(out_hw[0]) * stride[0] - padding[0]
    cols0 = np.arange(out_hw[1]) * stride[1] - padding[1]
    base = rows0[:, None] * w + cols0[None, :]
    views = [
        (xp[:, :, rows, cols], base + (i * dilation[0] * w + j * dilation[1]))
        for i, j, rows, cols in _offsets(kernel, stride, dilation, out_hw)
    ]
    # Pass 1: the max (np.maximum propagates NaN). Pass 2, walking offsets backwards: the last
    # write at each output is the first offset equal to the max, so ties keep the first.
    best = views[0][0].copy()
    for v, _ in views[1:]:
        np.maximum(best, v, out=best)
    idx = np.empty(best.shape, index_dtype)
    for v, flat in reversed(views):
        np.copyto(idx, flat, where=v == best, casting="unsafe")
    nan = np.isnan(best)
    if nan.any():  # NaN != NaN: point at the first NaN instead
        for v, flat in reversed(views):
            np.copyto(idx, flat, where=nan & np.isnan(v), casting="unsafe")
    return best, idx


def max_pool2d_backward(x, grad, indices) -> np.ndarray:
    """Scatter-add each output grad to its max's input position. Shapes: -> x's [n, c, h, w]."""
    n, c, h, w = x.shape
    plane = h * w
    # One bincount over (plane offset + index) adds duplicates (overlapping windows) correctly.
    offs = (np.arange(n * c, dtype=np.int64) * plane).reshape(n, c, 1, 1)
    flat = (indices.astype(np.int64) + offs).ravel()
    summed = np.bincount(flat, weights=grad.ravel(), minlength=n * c * plane)
    return summed.astype(x.dtype).reshape(n, c, h, w)


def _adaptive_bounds(size_in: int, size_out: int):
    i = np.arange(size_out)
    return (i * size_in) // size_out, -((-(i + 1) * size_in) // size_out)


@functools.lru_cache(maxsize=64)
def adaptive_matrix(size_in: int, size_out: int, dtype) -> np.ndarray:
    """[out, in] averaging matrix of windows [floor(i*in/out), ceil((i+1)*in/out)).

    Cached (read-only): a pooling layer asks for the same two matrices in every forward and
    backward pass, and building one costs ~6 numpy calls, more than the pooling itself at
    small sizes.
    """
    start, end = _adaptive_bounds(size_in, size_out)
    cells = np.arange(size_in)
    inside = (cells[None, :] >= start[:, None]) & (cells[None, :] < end[:, None])
    out = (inside / (end - start)[:, None]).astype(dtype)
    out.flags.writeable = False
    return out


def _adaptive_windowed(x, output_size, xp=np) -> np.ndarray:
    """Window by window (rows, then columns): a NaN or inf reaches only the windows holding it,
    where the matrix product would spread it (0 * inf = NaN) over its whole row and column."""
    rows = [
        x[:, :, a:b].mean(axis=2) for a, b in zip(*_adaptive_bounds(x.shape[2], output_size[0]))
    ]
    tmp = xp.stack(rows, axis=2)
    cols = [
        tmp[..., a:b].mean(axis=3) for a, b in zip(*_adaptive_bounds(x.shape[3], output_size[1]))
    ]
    return xp.ascontiguousarray(xp.stack(cols, axis=3), dtype=x.dtype)


def adaptive_avg_pool2d(x, output_size, xp=np) -> np.ndarray:
    """Separable: P_h @ x @ P_w^T (window by window when x holds NaN or inf).

    `xp` is the array namespace of x (numpy; cupy from burn_cuda): the small averaging
    matrices are built on the host and moved there.
    Shapes: [n, c, h, w] -> [n, c, oh, ow].
    """
    if not xp.isfinite(x).all():
        return _adaptive_windowed(x, output_size, xp)
    ph = xp.asarray(adaptive_matrix(x.shape[2], output_size[0], x.dtype))
    pw = xp.asarray(adaptive_matrix(x.shape[3], output_size[1], x.dtype))
    return xp.ascontiguousarray(ph @ (x @ pw.T))


def adaptive_avg_pool2d_backward(x, grad, xp=np) -> np.ndarray:
    """Adjoint: P_h^T @ grad @ P_w. Shapes: grad [n, c, oh, ow] -> [n, c, h, w]."""
    ph = xp.asarray(adaptive_matrix(x.shape[2], grad.shape[2], x.dtype))
    pw = xp.asarray(adaptive_matrix(x.shape[3], grad.shape[3], x.dtype))
    return xp.ascontiguousarray(ph.T @ (grad.astype(x.dtype, copy=False) @ pw))
