"""`Learner.fit`: the epoch loop with checkpoints, early stopping, interrupts and the summary."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from ..logger._app import install_application_logger, remove_application_logger
from ..metric.store import EventStore
from ..renderer._base import MetricsRenderer
from ._curves import write_curves
from ._interrupter import SigintHandler
from ._loop import TrainLoop
from ._protocols import LrScheduler, Optimizer, TrainStep
from ._readback import default_every
from ._strategy import SingleDevice, Strategy
from ._summary import LearnerSummary

if TYPE_CHECKING:
    from ._builder import LearnerConfig

log = logging.getLogger("burn_train")


def process_rank() -> int | None:
    """This process's rank in a multi-process run (`python -m burn_train.launch`), else None."""
    from burn_tensor.collective import in_process_group

    return int(os.environ.get("BURN_RANK", "0")) if in_process_group() else None


class Learner:
    """A configured training run; create it with `LearnerBuilder(...).build(...)`.

    Attributes after `fit`: `epochs_completed` (last epoch fully trained and validated),
    `interrupted` (stopped by the interrupter), `stopped_early`, `summary_result`.
    """

    def __init__(
        self, model: TrainStep, optim: Optimizer, scheduler: LrScheduler, config: LearnerConfig
    ) -> None:
        self.model = model
        self.optim = optim
        self.scheduler = scheduler
        self.config = config
        self.epochs_completed = 0
        self.interrupted = False
        self.stopped_early = False
        self.summary_result: LearnerSummary | None = None
        #: the epoch of the checkpoint this run resumed from (None: started at epoch 1)
        self.resumed_from: int | None = None
        #: with `LearnerBuilder.capture()`: the captured step's `stats()` after `fit`
        self.capture_stats: dict | None = None

    def fit(self, dataloader_train: Any, dataloader_valid: Any) -> Any:
        """Train for the configured epochs; returns the trained model.

        Args:
            dataloader_train: iterable of training batches (one pass = one epoch).
            dataloader_valid: iterable of validation batches.
        """
        cfg = self.config
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
            return self._fit(dataloader_train, dataloader_valid)
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

    def _fit(self, train: Any, valid: Any) -> Any:
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
        strategy, train = self._strategy(model, optim, train)
        every = cfg.read_every if cfg.read_every is not None else default_every(model)
        loop = TrainLoop(cfg, strategy, every)
        log.info("Fitting %s for epochs %d..%d", type(model).__name__, start, cfg.num_epochs)
        renderer = cfg.processor.renderer
        renderer.start(cfg.interrupter)
        try:
            with SigintHandler(cfg.interrupter):
                for epoch in range(start, cfg.num_epochs + 1):
                    loop.train_epoch(scheduler, train, epoch)
                    model = loop.model
                    self.model, self.optim, self.scheduler = model, loop.optim, scheduler
                    if loop.should_stop():
                        break
                    loop.valid_epoch(valid, epoch)
                    if loop.should_stop():
                        break
                    if cfg.checkpointer is not None and strategy.rank in (None, 0):  # one writer
                        cfg.checkpointer.checkpoint(model, loop.optim, scheduler, epoch, store)
                    strategy.barrier()  # no rank runs ahead of the checkpoint
                    self.epochs_completed = epoch
                    if cfg.early_stopping is not None and cfg.early_stopping.should_stop(
                        epoch, store
                    ):
                        self.stopped_early = True
                        break
            self.interrupted = cfg.interrupter.should_stop()
            captured = getattr(strategy, "captured", None)
            if captured is not None:  # LearnerBuilder.capture(): what the captured step did
                self.capture_stats = captured.stats()
                log.info("Captured step: %s", self.capture_stats)
                captured.release()
            if self.interrupted:
                log.info("Training stopped: %s", cfg.interrupter.get_message())
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
