"""CharErrorRate, WordErrorRate, PerplexityMetric and DiceMetric against hand-derived values
(Burn's `metric::{cer, wer, perplexity, vision::dice}` rules, pad tokens included)."""

import math

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_train.metric import (
    CerInput,
    CharErrorRate,
    DiceInput,
    DiceMetric,
    DiceMetricConfig,
    MetricMetadata,
    PerplexityInput,
    PerplexityMetric,
    WerInput,
    WordErrorRate,
    edit_distance,
)

META = MetricMetadata.fake()
DEVICE = NdArray().device()


def ints(rows):
    return Tensor.from_data(np.array(rows, np.int64), DEVICE)


def test_edit_distance_classics():
    assert edit_distance(list("kitten"), list("sitting")) == 3
    assert edit_distance(list("flaw"), list("lawn")) == 2
    assert edit_distance([], [1, 2]) == 2 and edit_distance([1, 2], []) == 2


def test_cer_with_and_without_pad():
    outputs, targets = [[1, 2, 3, 0], [5, 6, 0, 0]], [[1, 3, 3, 0], [5, 6, 7, 0]]
    m = CharErrorRate()
    e = m.update(CerInput(ints(outputs), ints(targets)), META)
    assert m.value() == pytest.approx(100 * 2 / 8)  # 1 substitution + 1 substitution over 8
    assert e.formatted == "epoch 25.00 % - batch 25.00 %" and m.name() == "CER"
    m = CharErrorRate().with_pad_token(0)
    m.update(CerInput(ints(outputs), ints(targets)), META)
    assert m.value() == pytest.approx(100 * 2 / 6)  # 1 substitution + 1 deletion over 3 + 3
    # Burn's rule: the first n tokens, n = number of non-pad tokens (a middle pad is kept)
    m.update(CerInput(ints([[1, 0, 2]]), ints([[1, 2, 0]])), META)
    assert m.value() == pytest.approx(100 * 1 / 2)  # [1, 0] vs [1, 2]
    assert m.running_value() == pytest.approx((100 * 2 / 6 * 2 + 50.0 * 1) / 3)  # batch-weighted


def test_wer_stops_at_the_first_pad():
    m = WordErrorRate().with_pad_token(0)
    m.update(WerInput(ints([[7, 0, 8]]), ints([[7, 9, 0]])), META)
    assert m.value() == pytest.approx(50.0) and m.name() == "WER"  # [7] vs [7, 9]
    m = WordErrorRate()
    m.update(WerInput(ints([[7, 0, 8]]), ints([[7, 9, 0]])), META)
    assert m.value() == pytest.approx(100 * 2 / 3)
    m.update(WerInput(ints([[0, 0]]), ints([[0, 0]])), META)
    assert m.value() == 0.0
    with pytest.raises(ValueError, match=r"WordErrorRate: .* got \[1, 3\] and \[1, 2\]"):
        m.update(WerInput(ints([[1, 2, 3]]), ints([[1, 2]])), META)


def test_perplexity_and_its_pad_token():
    logits = Tensor.from_data(np.array([[0.0, math.log(3.0)], [0.0, 0.0]], np.float32), DEVICE)
    m = PerplexityMetric()
    e = m.update(PerplexityInput(logits, ints([1, 0])), META)
    expected = math.exp(-(math.log(0.75) + math.log(0.5)) / 2)  # softmax: [.25, .75], [.5, .5]
    assert m.value() == pytest.approx(expected, rel=1e-6) and m.name() == "Perplexity"
    assert e.serialize.endswith(",2")  # two tokens
    m.update(PerplexityInput(np.array([[0.0, 0.0, 0.0, 0.0]]), [2]), META)
    assert m.value() == pytest.approx(4.0)
    nll = -(math.log(0.75) + math.log(0.5) + math.log(0.25))
    assert m.running_value() == pytest.approx(math.exp(nll / 3), rel=1e-6)  # the epoch's
    p = PerplexityMetric().with_pad_token(0)
    p.update(PerplexityInput(logits, ints([1, 0])), META)
    assert p.value() == pytest.approx(1 / 0.75, rel=1e-6)  # the padded row left out
    with pytest.raises(ValueError, match=r"targets must be in 0..1"):
        p.update(PerplexityInput(logits, ints([1, 2])), META)


def _masks():
    out = np.zeros((1, 2, 2, 2), np.int64)
    tgt = np.zeros((1, 2, 2, 2), np.int64)
    out[0, 1] = [[1, 1], [0, 0]]
    tgt[0, 1] = [[1, 0], [1, 0]]
    out[0, 0], tgt[0, 0] = 1 - out[0, 1], 1 - tgt[0, 1]
    return ints(out), ints(tgt)


def test_dice_background_excluded_by_default():
    out, tgt = _masks()
    m = DiceMetric()
    e = m.update(DiceInput(out, tgt), META)
    assert m.name() == "4D Dice Metric"
    assert m.value() == pytest.approx((2 * 1 + 1e-7) / (2 + 2 + 1e-7))  # class 1 only
    assert e.formatted == "epoch 0.5000 - batch 0.5000"
    m = DiceMetric(config=DiceMetricConfig(epsilon=0.0, include_background=True))
    m.update(DiceInput(out, tgt), META)
    assert m.value() == pytest.approx(2 * 2 / 8)  # both classes: intersections 1 + 1
    empty = ints(np.zeros((1, 2, 2, 2), np.int64))
    m = DiceMetric()
    m.update(DiceInput(empty, empty), META)
    assert m.value() == pytest.approx(1.0)  # epsilon / epsilon: two empty masks agree
    with pytest.raises(ValueError, match=r"same shape, got \[1, 2, 2, 2\] and \[1, 2, 2\]"):
        m.update(DiceInput(out, ints(np.zeros((1, 2, 2), np.int64))), META)
    with pytest.raises(ValueError, match=r"4D Dice Metric: expected rank-4 masks, got \[2, 2, 2\]"):
        m.update(DiceInput(ints(np.zeros((2, 2, 2))), ints(np.zeros((2, 2, 2)))), META)
    with pytest.raises(ValueError, match="at least 2 classes"):
        DiceMetric(3, DiceMetricConfig(include_background=True)).update(
            DiceInput(ints(np.zeros((1, 1, 2))), ints(np.zeros((1, 1, 2)))), META
        )
