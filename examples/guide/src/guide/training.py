"""Training as in the book's guide: config, data loaders, Learner, checkpoints, final model."""

from __future__ import annotations

import shutil
from pathlib import Path

from burn_nn import CrossEntropyLossConfig, config
from burn_optim import AdamConfig
from burn_record import CompactRecorder
from burn_dataset import DataLoaderBuilder
from burn_train import ClassificationOutput, LearnerBuilder, TrainOutput
from burn_train.metric import AccuracyMetric, LossMetric

from .data import MnistBatch, MnistBatcher
from .model import Model, ModelConfig


def forward_classification(model: Model, images, targets) -> ClassificationOutput:
    output = model.forward(images)
    loss = CrossEntropyLossConfig().init(output.device).forward(output, targets)
    return ClassificationOutput(loss, output, targets)


def train_step(self: Model, batch: MnistBatch) -> TrainOutput:
    item = forward_classification(self, batch.images, batch.targets)
    return TrainOutput(self, item.loss.backward(), item)


def valid_step(self: Model, batch: MnistBatch) -> ClassificationOutput:
    return forward_classification(self, batch.images, batch.targets)


# The book implements TrainStep/ValidStep for Model; in Python they are methods.
Model.train_step = train_step
Model.valid_step = valid_step


@config
class TrainingConfig:
    """The book's fields; defaults tuned for the bundled digits data (see the README)."""

    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 12
    batch_size: int = 32
    num_workers: int = 2
    seed: int = 42
    learning_rate: float = 2.0e-3


def create_artifact_dir(artifact_dir: str) -> None:
    # Remove existing artifacts first to get an accurate learner summary.
    shutil.rmtree(artifact_dir, ignore_errors=True)
    Path(artifact_dir).mkdir(parents=True, exist_ok=True)


def train(
    artifact_dir: str,
    training_config: TrainingConfig,
    device,
    train_set,
    valid_set,
    capture: bool = False,
):
    """Train on `device` (an autodiff device) and save config.json and the model in artifact_dir.
    `capture`: each step a captured step (`LearnerBuilder.capture()`, a Fusion backend)."""
    create_artifact_dir(artifact_dir)
    training_config.save(f"{artifact_dir}/config.json")
    device.seed(training_config.seed)

    batcher = MnistBatcher()
    dataloader_train = (
        DataLoaderBuilder(batcher)
        .batch_size(training_config.batch_size)
        .shuffle(training_config.seed)
        .num_workers(training_config.num_workers)
        .set_device(device)
        .build(train_set)
    )
    # Validation runs on the inner backend: no autodiff graph is built.
    dataloader_valid = (
        DataLoaderBuilder(batcher)
        .batch_size(training_config.batch_size)
        .num_workers(training_config.num_workers)
        .set_device(device.inner())
        .build(valid_set)
    )

    builder = (
        LearnerBuilder(artifact_dir)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .devices([device])
        .num_epochs(training_config.num_epochs)
        .summary()
    )
    if capture:
        builder = builder.capture()
    learner = builder.build(
        training_config.model.init(device),
        training_config.optimizer.init(),
        training_config.learning_rate,
    )
    model_trained = learner.fit(dataloader_train, dataloader_valid)
    model_trained.save_file(f"{artifact_dir}/model", CompactRecorder())
    return model_trained
