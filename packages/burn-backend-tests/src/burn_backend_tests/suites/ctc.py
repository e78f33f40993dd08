"""Conformance: `module.ctc_loss` (the backend op `ctc_loss`) against the float64 per-state
recursion of `reference.ctc`, over ragged lengths, repeated labels, empty targets, another
blank index and impossible alignments (+inf)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import TensorCheckError, module
from burn_tensor import activation as A

from .._ctx import sample
from ..reference import ctc as ref

TARGETS = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [2, 2, 2, 2], [3, 0, 0, 0]])
INPUT_LENGTHS = np.array([10, 7, 7, 4])
TARGET_LENGTHS = np.array([4, 2, 4, 0])


def _log_probs(burn, t, n, c, seed, layout="contiguous"):
    x, _ = burn.view_input(sample((t, n, c), "any", seed), layout=layout)
    lp = A.log_softmax(x, 2)
    return lp, lp.numpy().astype(np.float64)


@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
def test_ctc_loss(burn, layout):
    lp, lpr = _log_probs(burn, 10, 4, 5, 1, layout)
    got = module.ctc_loss(
        lp,
        burn.int(TARGETS),
        burn.int(INPUT_LENGTHS),
        burn.int(TARGET_LENGTHS),
        0,
    )
    want = ref.ctc_loss(lpr, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, 0)
    burn.assert_close(got, want, burn.loose)


def test_ctc_loss_other_blank_and_impossible(burn):
    lp, lpr = _log_probs(burn, 6, 3, 4, 2)
    tg = np.array([[0, 1, 0], [1, 1, 1], [2, 0, 2]])
    il, tl = np.array([6, 4, 6]), np.array([3, 3, 2])  # sample 1 needs 3 + 2 steps: 4 is short
    got = module.ctc_loss(lp, burn.int(tg), burn.int(il), burn.int(tl), 3)
    want = ref.ctc_loss(lpr, tg, il, tl, 3)
    assert np.isinf(want[1]) and want[1] > 0
    burn.assert_close(got, want, burn.loose)


def test_ctc_loss_refusals(burn):
    lp, _ = _log_probs(burn, 4, 2, 3, 3)
    ones = burn.int(np.array([4, 4]))
    with pytest.raises(TensorCheckError, match="not the blank 0"):
        module.ctc_loss(lp, burn.int(np.array([[0], [1]])), ones, burn.int(np.array([1, 1])))
    with pytest.raises(TensorCheckError, match=r"input_lengths\[1\] = 5 not in \[1, 4\]"):
        module.ctc_loss(
            lp, burn.int(np.ones((2, 1))), burn.int(np.array([4, 5])), ones.div_scalar(4)
        )
    with pytest.raises(TensorCheckError, match="blank 3 out of range"):
        module.ctc_loss(lp, burn.int(np.ones((2, 1))), ones, ones.div_scalar(4), 3)
