"""Asynchronous all-reduce: `all_reduce_async(t, comm)` starts the reduction and returns a `Work`
whose `wait()` gives the result, so a caller (a data-parallel step reducing gradient buckets
while the backward pass still runs) keeps computing meanwhile.

- `ProcessGroup` (TCP): one background thread per group runs the queued reductions in the
  order they were started (every rank starts them in the same order, so the ranks' streams
  stay in step); the socket time overlaps the caller's compute.
- `NcclGroup`: the reduction runs on a second CUDA stream that first waits for the caller's
  stream (the gradient is computed there); `wait()` makes the caller's stream wait for the
  reduction, without blocking the host.
- Other communicators (`ThreadCommunicator`): run at once; `wait()` returns the result.

While reductions are in flight, the caller must not run other collectives on the same group
(they would interleave on its sockets): wait for every `Work` first.

Example (world size 1):
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> from burn_tensor.collective import ProcessGroup, all_reduce_async
    >>> comm = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    >>> work = all_reduce_async(Tensor.from_floats([1.0, 2.0], NdArray().device(0)), comm)
    >>> work.wait().to_data().to_vec()
    [1.0, 2.0]
    >>> comm.close()
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from ._group import check_op


class Work:
    """A started collective; `wait()` returns its result (or raises its error)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None

    def _finish(self, result: Any = None, error: BaseException | None = None) -> None:
        self._result, self._error = result, error
        self._done.set()

    def is_completed(self) -> bool:
        return self._done.is_set()

    def wait(self) -> Any:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result


def done(result: Any) -> Work:
    """A `Work` already finished with `result`."""
    w = Work()
    w._finish(result)
    return w


class Runner:
    """One daemon thread running submitted functions in submission order."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, work = item
            try:
                work._finish(fn())
            except BaseException as err:  # noqa: BLE001 - handed to the waiter
                work._finish(error=err)

    def submit(self, fn: Callable[[], Any]) -> Work:
        work = Work()
        self._queue.put((fn, work))
        return work

    def stop(self) -> None:
        self._queue.put(None)


def all_reduce_async(tensor: Any, comm: Any, op: str = "sum") -> Work:
    """Start `all_reduce(tensor, comm, op)`; returns its `Work`. Called by every rank in the
    same order as the other collectives."""
    check_op(op)
    start = getattr(comm, "all_reduce_async", None)
    if start is None:
        return done(comm.all_reduce(tensor, op))
    return start(tensor, op)
