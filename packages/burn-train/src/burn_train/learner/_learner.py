"""`Learner.fit`: the epoch loop with checkpoints, early stopping, interrupts and the summary."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from burn_optim.lr_scheduler import as_lr_scheduler

from ..logger._app import install_application_logger, remove_application_logger
from ..metric.store import EventStore
from ..renderer._base import MetricsRenderer
from ._curves import write_curves
from ._interrupter import SigintHandler
from ._loop import TrainLoop
from ._protocols import LrScheduler, Optimizer, TrainStep
from ._readback import default_every
from ._strategy import SingleDevice, Strategy, optim_step
from ._summary import LearnerSummary

if TYPE_CHECKING:
    from ._builder import LearnerConfig

log = logging.getLogger("burn_train")


def process_rank() -> int | None:
    """This process's rank in a multi-process run (`python -m burn_train.launch`), else None."""
    from burn_tensor.collective import in_process_group

    return int(os.environ.get("BURN_RANK", "0")) if in_process_group() else None


class Learner:
    """The model, optimizer and LR scheduler being trained, in either API:

    - Burn 0.20: `Learner(model, optim, lr_scheduler)` handed to
      `SupervisedTraining(...).launch(learner)`; a custom `SupervisedLearningStrategy` drives it
      with `lr_step()`, `train_step(batch)`, `optimizer_step(grads)`, `lr_current()`, `fork(d)`.
    - The book editions: `LearnerBuilder(...).build(model, optim, lr)` gives a configured
      Learner whose `fit(train, valid)` returns the trained model.

    `lr_scheduler` may be a float (a constant learning rate). Attributes after a run:
    `epochs_completed` (last epoch fully trained and validated), `interrupted` (stopped by the
    interrupter), `stopped_early`, `summary_result`, `resumed_from`.
    """

    def __init__(
        self,
        model: TrainStep,
        optim: Optimizer,
        lr_scheduler: LrScheduler | float,
        config: LearnerConfig | None = None,
    ) -> None:
        if not callable(getattr(optim, "step", None)):
            raise TypeError(f"{type(optim).__name__} needs step(lr, module, grads) -> module")
        self.model = model
        self.optim = optim
        self.scheduler = as_lr_scheduler(lr_scheduler)
        self.config = config
        self.lr = 0.0  # Burn's `lr_current()` before the first `lr_step()`
        self.epochs_completed = 0
        self.interrupted = False
        self.stopped_early = False
        self.summary_result: LearnerSummary | None = None
        #: the epoch of the checkpoint this run resumed from (None: started at epoch 1)
        self.resumed_from: int | None = None
        #: with `LearnerBuilder.capture()`: the captured step's `stats()` after `fit`
        self.capture_stats: dict | None = None
        #: data parallel: this rank's time waiting on gradient collectives after `fit`
        #: ({"rank", "steps", "wait_s", "ms_per_step"}; None on one device)
        self.collective_wait: dict | None = None

    @property
    def step_times(self) -> Any:
        """With `LearnerBuilder.step_times()`: this rank's `StepTimes` (per-step phase times;
        `.summary()` after `fit`), else None."""
        return getattr(self.config, "step_times", None)

    # -- Burn 0.20's learning components (what a custom strategy calls) ------------------------
    @property
    def lr_scheduler(self) -> LrScheduler:
        return self.scheduler

    def lr_step(self) -> float:
        """Advance the scheduler: the learning rate of the next step (`lr_current()`)."""
        self.lr = self.scheduler.step()
        return self.lr

    def lr_current(self) -> float:
        return self.lr

    def train_step(self, batch: Any) -> Any:
        """`model.train_step(batch)`: the `TrainOutput` (grads and the metrics' item)."""
        return self.model.train_step(batch)

    def optimizer_step(self, grads: Any) -> None:
        """Apply `grads` to the model with the optimizer at `lr_current()`."""
        self.model = optim_step(self.optim, self.lr, self.model, grads)

    def fork(self, device: Any) -> None:
        """Move the model to `device` (Burn's `Learner::fork`)."""
        self.model = self.model.fork(device)

    def load_model(self, record: Any) -> None:
        self.model = self.model.load_record(record)

    def load_optim(self, record: Any) -> None:
        self.optim = self.optim.load_record(record) or self.optim

    def load_scheduler(self, record: Any) -> None:
        self.scheduler = self.scheduler.load_record(record) or self.scheduler

    # -- the run -------------------------------------------------------------------------------
    def fit(self, dataloader_train: Any, dataloader_valid: Any) -> Any:
        """Train for the configured epochs; returns the trained model.

        Args:
            dataloader_train: iterable of training batches (one pass = one epoch).
            dataloader_valid: iterable of validation batches.
        """
        return self.run(dataloader_train, dataloader_valid)

    def run(self, dataloader_train: Any, dataloader_valid: Any, custom: Any = None) -> Any:
        """`fit`, with the epochs driven by `custom.fit(components, ...)` when given (a
        `SupervisedLearningStrategy`): logging, resuming, the renderer and the summary stay
        the Learner's. Returns the trained model."""
        cfg = self.config
        if cfg is None:
            raise TypeError(
                "this Learner has no training configuration: pass it to "
                "SupervisedTraining(artifact_dir, train, valid)...launch(learner), or build it "
                "with LearnerBuilder(artifact_dir)...build(model, optim, lr)"
            )
        if process_rank() not in (None, 0):
            # One process writes the artifacts: the other ranks log and render nothing (their
            # metric files and dashboards would be the same directory and the same terminal).
            for logger in cfg.processor.loggers:
                logger.close()
            cfg.processor.loggers = []
            cfg.processor.renderer = MetricsRenderer()
            cfg.app_log = False
        handler = (
            install_application_logger(cfg.directory / "experiment.log") if cfg.app_log else None
        )
        try:
            return self._fit(dataloader_train, dataloader_valid, custom)
        finally:
            if handler is not None:
                remove_application_logger(handler)

    def _resume_epoch(self) -> int | None:
        """The checkpoint to resume from (verified complete), logging the choice; None: none."""
        cfg = self.config
        if cfg.checkpoint is None:
            return None
        if cfg.checkpointer is None:
            raise ValueError(
                "checkpoint(epoch) / resume_latest() need with_file_checkpointer(recorder)"
            )
        unit = cfg.checkpointer.unit
        if cfg.checkpoint != "latest":
            cfg.checkpointer.require_complete(cfg.checkpoint)
            log.info("Resuming from checkpoint %d", cfg.checkpoint)
            epoch = cfg.checkpoint
        else:
            epoch = cfg.checkpointer.latest_complete()
            newer = [e for e in unit.epochs_on_disk() if epoch is None or e > epoch]
            skipped = f" (passed over incomplete: {newer})" if newer else ""
            if epoch is None:
                log.info(
                    "No complete checkpoint in %s: starting at epoch 1%s", unit.directory, skipped
                )
            else:
                log.info("Resuming from checkpoint %d, the newest complete one%s", epoch, skipped)
        if process_rank() not in (None, 0):
            return epoch  # rank 0 cleans up; every rank loads the same complete checkpoint
        cleaned = unit.remove_incomplete()
        if cleaned:
            log.info("Removed the records of incomplete checkpoint(s) %s", cleaned)
        return epoch

    def _strategy(self, model: Any, optim: Any, train: Any) -> tuple[Strategy, Any]:
        """How each step runs, and the training loader it iterates (this rank's shard in a
        multi-process run)."""
        from burn_tensor.collective import in_process_group, init_process_group

        from ._parallel import ProcessDataParallel, ThreadedDataParallel

        cfg = self.config
        devices = cfg.devices
        mp = cfg.mixed_precision
        if mp is not None and (len(devices) > 1 or in_process_group()):
            raise ValueError(
                "mixed_precision is supported on one device only for now (not with several "
                "devices or processes): train on one device, or in full precision"
            )
        if len(devices) > 1:
            log.info("Data-parallel training on %d devices of this process", len(devices))
            return ThreadedDataParallel(model, optim, devices), train
        if not in_process_group():
            if cfg.capture:
                from ._capture import CapturedSingleDevice

                return CapturedSingleDevice(model, optim), train
            return SingleDevice(model, optim, cfg.grads_accumulation, mp), train
        if cfg.capture:
            raise ValueError("capture() covers one device in one process, not a process group")
        comm = init_process_group()
        if not callable(getattr(train, "shard", None)):
            raise TypeError(
                f"multi-process training needs a burn DataLoader (shard), got "
                f"{type(train).__name__}"
            )
        log.info("Data-parallel training: rank %d of %d processes", comm.rank, comm.world_size)
        # Items cross processes only for training metrics (each gather waits for the device);
        # with none registered rank 0 renders its own item's progress.
        strategy = ProcessDataParallel(model, optim, comm, gather=bool(cfg.processor.train))
        return strategy, train.shard(comm.rank, comm.world_size)

    def _fit(self, train: Any, valid: Any, custom: Any = None) -> Any:
        cfg = self.config
        store = EventStore(cfg.processor.loggers)
        model, optim, scheduler = self.model, self.optim, self.scheduler
        start = 1
        resume = self._resume_epoch()
        if resume is not None:
            model = cfg.checkpointer.load_model(model, resume)
            optim = cfg.checkpointer.load_optim(optim, resume)
            scheduler = cfg.checkpointer.load_scheduler(scheduler, resume)
            start = resume + 1
            if cfg.early_stopping is not None and hasattr(cfg.early_stopping, "restore"):
                cfg.early_stopping.restore(range(1, start), store)
            self.epochs_completed = resume
        self.resumed_from = resume
        self.model, self.optim, self.scheduler = model, optim, scheduler
        log.info("Fitting %s for epochs %d..%d", type(model).__name__, start, cfg.num_epochs)
        renderer = cfg.processor.renderer
        renderer.start(cfg.interrupter)
        try:
            with SigintHandler(cfg.interrupter):
                self._run_strategy = None
                if custom is not None:
                    model = self._fit_custom(custom, train, valid, start, store)
                else:
                    model = self._epochs(train, valid, start, store)
            strategy = self._run_strategy  # the built-in strategy that ran (None: custom)
            self.interrupted = cfg.interrupter.should_stop()
            captured = getattr(strategy, "captured", None)
            if captured is not None:  # LearnerBuilder.capture(): what the captured step did
                self.capture_stats = captured.stats()
                log.info("Captured step: %s", self.capture_stats)
                captured.release()
            if self.interrupted:
                log.info("Training stopped: %s", cfg.interrupter.get_message())
            timer = getattr(strategy, "timer", None)
            if timer is not None and timer.steps:  # data parallel: what the ranks waited
                from ._overlap import report_wait

                self.collective_wait = report_wait(timer, strategy.rank)
        finally:
            for logger in cfg.processor.loggers:
                logger.close()
            if cfg.processor.loggers and any(cfg.directory.glob("*/epoch-*/*.log")):
                csv_path, png = write_curves(cfg.directory)  # rank 0 only, as the logs
                log.info("Training curves: %s", ", ".join(str(p) for p in (csv_path, png) if p))
            summary = None
            if cfg.summary:
                names = cfg.processor.names_all()
                summary = self.summary_result = LearnerSummary(cfg.directory, names)
                log.info("\n%s", summary)
            renderer.on_train_end(summary)
            renderer.close()
        return model

    def _epochs(self, train: Any, valid: Any, start: int, store: EventStore) -> Any:
        """The built-in strategies' epochs: `TrainLoop` over a `Strategy`; the trained model."""
        cfg = self.config
        model, scheduler = self.model, self.scheduler
        strategy, train = self._strategy(model, self.optim, train)
        self._run_strategy = strategy
        load_shards = getattr(strategy, "load_optimizer_shards", None)
        if self.resumed_from is not None and load_shards is not None:  # sharded state (ZeRO-1)
            load_shards(cfg.checkpointer.unit, self.resumed_from)
        every = cfg.read_every if cfg.read_every is not None else default_every(model)
        loop = TrainLoop(cfg, strategy, every)
        for epoch in range(start, cfg.num_epochs + 1):
            loop.train_epoch(scheduler, train, epoch)
            model = loop.model
            self.model, self.optim, self.scheduler = model, loop.optim, scheduler
            if loop.should_stop():
                break
            loop.valid_epoch(valid, epoch)
            if loop.should_stop():
                break
            save_shard = getattr(strategy, "save_optimizer_shard", None)
            if cfg.checkpointer is not None and save_shard is not None:
                save_shard(cfg.checkpointer.unit, epoch)  # every rank, before the commit
            if cfg.checkpointer is not None and strategy.rank in (None, 0):  # one writer
                cfg.checkpointer.checkpoint(model, loop.optim, scheduler, epoch, store)
            strategy.barrier()  # no rank runs ahead of the checkpoint
            self.epochs_completed = epoch
            if cfg.early_stopping is not None and cfg.early_stopping.should_stop(epoch, store):
                self.stopped_early = True
                break
        return model

    def _fit_custom(self, custom: Any, train: Any, valid: Any, start: int, store: Any) -> Any:
        """A custom strategy's epochs (Burn's `SupervisedLearningStrategy::fit`)."""
        from ._components import EventProcessorTraining, LearningCheckpointer, TrainingComponents

        cfg = self.config
        components = TrainingComponents(
            num_epochs=cfg.num_epochs,
            checkpoint=self.resumed_from,
            checkpointer=(
                LearningCheckpointer(cfg.checkpointer) if cfg.checkpointer is not None else None
            ),
            grad_accumulation=cfg.grads_accumulation,
            interrupter=cfg.interrupter,
            early_stopping=cfg.early_stopping,
            event_processor=EventProcessorTraining(cfg.processor),
            event_store=store,
            summary=cfg.summary,
        )
        result = custom.fit(components, self, train, valid, start)
        model = result[0] if isinstance(result, tuple) else result
        self.model = model
        done = components.event_processor.last_valid_epoch
        if done is not None:
            self.epochs_completed = done
        return model
