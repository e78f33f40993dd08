"""ONNX Resize as separable per-axis gathers with weights.

The taps and weights of each axis depend only on the shapes (never on the data), so they are
computed on the host with numpy and applied on the device: `sum_t x.select(axis, idx[:, t]) * w[:, t]`.
"""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType, Tensor


def _nearest(r, mode):
    if float(r).is_integer():
        return np.array([0.0, 1.0])
    if mode == "round_prefer_floor":
        return np.array([r <= 0.5, r > 0.5], float)
    if mode == "round_prefer_ceil":
        return np.array([r < 0.5, r >= 0.5], float)
    return np.array([1.0, 0.0]) if mode == "floor" else np.array([0.0, 1.0])


def _cubic(r, a):
    return np.array(
        [
            ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a,
        ]
    )


def _cubic_aa(r, scale, a):
    scale = min(scale, 1.0)

    def k(x):
        x = abs(x)
        if x <= 1:
            return (a + 2) * x**3 - (a + 3) * x**2 + 1
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a if x < 2 else 0.0

    start = int(np.floor(-2 / scale) + 1)
    c = np.array([k(scale * (i - r)) for i in range(start, 2 - start)])
    return c / c.sum()


def _linear_aa(r, scale):
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    c = np.clip(1 - np.abs((np.arange(start, 2 - start) - r) * scale), 0, 1)
    return c / c.sum()


def axis_taps(n_in, n_out, scale, mode, ctm, nearest_mode, a, exclude, roi, antialias):
    """Source indices `[n_out, taps]`, weights `[n_out, taps]` and the extrapolated positions."""
    y = np.arange(n_out, dtype=np.float64)
    width = scale * n_in
    extra = None
    if ctm == "align_corners":
        x = np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)
    elif ctm == "asymmetric":
        x = y / scale
    elif ctm == "tf_crop_and_resize":
        lo, hi = roi
        x = (
            np.full(n_out, (hi - lo) * (n_in - 1) / 2)
            if width == 1
            else y * (hi - lo) * (n_in - 1) / (width - 1)
        )
        x = x + lo * (n_in - 1)
        extra = (x < 0) | (x > n_in - 1)
    elif ctm == "pytorch_half_pixel":
        x = np.full(n_out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    elif ctm == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    elif ctm == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        x = offset + (y + 0.5) / scale - 0.5
    else:
        raise ValueError(f"coordinate_transformation_mode {ctm!r}")
    xi = np.floor(x).astype(np.int64)
    ratios = np.where(x == xi, 1.0, x - xi)

    def coeffs(r):
        if mode == "nearest":
            return _nearest(r, nearest_mode)
        if mode == "linear":
            return _linear_aa(r, scale) if antialias else np.array([1 - r, r])
        return _cubic_aa(r, scale, a) if antialias else _cubic(r, a)

    w = np.stack([coeffs(float(r)) for r in ratios]) if n_out else np.zeros((0, 2))
    n = w.shape[1]
    pad = int(np.ceil(n / 2))
    xp = x + pad
    pp = np.floor(xp).astype(np.int64)
    frac = xp - pp
    # Every kernel has an even tap count (nearest and linear 2, cubic 4, the antialiased ones
    # 2 - 2 * start), so the window starts half its width before the position.
    off = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    idx = (pp + off)[:, None] + np.arange(n)[None, :] - pad
    if exclude:
        w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
        s = w.sum(-1, keepdims=True)
        w = w / np.where(s == 0, 1.0, s)
    return np.clip(idx, 0, n_in - 1), w, extra


def resize(
    x: Tensor,
    sizes,
    scales,
    axes,
    mode,
    ctm,
    nearest_mode,
    a,
    exclude,
    roi,
    extrap,
    policy,
    antialias,
) -> Tensor:
    dims = x.dims()
    r = len(dims)
    axes = list(range(r)) if axes is None else [ax % r for ax in axes]
    roi_full = None
    if roi is not None and len(roi):
        roi_full = [0.0] * r + [1.0] * r
        for i, d in enumerate(axes):
            roi_full[d], roi_full[r + d] = roi[i], roi[len(axes) + i]
    if sizes is not None:
        out = list(dims)
        for i, d in enumerate(axes):
            out[d] = int(sizes[i])
        sc = [out[i] / dims[i] for i in range(r)]
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(sc[d] for d in axes)
            sc = [s if i in axes else 1.0 for i in range(r)]
            out = [int(s * dims[i] + 0.5) if i in axes else dims[i] for i in range(r)]
    else:
        sc = [1.0] * r
        for i, d in enumerate(axes):
            sc[d] = float(scales[i])
        out = [int(sc[i] * dims[i]) for i in range(r)]
    y = x if x.dtype in (DType.F32, DType.F64, DType.F16) else x.float()
    for d in axes:
        ax_roi = None if roi_full is None else (roi_full[d], roi_full[d + r])
        if (
            math.isclose(sc[d], 1.0)
            and out[d] == dims[d]
            and (ax_roi is None or (math.isclose(ax_roi[0], 0.0) and math.isclose(ax_roi[1], 1.0)))
        ):
            continue
        idx, w, extra = axis_taps(
            dims[d], out[d], sc[d], mode, ctm, nearest_mode, a, exclude, ax_roi, antialias
        )
        shape = [1] * r
        shape[d] = out[d]
        acc = None
        for t in range(idx.shape[1]):
            if not w[:, t].any():
                continue
            g = y.select(d, Tensor.from_data(idx[:, t].astype(np.int64), y.device, DType.I64))
            wt = Tensor.from_data(w[:, t].reshape(shape).astype(_np(y.dtype)), y.device, y.dtype)
            term = g * wt
            acc = term if acc is None else acc + term
        if acc is None:
            acc = y.select(d, Tensor.from_data(idx[:, 0].astype(np.int64), y.device, DType.I64)) * 0
        if extra is not None and extra.any():
            m = Tensor.from_data(extra.reshape(shape), y.device).expand(acc.dims())
            acc = acc.mask_fill(m, extrap)
        y = acc
    if y.dtype != x.dtype:
        y = y.round().clamp(_info(x.dtype)[0], _info(x.dtype)[1]).int().cast(x.dtype)
    return y


def _np(dtype):
    return {DType.F64: np.float64, DType.F32: np.float32, DType.F16: np.float16}[dtype]


def _info(dtype):
    npd = {
        DType.I64: np.int64,
        DType.I32: np.int32,
        DType.I16: np.int16,
        DType.I8: np.int8,
        DType.U8: np.uint8,
    }[dtype]
    return float(np.iinfo(npd).min), float(np.iinfo(npd).max)
