"""im2col building blocks shared by the convolution ops: padding, window views, batch chunks.

The convolutions work on channels-last (NHWC) copies of their inputs: there the `kh * kw * c`
values of one window are gathered with a single contiguous copy and the product with the weights
is one large 2-D GEMM (`[n*oh*ow, kh*kw*c] @ [kh*kw*c, c_out]`), which OpenBLAS runs on all
cores. The batched NCHW form (`[c_out, K] @ [K, oh*ow]` per image) measured 3-4x slower.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

# Bytes of im2col columns materialised at once: large enough for BLAS to be efficient, small
# enough that the columns stay near the cache instead of streaming a 9x-input-sized temporary.
CHUNK_BYTES = 8 << 20


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Number of windows along one spatial dim: floor((size + 2p - d(k-1) - 1) / s) + 1."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pad_nhwc(x: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    """[n, c, h, w] -> zero-padded channels-last copy [n, h + 2ph, w + 2pw, c]."""
    n, c, h, w = x.shape
    ph, pw = padding
    if ph == 0 and pw == 0:
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    out = np.zeros((n, h + 2 * ph, w + 2 * pw, c), x.dtype)
    out[:, ph : ph + h, pw : pw + w, :] = x.transpose(0, 2, 3, 1)
    return out


def windows_nhwc(xp: np.ndarray, kernel, stride, dilation, out_hw) -> np.ndarray:
    """Read-only window view of a padded NHWC array: [n, oh, ow, kh, kw, c] (no copy)."""
    sn, sh, sw, sc = xp.strides
    (kh, kw), (st_h, st_w), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    shape = (xp.shape[0], oh, ow, kh, kw, xp.shape[3])
    strides = (sn, sh * st_h, sw * st_w, sh * dh, sw * dw, sc)
    return as_strided(xp, shape, strides, writeable=False)


def batch_chunks(n: int, bytes_per_image: int):
    """Yield `(start, stop)` ranges over the batch whose columns take about CHUNK_BYTES."""
    step = max(1, CHUNK_BYTES // max(1, bytes_per_image))
    for start in range(0, n, step):
        yield start, min(n, start + step)


def group_columns(win: np.ndarray, groups: int) -> np.ndarray:
    """Window view [b, oh, ow, kh, kw, c] -> contiguous [groups, b*oh*ow, kh*kw*c/groups]."""
    b, oh, ow, kh, kw, c = win.shape
    cg = c // groups
    if groups == 1:
        return np.ascontiguousarray(win).reshape(1, b * oh * ow, kh * kw * c)
    w7 = win.reshape(b, oh, ow, kh, kw, groups, cg).transpose(5, 0, 1, 2, 3, 4, 6)
    return np.ascontiguousarray(w7).reshape(groups, b * oh * ow, kh * kw * cg)


def unfold4d(x: np.ndarray, kernel, stride, padding, dilation) -> np.ndarray:
    """im2col in Burn's layout: [n, c, h, w] -> [n, c*kh*kw, oh*ow], rows ordered (c, i, j)."""
    n, c, h, w = x.shape
    (kh, kw), (ph, pw) = kernel, padding
    oh = out_size(h, kh, stride[0], ph, dilation[0])
    ow = out_size(w, kw, stride[1], pw, dilation[1])
    xp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    xp[:, :, ph : ph + h, pw : pw + w] = x
    s = xp.strides
    view = as_strided(
        xp,
        (n, c, kh, kw, oh, ow),
        (s[0], s[1], s[2] * dilation[0], s[3] * dilation[1], s[2] * stride[0], s[3] * stride[1]),
        writeable=False,
    )
    return np.ascontiguousarray(view).reshape(n, c * kh * kw, oh * ow)
