"""`LearnerCheckpointer`: saves model, optimizer and scheduler as one unit, per a strategy."""

from __future__ import annotations

import logging
from typing import Any

from ..checkpoint._strategy import CheckpointingStrategy
from ..checkpoint._unit import CheckpointUnit

log = logging.getLogger("burn_train")


class LearnerCheckpointer:
    """`checkpoint/model-N`, `optim-N`, `scheduler-N` written with one recorder, then committed
    by `complete-N.json` (see `burn_train.checkpoint.CheckpointUnit`)."""

    def __init__(self, recorder: Any, directory: Any, strategy: CheckpointingStrategy) -> None:
        self.unit = CheckpointUnit(recorder, directory)
        self.model, self.optim, self.scheduler = (self.unit.files[k] for k in self.unit.files)
        self.strategy = strategy

    def checkpoint(self, model: Any, optim: Any, scheduler: Any, epoch: int, store: Any) -> None:
        for action in self.strategy.checkpointing(epoch, store):
            if action.kind == "save":
                log.info("Saving checkpoint %d", epoch)
                self.unit.save(
                    epoch, model.into_record(), optim.to_record(), _scheduler_record(scheduler)
                )
            else:
                log.info("Deleting checkpoint %d", action.epoch)
                self.unit.delete(action.epoch)

    def complete_epochs(self) -> list[int]:
        """Epochs whose checkpoint can be resumed (all three records committed)."""
        return self.unit.complete_epochs()

    def latest_complete(self) -> int | None:
        """The newest complete checkpoint's epoch, hashes verified (None: none)."""
        return self.unit.latest_complete()

    def require_complete(self, epoch: int) -> None:
        self.unit.require_complete(epoch)

    def load_model(self, model: Any, epoch: int) -> Any:
        # The module's own record is the target: stored dtypes (f16 in CompactRecorder) are
        # converted back to the module's.
        record = self.unit.load(epoch, "model", target=model.into_record())
        return _loaded(model, model.load_record(record))

    def load_optim(self, optim: Any, epoch: int) -> Any:
        return _loaded(optim, optim.load_record(self.unit.load(epoch, "optim")))

    def load_scheduler(self, scheduler: Any, epoch: int) -> Any:
        # The record is part of the unit: a missing file is an error (require_complete), never a
        # silently restarted schedule.
        record = self.unit.load(epoch, "scheduler")
        load = getattr(scheduler, "load_record", None)
        if not callable(load):
            if record is not None:
                raise TypeError(
                    f"checkpoint {epoch} holds a scheduler state, but {type(scheduler).__name__} "
                    "has no load_record(record) to restore it"
                )
            return scheduler
        return _loaded(scheduler, load(record))


def _scheduler_record(scheduler: Any) -> Any:
    to_record = getattr(scheduler, "to_record", None)
    return to_record() if callable(to_record) else None


def _loaded(original: Any, result: Any) -> Any:
    # Burn's load_record returns a new value; a Python object may load in place and return None.
    return original if result is None else result
