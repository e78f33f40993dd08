"""ONNX RoiAlign: bilinear samples of each region's bins, averaged (or their maximum).

The sampling positions depend on the rois' values, so the four neighbours and weights of every
sample are computed on the host (as Resize builds its taps); the gather, the weighted sum and
the reduction run on the device. The rules follow the definition: a bin of a region of
`roi_size / output_size` holds `sampling_ratio` (or `ceil(roi_size / output_size)`) samples per
axis; a sample more than one pixel outside the map counts as 0; coordinates are clamped at 0 and
at the last row/column. "output_half_pixel" (before opset 16) shifts nothing and makes regions
at least one pixel wide; "half_pixel" shifts the region by -0.5. Max mode takes, per sample, the
largest of its four weighted neighbours (onnxruntime's and the reference's rule).
"""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType, Tensor


def _axis_taps(start, size, out, grid, length):
    """Per (bin, sample): low index, high index, weight of the high one, and in-range flag."""
    bin_size = size / out
    t = (
        start
        + np.arange(out)[:, None] * bin_size
        + (np.arange(grid)[None, :] + 0.5) * bin_size / grid
    )
    inside = (t >= -1.0) & (t <= length)
    t = np.maximum(t, 0.0)
    low = np.floor(t).astype(np.int64)
    last = low >= length - 1
    low = np.where(last, length - 1, low)
    high = np.where(last, length - 1, low + 1)
    frac = np.where(last, 0.0, t - low)
    return low, high, frac, inside


def _taps(roi, out_hw, ratio, scale, half_pixel, hw):
    """Flat indices [oh, ow, S, 4] and weights of one region's samples (S = grid_h * grid_w)."""
    off = 0.5 if half_pixel else 0.0
    x1, y1, x2, y2 = (float(v) * scale - off for v in roi)
    rw, rh = x2 - x1, y2 - y1
    if not half_pixel:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    gh = ratio if ratio > 0 else math.ceil(rh / out_hw[0])
    gw = ratio if ratio > 0 else math.ceil(rw / out_hw[1])
    ylo, yhi, ly, yin = _axis_taps(y1, rh, out_hw[0], gh, hw[0])
    xlo, xhi, lx, xin = _axis_taps(x1, rw, out_hw[1], gw, hw[1])
    # [oh, 1, gh, 1] against [1, ow, 1, gw] -> [oh, ow, gh, gw]
    ylo, yhi, ly, yin = (a[:, None, :, None] for a in (ylo, yhi, ly, yin))
    xlo, xhi, lx, xin = (a[None, :, None, :] for a in (xlo, xhi, lx, xin))
    w = hw[1]
    pos = np.stack(
        np.broadcast_arrays(ylo * w + xlo, ylo * w + xhi, yhi * w + xlo, yhi * w + xhi), -1
    )
    wts = np.stack(
        np.broadcast_arrays((1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx), -1
    )
    keep = (yin & xin)[..., None]
    pos, wts = np.where(keep, pos, 0), np.where(keep, wts, 0.0)
    oh, ow = out_hw
    return pos.reshape(oh, ow, gh * gw, 4), wts.reshape(oh, ow, gh * gw, 4), max(gh * gw, 1)


def roi_align(x, rois, batch_indices, mode, out_hw, ratio, scale, half_pixel):
    """Shapes: x [n, c, h, w], rois [r, 4] (x1, y1, x2, y2), batch_indices [r]
    -> [r, c, out_h, out_w]."""
    n, c, h, w = x.dims()
    boxes = np.asarray(rois.numpy(), np.float64).reshape(-1, 4)
    r = boxes.shape[0]
    oh, ow = out_hw
    taps = [_taps(b, out_hw, ratio, scale, half_pixel, (h, w)) for b in boxes]
    s = max(t[0].shape[2] for t in taps)
    pos = np.zeros((r, oh, ow, s, 4), np.int64)
    wts = np.zeros((r, oh, ow, s, 4))
    valid = np.zeros((r, 1, oh, ow, s, 1), bool)
    for i, (p, wt, _) in enumerate(taps):
        pos[i, :, :, : p.shape[2]], wts[i, :, :, : p.shape[2]] = p, wt
        valid[i, :, :, :, : p.shape[2]] = True
    dev = x.device
    src = x.reshape([n, c, h * w]).select(0, batch_indices.cast(DType.I64).reshape([r]))
    length = oh * ow * s * 4
    idx = Tensor.from_data(pos.reshape(r, 1, length), dev, DType.I64).expand([r, c, length])
    weights = Tensor.from_data(wts.reshape(r, 1, length), dev, DType.F64).cast(x.dtype)
    prod = (src.gather(2, idx) * weights).reshape([r, c, oh, ow, s, 4])
    if mode == "avg":
        count = np.array([t[2] for t in taps], np.float64).reshape(r, 1, 1, 1)
        total = prod.sum_dim(5).sum_dim(4).reshape([r, c, oh, ow])
        return total / Tensor.from_data(count, dev, DType.F64).cast(x.dtype)
    best = prod.max_dim(5)  # [r, c, oh, ow, s, 1]
    pad = Tensor.from_data(~valid, dev).expand(best.dims())
    return best.mask_fill(pad, -math.inf).max_dim(4).reshape([r, c, oh, ow])
