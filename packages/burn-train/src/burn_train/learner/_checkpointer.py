"""`LearnerCheckpointer`: saves model, optimizer and scheduler together, per a strategy."""

from __future__ import annotations

import logging
from typing import Any

from ..checkpoint._file import FileCheckpointer
from ..checkpoint._strategy import CheckpointingStrategy

log = logging.getLogger("burn_train")


class LearnerCheckpointer:
    """`checkpoint/model-N`, `optim-N`, `scheduler-N` written with one recorder."""

    def __init__(self, recorder: Any, directory: Any, strategy: CheckpointingStrategy) -> None:
        self.model = FileCheckpointer(recorder, directory, "model")
        self.optim = FileCheckpointer(recorder, directory, "optim")
        self.scheduler = FileCheckpointer(recorder, directory, "scheduler")
        self.strategy = strategy

    def checkpoint(self, model: Any, optim: Any, scheduler: Any, epoch: int, store: Any) -> None:
        for action in self.strategy.checkpointing(epoch, store):
            if action.kind == "save":
                log.info("Saving checkpoint %d", epoch)
                self.model.save(epoch, model.into_record())
                self.optim.save(epoch, optim.to_record())
                self.scheduler.save(epoch, _scheduler_record(scheduler))
            else:
                log.info("Deleting checkpoint %d", action.epoch)
                for c in (self.model, self.optim, self.scheduler):
                    c.delete(action.epoch)

    def load_model(self, model: Any, epoch: int) -> Any:
        # The module's own record is the target: stored dtypes (f16 in CompactRecorder) are
        # converted back to the module's.
        record = self.model.restore(epoch, target=model.into_record())
        return _loaded(model, model.load_record(record))

    def load_optim(self, optim: Any, epoch: int) -> Any:
        return _loaded(optim, optim.load_record(self.optim.restore(epoch)))

    def load_scheduler(self, scheduler: Any, epoch: int) -> Any:
        load = getattr(scheduler, "load_record", None)
        if not callable(load) or not self.scheduler.exists(epoch):
            return scheduler
        return _loaded(scheduler, load(self.scheduler.restore(epoch)))


def _scheduler_record(scheduler: Any) -> Any:
    to_record = getattr(scheduler, "to_record", None)
    return to_record() if callable(to_record) else None


def _loaded(original: Any, result: Any) -> Any:
    # Burn's load_record returns a new value; a Python object may load in place and return None.
    return original if result is None else result
