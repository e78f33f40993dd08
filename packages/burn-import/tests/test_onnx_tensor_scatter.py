"""ONNX TensorScatter (KV-cache writes) against a loop over the definition in numpy."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T


def ref(cache, update, w, mode, axis):
    out = cache.copy()
    cap, seq = cache.shape[axis], update.shape[axis]
    for pre in np.ndindex(*cache.shape[:axis]):
        for i in range(seq):
            p = w[pre[0]] + i
            out[(*pre, p % cap if mode == "circular" else p)] = update[(*pre, i)]
    return out


def _model(cache, update, with_w, **attrs):
    ins = [("c", T.FLOAT, list(cache.shape)), ("u", T.FLOAT, list(update.shape))]
    if with_w:
        ins.append(("w", T.INT64, [cache.shape[0]]))
    return one_node("TensorScatter", ins, [("y", T.FLOAT, list(cache.shape))], opset=24, **attrs)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_writes_each_batch_at_its_index(mode):
    rng = np.random.default_rng(5)
    cache = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)  # [B, heads, max_len, dim]
    update = rng.standard_normal((2, 3, 2, 4)).astype(np.float32)
    w = np.array([1, 4 if mode == "circular" else 3], np.int64)  # circular: 4, 5 -> 4, 0
    (y,) = backend.prepare(_model(cache, update, True, mode=mode)).run([cache, update, w])
    np.testing.assert_array_equal(y, ref(cache, update, w, mode, 2))


def test_default_indices_and_another_axis():
    cache = np.zeros((2, 6, 3), np.float32)
    update = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    (y,) = backend.prepare(_model(cache, update, False, axis=1)).run([cache, update])
    np.testing.assert_array_equal(y, ref(cache, update, np.zeros(2, np.int64), "linear", 1))


def test_linear_write_past_the_end_is_an_error():
    cache = np.zeros((1, 4, 2), np.float32)
    update = np.ones((1, 2, 2), np.float32)
    rep = backend.prepare(_model(cache, update, True, axis=1))
    with pytest.raises(ValueError, match="outside"):
        rep.run([cache, update, np.array([3], np.int64)])
