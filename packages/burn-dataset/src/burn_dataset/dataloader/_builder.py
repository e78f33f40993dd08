"""`DataLoaderBuilder`: Burn's fluent way to configure a `DataLoader`."""

from __future__ import annotations

from typing import Any

from burn_dataset.dataloader._batcher import batch_function
from burn_dataset.dataloader._loader import DataLoader, check_positive


class DataLoaderBuilder:
    """Configure batch size, shuffling, workers and device, then `build(dataset)`.

    Each option method returns the builder, so calls chain as in Burn.

    Args:
        batcher: a `Batcher` (`batch(items, device)`) or a callable `items, device -> batch`.

    Example:
        >>> import numpy as np
        >>> from burn_dataset import InMemDataset
        >>> class Stack:
        ...     def batch(self, items, device):
        ...         return np.stack(items)
        >>> loader = (
        ...     DataLoaderBuilder(Stack())
        ...     .batch_size(2)
        ...     .shuffle(42)
        ...     .num_workers(2)
        ...     .build(InMemDataset([np.full(3, i) for i in range(5)]))
        ... )
        >>> [batch.shape for batch in loader]
        [(2, 3), (2, 3), (1, 3)]
    """

    def __init__(self, batcher: Any) -> None:
        batch_function(batcher)  # validate now, where the mistake is made
        self._batcher = batcher
        self._batch_size = 1
        self._seed: int | None = None
        self._num_workers = 0
        self._device: Any = None
        self._prefetch: int | None = None
        self._timeout: float | None = None

    @classmethod
    def new(cls, batcher: Any) -> DataLoaderBuilder:
        """Burn's constructor name."""
        return cls(batcher)

    def batch_size(self, batch_size: int) -> DataLoaderBuilder:
        """Items per batch (default 1); the last batch of an epoch keeps the remainder."""
        self._batch_size = check_positive(batch_size, "batch_size", minimum=1)
        return self

    def shuffle(self, seed: int) -> DataLoaderBuilder:
        """Shuffle every epoch with a new order derived from `seed` (reproducible)."""
        self._seed = check_positive(seed, "shuffle seed", minimum=0)
        return self

    def num_workers(self, num_workers: int) -> DataLoaderBuilder:
        """Background threads that build and prefetch batches (default 0: build in the caller)."""
        self._num_workers = check_positive(num_workers, "num_workers", minimum=0)
        return self

    def set_device(self, device: Any) -> DataLoaderBuilder:
        """The device handed to `batcher.batch(items, device)` (default None)."""
        self._device = device
        return self

    def prefetch(self, batches: int) -> DataLoaderBuilder:
        """How many batches workers may build ahead (default `2 * num_workers`)."""
        self._prefetch = check_positive(batches, "prefetch", minimum=1)
        return self

    def timeout(self, seconds: float) -> DataLoaderBuilder:
        """Seconds to wait for each batch from the workers; a late batch raises TimeoutError
        naming it (needs `num_workers > 0`)."""
        self._timeout = seconds
        return self

    def build(self, dataset: Any) -> DataLoader:
        """Create the data loader over `dataset`."""
        return DataLoader(
            self._batcher,
            dataset,
            self._batch_size,
            self._seed,
            self._num_workers,
            self._device,
            self._prefetch,
            self._timeout,
        )
