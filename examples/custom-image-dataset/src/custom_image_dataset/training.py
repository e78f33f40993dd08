"""Training: Burn's `examples/custom-image-dataset/src/training.rs`, translated (SGD with
momentum 0.9, lr 0.02, 30 epochs, batch 128, accuracy and loss, CompactRecorder checkpoints,
summary)."""

from __future__ import annotations

import shutil
from pathlib import Path

from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLossConfig
from burn_optim import MomentumConfig, SgdConfig
from burn_optim.lr_scheduler import LrScheduler
from burn_record import CompactRecorder
from burn_train import ClassificationOutput, Learner, SupervisedTraining, TrainOutput
from burn_train.metric import AccuracyMetric, LossMetric

from .data import ClassificationBatch, ClassificationBatcher
from .model import Cnn


def forward_classification(model: Cnn, batch: ClassificationBatch) -> ClassificationOutput:
    output = model.forward(batch.images)
    loss = CrossEntropyLossConfig().init(output.device).forward(output, batch.targets)
    return ClassificationOutput(loss, output, batch.targets)


def _train_step(self: Cnn, batch: ClassificationBatch) -> TrainOutput:
    item = forward_classification(self, batch)
    return TrainOutput(self, item.loss.backward(), item)


def _valid_step(self: Cnn, batch: ClassificationBatch) -> ClassificationOutput:
    return forward_classification(self, batch)


# The optimizer of Burn's launcher (`examples/custom-image-dataset.rs`): SGD with momentum 0.9,
# dampening 0, no Nesterov. Plain `SgdConfig()` (no momentum) left the CNN near chance.
OPTIMIZER = SgdConfig(momentum=MomentumConfig(momentum=0.9, dampening=0.0, nesterov=False))


# Burn implements TrainStep/InferenceStep for Cnn; in Python they are methods.
Cnn.train_step = _train_step
Cnn.valid_step = _valid_step


def run(device, train_set, test_set, num_classes: int, artifact_dir: str,
        num_epochs: int = 30, batch_size: int = 128, lr: float | LrScheduler = 0.02,
        seed: int = 42, optimizer: SgdConfig = OPTIMIZER):  # fmt: skip
    """Train the CNN on `train_set`, validate on `test_set`; returns the `LearningResult`.
    `lr` is a constant rate (Burn's) or any `LrScheduler` (stepped once per iteration)."""
    shutil.rmtree(artifact_dir, ignore_errors=True)
    Path(artifact_dir).mkdir(parents=True)
    device.seed(seed)
    loader = lambda ds, d: (  # noqa: E731
        DataLoaderBuilder(ClassificationBatcher()).batch_size(batch_size).shuffle(seed)
        .num_workers(2).set_device(d).build(ds)
    )  # fmt: skip
    training = (
        SupervisedTraining(artifact_dir, loader(train_set, device), loader(test_set, device.inner()))
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .num_epochs(num_epochs)
        .summary()
    )
    result = training.launch(Learner(Cnn.new(num_classes, device), optimizer.init(), lr))
    result.model.save_file(f"{artifact_dir}/model", CompactRecorder())
    return result
