"""im2col building blocks shared by the convolution ops: window views, column buffers, chunks.

The convolutions gather windows from a zero-bordered channels-last (NHWC) copy of the input:
there the `kh * kw * c` values of one window are contiguous runs, so the columns
`[n, oh*ow, kh*kw*c]` are one cheap copy. Per image, `weights [c_out, K] @ columns^T` is then a
BLAS GEMM that reads the transposed columns in place and writes the NCHW output directly.
Measured alternatives: NCHW columns (3-4x slower copy), one big NHWC GEMM plus an output
transpose (slower for few input channels), a GEMM per kernel offset on shifted views (slower:
K = c is small and the partial sums cost a pass each).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

# Bytes of im2col columns materialised at once: large enough for BLAS to be efficient, small
# enough that the columns stay near the cache instead of streaming a 9x-input-sized temporary.
CHUNK_BYTES = 16 << 20


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Number of windows along one spatial dim: floor((size + 2p - d(k-1) - 1) / s) + 1."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def windows_nhwc(xp: np.ndarray, kernel, stride, dilation, out_hw) -> np.ndarray:
    """Read-only window view of a padded NHWC array: [n, oh, ow, kh, kw, c] (no copy)."""
    sn, sh, sw, sc = xp.strides
    (kh, kw), (st_h, st_w), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    shape = (xp.shape[0], oh, ow, kh, kw, xp.shape[3])
    strides = (sn, sh * st_h, sw * st_w, sh * dh, sw * dw, sc)
    return as_strided(xp, shape, strides, writeable=False)


class Columns:
    """Reusable im2col buffers for one op call: a zero-bordered NHWC input and the columns.

    Refilling the same buffers for every batch chunk matters: a fresh multi-MB array costs a
    page fault per 4 KiB on first touch, which measured 2.5x the copy itself. With
    `ones_column`, each group's columns end with a column of ones, so a bias row appended
    to the weights is added by the GEMM instead of by another pass over the output.
    """

    def __init__(self, chunk, hw, c, padding, kernel, out_hw, groups, dtype, ones_column=False):
        (h, w), (ph, pw) = hw, padding
        self.padding = padding
        self.groups = groups
        self.xp = np.zeros((chunk, h + 2 * ph, w + 2 * pw, c), dtype)
        self.k = kernel[0] * kernel[1] * (c // groups)
        rows = chunk * out_hw[0] * out_hw[1]
        self.cols = np.empty((groups, rows, self.k + int(ones_column)), dtype)
        if ones_column:
            self.cols[:, :, self.k] = 1

    def fill(self, x, kernel, stride, dilation, out_hw) -> np.ndarray:
        """im2col of x [m, c, h, w] (m <= chunk) -> view [groups, m, oh*ow, K (+1)]."""
        m, c, h, w = x.shape
        (ph, pw), g = self.padding, self.groups
        xp = self.xp[:m]
        xp[:, ph : ph + h, pw : pw + w, :] = x.transpose(0, 2, 3, 1)
        win = windows_nhwc(xp, kernel, stride, dilation, out_hw)
        length = out_hw[0] * out_hw[1]
        cols = self.cols[:, : m * length]
        cg = c // g
        for gi in range(g):
            dst = cols[gi, :, : self.k].reshape(m, *out_hw, *kernel, cg)
            dst[...] = win[..., gi * cg : (gi + 1) * cg]
        return cols.reshape(g, m, length, -1)


def chunk_size(n: int, bytes_per_image: int) -> int:
    """Images per batch chunk so that its columns take about CHUNK_BYTES; at least 1, also for
    an empty batch (the chunk loops step by it and the buffers are sized by it)."""
    return max(1, min(n, CHUNK_BYTES // max(1, bytes_per_image)))


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
