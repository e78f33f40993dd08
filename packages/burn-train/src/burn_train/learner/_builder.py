"""`LearnerBuilder`: the book's configuration options, then `build(model, optim, lr)`."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from burn_optim import MixedPrecision
from burn_optim.lr_scheduler import as_lr_scheduler

from ..checkpoint._strategy import (
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from ..logger._metric import FileMetricLogger
from ..metric.store import Aggregate, Direction, Split
from ..renderer import MetricsRenderer, default_renderer
from ._checkpointer import LearnerCheckpointer
from ._interrupter import TrainingInterrupter
from ._learner import Learner
from ._processor import MetricsProcessor
from ._protocols import Optimizer, TrainStep
from ._steptimes import StepTimes

log = logging.getLogger("burn_train")


class _Processor(MetricsProcessor):
    def names_all(self) -> list[str]:
        return list(dict.fromkeys(self.names(Split.TRAIN) + self.names(Split.VALID)))


@dataclass
class LearnerConfig:
    """Everything `Learner.fit` needs besides the model, optimizer and scheduler."""

    directory: Path
    processor: _Processor
    num_epochs: int = 1
    grads_accumulation: int | None = None
    checkpointer: LearnerCheckpointer | None = None
    checkpoint: int | str | None = None
    early_stopping: Any = None
    interrupter: TrainingInterrupter = field(default_factory=TrainingInterrupter)
    summary: bool = False
    app_log: bool = True
    devices: list[Any] = field(default_factory=list)
    stop_on_non_finite_loss: bool = True
    #: steps whose values are read back from the device together (None: 1 on a synchronous
    #: backend, `_readback.DEFAULT_EVERY_ASYNC` on a GPU)
    read_every: int | None = None
    #: `MixedPrecision` policy of the training steps (None: full precision)
    mixed_precision: Any = None
    #: run each training step as a captured step (`burn_fusion.capture`)
    capture: bool = False
    #: where each training step's time goes (`LearnerBuilder.step_times()`; None: not timed)
    step_times: StepTimes | None = None


class LearnerBuilder:
    """Configure a training run (Burn's `LearnerBuilder`); every option returns the builder.

    Args:
        directory: the artifact directory (logs, checkpoints, experiment.log).

    Example:
        >>> from burn_train import LearnerBuilder
        >>> from burn_train.metric import AccuracyMetric, LossMetric
        >>> builder = (LearnerBuilder("/tmp/artifacts")
        ...     .metric_train_numeric(AccuracyMetric()).metric_valid_numeric(AccuracyMetric())
        ...     .metric_train_numeric(LossMetric()).metric_valid_numeric(LossMetric())
        ...     .num_epochs(3).summary())
        >>> # learner = builder.build(model, optim, 1e-3); trained = learner.fit(train, valid)
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self._directory = Path(directory)
        self._metrics: list[tuple[Split, Any, bool]] = []
        self._loggers: list[Any] | None = None
        self._renderer: MetricsRenderer | None = None
        self._recorder: Any = None
        self._strategy: CheckpointingStrategy | None = None
        self._num_epochs = 1
        self._grads_accumulation: int | None = None
        self._devices: list[Any] = []
        self._checkpoint: int | None = None
        self._early_stopping: Any = None
        self._interrupter = TrainingInterrupter()
        self._summary = False
        self._app_log = True
        self._stop_on_non_finite_loss = True
        self._read_every: int | None = None
        self._mixed_precision: Any = None
        self._capture = False
        self._step_times: StepTimes | None = None

    @classmethod
    def new(cls, directory: str | os.PathLike) -> LearnerBuilder:
        return cls(directory)

    # -- metrics -------------------------------------------------------------------------------
    def metric_train(self, metric: Any) -> LearnerBuilder:
        """Register a training metric (text only)."""
        self._metrics.append((Split.TRAIN, metric, False))
        return self

    def metric_valid(self, metric: Any) -> LearnerBuilder:
        """Register a validation metric (text only)."""
        self._metrics.append((Split.VALID, metric, False))
        return self

    def metric_train_numeric(self, metric: Any) -> LearnerBuilder:
        """Register a training metric with a plot (it must have `value()`)."""
        self._metrics.append((Split.TRAIN, metric, True))
        return self

    def metric_valid_numeric(self, metric: Any) -> LearnerBuilder:
        """Register a validation metric with a plot (it must have `value()`)."""
        self._metrics.append((Split.VALID, metric, True))
        return self

    # -- output --------------------------------------------------------------------------------
    def metric_loggers(self, *loggers: Any) -> LearnerBuilder:
        """Replace the default `FileMetricLogger(directory)` with these loggers."""
        self._loggers = list(loggers)
        return self

    def renderer(self, renderer: MetricsRenderer) -> LearnerBuilder:
        """Replace the default renderer (dashboard on a terminal, plain lines otherwise)."""
        self._renderer = renderer
        return self

    def with_application_logger(self, enabled: bool = True) -> LearnerBuilder:
        """Write (or not) `experiment.log` in the artifact directory (on by default)."""
        self._app_log = bool(enabled)
        return self

    def summary(self) -> LearnerBuilder:
        """Print the per-metric min/max table when training ends."""
        self._summary = True
        return self

    # -- training loop -------------------------------------------------------------------------
    def num_epochs(self, num_epochs: int) -> LearnerBuilder:
        if num_epochs < 1:
            raise ValueError(f"num_epochs must be >= 1, got {num_epochs}")
        self._num_epochs = int(num_epochs)
        return self

    def grads_accumulation(self, accumulation: int) -> LearnerBuilder:
        """Sum the gradients of `accumulation` steps before each optimizer step."""
        if accumulation < 1:
            raise ValueError(f"grads_accumulation must be >= 1, got {accumulation}")
        self._grads_accumulation = int(accumulation) if accumulation > 1 else None
        return self

    def devices(self, devices: list[Any]) -> LearnerBuilder:
        """Devices to train on; the model is forked onto the first one."""
        self._devices = list(devices)
        return self

    def early_stopping(self, strategy: Any) -> LearnerBuilder:
        """Stop when `strategy.should_stop(epoch, store)` says so (`MetricEarlyStoppingStrategy`)."""
        self._early_stopping = strategy
        return self

    def stop_on_non_finite_loss(self, enabled: bool = True) -> LearnerBuilder:
        """Stop (default) or keep going when a training loss is NaN or infinite.

        Stopping raises `NonFiniteLossError` naming the epoch and iteration, before the optimizer
        step that would turn the parameters to NaN; `False` logs a warning and trains on.
        """
        self._stop_on_non_finite_loss = bool(enabled)
        return self

    def read_every(self, steps: int) -> LearnerBuilder:
        """Read the steps' losses and metric values back from the device `steps` at a time.

        Each read waits for the device to finish its queued work, so reading every step makes a
        GPU idle while Python handles the metrics. With `steps` > 1, the values of `steps` steps
        cross in one read per dtype, the same numbers reach the metrics and logs, a NaN loss is
        found at the end of the batch of steps, and the dashboard refreshes once per batch.
        Default: 1 on a synchronous backend (NdArray), 16 on a GPU backend.
        """
        if int(steps) != steps or steps < 1:
            raise ValueError(f"read_every must be an integer >= 1, got {steps!r}")
        self._read_every = int(steps)
        return self

    def mixed_precision(self, policy: Any) -> LearnerBuilder:
        """Train with half-precision compute and f32 parameters (`MixedPrecision("bf16")`).

        Each `train_step` runs inside `policy.autocast()` (matmul/linear/conv in half, the rest
        f32); the optimizer step goes through `policy.step` (with float16's loss scaler: an
        overflowing step is skipped, the scale lowered and a warning logged). Validation runs
        in full precision. One device only. Accepts "bf16"/"f16" as a shorthand.
        """
        if isinstance(policy, str):
            policy = MixedPrecision(policy)
        if not isinstance(policy, MixedPrecision):
            raise TypeError(
                f"mixed_precision expects a MixedPrecision, got {type(policy).__name__}"
            )
        self._mixed_precision = policy
        return self

    def capture(self, enabled: bool = True) -> LearnerBuilder:
        """Run each training step (train_step and the optimizer update) as one captured step:
        recorded on its first calls, then replayed without its per-op Python
        (`burn_fusion.capture`; needs an `Autodiff(Fusion(...))` model, one device, no grads
        accumulation or mixed precision). A step that cannot be captured runs eagerly and the
        run says why once (a `CaptureWarning`)."""
        self._capture = bool(enabled)
        return self

    def step_times(self, sync: bool = False) -> LearnerBuilder:
        """Time each training step's phases on every rank (data, forward, backward, collective,
        loss check, optimizer, metrics, stop check, other; see `burn_train.learner.StepTimes`):
        after `fit`, `learner.step_times.summary()` gives milliseconds per step over the epochs
        after the first. Costs ~1 us per step; the device is synchronised at each epoch's ends
        only. `sync=True` also synchronises it at every phase mark, so each phase holds its
        device time (a profiling run: it slows training)."""
        self._step_times = StepTimes(sync=sync)
        return self

    def interrupter(self) -> TrainingInterrupter:
        """The interrupter of this run: call `.stop()` on it (from anywhere) to stop gracefully."""
        return self._interrupter

    def with_interrupter(self, interrupter: TrainingInterrupter) -> LearnerBuilder:
        self._interrupter = interrupter
        return self

    # -- checkpoints ---------------------------------------------------------------------------
    def with_file_checkpointer(self, recorder: Any) -> LearnerBuilder:
        """Save model/optimizer/scheduler after each epoch to `checkpoint/` with `recorder`."""
        self._recorder = recorder
        return self

    def with_checkpointing_strategy(self, strategy: CheckpointingStrategy) -> LearnerBuilder:
        """Which epochs to keep; default: the last 2 plus the best validation loss (if logged)."""
        self._strategy = strategy
        return self

    def checkpoint(self, epoch: int) -> LearnerBuilder:
        """Resume from the checkpoint of `epoch` (model, optimizer and scheduler).

        The checkpoint must be complete (all three records committed by its marker); an
        incomplete one raises `CheckpointerError` listing the complete ones.
        """
        self._checkpoint = int(epoch)
        return self

    def resume_latest(self) -> LearnerBuilder:
        """Resume from the newest complete checkpoint in `checkpoint/`, if any (else start at
        epoch 1); the log says which one, and which incomplete ones were passed over.

        Example: rerunning the same script after a crash or a kill continues where the last
        committed epoch left off.
        """
        self._checkpoint = "latest"
        return self

    # -- build ---------------------------------------------------------------------------------
    def _default_strategy(self) -> CheckpointingStrategy:
        strategies: list[CheckpointingStrategy] = [KeepLastNCheckpoints(2)]
        if any(s is Split.VALID and m.name() == "Loss" for s, m, _ in self._metrics):
            strategies.append(
                MetricCheckpointingStrategy("Loss", Aggregate.MEAN, Direction.LOWEST, Split.VALID)
            )
        return ComposedCheckpointingStrategy(strategies)

    def build(self, model: TrainStep, optim: Optimizer, lr_or_scheduler: Any) -> Learner:
        """Create the `Learner` from a model, an optimizer and a learning rate (a float, made a
        `burn_optim` `ConstantLr`) or an `LrScheduler`."""
        if not isinstance(model, TrainStep):
            raise TypeError(f"{type(model).__name__} needs train_step(batch) -> TrainOutput")
        if not callable(getattr(optim, "step", None)):
            raise TypeError(f"{type(optim).__name__} needs step(lr, module, grads) -> module")
        self._directory.mkdir(parents=True, exist_ok=True)
        loggers = (
            self._loggers if self._loggers is not None else [FileMetricLogger(self._directory)]
        )
        processor = _Processor(loggers=loggers, renderer=self._renderer or default_renderer())
        for split, metric, numeric in self._metrics:
            processor.register(split, metric, numeric)
        checkpointer = None
        if self._recorder is not None:
            strategy = self._strategy or self._default_strategy()
            checkpointer = LearnerCheckpointer(
                self._recorder, self._directory / "checkpoint", strategy
            )
        if len(self._devices) > 1 and self._grads_accumulation:
            raise ValueError(
                "grads_accumulation with several devices is not supported: raise the batch "
                "size instead (each device gets its share of every batch)"
            )
        if self._capture and (
            len(self._devices) > 1 or (self._grads_accumulation or 1) > 1 or self._mixed_precision
        ):
            raise ValueError(
                "capture() covers a single-device step without grads_accumulation or "
                "mixed_precision; drop one of them"
            )
        if self._devices:
            model = _to_device(model, self._devices)
        config = LearnerConfig(
            directory=self._directory,
            processor=processor,
            num_epochs=self._num_epochs,
            grads_accumulation=self._grads_accumulation,
            checkpointer=checkpointer,
            checkpoint=self._checkpoint,
            early_stopping=self._early_stopping,
            interrupter=self._interrupter,
            summary=self._summary,
            app_log=self._app_log,
            devices=self._devices,
            stop_on_non_finite_loss=self._stop_on_non_finite_loss,
            read_every=self._read_every,
            mixed_precision=self._mixed_precision,
            capture=self._capture,
            step_times=self._step_times,
        )
        return Learner(model, optim, as_lr_scheduler(lr_or_scheduler), config)


def _to_device(model: Any, devices: list[Any]) -> Any:
    # With several devices, this is rank 0's replica; the Learner forks the others.
    for method in ("fork", "to_device"):
        fn = getattr(model, method, None)
        if callable(fn):
            return fn(devices[0])
    return model
