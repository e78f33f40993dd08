"""Dropout with training_mode: identity at ratio 0 or when training is off; otherwise the kept
elements are x / (1 - ratio) (checked exactly against the returned mask) and about 1 - ratio of
them are kept (a binomial count, checked within 5 standard deviations)."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T

N = 20000


def _run(x, ratio, training):
    m = one_node(
        "Dropout",
        [("x", T.FLOAT, [N]), ("r", T.FLOAT, []), ("t", T.BOOL, [])],
        [("y", T.FLOAT, [N]), ("mask", T.BOOL, [N])],
        opset=13,
    )
    return backend.prepare(m).run([x, np.array(ratio, np.float32), np.array(training)])


@pytest.mark.parametrize(("ratio", "training"), [(0.0, True), (0.5, False)])
def test_identity_cases(ratio, training):
    x = np.random.default_rng(14).standard_normal(N).astype(np.float32)
    y, mask = _run(x, ratio, training)
    np.testing.assert_array_equal(y, x)
    assert mask.all()


def test_training_drops_and_rescales():
    x = np.random.default_rng(15).standard_normal(N).astype(np.float32)
    y, mask = _run(x, 0.25, True)
    want = np.where(mask, x.astype(np.float64) / 0.75, 0.0)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=0)
    kept = int(mask.sum())
    sd = (N * 0.75 * 0.25) ** 0.5
    assert abs(kept - 0.75 * N) < 5 * sd, kept
