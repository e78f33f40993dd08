"""Where a training step's time goes, per rank: `StepTimes`, switched on by
`LearnerBuilder.step_times()`.

The training loop and the strategies already pass through each phase boundary of a step (the
batch arriving, the first gradient of the backward pass, the end of `train_step`, the wait on the
gradient reduction, the loss check, the optimizer step, the metrics hand-off, the agreement to
go on); at each one they call `lap(phase)`, which adds the time since the previous mark to that
phase. The phases therefore partition each epoch's wall time, whatever the step does.

Phases (`PHASES`):
- `data`: the loader's `next()` (building the batch on the host and moving it to the device);
- `forward`: from `train_step`'s start to the first parameter gradient of the backward pass;
- `backward`: the rest of `train_step`;
- `collective`: blocked on the gradient reduction (data parallel: the buckets' wait, or the
  all-reduce after the pass) and, with sharded optimizer state, the all-gather of parameters;
- `loss_check`: reading the loss to check it is finite, when the step does it (values read
  every step, or several devices of one process; on a GPU this read waits for the device
  to finish the queued forward/backward: without `sync`, the GPU time shows up here);
- `optimizer`: the optimizer step (with sharded optimizer state: this rank's share);
- `metrics`: handing the step's item to the metrics (reads values on a GPU every `read_every`);
- `stop_check`: the ranks agreeing whether to stop (one small collective every
  `agree_every` steps of a launched data-parallel run);
- `other`: the loop's remaining work (learning rate, epoch start and end).

Overhead: one `time.perf_counter()` per phase per step (~1 us in all). On an asynchronous device
(a GPU) the host runs ahead of the device, so host times say what Python spent queuing work and
where it waited; `StepTimes(sync=True)` synchronises the device at every mark, so each phase then
holds its device time too (this slows training: a profiling run, not a measurement of speed).
The device is always synchronised at the start and end of each epoch (two syncs per epoch), so
each epoch's total is the device's time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

PHASES = (
    "data",
    "forward",
    "backward",
    "collective",
    "loss_check",
    "optimizer",
    "metrics",
    "stop_check",
    "other",
)


class StepTimes:
    """Per-epoch phase times of the training steps of one rank (see module doc).

    Attributes:
        epochs: one dict per finished training epoch: `epoch`, `steps`, `seconds` (wall time of
            the epoch, device synchronised at both ends), `cpu_seconds` (this process's CPU
            time over it, all threads) and the seconds of each phase.
        sync_steps: whether every mark synchronises the device (`sync=True`).
    """

    def __init__(self, sync: bool = False) -> None:
        self.sync_steps = bool(sync)
        self.epochs: list[dict[str, Any]] = []
        self._device_sync: Callable[[], None] | None = None
        self._current: dict[str, Any] | None = None
        self._start = self._last = 0.0

    def attach(self, model: Any) -> None:
        """Synchronise the device of `model`'s first parameter at the marks (none: no syncs)."""
        self._device_sync = None
        named = getattr(model, "named_parameters", None)
        if not callable(named):
            return
        for _, param in named():
            sync = getattr(param.val().device, "sync", None)
            self._device_sync = sync if callable(sync) else None
            return

    def _sync(self) -> None:
        if self._device_sync is not None:
            self._device_sync()

    def begin_epoch(self, epoch: int) -> None:
        """Start timing the training epoch `epoch` (the device synchronised first)."""
        self._sync()
        self._current = {"epoch": epoch, "steps": 0, **dict.fromkeys(PHASES, 0.0)}
        self._cpu = time.process_time()
        self._start = self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        """Add the time since the previous mark to `phase` (no-op outside an epoch)."""
        current = self._current
        if current is None:
            return
        if self.sync_steps:
            self._sync()
        now = time.perf_counter()
        current[phase] += now - self._last
        self._last = now

    def step_done(self) -> None:
        if self._current is not None:
            self._current["steps"] += 1

    def end_epoch(self) -> None:
        """Close the epoch: the device synchronised, the rest of the time to `other`."""
        if self._current is None:
            return
        self._sync()
        self.lap("other")
        self._current["seconds"] = self._last - self._start
        self._current["cpu_seconds"] = time.process_time() - self._cpu
        self.epochs.append(self._current)
        self._current = None

    def summary(self, skip: int = 1) -> dict[str, Any]:
        """Averages over the epochs after the first `skip` (kernel compilation, warm-up):
        `epochs`, `steps`, `seconds` (their total), `step_ms` (wall time per step), `cpu_ms`
        (process CPU time per step: on a loaded machine, less noisy than wall time) and
        `phases_ms` (each phase's milliseconds per step; they add up to `step_ms`)."""
        timed = self.epochs[skip:]
        steps = sum(e["steps"] for e in timed)
        seconds = sum(e["seconds"] for e in timed)
        per = 1000.0 / steps if steps else float("nan")
        return {
            "epochs": len(timed),
            "steps": steps,
            "seconds": seconds,
            "step_ms": seconds * per,
            "cpu_ms": sum(e["cpu_seconds"] for e in timed) * per,
            "phases_ms": {p: sum(e[p] for e in timed) * per for p in PHASES},
            "synced": self.sync_steps,
        }


def lap(times: StepTimes | None, phase: str) -> None:
    """`times.lap(phase)` when timing is on (the strategies' call sites stay one line)."""
    if times is not None:
        times.lap(phase)


@contextmanager
def forward_mark(times: StepTimes | None, params: list[Any]) -> Iterator[None]:
    """Within the block (a `train_step`), lap `forward` when the backward pass finishes the
    first of `params`' gradients (autodiff's `grad_ready`); nothing when timing is off or the
    parameters are not on an Autodiff device. The bucket reducer, which holds its own
    `grad_ready` watch, marks it itself (`_overlap._Step`)."""
    tensors = [p.val() for p in params] if times is not None else []
    if not tensors or not tensors[0].device.backend.is_autodiff:
        yield
        return
    seen = []

    def first(i: int, grad: Any) -> None:
        if not seen:
            seen.append(i)
            times.lap("forward")

    with tensors[0].device.backend.grad_ready(tensors, first):
        yield
