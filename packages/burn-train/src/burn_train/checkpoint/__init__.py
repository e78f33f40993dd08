"""Checkpointing (Burn's `burn::train::checkpoint`): file checkpointer and strategies.

Example:
    >>> from burn_train.checkpoint import KeepLastNCheckpoints
    >>> KeepLastNCheckpoints(1).checkpointing(2, None)
    [Save, Delete(1)]
"""

from ._file import CheckpointerError, FileCheckpointer
from ._strategy import (
    CheckpointingAction,
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from ._unit import CheckpointUnit

__all__ = [
    "CheckpointerError",
    "CheckpointingAction",
    "CheckpointUnit",
    "CheckpointingStrategy",
    "ComposedCheckpointingStrategy",
    "FileCheckpointer",
    "KeepLastNCheckpoints",
    "MetricCheckpointingStrategy",
]
