"""Burn's multi-gpus example: the guide's model trained data-parallel with
`TrainingStrategy.MultiDevice` (threads, one per device) or `DistributedDataParallel`
(processes started by `python -m burn_train.launch`)."""

from .training import run

__all__ = ["run"]
