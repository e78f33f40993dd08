"""Conformance: `Tensor.cross(other, dim)` (Burn's `cross`, the contract's `float_cross`): the
cross product of the 3-vectors along `dim`, other dims broadcast, on every input layout, against
the formula written out in float64; and the arguments it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import TensorCheckError

from .._ctx import LAYOUTS, sample


def _ref_cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    """out[i] = a[j] * b[k] - a[k] * b[j] for (i, j, k) = (0, 1, 2), (1, 2, 0), (2, 0, 1)."""
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    parts = [a[..., j] * b[..., k] - a[..., k] * b[..., j] for j, k in ((1, 2), (2, 0), (0, 1))]
    return np.moveaxis(np.stack(parts, axis=-1), -1, dim)


CASES = [
    # (lhs shape, rhs shape, dim)
    ((3,), (3,), 0),
    ((4, 3), (4, 3), 1),
    ((3, 5), (3, 5), 0),
    ((2, 3, 4), (1, 3, 4), 1),  # rhs broadcast over the batch
    ((2, 4, 3), (2, 1, 3), -1),  # negative dim, rhs broadcast over the middle dim
    ((0, 3), (0, 3), 1),  # empty
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_cross(burn, case, layout):
    sa, sb, dim = CASES[case]
    ta, a = burn.view_input(sample(sa, seed=2 * case), layout=layout)
    tb, b = burn.view_input(sample(sb, seed=2 * case + 1), layout=layout)
    burn.assert_close(ta.cross(tb, dim), _ref_cross(a, b, dim % len(sa)))


def test_cross_of_the_unit_vectors(burn):
    eye = np.eye(3)
    # x cross y = z, y cross z = x, z cross x = y, exactly
    burn.assert_close(burn.float(eye).cross(burn.float(eye[[1, 2, 0]]), 1), eye[[2, 0, 1]])


def test_cross_refuses_bad_arguments(burn):
    x = burn.float(np.ones((2, 3)))
    with pytest.raises(TensorCheckError, match=r"'cross'[\s\S]*dim 0 must have size 3"):
        x.cross(x, 0)
    with pytest.raises(TensorCheckError, match="cross"):
        x.cross(burn.float(np.ones((2, 2, 3))), 1)  # ranks differ
    with pytest.raises(TensorCheckError, match=r"dim 2 out of range"):
        x.cross(x, 2)
    with pytest.raises(TensorCheckError, match="cross"):
        burn.int(np.ones((2, 3), np.int64)).cross(burn.int(np.ones((2, 3), np.int64)), 1)
