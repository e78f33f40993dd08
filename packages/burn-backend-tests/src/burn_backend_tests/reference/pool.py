"""float64 nested-loop references of the pooling ops and their gradients (never a backend's code).

Every reference walks output positions and kernel offsets explicitly; only the batch and channel
dims are vectorized. Shapes are channels-first, `[n, c, h, w]`; a 1-D op is the 2-D one on
`[n, c, l, 1]`. Window rules (as Burn / PyTorch):
- output size: (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1;
- window of output o along one dim: input cells o * stride - pad + i * dilation for i < k, keeping
  those inside [0, size) (padding cells count as zeros for avg pools, never win for max pools);
- adaptive window of output o: [floor(o * in / out), ceil((o + 1) * in / out)).
"""

from __future__ import annotations

import numpy as np


def out_len(size: int, k: int, s: int, p: int, d: int = 1) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def window(o: int, k: int, s: int, p: int, d: int, size: int) -> list[int]:
    """In-bounds input cells of output position `o`, in kernel order."""
    cells = (o * s - p + i * d for i in range(k))
    return [q for q in cells if 0 <= q < size]


def adaptive_window(o: int, size_in: int, size_out: int) -> range:
    start = (o * size_in) // size_out
    end = -((-(o + 1) * size_in) // size_out)  # ceil without float rounding
    return range(start, end)


def _windows2d(hw, out_hw, k, s, p, d=(1, 1)):
    """Yield (oy, ox, rows, cols) for every output position."""
    for oy in range(out_hw[0]):
        rows = window(oy, k[0], s[0], p[0], d[0], hw[0])
        for ox in range(out_hw[1]):
            yield oy, ox, rows, window(ox, k[1], s[1], p[1], d[1], hw[1])


def pool_out_hw(hw, k, s, p, d=(1, 1)) -> tuple[int, int]:
    return out_len(hw[0], k[0], s[0], p[0], d[0]), out_len(hw[1], k[1], s[1], p[1], d[1])


def avg_pool2d(x, k, s, p, count_include_pad):
    """x [n, c, h, w] -> [n, c, oh, ow]; divisor kh * kw, or the in-bounds cell count."""
    n, c, h, w = x.shape
    out_hw = pool_out_hw((h, w), k, s, p)
    out = np.zeros((n, c) + out_hw)
    for oy, ox, rows, cols in _windows2d((h, w), out_hw, k, s, p):
        total = np.zeros((n, c))
        for r in rows:
            for q in cols:
                total = total + x[:, :, r, q]
        div = k[0] * k[1] if count_include_pad else len(rows) * len(cols)
        out[:, :, oy, ox] = total / div
    return out


def avg_pool2d_backward(x_shape, grad, k, s, p, count_include_pad):
    """dL/dx: each output's grad / divisor added to every in-bounds cell of its window."""
    h, w = x_shape[2:]
    dx = np.zeros(x_shape)
    for oy, ox, rows, cols in _windows2d((h, w), grad.shape[2:], k, s, p):
        div = k[0] * k[1] if count_include_pad else len(rows) * len(cols)
        for r in rows:
            for q in cols:
                dx[:, :, r, q] += grad[:, :, oy, ox] / div
    return dx


def max_pool2d_with_indices(x, k, s, p, d):
    """(max, flat r * w + q index): the first max in kernel order wins ties; a NaN wins (PyTorch).

    Windows hold at most one NaN in the suite's cases, so "first" vs "last" NaN never matters.
    """
    n, c, h, w = x.shape
    out_hw = pool_out_hw((h, w), k, s, p, d)
    out = np.zeros((n, c) + out_hw)
    idx = np.zeros((n, c) + out_hw, np.int64)
    for oy, ox, rows, cols in _windows2d((h, w), out_hw, k, s, p, d):
        best = np.full((n, c), -np.inf)
        arg = np.full((n, c), -1, np.int64)
        for r in rows:
            for q in cols:
                v = x[:, :, r, q]
                take = (arg < 0) | (v > best) | (np.isnan(v) & ~np.isnan(best))
                best = np.where(take, v, best)
                arg = np.where(take, r * w + q, arg)
        out[:, :, oy, ox] = best
        idx[:, :, oy, ox] = arg
    return out, idx


def max_pool2d_backward(x_shape, grad, indices):
    """dL/dx: each output's grad added at its max's flat position (overlaps accumulate)."""
    n, c, _, w = x_shape
    dx = np.zeros(x_shape)
    for b in range(n):
        for ch in range(c):
            for pos in np.ndindex(*grad.shape[2:]):
                flat = int(indices[(b, ch) + pos])
                dx[b, ch, flat // w, flat % w] += grad[(b, ch) + pos]
    return dx


def adaptive_avg_pool2d(x, out_hw):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + tuple(out_hw))
    for oy in range(out_hw[0]):
        rows = adaptive_window(oy, h, out_hw[0])
        for ox in range(out_hw[1]):
            cols = adaptive_window(ox, w, out_hw[1])
            total = np.zeros((n, c))
            for r in rows:
                for q in cols:
                    total = total + x[:, :, r, q]
            out[:, :, oy, ox] = total / (len(rows) * len(cols))
    return out


def adaptive_avg_pool2d_backward(x_shape, grad):
    h, w = x_shape[2:]
    oh, ow = grad.shape[2:]
    dx = np.zeros(x_shape)
    for oy in range(oh):
        rows = adaptive_window(oy, h, oh)
        for ox in range(ow):
            cols = adaptive_window(ox, w, ow)
            share = grad[:, :, oy, ox] / (len(rows) * len(cols))
            for r in rows:
                for q in cols:
                    dx[:, :, r, q] += share
    return dx
