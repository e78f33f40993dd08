"""Daemon worker threads that build batches for one epoch.

`concurrent.futures.ThreadPoolExecutor` joins its threads when the interpreter exits, so one
dataset item that blocks (a hung network read, a stuck decoder) kept a Ctrl-C'd process alive
until it returned (28 s in the report that found it). These workers are daemon threads: the
process exits at once, and `close()` tells them to stop without waiting for them.

Example:
    >>> w = Workers(2)
    >>> f = w.submit(lambda x: x * 2, 21)
    >>> f.result(timeout=5)
    42
    >>> w.close()
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class Workers:
    """`n` daemon threads taking (future, fn, arg) tasks from one queue, in submission order."""

    def __init__(self, n: int, name: str = "burn-dataloader") -> None:
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True) for i in range(n)
        ]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Future:
        future: Future = Future()
        self._tasks.put((future, fn, arg))
        return future

    def _run(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn, arg = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(arg)
            except BaseException as err:  # noqa: BLE001 - handed to the consumer
                future.set_exception(err)
            else:
                future.set_result(result)

    def close(self) -> None:
        """Stop after the tasks in progress; queued futures should be cancelled by the caller."""
        for _ in self._threads:
            self._tasks.put(None)
