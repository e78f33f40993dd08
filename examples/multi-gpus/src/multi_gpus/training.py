"""Data-parallel training with Burn 0.20's `SupervisedTraining` and a `TrainingStrategy`."""

from __future__ import annotations

import shutil
from pathlib import Path

from burn_dataset import DataLoaderBuilder
from burn_nn import config
from burn_optim import AdamConfig
from burn_record import CompactRecorder
from burn_train import Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy
from burn_train.metric import AccuracyMetric, LossMetric
from guide.data import MnistBatcher
from guide.model import ModelConfig

import guide.training  # noqa: F401 - gives the guide's Model its train_step/valid_step


@config
class MultiGpusConfig:
    num_epochs: int = 3
    batch_size: int = 64
    seed: int = 42
    learning_rate: float = 2e-3


def run(devices, train_set, valid_set, artifact_dir: str, cfg: MultiGpusConfig, ddp: bool = False):
    """Train on `devices` (autodiff devices): threads over all of them, or with `ddp` this
    process's rank of a launched job. Each step splits its batch across the devices."""
    if Path(artifact_dir).exists() and not ddp:  # a launched job's ranks share the folder
        shutil.rmtree(artifact_dir)
    devices[0].seed(cfg.seed)
    model = ModelConfig(10, 512).init(devices[0])
    batcher = MnistBatcher()
    train = (
        DataLoaderBuilder(batcher).batch_size(cfg.batch_size).shuffle(cfg.seed)
        .set_device(devices[0]).build(train_set)
    )  # fmt: skip
    valid = (
        DataLoaderBuilder(batcher).batch_size(cfg.batch_size)
        .set_device(devices[0].inner()).build(valid_set)
    )  # fmt: skip
    strategy = (
        TrainingStrategy.DistributedDataParallel(devices)
        if ddp
        else TrainingStrategy.MultiDevice(devices, MultiDeviceOptim.OptimMainDevice)
    )
    training = (
        SupervisedTraining(artifact_dir, train, valid)
        .metrics((AccuracyMetric(), LossMetric()))
        .with_file_checkpointer(CompactRecorder())
        .with_training_strategy(strategy)
        .num_epochs(cfg.num_epochs)
        .summary()
    )
    return training.launch(Learner(model, AdamConfig().init(), cfg.learning_rate))
