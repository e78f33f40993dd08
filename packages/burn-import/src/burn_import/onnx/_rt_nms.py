"""ONNX NonMaxSuppression, computed on the host: how many boxes survive depends on the values.

Per batch and class: the boxes scoring above `score_threshold` (when given) are visited by
decreasing score (the lower index first among equal scores); a box is kept unless its IoU with
a box already kept for that class exceeds `iou_threshold`, until `max_output_boxes_per_class`
are kept. The result lists (batch, class, box) in that order. Corners may come in either order
(center_point_box=0: [y1, x1, y2, x2]); center_point_box=1 reads [x_center, y_center, w, h].
Areas and IoUs are computed in the boxes' own type, as the reference does, so thresholds met
exactly decide the same way.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor


def _extent(boxes: np.ndarray, center: bool) -> tuple[np.ndarray, ...]:
    """(x_min, x_max, y_min, y_max) of boxes [n, 4]."""
    if center:
        half_w, half_h = boxes[:, 2] / 2, boxes[:, 3] / 2
        return (
            boxes[:, 0] - half_w,
            boxes[:, 0] + half_w,
            boxes[:, 1] - half_h,
            boxes[:, 1] + half_h,
        )
    y_a, x_a, y_b, x_b = boxes.T
    return np.minimum(x_a, x_b), np.maximum(x_a, x_b), np.minimum(y_a, y_b), np.maximum(y_a, y_b)


def _overlaps(ext, i: int, kept: list[int], iou_threshold) -> bool:
    """Whether box i's IoU with one of `kept` exceeds the threshold (empty or degenerate
    intersections and boxes never suppress)."""
    x0, x1, y0, y1 = (e[kept] for e in ext)
    ix = np.minimum(x1, ext[1][i]) - np.maximum(x0, ext[0][i])
    iy = np.minimum(y1, ext[3][i]) - np.maximum(y0, ext[2][i])
    inter = ix * iy
    area_i = (ext[1][i] - ext[0][i]) * (ext[3][i] - ext[2][i])
    areas = (x1 - x0) * (y1 - y0)
    union = areas + area_i - inter
    valid = (ix > 0) & (iy > 0) & (inter > 0) & (areas > 0) & (area_i > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / union
    return bool((valid & (iou > iou_threshold)).any())


def non_max_suppression(boxes, scores, max_out, iou_threshold, score_threshold, center: bool):
    """Shapes: boxes [batch, n, 4], scores [batch, classes, n] -> selected [k, 3] int64."""
    b = np.asarray(boxes.numpy())
    s = np.asarray(scores.numpy())
    limit = 0 if max_out is None else int(np.asarray(max_out.numpy()).reshape(-1)[0])
    iou_th = b.dtype.type(
        0 if iou_threshold is None else np.asarray(iou_threshold.numpy()).ravel()[0]
    )
    score_th = None if score_threshold is None else np.asarray(score_threshold.numpy()).ravel()[0]
    picked: list[tuple[int, int, int]] = []
    for bi in range(b.shape[0]):
        ext = _extent(b[bi], center)
        for ci in range(s.shape[1]):
            sc = s[bi, ci]
            cand = np.arange(sc.size) if score_th is None else np.flatnonzero(sc > score_th)
            order = cand[np.lexsort((cand, -sc[cand]))]  # score down, then index up
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if not kept or not _overlaps(ext, int(i), kept, iou_th):
                    kept.append(int(i))
                    picked.append((bi, ci, int(i)))
    out = np.array(picked, np.int64).reshape(-1, 3)
    return Tensor.from_data(out, boxes.device, DType.I64)
