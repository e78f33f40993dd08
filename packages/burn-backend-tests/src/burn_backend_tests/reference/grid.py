"""float64 per-pixel references of the grid ops (never a backend's code).

`grid_sample_2d` follows the definition of torch's `F.grid_sample` (2-D), one output pixel at a
time: unnormalize (x, y) to pixel coordinates, apply the padding mode (border: clip; reflection:
fold at the edges, then clip), then read the nearest pixel (round half to even) or the four
bilinear taps, where taps outside the input read 0.
"""

from __future__ import annotations

import math

import numpy as np

MODES = ("bilinear", "nearest")
PADDINGS = ("zeros", "border", "reflection")


def _reflect(p: float, lo2: float, hi2: float) -> float:
    """Fold p into [lo2/2, hi2/2] by mirroring (torch's reflect_coordinates)."""
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2.0, (hi2 - lo2) / 2.0
    d = abs(p - lo)
    flips = math.floor(d / span)
    extra = d - flips * span
    return extra + lo if flips % 2 == 0 else span - extra + lo


def source_index(c: float, size: int, padding: str, align_corners: bool) -> float:
    if align_corners:
        p = (c + 1.0) / 2.0 * (size - 1)
    else:
        p = ((c + 1.0) * size - 1.0) / 2.0
    if padding == "border":
        p = min(max(p, 0.0), size - 1.0)
    elif padding == "reflection":
        if align_corners:
            p = _reflect(p, 0.0, 2.0 * (size - 1))
        else:
            p = _reflect(p, -1.0, 2.0 * size - 1.0)
        p = min(max(p, 0.0), size - 1.0)
    return p


def grid_sample_2d(x, grid, mode: str, padding: str, align_corners: bool) -> np.ndarray:
    x = np.asarray(x, np.float64)
    grid = np.asarray(grid, np.float64)
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def read(b, iy, ix):
        if 0 <= iy < h and 0 <= ix < w:
            return x[b, :, iy, ix]
        return np.zeros(c)

    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                gx, gy = grid[b, i, j]
                if math.isnan(gx) or math.isnan(gy):
                    continue  # outside everything: 0 in "zeros" mode (the suite uses zeros)
                px = source_index(gx, w, padding, align_corners)
                py = source_index(gy, h, padding, align_corners)
                if mode == "nearest":
                    if abs(px) > 1e9 or abs(py) > 1e9:
                        continue
                    out[b, :, i, j] = read(b, int(np.rint(py)), int(np.rint(px)))
                    continue
                if not (abs(px) < 1e9 and abs(py) < 1e9):
                    continue  # far outside (inf): every tap reads 0
                x0, y0 = math.floor(px), math.floor(py)
                tx, ty = px - x0, py - y0
                acc = np.zeros(c)
                for dy, wy in ((0, 1 - ty), (1, ty)):
                    for dx, wx in ((0, 1 - tx), (1, tx)):
                        if wy * wx != 0.0:
                            acc = acc + wy * wx * read(b, y0 + dy, x0 + dx)
                out[b, :, i, j] = acc
    return out


def affine_grid_2d(theta, dims) -> np.ndarray:
    """[n, h, w, 2]: theta[b] @ (x_j, y_i, 1), x_j = -1 + 2 j / (w - 1) (0 when w == 1)."""
    n, _c, h, w = dims
    xs = np.linspace(-1.0, 1.0, w) if w > 1 else np.zeros(1)
    ys = np.linspace(-1.0, 1.0, h) if h > 1 else np.zeros(1)
    out = np.zeros((n, h, w, 2))
    for b in range(n):
        for i in range(h):
            for j in range(w):
                out[b, i, j] = np.asarray(theta[b], np.float64) @ np.array([xs[j], ys[i], 1.0])
    return out
