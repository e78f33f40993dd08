"""`WindowsDataset`: overlapping windows of consecutive items (for sequences, time series)."""

from __future__ import annotations

import operator
from typing import Any

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len, fetch_many


class WindowsDataset(Dataset[list[Any]]):
    """Item `i` is `[dataset[i], ..., dataset[i + size - 1]]`; there are `len - size + 1` of them.

    Args:
        dataset: the source dataset.
        size: the window length, >= 1. A dataset shorter than `size` yields no windows.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> list(WindowsDataset(InMemDataset([1, 2, 3, 4]), 3))
        [[1, 2, 3], [2, 3, 4]]
    """

    def __init__(self, dataset: Any, size: int) -> None:
        check_dataset(dataset)
        if isinstance(size, bool):
            raise TypeError("window size must be an int, got bool")
        try:
            size = operator.index(size)
        except TypeError:
            raise TypeError(f"window size must be an int, got {type(size).__name__}") from None
        if size < 1:
            raise ValueError(f"window size must be >= 1, got {size}")
        self._dataset, self._size = dataset, size

    @classmethod
    def new(cls, dataset: Any, size: int) -> WindowsDataset:
        """Burn's constructor name."""
        return cls(dataset, size)

    @property
    def size(self) -> int:
        return self._size

    def get(self, index: int) -> list[Any] | None:
        index = check_index(index)
        if index >= len(self):
            return None
        return fetch_many(self._dataset, range(index, index + self._size))

    def __len__(self) -> int:
        return max(0, dataset_len(self._dataset) - self._size + 1)
