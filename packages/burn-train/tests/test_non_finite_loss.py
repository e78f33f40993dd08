"""A NaN or infinite loss stops the learner naming the epoch and iteration (issue 21: with a NaN
learning rate the guide trained to a model of NaNs without a word); an option keeps going."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import real_parts as parts
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_optim import AdamConfig
from burn_train import LearnerBuilder, NonFiniteLossError
from real_parts import BATCH, N_TRAIN, Batcher, builder, init_model, params


def _loaders_with_a_nan_input(item: int):
    """The usual loaders, with the features of training item `item` set to NaN (in order: it
    lands in batch item // BATCH + 1 of every epoch)."""
    items = parts.make_items(N_TRAIN, 0)
    x, y = items[item]
    items[item] = (np.full_like(x, np.nan), y)
    train = DataLoaderBuilder(Batcher()).batch_size(BATCH).set_device(parts.AD.device())
    _, valid = parts.loaders()
    return train.build(InMemDataset(items)), valid


def test_a_nan_loss_stops_training_naming_epoch_and_iteration(tmp_path):
    train, valid = _loaders_with_a_nan_input(20)  # batch 2
    model = init_model()
    learner = builder(tmp_path, epochs=2).build(model, AdamConfig().init(), parts.scheduler())
    with pytest.raises(
        NonFiniteLossError, match="training loss is nan at epoch 1, iteration 2"
    ) as e:
        learner.fit(train, valid)
    assert math.isnan(e.value.value)
    assert (e.value.epoch, e.value.iteration) == (1, 2)
    # the model handed back is the one after iteration 1: finite, and not updated by the bad step
    trained = params(e.value.model)
    assert all(np.isfinite(v).all() for v in trained.values())
    assert any(not np.array_equal(trained[k], v) for k, v in params(model).items())
    assert "stop_on_non_finite_loss(False)" in str(e.value)


def test_the_option_keeps_going_with_a_warning(tmp_path, caplog):
    train, valid = _loaders_with_a_nan_input(20)
    learner = (
        builder(tmp_path, epochs=1)
        .stop_on_non_finite_loss(False)
        .build(init_model(), AdamConfig().init(), parts.scheduler())
    )
    with caplog.at_level(logging.WARNING, logger="burn_train"):
        model = learner.fit(train, valid)
    assert learner.epochs_completed == 1
    assert "The training loss is nan at epoch 1, iteration 2 (continuing" in caplog.text
    # what stopping prevents: one step with NaN gradients ruins every parameter
    assert all(np.isnan(v).all() for v in params(model).values())


@pytest.mark.parametrize("lr", [math.nan, math.inf, -1.0])
def test_a_bad_learning_rate_is_refused_at_build(tmp_path, lr):
    # burn_optim's ConstantLr refuses it (a ConfigError, which is a ValueError)
    with pytest.raises(ValueError, match=f"ConstantLr: learning rate must be .* >= 0.0, got {lr}"):
        LearnerBuilder(tmp_path).build(init_model(), AdamConfig().init(), lr)


class _BrokenScheduler:
    def __init__(self):
        self.i = 0

    def step(self):
        self.i += 1
        return 1e-2 if self.i < 9 else math.nan


def test_a_scheduler_returning_nan_stops_training_where_it_happens(tmp_path):
    train, valid = parts.loaders()
    learner = builder(tmp_path, epochs=2).build(
        init_model(), AdamConfig().init(), _BrokenScheduler()
    )
    with pytest.raises(NonFiniteLossError, match="learning rate of nan at epoch 2, iteration 3"):
        learner.fit(train, valid)
