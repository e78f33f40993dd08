"""float64 per-pixel references of `interpolate` and its gradient (never a backend's code).

Each output pixel reads a few input taps per axis, with weights (Burn's burn-ndarray kernels,
align_corners=True for bilinear and bicubic):
- nearest: the single tap floor(dst * in / out);
- bilinear: src = dst * (in - 1) / max(out - 1, 1); taps floor(src) and ceil(src) (clamped), with
  weights 1 - t and t, t = src - floor(src) (one tap when t == 0);
- bicubic: taps floor(src) - 1 .. floor(src) + 2 clamped to the edge, Keys' kernel with A = -0.75.
A tap is read even when its weight is 0 (bicubic at t == 0), so a NaN there reaches the output.
`src` is computed as an exact fraction so the tap set does not depend on float rounding.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

MODES = ("nearest", "bilinear", "bicubic")
_A = -0.75


def cubic(d: float) -> float:
    """Keys' cubic convolution kernel at distance d."""
    d = abs(d)
    if d <= 1:
        return (_A + 2) * d**3 - (_A + 3) * d**2 + 1
    if d < 2:
        return _A * d**3 - 5 * _A * d**2 + 8 * _A * d - 4 * _A
    return 0.0


def taps(mode: str, dst: int, size_in: int, size_out: int) -> list[tuple[int, float]]:
    """[(input index, weight)] read by output index `dst` along one axis."""
    if mode == "nearest":
        return [((dst * size_in) // size_out, 1.0)]
    src = Fraction(dst * (size_in - 1), max(size_out - 1, 1))
    i0 = src.numerator // src.denominator
    t = float(src - i0)
    if mode == "bilinear":
        if t == 0:
            return [(i0, 1.0)]
        return [(i0, 1.0 - t), (min(i0 + 1, size_in - 1), t)]
    if mode == "bicubic":
        return [(min(max(i0 + a, 0), size_in - 1), cubic(a - t)) for a in (-1, 0, 1, 2)]
    raise ValueError(f"unknown interpolate mode {mode!r}")


def interpolate(x, out_hw, mode):
    """x [n, c, h, w] -> [n, c, oh, ow], summing weight * tap per output pixel."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))
    cols = [taps(mode, ox, w, ow) for ox in range(ow)]
    for oy in range(oh):
        rows = taps(mode, oy, h, oh)
        for ox in range(ow):
            acc = np.zeros((n, c))
            for r, wr in rows:
                for q, wq in cols[ox]:
                    acc = acc + x[:, :, r, q] * (wr * wq)
            out[:, :, oy, ox] = acc
    return out


def interpolate_backward(x_shape, grad, mode):
    """dL/dx: every output's grad times each tap's weight, added at the tap (repeats accumulate)."""
    h, w = x_shape[2:]
    oh, ow = grad.shape[2:]
    dx = np.zeros(x_shape)
    cols = [taps(mode, ox, w, ow) for ox in range(ow)]
    for oy in range(oh):
        rows = taps(mode, oy, h, oh)
        for ox in range(ow):
            for r, wr in rows:
                for q, wq in cols[ox]:
                    dx[:, :, r, q] += grad[:, :, oy, ox] * (wr * wq)
    return dx
