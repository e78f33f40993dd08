"""Conformance: `Tensor.unfold(dim, size, step)` (Burn's `unfold`, torch.Tensor.unfold): sliding
windows along one dim, the window as a new last dim, for Float and Int on every input layout."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Float, Int, TensorCheckError

from .._ctx import LAYOUTS, sample


def _ref_unfold(x: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    """Windows built by explicit slicing: out[..., w, ..., j] = x[..., w * step + j, ...]."""
    n = x.shape[dim]
    count = 0 if n < size else (n - size) // step + 1
    moved = np.moveaxis(x, dim, -1)  # [..., n]
    wins = [moved[..., w * step : w * step + size] for w in range(count)]
    out = np.stack(wins, axis=-2) if wins else np.zeros(moved.shape[:-1] + (0, size), x.dtype)
    return np.moveaxis(out, -2, dim)  # the window count takes the place of `dim`


CASES = [
    # (shape, dim, size, step)
    ((7,), 0, 2, 2),
    ((7,), 0, 3, 1),
    ((2, 9), 1, 4, 3),
    ((5, 3), 0, 2, 4),  # step larger than size: gaps between windows
    ((2, 3, 6), 1, 3, 1),  # window covers the whole dim: one window
    ((2, 3, 6), -1, 6, 2),
    ((2, 2, 4), 2, 5, 1),  # window longer than the dim: no window
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_unfold(burn, case, kind, layout):
    shape, dim, size, step = CASES[case]
    t, x = burn.view_input(sample(shape, "int", seed=case), kind, layout)
    expected = _ref_unfold(x, dim % len(shape), size, step)
    burn.assert_result(t.unfold(dim, size, step), expected, kind)


def test_unfold_refuses_bad_windows(burn):
    t = burn.float(np.arange(6.0))
    for size, step in ((0, 1), (2, 0)):
        with pytest.raises(TensorCheckError, match="unfold"):
            t.unfold(0, size, step)
    with pytest.raises(TensorCheckError, match="unfold"):
        burn.bool([True, False]).unfold(0, 1, 1)
