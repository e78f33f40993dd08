"""Einsum with an ellipsis against numpy.einsum in float64."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T

CASES = [
    ("...ii->...i", [(2, 3, 4, 4)], (2, 3, 4)),  # batched diagonal
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], (2, 3, 5)),  # batched matmul
    ("...ij,jk", [(1, 3, 4), (4, 2)], (1, 3, 2)),  # implicit output: ellipsis first
    ("i...,i...->...", [(3, 2, 2), (3, 1, 2)], (2, 2)),  # broadcast size-1 dim
]


@pytest.mark.parametrize(("eq", "shapes", "out"), CASES)
def test_ellipsis(eq, shapes, out):
    rng = np.random.default_rng(17)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ins = [(f"x{i}", T.FLOAT, list(s)) for i, s in enumerate(shapes)]
    m = one_node("Einsum", ins, [("y", T.FLOAT, list(out))], opset=12, equation=eq)
    (y,) = backend.prepare(m).run(xs)
    want = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
