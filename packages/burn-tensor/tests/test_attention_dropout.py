"""The attention dropout keep mask (`burn_tensor._attention_dropout`): its statistics over a
large call (the fraction kept is 1 - p within 3 sigma, no correlation between neighbouring
columns, rows, heads or seeds), that it is a pure function of (seed, bh, row, column) (a block
of a larger call is the same mask: tile order cannot matter), and the threshold's edges."""

from __future__ import annotations

import numpy as np
import pytest

from burn_tensor._attention_dropout import keep_mask, threshold

WORDS = np.array([1_000_003, 77])
SHAPE = (2, 8, 256, 256)  # 1 Mi weights


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_fraction_kept_is_one_minus_p_within_three_sigma(p):
    keep = keep_mask(WORDS, p, *SHAPE)
    n = keep.size
    assert abs(keep.mean() - (1 - p)) <= 3 * np.sqrt(p * (1 - p) / n)


def _corr(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(np.corrcoef(a, b)[0, 1])


def test_neighbours_are_uncorrelated():
    keep = keep_mask(WORDS, 0.5, *SHAPE)
    other = keep_mask(np.array([1_000_004, 77]), 0.5, *SHAPE)
    bound = 5 / np.sqrt(keep[..., 1:].size)
    for a, b in (
        (keep[..., 1:], keep[..., :-1]),  # columns
        (keep[:, :, 1:], keep[:, :, :-1]),  # rows
        (keep[:, 1:], keep[:, :-1]),  # heads
        (keep[1:], keep[:-1]),  # batch items
        (keep, other),  # seeds one apart
    ):
        assert abs(_corr(a, b)) < bound


def test_a_block_is_the_same_mask_as_in_a_larger_call():
    big = keep_mask(WORDS, 0.3, 2, 3, 100, 130)
    np.testing.assert_array_equal(keep_mask(WORDS, 0.3, 2, 3, 17, 45), big[:, :, :17, :45])


def test_threshold_edges():
    assert threshold(0.0) == 0 and threshold(0.5) == 2**31
    assert threshold(1.0 - 2**-40) == 2**32 - 1
    assert keep_mask(WORDS, 0.0, 1, 1, 8, 8).all()
