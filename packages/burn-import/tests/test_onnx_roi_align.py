"""RoiAlign against a per-sample float64 loop over the definition (bilinear sampling of each
bin; a sample more than a pixel outside the map counts as 0; max mode takes the largest weighted
neighbour of each sample)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T


def _sample(img, y, x):
    h, w = img.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return [0.0] * 4
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    y1, x1 = (y0, x0)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return [
        (1 - ly) * (1 - lx) * img[y0, x0],
        (1 - ly) * lx * img[y0, x1],
        ly * (1 - lx) * img[y1, x0],
        ly * lx * img[y1, x1],
    ]


def ref(x, rois, bidx, mode, oh, ow, ratio, scale, half_pixel):
    out = np.zeros((len(rois), x.shape[1], oh, ow))
    off = 0.5 if half_pixel else 0.0
    for r, (roi, b) in enumerate(zip(rois.astype(np.float64), bidx)):
        x1, y1, x2, y2 = roi * scale - off
        rw, rh = x2 - x1, y2 - y1
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio or math.ceil(rh / oh)
        gw = ratio or math.ceil(rw / ow)
        for ch, ph, pw in np.ndindex(x.shape[1], oh, ow):
            vals = []
            for iy, ix in np.ndindex(gh, gw):
                yy = y1 + ph * rh / oh + (iy + 0.5) * rh / oh / gh
                xx = x1 + pw * rw / ow + (ix + 0.5) * rw / ow / gw
                vals.append(_sample(x[b, ch].astype(np.float64), yy, xx))
            if mode == "avg":
                out[r, ch, ph, pw] = sum(sum(v) for v in vals) / max(gh * gw, 1)
            else:
                out[r, ch, ph, pw] = max(max(v) for v in vals)
    return out


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize(("ctm", "ratio"), [("half_pixel", 2), ("output_half_pixel", 0)])
def test_roi_align(mode, ctm, ratio):
    rng = np.random.default_rng(20)
    x = rng.standard_normal((2, 3, 8, 9)).astype(np.float32)
    rois = np.array(
        [[0, 0, 8, 7], [2.5, 1.0, 6.0, 7.5], [-3, -2, 4, 3], [1, 1, 1.2, 1.1]], np.float32
    )
    bidx = np.array([0, 1, 1, 0], np.int64)
    m = one_node(
        "RoiAlign",
        [("x", T.FLOAT, [2, 3, 8, 9]), ("rois", T.FLOAT, [4, 4]), ("b", T.INT64, [4])],
        [("y", T.FLOAT, [4, 3, 3, 2])],
        opset=16,
        mode=mode,
        coordinate_transformation_mode=ctm,
        output_height=3,
        output_width=2,
        sampling_ratio=ratio,
        spatial_scale=0.9,
    )
    (y,) = backend.prepare(m).run([x, rois, bidx])
    want = ref(x, rois, bidx, mode, 3, 2, ratio, 0.9, ctm == "half_pixel")
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
