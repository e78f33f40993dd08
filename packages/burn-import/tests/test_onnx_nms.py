"""NonMaxSuppression against hand-derived selections.

Boxes 0-2 overlap with IoU 0.9 / 1.1 = 0.818 (one is shifted by 0.1 of its width), as do 3-4;
box 5 stands alone. By score the visit order is 3, 0, 1, 2, 4, 5, so with an IoU threshold of
0.5 the kept boxes are 3, 0, 5.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T

BOXES = [
    [0.0, 0.0, 1.0, 1.0],
    [0.0, 0.1, 1.0, 1.1],
    [0.0, -0.1, 1.0, 0.9],
    [0.0, 10.0, 1.0, 11.0],
    [0.0, 10.1, 1.0, 11.1],
    [0.0, 100.0, 1.0, 101.0],
]
SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


def _run(boxes, scores, max_out, iou, score=None, center=0):
    ins = [("b", T.FLOAT, list(boxes.shape)), ("s", T.FLOAT, list(scores.shape))]
    ins += [("m", T.INT64, [1]), ("i", T.FLOAT, [1])]
    feeds = [boxes, scores, np.array([max_out], np.int64), np.array([iou], np.float32)]
    if score is not None:
        ins.append(("t", T.FLOAT, [1]))
        feeds.append(np.array([score], np.float32))
    m = one_node(
        "NonMaxSuppression", ins, [("y", T.INT64, [None, 3])], opset=11, center_point_box=center
    )
    (y,) = backend.prepare(m).run(feeds)
    return y.tolist()


def _inputs(boxes=BOXES, scores=SCORES):
    return np.array([boxes], np.float32), np.array([[scores]], np.float32)


@pytest.mark.parametrize(
    ("max_out", "score", "want"),
    [(3, None, [3, 0, 5]), (2, None, [3, 0]), (10, 0.4, [3, 0]), (0, None, [])],
)
def test_greedy_selection(max_out, score, want):
    assert _run(*_inputs(), max_out, 0.5, score) == [[0, 0, i] for i in want]


def test_flipped_corners_and_center_format_agree():
    flipped = [[b[2], b[3], b[0], b[1]] for b in BOXES]
    assert _run(*_inputs(flipped), 3, 0.5) == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]
    center = [[(b[1] + b[3]) / 2, (b[0] + b[2]) / 2, b[3] - b[1], b[2] - b[0]] for b in BOXES]
    assert _run(*_inputs(center), 3, 0.5, center=1) == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]


def test_equal_scores_keep_the_lower_index_and_classes_run_apart():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1]]], np.float32)
    scores = np.array([[[0.5, 0.5], [0.2, 0.7]]], np.float32)  # two classes
    assert _run(boxes, scores, 5, 0.5) == [[0, 0, 0], [0, 1, 1]]


def test_iou_exactly_at_the_threshold_is_not_suppressed():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5]]], np.float32)  # IoU 0.5 exactly
    scores = np.array([[[0.9, 0.8]]], np.float32)
    assert _run(boxes, scores, 5, 0.5) == [[0, 0, 0], [0, 0, 1]]
