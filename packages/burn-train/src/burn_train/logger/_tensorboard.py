"""`TensorBoardMetricLogger`: TensorBoard event files through tensorboardX (extra `tensorboard`)."""

from __future__ import annotations

import os
from pathlib import Path

from ._scalar import ScalarMetricLogger


class TensorBoardMetricLogger(ScalarMetricLogger):
    """Writes `events.out.tfevents.*` under `directory` (open it with `tensorboard --logdir`).

    Scalars are `<split>/<Metric>` per logged item and `epoch/<split>/<Metric>` per epoch mean.

    Args:
        directory: the log directory (created).
        flush_secs: how often tensorboardX flushes its queue; `close()` always flushes.

    Raises:
        ImportError: tensorboardX is missing (install `burn-train[tensorboard]`).
    """

    def __init__(self, directory: str | os.PathLike, flush_secs: int = 10) -> None:
        try:
            from tensorboardX import SummaryWriter
        except ImportError as e:
            raise ImportError(
                "TensorBoardMetricLogger needs tensorboardX: pip install 'burn-train[tensorboard]'"
            ) from e
        super().__init__()
        self.directory = Path(directory)
        self._writer = SummaryWriter(logdir=str(self.directory), flush_secs=flush_secs)

    def _scalar(self, key: str, value: float, step: int) -> None:
        self._writer.add_scalar(key, value, global_step=step)

    def end_epoch(self, epoch, split) -> None:
        super().end_epoch(epoch, split)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
