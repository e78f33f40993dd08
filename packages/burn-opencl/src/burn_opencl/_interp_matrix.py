"""1-D interpolation matrices [out, in] (float64, host side) for interpolation's backward pass.

Coordinates match the forward kernel (and Burn): nearest reads floor(dst * in / out); bilinear and
bicubic use align_corners, src = dst * (in - 1) / max(out - 1, 1); bilinear mixes floor(src) and
min(ceil(src), in - 1); bicubic uses Keys' kernel (A = -0.75) on taps floor(src) - 1 .. + 2
clamped to the edge. Rows of the matrix are the forward weights, so A^T is the exact adjoint.
"""

from __future__ import annotations

import numpy as np


def _keys(t: np.ndarray) -> np.ndarray:
    """[out, 4] weights of taps -1, 0, 1, 2 at fraction t."""

    def near(d):
        return (1.25 * d - 2.25) * d * d + 1.0

    def far(d):
        return ((-0.75 * d + 3.75) * d - 6.0) * d + 3.0

    return np.stack([far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)], axis=1)


def interp_matrix(mode: str, size_in: int, size_out: int) -> np.ndarray:
    m = np.zeros((size_out, size_in))
    rows = np.arange(size_out)
    if mode == "nearest":
        m[rows, (rows * size_in) // size_out] = 1.0
        return m
    src = rows * ((size_in - 1) / max(size_out - 1, 1))
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    if mode == "bilinear":
        i1 = np.minimum(np.ceil(src).astype(np.int64), size_in - 1)
        np.add.at(m, (rows, i0), 1.0 - t)
        np.add.at(m, (rows, i1), t)
        return m
    w = _keys(t)
    for k in range(4):
        np.add.at(m, (rows, np.clip(i0 + k - 1, 0, size_in - 1)), w[:, k])
    return m
