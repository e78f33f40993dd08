"""Training and evaluation: Burn's `examples/mnist/src/training.rs`, translated.

Burn's example trains on MNIST with per-transform test evaluations (its `DatasetIdent`
augmentations); here the bundled digits (offline) or MNIST (`dataset="mnist"`, downloaded),
one test evaluation, and the trained model saved both as Burn's record and as a Burnpack.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_dataset import DataLoaderBuilder, PartialDataset
from burn_optim import AdamWConfig
from burn_optim.lr_scheduler import (
    ComposedLrSchedulerConfig,
    CosineAnnealingLrSchedulerConfig,
    LinearLrSchedulerConfig,
)
from burn_record import CompactRecorder
from burn_store import BurnpackStore, load_from, save_into
from burn_tensor import Tensor
from burn_train import (
    Aggregate,
    Direction,
    EvaluatorBuilder,
    Learner,
    MetricEarlyStoppingStrategy,
    Split,
    StoppingCondition,
    SupervisedTraining,
)
from burn_train.metric import AccuracyMetric, LearningRateMetric, LossMetric

from .model import Model


@dataclass
class MnistBatch:
    images: Tensor  # [batch, 28, 28] Float
    targets: Tensor  # [batch] Int


class MnistBatcher:
    """MNIST's normalization (mean 0.1307, std 0.3081), as Burn's example."""

    def batch(self, items, device) -> MnistBatch:
        images = np.stack([np.asarray(i.image, np.float32) for i in items]) / 255.0
        targets = np.array([int(i.label) for i in items], np.int64)
        images = ((images - 0.1307) / 0.3081).astype(np.float32)
        return MnistBatch(Tensor.from_data(images, device), Tensor.from_data(targets, device))


def run(device, train_set, test_set, artifact_dir: str, num_epochs: int = 5,
        batch_size: int = 256, seed: int = 42):  # fmt: skip
    """Train `Model` on `device` (autodiff), evaluate on `test_set`; returns (result, evaluator)."""
    shutil.rmtree(artifact_dir, ignore_errors=True)
    Path(artifact_dir).mkdir(parents=True)
    device.seed(seed)
    model = Model.new(device)
    n_valid = max(len(train_set) // 12, 1)  # Burn: 55,000 train / 5,000 valid
    train = PartialDataset(train_set, 0, len(train_set) - n_valid)
    valid = PartialDataset(train_set, len(train_set) - n_valid, len(train_set))
    loader = lambda ds, d: (  # noqa: E731
        DataLoaderBuilder(MnistBatcher()).batch_size(batch_size).shuffle(seed).num_workers(2)
        .set_device(d).build(ds)
    )  # fmt: skip
    total = num_epochs * -(-len(train) // batch_size)
    # Burn's schedule shape (cosine x linear warm-up x linear decay), over this run's iterations
    lr_scheduler = (
        ComposedLrSchedulerConfig()
        .cosine(CosineAnnealingLrSchedulerConfig(1.0, total))
        .linear(LinearLrSchedulerConfig(1e-8, 1.0, max(total // 10, 1)))
        .linear(LinearLrSchedulerConfig(1e-2, 1e-6, total))
    )
    training = (
        SupervisedTraining(artifact_dir, loader(train, device), loader(valid, device.inner()))
        .metrics((AccuracyMetric(), LossMetric()))
        .metric_train_numeric(LearningRateMetric())
        .with_file_checkpointer(CompactRecorder())
        .early_stopping(MetricEarlyStoppingStrategy(
            LossMetric(), Aggregate.MEAN, Direction.LOWEST, Split.VALID,
            StoppingCondition.NoImprovementSince(n_epochs=5),
        ))  # fmt: skip
        .num_epochs(num_epochs)
        .summary()
    )
    optim = AdamWConfig().with_cautious_weight_decay(True).with_weight_decay(5e-5).init()
    result = training.launch(Learner(model, optim, lr_scheduler.init()))
    evaluator = (
        EvaluatorBuilder(artifact_dir).metrics((AccuracyMetric(), LossMetric()))
        .renderer(result.renderer).build(result.model)
    )  # fmt: skip
    evaluator.eval("test", loader(test_set, device.inner()))
    result.model.save_file(f"{artifact_dir}/model", CompactRecorder())
    save_into(result.model, BurnpackStore.from_file(f"{artifact_dir}/model").overwrite())
    return result, evaluator


def evaluate_weights(path: str, device, dataset) -> tuple[float, str]:
    """Accuracy (%) of `Model` with the Burnpack at `path` on `dataset`, and the load report."""
    result = load_from(Model.new(device), BurnpackStore.from_file(path))
    model = result.module
    hits = 0
    for start in range(0, len(dataset), 256):
        items = [dataset.get(i) for i in range(start, min(start + 256, len(dataset)))]
        batch = MnistBatcher().batch(items, device)
        hits += int((model.forward(batch.images).numpy().argmax(1) == batch.targets.numpy()).sum())
    return 100.0 * hits / len(dataset), str(result)
