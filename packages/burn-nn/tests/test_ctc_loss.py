"""CTCLoss (Burn 0.21): hand-derived values, reductions, zero_infinity and its gradients.

The op itself is checked on every backend against a float64 recursion by the conformance suite
(`burn_backend_tests/suites/ctc.py`) and by finite differences (burn-autodiff's surface rows);
it matched torch 2.13's `ctc_loss` (values and gradients, 3e-15) when written.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import CTCLossConfig, CtcLoss
from burn_nn.loss import Reduction
from burn_tensor import Tensor
from burn_tensor import activation as A

AD = Autodiff(NdArray(float_dtype="float64")).device()


def ints(x):
    return Tensor.from_ints(np.asarray(x), AD)


def test_uniform_scores_count_alignments():
    # 2 classes (blank 0, label 1), uniform: every path has probability 2^-T
    lp = A.log_softmax(Tensor.zeros([4, 3, 2], AD), 2)
    tg = ints([[1, 1], [1, 0], [1, 1]])
    il, tl = ints([4, 4, 2]), ints([2, 1, 2])
    loss = CTCLossConfig().init().forward(lp, tg, il, tl).numpy()
    # count the 4-step paths that collapse (merge runs, drop blanks) to "1 1" and to "1"
    two_ones = sum(
        1
        for p in np.ndindex(2, 2, 2, 2)
        if [k for i, k in enumerate(p) if k and (i == 0 or p[i - 1] != k)] == [1, 1]
    )
    one = sum(
        1
        for p in np.ndindex(2, 2, 2, 2)
        if [k for i, k in enumerate(p) if k and (i == 0 or p[i - 1] != k)] == [1]
    )
    np.testing.assert_allclose(loss[:2], [-math.log(two_ones / 16), -math.log(one / 16)])
    assert math.isinf(loss[2]) and loss[2] > 0  # "1 1" cannot fit in 2 steps


def test_reductions_and_zero_infinity():
    rng = np.random.default_rng(1)
    x = Tensor.from_data(rng.normal(size=(6, 3, 4)), AD).require_grad()
    tg, il, tl = ints([[1, 2, 3], [2, 2, 0], [3, 3, 3]]), ints([6, 5, 4]), ints([3, 2, 3])
    plain = CTCLossConfig().init().forward(A.log_softmax(x, 2), tg, il, tl).numpy()
    assert math.isinf(plain[2])  # 3 3 3 needs 5 steps
    loss = CtcLoss(zero_infinity=True)
    per = loss.forward(A.log_softmax(x, 2), tg, il, tl)
    np.testing.assert_allclose(per.numpy(), [plain[0], plain[1], 0.0])
    mean = loss.forward_with_reduction(A.log_softmax(x, 2), tg, il, tl)
    np.testing.assert_allclose(mean.numpy(), [(plain[0] / 3 + plain[1] / 2) / 3])
    total = loss.forward_with_reduction(A.log_softmax(x, 2), tg, il, tl, Reduction.Sum)
    np.testing.assert_allclose(total.numpy(), [plain[0] + plain[1]])
    g = x.grad(mean.backward()).numpy()
    assert np.all(np.isfinite(g)) and np.all(g[:, 2] == 0.0)  # the zeroed sample: no gradient
    with pytest.raises(ValueError, match="Mean, Auto or Sum"):
        loss.forward_with_reduction(A.log_softmax(x, 2), tg, il, tl, "BatchMean")
    with pytest.raises(ValueError, match="blank must be >= 0"):
        CTCLossConfig(blank=-1).init()
