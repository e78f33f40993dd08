"""Reading the steps' values back from the device in batches, not once per step.

On an asynchronous backend (a GPU: `Backend.checks_force_sync`), reading a value waits for every
queued kernel, and the device then idles while Python processes the metrics and records the next
step. The Learner therefore keeps each step's item (loss, logits, targets: tensors on the device)
in a `Readback` and reads `every` steps' values together: their tensors are flattened and
concatenated per (device, dtype) on the device, and each group crosses to the host in one read.
So `every` steps cost one read per dtype (usually two: float values, int targets) instead of one
per tensor per metric per step. The items then reach the loss check and the metrics in step
order, with their tensors replaced by the numpy arrays read, so every logged value is the number
an eager read gives (`test_readback.py` checks both).

What the delay changes, and why it is acceptable:
- a NaN loss is found up to `every - 1` steps after the optimizer step that applied it; the
  model given in `NonFiniteLossError.model` is the one from before the batch's first step (its
  losses were all checked finite), not the one right before the bad step;
- a metric that stops training (the interrupter) takes effect at the end of the batch;
- the dashboard refreshes once per batch of steps.
`LearnerBuilder.read_every(1)` restores per-step reads (the default on synchronous backends such
as NdArray, where a read waits for nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

#: steps read together on an asynchronous backend when `read_every` is not set
DEFAULT_EVERY_ASYNC = 16


def default_every(model: Any) -> int:
    """1 on a synchronous backend (or a model without parameters), else `DEFAULT_EVERY_ASYNC`."""
    named = getattr(model, "named_parameters", None)
    if not callable(named):
        return 1
    for _, param in named():
        backend = param.val().device.backend
        while backend is not None:  # a decorator (Autodiff, Fusion) waits when its inner does
            if getattr(backend, "checks_force_sync", False):
                return DEFAULT_EVERY_ASYNC
            backend = backend.inner
        return 1
    return 1


def _tensor_fields(item: Any) -> list[tuple[str, Any]]:
    """The (name, tensor) fields of a dataclass item; [] for any other item (read as it is)."""
    from burn_tensor import Tensor

    if item is None or not dataclasses.is_dataclass(item) or isinstance(item, type):
        return []
    return [
        (f.name, getattr(item, f.name))
        for f in dataclasses.fields(item)
        if isinstance(getattr(item, f.name), Tensor)
    ]


def detach(item: Any) -> Any:
    """`item` with its autodiff tensor fields replaced by their inner tensors: a pending item
    keeps its values, not the autodiff graph (the forward pass's saved activations) behind them."""
    inner = {
        name: t.inner() for name, t in _tensor_fields(item) if t.device.backend.is_autodiff
    }
    return dataclasses.replace(item, **inner) if inner else item


def read_items(items: list[Any]) -> list[Any]:
    """`items` with every tensor field replaced by its values as a numpy array, read with one
    host read per (device, dtype) of all the items' tensors together."""
    from burn_tensor import Tensor

    fields = [_tensor_fields(item) for item in items]
    groups: dict[tuple[Any, Any], list[tuple[int, str, Any]]] = {}
    for i, fs in enumerate(fields):
        for name, t in fs:
            t = t.inner() if t.device.backend.is_autodiff else t  # no graph for a read
            groups.setdefault((t.device, t.dtype), []).append((i, name, t))
    values: list[dict[str, np.ndarray]] = [{} for _ in items]
    for members in groups.values():
        tensors = [t for _, _, t in members]
        if len(tensors) == 1:
            flat = tensors[0].to_data().numpy().reshape(-1)
        else:
            flat = Tensor.cat([t.reshape([-1]) for t in tensors], 0).to_data().numpy()
        offset = 0
        for i, name, t in members:
            n = t.numel()
            values[i][name] = flat[offset : offset + n].reshape(t.dims())
            offset += n
    return [
        dataclasses.replace(item, **vals) if vals else item
        for item, vals in zip(items, values, strict=True)
    ]


class Readback:
    """Steps' (item, metadata) waiting on the device; `handle(item, meta)` runs on each, in step
    order, when `every` of them are pending or at `flush()` (epoch end, interrupt, error)."""

    def __init__(self, every: int, handle: Callable[[Any, Any], None]) -> None:
        if every < 1:
            raise ValueError(f"read_every must be >= 1, got {every}")
        self.every = every
        self.handle = handle
        self.pending: list[tuple[Any, Any]] = []

    def push(self, item: Any, meta: Any) -> bool:
        """Queue a step's output; True when this call read and handled the pending steps."""
        self.pending.append((detach(item) if self.every > 1 else item, meta))
        if len(self.pending) < self.every:
            return False
        self.flush()
        return True

    def flush(self) -> None:
        """Read every pending step's values now and hand each to `handle`, in order."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        items = [item for item, _ in pending]
        if self.every > 1:  # per-step reads (every == 1) leave the items as the step gave them
            items = read_items(items)
        for item, (_, meta) in zip(items, pending, strict=True):
            self.handle(item, meta)
