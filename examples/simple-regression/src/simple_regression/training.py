"""Training with the Learner as in Burn's example: LossMetric, CompactRecorder checkpoints."""

from __future__ import annotations

import shutil
from pathlib import Path

from burn_dataset import DataLoaderBuilder
from burn_nn import config
from burn_optim import AdamConfig
from burn_record import CompactRecorder
from burn_train import LearnerBuilder
from burn_train.metric import LossMetric

from .dataset import HousingBatcher
from .model import RegressionModel, RegressionModelConfig


@config
class ExpConfig:
    """Burn's `ExpConfig` (100 epochs, seed 1337, Adam, lr 1e-3, batch 256)."""

    model: RegressionModelConfig
    optimizer: AdamConfig
    num_epochs: int = 100
    num_workers: int = 0
    seed: int = 1337
    batch_size: int = 256
    learning_rate: float = 1.0e-3


def run(artifact_dir: str, config: ExpConfig, device, train_set, valid_set) -> RegressionModel:
    """Train on `device` (autodiff); writes config.json, the Learner's artifacts and model.mpk.gz."""
    shutil.rmtree(artifact_dir, ignore_errors=True)
    Path(artifact_dir).mkdir(parents=True, exist_ok=True)
    config.save(f"{artifact_dir}/config.json")
    device.seed(config.seed)

    batcher = HousingBatcher()
    dataloader_train = (
        DataLoaderBuilder(batcher)
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .set_device(device)
        .build(train_set)
    )
    dataloader_valid = (
        DataLoaderBuilder(batcher)
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .set_device(device.inner())
        .build(valid_set)
    )
    learner = (
        LearnerBuilder(artifact_dir)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .devices([device])
        .num_epochs(config.num_epochs)
        .summary()
        .build(config.model.init(device), config.optimizer.init(), config.learning_rate)
    )
    model_trained = learner.fit(dataloader_train, dataloader_valid)
    model_trained.save_file(f"{artifact_dir}/model", CompactRecorder())
    return model_trained
