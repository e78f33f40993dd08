"""Tests written for mutants of the losses and Dropout that the suite let survive
(tools/mutation): boundaries of the configs, label smoothing of BCE, class checks with a batch
smaller than the class count. References are numpy float64."""

import numpy as np
import pytest
from burn_tensor import Distribution, Tensor

import burn_nn as nn
from burn_nn.loss import (
    BinaryCrossEntropyLoss,
    BinaryCrossEntropyLossConfig,
    CrossEntropyLoss,
    CrossEntropyLossConfig,
    KLDivLoss,
    SmoothL1Loss,
    SmoothL1LossConfig,
)


def T(a, d):
    return Tensor.from_data(np.asarray(a, dtype=np.float64), d)


def log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def test_cross_entropy_smoothing_one_is_allowed_and_spreads_every_target(dev64, rng):
    # alpha = 1 is inside the documented [0, 1]: every class gets 1 / C
    x = rng.normal(size=(3, 4))
    t = Tensor.from_ints([0, 2, 3], dev64)
    loss = CrossEntropyLossConfig(smoothing=1.0).init(dev64).forward(T(x, dev64), t)
    np.testing.assert_allclose(loss.numpy(), [-(log_softmax(x) / 4).sum(1).mean()], rtol=1e-12)


def test_cross_entropy_smoothing_zero_is_allowed_and_is_plain_cross_entropy(dev64, rng):
    x = rng.normal(size=(3, 4))
    t = Tensor.from_ints([0, 2, 3], dev64)
    loss = CrossEntropyLossConfig(smoothing=0.0).init(dev64).forward(T(x, dev64), t)
    np.testing.assert_allclose(loss.numpy(), [-log_softmax(x)[[0, 1, 2], [0, 2, 3]].mean()])


def test_cross_entropy_new_pads_the_given_index_only(dev64, rng):
    # Burn's CrossEntropyLoss::new(pad_index): rows whose target is the pad index add 0
    x = rng.normal(size=(3, 4))
    t = Tensor.from_ints([1, 2, 1], dev64)
    picked = log_softmax(x)[[0, 1, 2], [1, 2, 1]]
    padded = CrossEntropyLoss.new(1).forward(T(x, dev64), t)
    np.testing.assert_allclose(padded.numpy(), [-picked[1] / 3], rtol=1e-12)
    plain = CrossEntropyLoss.new().forward(T(x, dev64), t)
    np.testing.assert_allclose(plain.numpy(), [-picked.mean()], rtol=1e-12)


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_smoothing_and_dropout_outside_zero_one_are_refused(value):
    with pytest.raises(ValueError, match="smoothing must be in"):
        CrossEntropyLossConfig(smoothing=value).init()
    with pytest.raises(ValueError, match="prob must be in"):
        nn.DropoutConfig(value).init()


def test_cross_entropy_weights_must_be_positive_zero_included():
    with pytest.raises(ValueError, match="weights must all be > 0"):
        CrossEntropyLossConfig(weights=[1.0, 0.0, 2.0]).init()


def test_cross_entropy_targets_are_checked_against_the_class_count_not_the_batch(dev64, rng):
    # two rows, five classes: targets 4 and 3 are valid although they exceed the batch size
    x = rng.normal(size=(2, 5))
    loss = CrossEntropyLossConfig().init(dev64).forward(T(x, dev64), Tensor.from_ints([4, 3], dev64))
    np.testing.assert_allclose(
        loss.numpy(), [-log_softmax(x)[[0, 1], [4, 3]].mean()], rtol=1e-12
    )
    with pytest.raises(Exception, match="target class 5 out of range for dim 1 of size 5"):
        CrossEntropyLossConfig().init(dev64).forward(T(x, dev64), Tensor.from_ints([5, 0], dev64))


@pytest.mark.parametrize(
    "logits,targets",
    [((2, 3, 4), [0, 1]), ((2, 3), [[0], [1]]), ((2, 3), [0, 1, 2])],
    ids=["logits-rank-3", "targets-rank-2", "batch-differs"],
)
def test_cross_entropy_refuses_each_shape_mismatch(dev64, logits, targets):
    with pytest.raises(ValueError, match=r"expected logits \[batch, classes\]"):
        CrossEntropyLossConfig().init(dev64).forward(
            Tensor.zeros(list(logits), dev64), Tensor.from_ints(targets, dev64)
        )


def test_cross_entropy_with_smoothing_weights_and_padding_against_numpy(dev64, rng):
    # every option at once: smoothed targets weighted per class, padded rows dropped, the sum
    # divided by the weights of the targets (Burn's weighted cross entropy)
    a, c = 0.1, 4
    x = rng.normal(size=(5, c))
    t = np.array([0, 3, 1, 2, 3])
    w = np.array([1.0, 2.0, 0.5, 3.0])
    y = (np.eye(c)[t] * (1 - a) + a / c) * w
    rows = (y * log_softmax(x)).sum(1) * (t != 2)
    cfg = CrossEntropyLossConfig(smoothing=a, weights=list(w), pad_tokens=[2])
    got = cfg.init(dev64).forward(T(x, dev64), Tensor.from_ints(t, dev64))
    np.testing.assert_allclose(got.numpy(), [-rows.sum() / w[t].sum()], rtol=1e-12)
    unweighted = CrossEntropyLossConfig(smoothing=a, pad_tokens=[2]).init(dev64)
    rows = ((np.eye(c)[t] * (1 - a) + a / c) * log_softmax(x)).sum(1) * (t != 2)
    got = unweighted.forward(T(x, dev64), Tensor.from_ints(t, dev64))
    np.testing.assert_allclose(got.numpy(), [-rows.sum() / 5], rtol=1e-12)


@pytest.mark.parametrize("logits", [False, True])
def test_bce_label_smoothing_against_numpy(dev64, rng, logits):
    # targets y (1 - a) + a / 2 (Burn's BinaryCrossEntropyLoss smoothing)
    a = 0.2
    z = rng.normal(size=(4, 3))
    p = 1 / (1 + np.exp(-z))
    y = rng.integers(0, 2, size=(4, 3))
    ys = y * (1 - a) + a / 2
    ref = -(ys * np.log(p) + (1 - ys) * np.log(1 - p)).mean()
    cfg = BinaryCrossEntropyLossConfig(smoothing=a, logits=logits)
    got = cfg.init().forward(T(z if logits else p, dev64), Tensor.from_ints(y, dev64))
    np.testing.assert_allclose(got.numpy(), [ref], rtol=1e-9)


def test_dropout_zero_in_training_is_the_input_and_draws_no_random_numbers(autodiff):
    # Burn returns the input when prob == 0; drawing a mask anyway would shift every random
    # number drawn after it (the next layer's mask, a shuffle) for the same seed
    x = Tensor.from_data(np.arange(6.0).reshape(2, 3), autodiff)
    autodiff.seed(7)
    out = nn.DropoutConfig(0.0).init().forward(x)
    after = Tensor.random([4], Distribution.default(), autodiff).numpy()
    autodiff.seed(7)
    fresh = Tensor.random([4], Distribution.default(), autodiff).numpy()
    assert out is x
    np.testing.assert_array_equal(after, fresh)


def test_module_defaults_without_a_config(dev64, rng):
    # the modules' own field defaults, not only their configs', are Burn's: CE on logits,
    # BCE on probabilities, SmoothL1 with beta 1, KL on plain (not log) targets
    p = 1 / (1 + np.exp(-rng.normal(size=(4,))))
    y = np.array([0, 1, 1, 0])
    bce = BinaryCrossEntropyLoss().forward(T(p, dev64), Tensor.from_ints(y, dev64))
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    np.testing.assert_allclose(bce.numpy(), [ref], rtol=1e-12)
    x = rng.normal(size=(3, 4))
    ce = CrossEntropyLoss().forward(T(x, dev64), Tensor.from_ints([0, 3, 1], dev64))
    np.testing.assert_allclose(ce.numpy(), [-log_softmax(x)[[0, 1, 2], [0, 3, 1]].mean()])
    r = np.array([0.5, 1.5, 3.0])
    sl1 = SmoothL1Loss().forward_no_reduction(T(r, dev64), T(np.zeros(3), dev64))
    np.testing.assert_allclose(sl1.numpy(), [0.125, 1.0, 2.5], rtol=1e-12)  # beta 1
    inp = log_softmax(rng.normal(size=(2, 3)))
    tgt = np.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    kl = KLDivLoss().forward_no_reduction(T(inp, dev64), T(tgt, dev64))
    ref = np.where(tgt > 0, tgt * (np.log(np.where(tgt > 0, tgt, 1)) - inp), 0)
    np.testing.assert_allclose(kl.numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_smooth_l1_beta_zero_is_l1_and_beta_two_against_numpy(dev64, rng, beta):
    p, y = rng.normal(size=(3, 4)) * 3, rng.normal(size=(3, 4))
    r = np.abs(p - y)
    ref = r if beta == 0 else np.where(r < beta, 0.5 * r**2 / beta, r - 0.5 * beta)
    got = SmoothL1LossConfig(beta=beta).init().forward_no_reduction(T(p, dev64), T(y, dev64))
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_kl_div_gradient_through_a_zero_target_is_finite(autodiff, rng):
    # targets that carry a gradient (distillation): at t = 0 the loss is 0 by definition and
    # so is its gradient; d/dt [t (log t - x)] = log t + 1 - x elsewhere
    inp = log_softmax(rng.normal(size=(2, 3)))
    tgt = np.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    t = T(tgt, autodiff).require_grad()
    loss = KLDivLoss().forward_no_reduction(T(inp, autodiff), t).sum()
    g = t.grad(loss.backward()).numpy()
    ref = np.where(tgt > 0, np.log(np.where(tgt > 0, tgt, 1)) + 1 - inp, 0.0)
    np.testing.assert_allclose(g, ref, rtol=1e-12)


def test_dropout_one_is_allowed_and_zeroes_everything_in_training(autodiff):
    drop = nn.DropoutConfig(1.0).init()
    out = drop.forward(Tensor.from_data(np.arange(1.0, 7.0).reshape(2, 3), autodiff))
    np.testing.assert_array_equal(out.inner().numpy(), np.zeros((2, 3)))
