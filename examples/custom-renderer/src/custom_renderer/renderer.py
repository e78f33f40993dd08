"""`CustomRenderer` and the run: Burn's `examples/custom-renderer/src/lib.rs`, translated."""

from __future__ import annotations

import sys
from typing import IO

from burn_dataset import DataLoaderBuilder
from burn_optim import AdamConfig
from burn_train import EvaluatorBuilder, Learner, SupervisedTraining
from burn_train.metric import AccuracyMetric, LossMetric
from burn_train.renderer import (
    EvaluationName,
    EvaluationProgress,
    MetricsRenderer,
    MetricState,
    TrainingProgress,
)
from guide.data import MnistBatcher
from guide.model import ModelConfig

import guide.training  # noqa: F401 - gives the guide's Model its train_step/valid_step


class CustomRenderer(MetricsRenderer):
    """Prints each progress update as Rust's `dbg!(item)` would, and ignores metric values
    (Burn's example). `lines` counts what it printed per kind, for the tests."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self.lines = {"train": 0, "valid": 0, "test": 0}

    def update_train(self, state: MetricState) -> None:
        pass

    def update_valid(self, state: MetricState) -> None:
        pass

    def render_train(self, item: TrainingProgress) -> None:
        self._dbg("train", item)

    def render_valid(self, item: TrainingProgress) -> None:
        self._dbg("valid", item)

    def update_test(self, name: EvaluationName, state: MetricState) -> None:
        pass

    def render_test(self, item: EvaluationProgress) -> None:
        self._dbg("test", item)

    def _dbg(self, kind: str, item: object) -> None:
        self.lines[kind] += 1
        print(f"[renderer.py] {kind}: {item!r}", file=self.out)


def run(device, train_set, test_set, artifact_dir: str, num_epochs: int = 10, out=None):
    """Train the guide's model with `CustomRenderer`, then evaluate on `test_set` with it.
    Returns the renderer."""
    seed, batch_size = 42, 64
    device.seed(seed)
    model = ModelConfig(10, 1024).init(device)
    batcher = MnistBatcher()
    # batches for training on the autodiff device, for validation and test on its inner one
    dataloader_train = (
        DataLoaderBuilder(batcher).batch_size(batch_size).shuffle(seed).num_workers(2)
        .set_device(device).build(train_set)
    )  # fmt: skip
    dataloader_test = (
        DataLoaderBuilder(batcher).batch_size(batch_size).shuffle(seed).num_workers(2)
        .set_device(device.inner()).build(test_set)
    )  # fmt: skip
    renderer = CustomRenderer(out)
    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_test)
        .metrics((AccuracyMetric(), LossMetric()))
        .num_epochs(num_epochs)
        .renderer(renderer)
        .with_application_logger(None)
    )
    _interrupter = training.interrupter()  # noqa: F841 - as Burn's: a handle to stop the run
    # The book's 0.20 learning rate for this example: Adam at a constant 1e-4 (x10 here: the
    # bundled digits are 40x fewer than MNIST).
    result = training.launch(Learner(model, AdamConfig().init(), 1e-3))
    evaluator = (
        EvaluatorBuilder(artifact_dir).metrics((AccuracyMetric(), LossMetric()))
        .renderer(result.renderer).with_application_logger(None).build(result.model)
    )  # fmt: skip
    evaluator.eval("digits-test", dataloader_test)
    return renderer, evaluator



