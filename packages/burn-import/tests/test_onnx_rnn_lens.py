"""A run-time sequence_lens on LSTM: full lengths give the same result as no sequence_lens
(the recurrence itself is checked against ONNX's node tests); a shorter one is an error at run
time, since the value is unknown at import."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T

H, SEQ, BATCH, IN = 3, 4, 2, 5


def _model(with_lens):
    ins = [
        ("x", T.FLOAT, [SEQ, BATCH, IN]),
        ("w", T.FLOAT, [1, 4 * H, IN]),
        ("r", T.FLOAT, [1, 4 * H, H]),
        ("b", T.FLOAT, [1, 8 * H]),
    ]
    if with_lens:
        ins.append(("lens", T.INT32, [BATCH]))
    return one_node("LSTM", ins, [("y", T.FLOAT, [SEQ, 1, BATCH, H])], opset=14, hidden_size=H)


def _feeds():
    rng = np.random.default_rng(19)
    shapes = [(SEQ, BATCH, IN), (1, 4 * H, IN), (1, 4 * H, H), (1, 8 * H)]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def test_full_run_time_lengths_change_nothing():
    (plain,) = backend.prepare(_model(False)).run(_feeds())
    (with_lens,) = backend.prepare(_model(True)).run(_feeds() + [np.full(BATCH, SEQ, np.int32)])
    np.testing.assert_array_equal(with_lens, plain)


def test_shorter_run_time_length_is_an_error():
    rep = backend.prepare(_model(True))
    with pytest.raises(ValueError, match="sequence_lens"):
        rep.run(_feeds() + [np.array([SEQ, 2], np.int32)])
