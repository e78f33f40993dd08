"""`DataLoader`: batches of a dataset, one epoch per `iter()`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from burn_dataset._base import check_dataset, dataset_len
from burn_dataset.dataloader._batcher import batch_function
from burn_dataset.dataloader._iterator import DataLoaderIterator
from burn_dataset.dataloader._shard import all_shards, rank_shard
from burn_dataset.transform._partial import PartialDataset


class DataLoader:
    """Iterates over a dataset in batches; each `iter(loader)` is a new epoch.

    Usually built with `DataLoaderBuilder`. With a shuffle seed, epoch `e` visits the items in
    the order `numpy.random.default_rng([seed, e]).permutation(n)`: deterministic for a seed,
    different every epoch, and independent of `num_workers`. The last batch keeps the leftover
    items (it may be smaller than `batch_size`).

    Args:
        batcher: a `Batcher` (or callable `items, device -> batch`).
        dataset: the dataset to load.
        batch_size: items per batch, >= 1.
        shuffle: a seed (int) to shuffle every epoch, or None to keep the dataset order.
        num_workers: threads building batches in the background; 0 builds them in the caller.
        device: passed to the batcher with every batch.
        prefetch: batches built ahead of the consumer when `num_workers > 0` (default
            `2 * num_workers`).
        timeout: seconds to wait for each batch from the workers (None: no limit); a batch
            not built in time raises `TimeoutError` naming it. Needs `num_workers > 0` (as in
            PyTorch): with no workers the batch is built by the caller itself.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> loader = DataLoader(lambda items, device: sum(items), InMemDataset(range(10)), 4)
        >>> list(loader), loader.num_items(), len(loader)
        ([6, 22, 17], 10, 3)
    """

    def __init__(
        self,
        batcher: Any,
        dataset: Any,
        batch_size: int = 1,
        shuffle: int | None = None,
        num_workers: int = 0,
        device: Any = None,
        prefetch: int | None = None,
        timeout: float | None = None,
        *,
        _epoch: int = 0,
    ) -> None:
        self._batcher = batcher
        self._batch_fn = batch_function(batcher)
        self._dataset = check_dataset(dataset)
        self._batch_size = check_positive(batch_size, "batch_size", minimum=1)
        self._seed = None if shuffle is None else check_positive(shuffle, "shuffle seed", 0)
        self._num_workers = check_positive(num_workers, "num_workers", minimum=0)
        self._device = device
        if prefetch is None:
            prefetch = 2 * self._num_workers
        self._prefetch = check_positive(prefetch, "prefetch", minimum=0)
        if self._num_workers > 0 and self._prefetch < 1:
            raise ValueError("prefetch must be >= 1 when num_workers > 0")
        if timeout is not None:
            if (
                isinstance(timeout, bool)
                or not isinstance(timeout, int | float)
                or not (0 < timeout < float("inf"))
            ):
                raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
            if self._num_workers == 0:
                raise ValueError(
                    "timeout needs num_workers > 0: without workers the caller builds each batch"
                )
        self._timeout = timeout
        self._epoch = _epoch
        self._epoch_lock = threading.Lock()

    # -- configuration -------------------------------------------------------------------------

    @property
    def dataset(self) -> Any:
        return self._dataset

    @property
    def batcher(self) -> Any:
        return self._batcher

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def num_workers(self) -> int:
        return self._num_workers

    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def device(self) -> Any:
        return self._device

    @property
    def epoch(self) -> int:
        """How many epochs (iterators) this loader has started."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Make the next `iter()` start epoch `epoch` (0-based), e.g. when resuming training.

        With a shuffle seed the next epoch then visits the items in the order of epoch `epoch`,
        so a loader resumed at epoch `e` replays exactly the order an uninterrupted run saw.

        Example:
            >>> from burn_dataset import InMemDataset
            >>> loader = DataLoader(lambda items, device: items, InMemDataset(range(6)), 6, 7)
            >>> first, second = next(iter(loader)), next(iter(loader))
            >>> loader.set_epoch(1)
            >>> next(iter(loader)) == second, loader.epoch
            (True, 2)
        """
        epoch = check_positive(epoch, "epoch", minimum=0)
        with self._epoch_lock:
            self._epoch = epoch

    def num_items(self) -> int:
        """Number of items in one epoch."""
        return dataset_len(self._dataset)

    def __len__(self) -> int:
        """Number of batches in one epoch (the last may be partial)."""
        return -(-self.num_items() // self._batch_size)

    # -- iteration -----------------------------------------------------------------------------

    def _order(self, epoch: int) -> np.ndarray:
        n = self.num_items()
        if self._seed is None:
            return np.arange(n, dtype=np.int64)
        return np.random.default_rng([self._seed, epoch]).permutation(n)

    def iter(self) -> DataLoaderIterator:
        """Start a new epoch (Burn's `iter()`); same as `iter(loader)`."""
        return self._epoch_iterator(self._batch_fn)

    def _epoch_iterator(self, batch_fn: Any) -> DataLoaderIterator:
        with self._epoch_lock:
            epoch = self._epoch
            self._epoch += 1
        return DataLoaderIterator(
            self._dataset,
            self._order(epoch),
            self._batch_size,
            batch_fn,
            self._device,
            self._num_workers,
            self._prefetch,
            self._timeout,
        )

    def __iter__(self) -> DataLoaderIterator:
        return self.iter()

    def iter_shards(self, devices: Sequence[Any]) -> DataLoaderIterator:
        """Start a new epoch for data-parallel training in one process: each step yields a list
        of `Shard(batch, items, total)`, one per device, splitting the batch this loader would
        give into contiguous shares batched on each device (see `_shard.py`)."""
        if not devices:
            raise ValueError("iter_shards: needs at least one device")
        return self._epoch_iterator(all_shards(self._batch_fn, list(devices)))

    def shard(self, rank: int, world_size: int) -> DataLoader:
        """The loader rank `rank` of `world_size` processes iterates: each step yields its
        `Shard` of the global batch the whole loader would give (same order on every rank)."""
        if not 0 <= rank < world_size:
            raise ValueError(f"shard: rank {rank} is not in a world of {world_size}")
        out = self._with(self._dataset, self._device)
        out._batch_fn = rank_shard(self._batch_fn, rank, world_size)
        return out

    # -- derived loaders -----------------------------------------------------------------------

    def _with(self, dataset: Any, device: Any) -> DataLoader:
        return DataLoader(
            self._batcher,
            dataset,
            self._batch_size,
            self._seed,
            self._num_workers,
            device,
            self._prefetch,
            self._timeout,
            _epoch=self._epoch,
        )

    def to_device(self, device: Any) -> DataLoader:
        """The same loader, passing `device` to the batcher instead."""
        return self._with(self._dataset, device)

    def slice(self, start: int, end: int) -> DataLoader:
        """A loader over items `start..end-1` of the dataset (shuffled within the slice)."""
        return self._with(PartialDataset(self._dataset, start, end), self._device)

    def split(self, devices: Sequence[Any]) -> list[DataLoader]:
        """One loader per device over contiguous, equal slices (the last takes the remainder).

        Burn's `split_dataloader`, used to feed several devices in data-parallel training.

        Example:
            >>> from burn_dataset import InMemDataset
            >>> pair = lambda items, device: (device, items)
            >>> loader = DataLoader(pair, InMemDataset(range(5)), 8)
            >>> [next(iter(part)) for part in loader.split(["gpu:0", "gpu:1"])]
            [('gpu:0', [0, 1]), ('gpu:1', [2, 3, 4])]
        """
        if isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence):
            raise TypeError(f"devices must be a list of devices, got {type(devices).__name__}")
        if len(devices) == 0:
            raise ValueError("split needs at least one device, got an empty list")
        n, k = self.num_items(), len(devices)
        step = n // k
        loaders, start = [], 0
        for i, device in enumerate(devices):
            end = n if i == k - 1 else start + step
            loaders.append(self.slice(start, end).to_device(device))
            start = end
        return loaders

    def __repr__(self) -> str:
        return (
            f"DataLoader(items={self.num_items()}, batch_size={self._batch_size}, "
            f"shuffle={self._seed}, num_workers={self._num_workers}, device={self._device!r})"
        )


def split_dataloader(loader: DataLoader, devices: Sequence[Any]) -> list[DataLoader]:
    """Burn's free function: same as `loader.split(devices)`.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> loader = DataLoader(lambda items, device: items, InMemDataset([1, 2, 3]), 2)
        >>> [part.num_items() for part in split_dataloader(loader, ["cpu:0", "cpu:1"])]
        [1, 2]
    """
    return loader.split(devices)


def check_positive(value: Any, name: str, minimum: int) -> int:
    """Validate an int option that must be >= `minimum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)
