"""Burn 0.20's training entry point: `SupervisedTraining(dir, train, valid)...launch(learner)`.

It is `LearnerBuilder` with the loaders given up front (every builder option is inherited:
metrics, loggers, renderer, checkpointer, epochs, devices, early stopping, summary...), plus
Burn 0.20's `metrics((..))`, `with_metric_logger`, `with_training_strategy` and `launch`. The
epochs run in the same `Learner`/`TrainLoop` as `LearnerBuilder.build(...).fit(...)`; a
`TrainingStrategy.Custom(strategy)` replaces only the epoch loop.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Any

from ._builder import LearnerBuilder
from ._components import LearningResult, TrainingComponents
from ._learner import Learner


class MultiDeviceOptim(enum.Enum):
    """Where the optimizer state of a multi-device run lives (Burn's `MultiDeviceOptim`).

    burn-py's threaded data parallelism keeps one optimizer on the main device and all-reduces
    the gradients, which is `OptimMainDevice`; `OptimSharded` is accepted and runs the same way
    (the README says so)."""

    OptimMainDevice = "main"
    OptimSharded = "sharded"


class SupervisedLearningStrategy:
    """A custom training loop (Burn's `SupervisedLearningStrategy`): subclass and write `fit`.

    `fit(components, learner, dataloader_train, dataloader_valid, starting_epoch)` runs the
    epochs and returns the trained model, or `(model, components.event_processor)` as Burn
    does. The launch around it is the Learner's: the experiment log, resuming from a checkpoint
    (the learner arrives loaded, `starting_epoch` after it), the renderer, the metric files,
    the summary, `model.valid()` in the result.
    """

    def fit(
        self,
        training_components: TrainingComponents,
        learner: Learner,
        dataloader_train: Any,
        dataloader_valid: Any,
        starting_epoch: int,
    ) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement fit(...)")


@dataclass(frozen=True)
class TrainingStrategy:
    """How `launch` trains (Burn's `TrainingStrategy` enum); build it with a variant:

    - `TrainingStrategy.SingleDevice(device)`: one device (the default: the model's own).
    - `TrainingStrategy.MultiDevice(devices, MultiDeviceOptim.OptimMainDevice)`: data parallel
      over the devices of this process.
    - `TrainingStrategy.Custom(strategy)`: a `SupervisedLearningStrategy`'s own loop.
    - `TrainingStrategy.DistributedDataParallel(devices)`: one process per device; run the
      script with `python -m burn_train.launch --nproc-per-node N script.py`, each rank then
      trains on its device and the gradients are all-reduced between processes.
    """

    kind: str
    devices: tuple[Any, ...] = ()
    strategy: Any = None
    optim: MultiDeviceOptim = MultiDeviceOptim.OptimMainDevice

    @classmethod
    def SingleDevice(cls, device: Any) -> TrainingStrategy:  # noqa: N802 - Burn's variants
        return cls("single", (device,))

    @classmethod
    def MultiDevice(  # noqa: N802
        cls, devices: list[Any], optim: MultiDeviceOptim = MultiDeviceOptim.OptimMainDevice
    ) -> TrainingStrategy:
        if not devices:
            raise ValueError("TrainingStrategy.MultiDevice needs at least one device")
        return cls("multi", tuple(devices), optim=MultiDeviceOptim(optim))

    @classmethod
    def Custom(cls, strategy: SupervisedLearningStrategy) -> TrainingStrategy:  # noqa: N802
        if not callable(getattr(strategy, "fit", None)):
            raise TypeError(
                f"TrainingStrategy.Custom expects a SupervisedLearningStrategy (with fit(...)), "
                f"got {type(strategy).__name__}"
            )
        return cls("custom", strategy=strategy)

    @classmethod
    def DistributedDataParallel(  # noqa: N802
        cls, devices: list[Any], config: Any = None
    ) -> TrainingStrategy:
        return cls("ddp", tuple(devices))


class SupervisedTraining(LearnerBuilder):
    """Configure and launch a supervised training run (Burn 0.20's `SupervisedTraining`).

    Args:
        directory: the artifact directory (experiment.log, metric logs, checkpoints).
        dataloader_train: iterable of training batches on the autodiff device.
        dataloader_valid: iterable of validation batches on the inner device.

    Example (the Burn Book's 0.20 training chapter):
        >>> from burn_train import SupervisedTraining, Learner
        >>> from burn_train.metric import AccuracyMetric, LossMetric
        >>> # training = (SupervisedTraining(artifact_dir, dataloader_train, dataloader_test)
        >>> #     .metrics((AccuracyMetric(), LossMetric()))
        >>> #     .with_file_checkpointer(CompactRecorder()).num_epochs(10).summary())
        >>> # result = training.launch(Learner(model, AdamConfig().init(), 1e-4))
        >>> # result.model.save_file(f"{artifact_dir}/model", CompactRecorder())
    """

    def __init__(
        self, directory: str | os.PathLike, dataloader_train: Any, dataloader_valid: Any
    ) -> None:
        super().__init__(directory)
        self._dataloader_train = dataloader_train
        self._dataloader_valid = dataloader_valid
        self._custom: SupervisedLearningStrategy | None = None

    @classmethod
    def new(  # type: ignore[override]
        cls, directory: str | os.PathLike, dataloader_train: Any, dataloader_valid: Any
    ) -> SupervisedTraining:
        return cls(directory, dataloader_train, dataloader_valid)

    def metrics(self, metrics: tuple[Any, ...] | list[Any]) -> SupervisedTraining:
        """Register each numeric metric for training and validation (a copy for each split),
        as Burn's `.metrics((AccuracyMetric::new(), LossMetric::new()))`."""
        for metric in _as_tuple(metrics):
            self.metric_train_numeric(_fresh(metric)).metric_valid_numeric(metric)
        return self

    def metrics_text(self, metrics: tuple[Any, ...] | list[Any]) -> SupervisedTraining:
        """Register each metric (text only, no plot) for training and validation."""
        for metric in _as_tuple(metrics):
            self.metric_train(_fresh(metric)).metric_valid(metric)
        return self

    def with_metric_logger(self, logger: Any) -> SupervisedTraining:
        """Add a metric logger; the first one replaces the default `FileMetricLogger`."""
        self._loggers = [*(self._loggers or []), logger]
        return self

    def with_training_strategy(self, strategy: TrainingStrategy) -> SupervisedTraining:
        """Single device, several devices, processes, or a custom loop (`TrainingStrategy`)."""
        if not isinstance(strategy, TrainingStrategy):
            raise TypeError(
                f"with_training_strategy expects a TrainingStrategy (SingleDevice, MultiDevice, "
                f"Custom, DistributedDataParallel), got {type(strategy).__name__}"
            )
        self._custom = strategy.strategy if strategy.kind == "custom" else None
        if strategy.kind == "ddp":
            from burn_tensor.collective import in_process_group

            if not in_process_group():
                raise RuntimeError(
                    "TrainingStrategy.DistributedDataParallel runs one process per device: start "
                    f"the script with `python -m burn_train.launch --nproc-per-node "
                    f"{len(strategy.devices)} script.py`"
                )
            self.devices([])  # each rank trains on its own device; the Learner joins the group
        elif strategy.kind in ("single", "multi"):
            self.devices(list(strategy.devices))
        return self

    def launch(self, learner: Learner) -> LearningResult:
        """Train `learner` (a `Learner(model, optim, lr_scheduler)`) on the loaders.

        Returns a `LearningResult`: `model` is the trained model's `valid()` (inference)
        version, `renderer` the run's renderer (for a follow-up evaluation), `learner` the
        Learner after the run.
        """
        if not isinstance(learner, Learner):
            raise TypeError(
                f"launch expects a Learner(model, optim, lr_scheduler), got {type(learner).__name__}"
            )
        run = self.build(learner.model, learner.optim, learner.scheduler)
        model = run.run(self._dataloader_train, self._dataloader_valid, self._custom)
        valid = model.valid() if callable(getattr(model, "valid", None)) else model
        return LearningResult(valid, run.config.processor.renderer, run)


def _as_tuple(metrics: Any) -> tuple[Any, ...]:
    if isinstance(metrics, (tuple, list)):
        return tuple(metrics)
    return (metrics,)


def _fresh(metric: Any) -> Any:
    """A separate metric object for the train split (Burn clones it): each split keeps its own
    running state."""
    import copy

    return copy.deepcopy(metric)
