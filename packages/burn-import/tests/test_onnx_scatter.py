"""ScatterElements / ScatterND with every ONNX reduction, against sequential numpy float64 loops.

The expected values apply the updates one after another in index order (ONNX's definition), in
float64; the importer's rounds of distinct targets must give the same, repeated targets included.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from burn_import.onnx._rt_scatter import rounds
from onnx import TensorProto as T

COMBINE = {
    "none": lambda a, b: b,
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


def ref_scatter_elements(x, idx, upd, axis, red):
    out = x.astype(np.float64).copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[axis] = idx[pos] % x.shape[axis]
        out[tuple(tgt)] = COMBINE[red](out[tuple(tgt)], upd[pos])
    return out


def ref_scatter_nd(x, idx, upd, red):
    out = x.astype(np.float64).copy()
    for pos in np.ndindex(*idx.shape[:-1]):
        out[tuple(idx[pos])] = COMBINE[red](out[tuple(idx[pos])], upd[pos])
    return out


@pytest.mark.parametrize("red", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements_reductions_with_repeated_targets(red, axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    idx = np.array([[1, 3, 1, -1, 0], [1, 1, 2, 0, 0]], np.int64)  # repeats along both axes
    if axis == 1:
        idx = idx[:, :4] % 5
        if red == "none":  # repeated targets are undefined without a reduction
            idx = np.array([[0, 4, 2, 1], [3, 0, 1, 2]], np.int64)
    elif red == "none":
        idx = np.array([[1, 3, 2, 0, 1], [0, 1, 3, 2, 0]], np.int64)
    upd = rng.standard_normal(idx.shape).astype(np.float32)
    m = one_node(
        "ScatterElements",
        [("x", T.FLOAT, x.shape), ("i", T.INT64, idx.shape), ("u", T.FLOAT, upd.shape)],
        [("y", T.FLOAT, x.shape)],
        opset=18,
        axis=axis,
        reduction=red,
    )
    (y,) = backend.prepare(m).run([x, idx, upd])
    np.testing.assert_allclose(y, ref_scatter_elements(x, idx, upd, axis, red), rtol=1e-6)


@pytest.mark.parametrize("red", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_reductions_on_slices(red):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    idx = np.array([[[2], [0]], [[2], [3]], [[-4], [2]]], np.int64)  # row 2 three times, -4 is 0
    if red == "none":
        idx = np.array([[[2], [0]], [[1], [3]]], np.int64)
    upd = rng.standard_normal(idx.shape[:-1] + (3, 2)).astype(np.float32)
    m = one_node(
        "ScatterND",
        [("x", T.FLOAT, x.shape), ("i", T.INT64, idx.shape), ("u", T.FLOAT, upd.shape)],
        [("y", T.FLOAT, x.shape)],
        opset=18,
        reduction=red,
    )
    (y,) = backend.prepare(m).run([x, idx, upd])
    want = ref_scatter_nd(x, np.where(idx < 0, idx + 4, idx), upd, red)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_rounds_keep_each_targets_order():
    t = np.array([5, 5, 1, 5, 1, 0])
    got = rounds(t)
    assert [r.tolist() for r in got] == [[0, 2, 5], [1, 4], [3]]
    for r in got:  # each round names a target at most once
        assert len(set(t[r].tolist())) == len(r)
    assert rounds(np.array([], np.int64)) == []
