"""`LearnerBuilder.capture()`: the Learner's steps run as one captured step on
Autodiff(Fusion(OpenCl)) (PoCL in CI) and train the same model, bit for bit, as eager steps;
the losses the metrics read are each step's own."""

from __future__ import annotations

import io

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_fusion import Fusion
from burn_opencl import OpenCl
from burn_optim import AdamConfig
from burn_train import LearnerBuilder
from burn_train.metric import AccuracyMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer
from real_parts import init_model, loaders

AD = Autodiff(Fusion(OpenCl()))


def _fit(path, capture: bool):
    b = (
        LearnerBuilder(path)
        .metric_train_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .num_epochs(2)
        .read_every(4)
    )
    if capture:
        b = b.capture()
    train, valid = loaders(None, backend=AD)
    learner = b.build(init_model(0, AD), AdamConfig().init(), 1e-2)
    model = learner.fit(train, valid)
    # the targets in each step's ClassificationOutput are an input of the step: the accuracy
    # shows whether they are this step's
    losses = "".join(
        (path / "train" / f"epoch-{e}" / f"{m}.log").read_text()
        for e in (1, 2)
        for m in ("Loss", "Accuracy")
    )
    params = {p: v.val().numpy() for p, v in model.named_parameters()}
    return params, losses, learner


def test_captured_learner_trains_the_eager_model_bit_for_bit(tmp_path):
    eager, eager_losses, _ = _fit(tmp_path / "eager", False)
    got, got_losses, learner = _fit(tmp_path / "captured", True)
    assert got_losses == eager_losses  # deferred reads saw each step's own loss and targets
    assert len(set(got_losses.split())) > 3
    for k in eager:
        assert got[k].tobytes() == eager[k].tobytes(), k
    stats = learner.capture_stats
    assert stats["replays"] >= 8 and stats["eager_reasons"] == [], stats


def test_capture_refuses_what_it_does_not_cover(tmp_path):
    b = LearnerBuilder(tmp_path).capture().grads_accumulation(2)
    with pytest.raises(ValueError, match="capture\\(\\) covers a single-device step"):
        b.build(init_model(0, AD), AdamConfig().init(), 1e-2)
