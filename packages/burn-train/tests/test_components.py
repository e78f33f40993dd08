"""Checkpoint strategies, early stopping, the event store, loggers, plots and key parsing."""

import math

import pytest
from burn_train import Aggregate, Direction, MetricEarlyStoppingStrategy, Split, StoppingCondition
from burn_train.checkpoint import (
    CheckpointingAction,
    ComposedCheckpointingStrategy,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from burn_train.learner import TrainingInterrupter
from burn_train.logger import FileMetricLogger, InMemoryMetricLogger
from burn_train.metric import LossMetric, MetricEntry, NumericEntry
from burn_train.metric.store import EventStore
from burn_train.renderer import Series, braille_plot
from burn_train.renderer._keys import parse_keys


def store_with(values, split=Split.VALID, name="Loss"):
    log = InMemoryMetricLogger()
    for epoch, v in values.items():
        log.log(MetricEntry(name, "", f"{v},1"), epoch, split)
    return EventStore([log])


def test_keep_last_n_and_metric_best_composed():
    store = store_with({1: 0.5, 2: 0.9, 3: 0.4, 4: 0.8})
    best = MetricCheckpointingStrategy(LossMetric(), Aggregate.MEAN, Direction.LOWEST, Split.VALID)
    assert [best.checkpointing(e, store) for e in (1, 2, 3, 4)] == [
        [CheckpointingAction.SAVE],
        [],
        [CheckpointingAction.SAVE, CheckpointingAction.delete(1)],
        [],
    ]
    composed = (
        ComposedCheckpointingStrategy.builder()
        .add(KeepLastNCheckpoints(1))
        .add(MetricCheckpointingStrategy("Loss"))
        .build()
    )
    actions = [repr(composed.checkpointing(e, store)) for e in (1, 2, 3, 4)]
    # epoch 1 stays as the best until 3 overtakes it; 2 goes once it is neither last nor best;
    # 3 (best) survives epoch 4
    assert actions == ["[Save]", "[Save]", "[Save, Delete(1), Delete(2)]", "[Save]"]
    with pytest.raises(ValueError):
        KeepLastNCheckpoints(0)


def test_early_stopping_directions_and_warmup():
    store = store_with({1: 10, 2: 20, 3: 15, 4: 12}, name="Accuracy")
    s = MetricEarlyStoppingStrategy(
        "Accuracy",
        Aggregate.MEAN,
        Direction.HIGHEST,
        Split.VALID,
        StoppingCondition.no_improvement_since(2),
    )
    assert [s.should_stop(e, store) for e in (1, 2, 3, 4)] == [False, False, False, True]
    w = MetricEarlyStoppingStrategy(
        "Accuracy", direction=Direction.HIGHEST, condition=StoppingCondition(1)
    ).with_warmup_epochs(3)
    assert [w.should_stop(e, store) for e in (1, 2, 3, 4)] == [False, False, False, True]
    missing = MetricEarlyStoppingStrategy("Nope")
    assert missing.should_stop(1, store) is False


def test_event_store_weighted_mean_and_file_roundtrip(tmp_path):
    log = FileMetricLogger(tmp_path)
    for line in ("90.0,30", "60.0,10", "N/A"):
        log.log(MetricEntry("Accuracy", "", line), 2, Split.TRAIN)
    log.end_epoch(2, Split.TRAIN)
    assert EventStore([log]).find_metric("Accuracy", 2, Aggregate.MEAN, Split.TRAIN) == 82.5
    assert EventStore([log]).find_metric("Accuracy", 1, Aggregate.MEAN, Split.TRAIN) is None
    assert log.epochs(Split.TRAIN) == 2 and log.metric_names(Split.TRAIN) == ["Accuracy"]
    assert NumericEntry.deserialize("nan") is None and NumericEntry.deserialize("x,y") is None


def test_interrupter_and_keys_and_plot():
    i = TrainingInterrupter()
    i.stop()
    assert i.should_stop() and i.get_message() is None
    assert parse_keys(b"\x1b[A\x1b[B\x1b[D\x1bOCx") == ["up", "down", "left", "right", "x"]
    text = braille_plot(
        [Series("t", "blue", [(0, 1.0), (1, math.nan), (2, 3.0)]), Series("v", "red", [(0, 2.0)])],
        30,
        5,
    )
    lines = text.plain.splitlines()
    assert len(lines) == 5 and lines[0].startswith("3┤") and lines[-1].startswith("1┤")
    assert all(len(line) == 30 for line in lines)
    assert "no data" in braille_plot([Series("t", "blue", [])], 30, 3).plain
