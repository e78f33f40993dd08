"""`DataLoaderIterator`: one epoch of batches, built in the caller or by prefetching threads."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import numpy as np

from burn_dataset._base import fetch_many
from burn_dataset.dataloader._progress import Progress
from burn_dataset.dataloader._workers import Workers


class DataLoaderIterator(Iterator[Any]):
    """Yields the batches of one epoch, in a fixed order, and reports `progress()`.

    With `num_workers > 0`, a pool of threads builds up to `prefetch` batches ahead of the
    consumer; batches are still returned in order (a future per batch, consumed first-in
    first-out), so the output is identical to `num_workers == 0`. An exception raised while
    building a batch is re-raised by `next()` in the caller, and the remaining work is cancelled.

    Not created directly: use `iter(loader)`.

    Example:
        >>> from burn_dataset import DataLoaderBuilder, InMemDataset
        >>> loader = DataLoaderBuilder(lambda items, device: items).batch_size(2).build(
        ...     InMemDataset([1, 2, 3]))
        >>> it = iter(loader)
        >>> next(it), it.progress()
        ([1, 2], Progress(items_processed=2, items_total=3))
    """

    def __init__(
        self,
        dataset: Any,
        order: np.ndarray,
        batch_size: int,
        batch_fn: Callable[[list[Any], Any], Any],
        device: Any,
        num_workers: int,
        prefetch: int,
        timeout: float | None = None,
    ) -> None:
        self._dataset = dataset
        self._order = order
        self._batch_size = batch_size
        self._batch_fn = batch_fn
        self._device = device
        self._total = len(order)
        self._num_batches = -(-self._total // batch_size)
        self._next_to_yield = 0
        self._next_to_submit = 0
        self._items_processed = 0
        self._lock = threading.Lock()
        self._pending: collections.deque[Future[Any]] = collections.deque()
        self._executor: Workers | None = None
        self._prefetch = prefetch
        self._timeout = timeout
        if num_workers > 0 and self._num_batches > 0:
            self._executor = Workers(num_workers)
            self._fill()

    def _make_batch(self, k: int) -> Any:
        indices = self._order[k * self._batch_size : (k + 1) * self._batch_size].tolist()
        try:
            items = fetch_many(self._dataset, indices)
            return self._batch_fn(items, self._device)
        except BaseException as err:
            # Say which batch failed: the traceback alone points into a worker thread.
            err.add_note(
                f"raised by the data loader while building batch {k} "
                f"(dataset indices {indices[:4]}{' ...' if len(indices) > 4 else ''})"
            )
            raise

    def _fill(self) -> None:
        assert self._executor is not None
        while self._next_to_submit < self._num_batches and len(self._pending) < self._prefetch:
            self._pending.append(self._executor.submit(self._make_batch, self._next_to_submit))
            self._next_to_submit += 1

    def __iter__(self) -> DataLoaderIterator:
        return self

    def __next__(self) -> Any:
        with self._lock:
            k = self._next_to_yield
            if k >= self._num_batches:
                self.close()
                raise StopIteration
            if self._executor is None:
                try:
                    batch = self._make_batch(k)
                except BaseException:
                    self._next_to_yield = self._num_batches
                    raise
            else:
                future = self._pending.popleft()
                try:
                    batch = self._wait(future, k)
                except BaseException:
                    # End the epoch: later next() calls stop instead of hanging or reordering.
                    self._next_to_yield = self._num_batches
                    self.close()
                    raise
                self._fill()
            self._next_to_yield = k + 1
            self._items_processed += min(self._batch_size, self._total - k * self._batch_size)
            return batch

    def _wait(self, future: Future, k: int) -> Any:
        try:
            return future.result(self._timeout)
        except FutureTimeout:
            indices = self._order[k * self._batch_size : (k + 1) * self._batch_size].tolist()
            raise TimeoutError(
                f"DataLoader: batch {k} (dataset indices {indices[:4]}"
                f"{' ...' if len(indices) > 4 else ''}) was not built within the "
                f"{self._timeout} s timeout"
            ) from None

    def progress(self) -> Progress:
        """Items in the batches returned so far, out of this epoch's total."""
        return Progress(self._items_processed, self._total)

    def close(self) -> None:
        """End the epoch early: stop the worker threads and drop prefetched batches.

        Called automatically at the end of an epoch, after an error, and on garbage collection;
        call it yourself when you break out of a loop and want the threads gone now.
        """
        self._next_to_yield = self._num_batches
        executor, self._executor = self._executor, None
        if executor is not None:
            for future in self._pending:
                future.cancel()
            self._pending.clear()
            executor.close()

    def __del__(self) -> None:
        if getattr(self, "_executor", None) is not None:
            self.close()
