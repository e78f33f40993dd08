"""The example's training: Burn's `training.rs`, translated.

The guide's model and batcher (as Burn's example imports them from its guide), the bundled
digits instead of MNIST (offline), a composed cosine + linear warm-up schedule, early stopping,
and `MyCustomLearningStrategy`: the epoch loop written by hand against the Learner's
components (`lr_step`, `train_step`, `optimizer_step`, the event processor, the checkpointer).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from burn_dataset import DataLoaderBuilder, PartialDataset
from burn_nn import config
from burn_optim import AdamConfig
from burn_optim.lr_scheduler import (
    ComposedLrSchedulerConfig,
    CosineAnnealingLrSchedulerConfig,
    LinearLrSchedulerConfig,
)
from burn_record import CompactRecorder, NamedMpkFileRecorder
from burn_train import (
    Aggregate,
    Direction,
    Learner,
    LearnerEvent,
    LearnerItem,
    MetricEarlyStoppingStrategy,
    Split,
    StoppingCondition,
    SupervisedLearningStrategy,
    SupervisedTraining,
    TrainingStrategy,
)
from burn_train.metric import AccuracyMetric, LossMetric
from guide.data import MnistBatcher
from guide.model import ModelConfig

import guide.training  # noqa: F401 - gives the guide's Model its train_step/valid_step

log = logging.getLogger("burn_train")


@config
class MnistTrainingConfig:
    """Burn's `MnistTrainingConfig` (5 epochs, batch 64, seed 42, lr 1e-4 in Burn; the
    schedule below sets the actual rates)."""

    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 5
    batch_size: int = 64
    num_workers: int = 2
    seed: int = 42
    lr: float = 1e-4


class MyCustomLearningStrategy(SupervisedLearningStrategy):
    """One device, one loader, every step logged: Burn's `MyCustomLearningStrategy`."""

    def __init__(self, device) -> None:
        self.device = device

    def fit(self, training_components, learner, dataloader_train, dataloader_valid, starting_epoch):
        dataloader_train = dataloader_train.to_device(self.device)
        dataloader_valid = dataloader_valid.to_device(self.device.inner())
        learner.fork(self.device)
        event_processor = training_components.event_processor
        checkpointer = training_components.checkpointer
        interrupter = training_components.interrupter
        num_epochs = training_components.num_epochs

        for epoch in range(starting_epoch, num_epochs + 1):
            log.info("Executing training step for epoch %d", epoch)
            iterator = iter(dataloader_train)
            for iteration, item in enumerate(iterator, 1):
                learner.lr_step()
                log.info("Iteration %d of my custom learning strategy", iteration)
                progress = iterator.progress()
                item = learner.train_step(item)
                learner.optimizer_step(item.grads)
                item = LearnerItem(
                    item.item, progress, epoch, num_epochs, iteration, learner.lr_current()
                )
                event_processor.process_train(LearnerEvent.ProcessedItem(item))
                if interrupter.should_stop():
                    log.info("Training interrupted: %s", interrupter.get_message() or "unknown")
                    break
            event_processor.process_train(LearnerEvent.EndEpoch(epoch))

            model_valid = learner.model.valid()
            iterator = iter(dataloader_valid)
            for iteration, item in enumerate(iterator, 1):
                progress = iterator.progress()
                item = model_valid.valid_step(item)
                item = LearnerItem(item, progress, epoch, num_epochs, iteration, None)
                event_processor.process_valid(LearnerEvent.ProcessedItem(item))
            event_processor.process_valid(LearnerEvent.EndEpoch(epoch))

            if checkpointer is not None:
                checkpointer.checkpoint(learner, epoch, training_components.event_store)
        return learner.model, event_processor


def create_artifact_dir(artifact_dir: str) -> None:
    # Remove existing artifacts first to get an accurate learner summary.
    shutil.rmtree(artifact_dir, ignore_errors=True)
    Path(artifact_dir).mkdir(parents=True, exist_ok=True)


def run(device, dataset, artifact_dir: str, num_epochs: int = 5, limit: int | None = None):
    """Train with the custom strategy on `dataset` (items with `image` and `label`); the first
    part trains, the rest validates. Returns the `LearningResult`."""
    create_artifact_dir(artifact_dir)
    config_ = MnistTrainingConfig(ModelConfig(10, 1024), AdamConfig(), num_epochs=num_epochs)
    device.seed(config_.seed)
    model = config_.model.init(device)
    n = len(dataset) if limit is None else min(limit, len(dataset))
    split = n * 5 // 6
    dataset_train = PartialDataset(dataset, 0, split)
    dataset_valid = PartialDataset(dataset, split, n)

    # Burn's schedule (the product of a cosine, a linear warm-up and a linear decay) sized for
    # 15,000 MNIST images: 2000/2000/10000 iterations. Here the same shape over this run's
    # iterations, so the small digits set is past its warm-up within the first epoch.
    total = config_.num_epochs * -(-len(dataset_train) // config_.batch_size)
    lr_scheduler = (
        ComposedLrSchedulerConfig()
        .cosine(CosineAnnealingLrSchedulerConfig(1.0, total))
        .linear(LinearLrSchedulerConfig(1e-8, 1.0, max(total // 10, 1)))  # warm-up
        .linear(LinearLrSchedulerConfig(1e-2, 1e-6, total))
    )
    early_stopping = MetricEarlyStoppingStrategy(
        LossMetric(), Aggregate.MEAN, Direction.LOWEST, Split.VALID,
        StoppingCondition.NoImprovementSince(n_epochs=5),
    )  # fmt: skip
    batcher = MnistBatcher()
    dataloader_train = (
        DataLoaderBuilder(batcher).batch_size(config_.batch_size).shuffle(config_.seed)
        .num_workers(config_.num_workers).build(dataset_train)
    )  # fmt: skip
    dataloader_valid = (
        DataLoaderBuilder(batcher).batch_size(config_.batch_size).shuffle(config_.seed)
        .num_workers(config_.num_workers).build(dataset_valid)
    )  # fmt: skip

    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metrics((AccuracyMetric(), LossMetric()))
        .with_file_checkpointer(CompactRecorder())
        .early_stopping(early_stopping)
        .num_epochs(config_.num_epochs)
        .summary()
        .with_training_strategy(TrainingStrategy.Custom(MyCustomLearningStrategy(device)))
    )
    result = training.launch(Learner(model, config_.optimizer.init(), lr_scheduler.init()))
    result.model.save_file(f"{artifact_dir}/model", NamedMpkFileRecorder())
    return result
