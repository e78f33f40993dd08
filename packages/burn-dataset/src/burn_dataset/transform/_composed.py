"""`ComposedDataset`: several datasets concatenated end to end, without copying."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len


class ComposedDataset(Dataset[Any]):
    """The items of each dataset in turn: indices `0..len(a)-1` are `a`, then `b`, ...

    Lengths are read once at construction, so the composed datasets must not change size.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> ds = ComposedDataset([InMemDataset([1, 2]), InMemDataset([]), InMemDataset([3])])
        >>> len(ds), list(ds)
        (3, [1, 2, 3])
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        if isinstance(datasets, Dataset) or not isinstance(datasets, Iterable):
            raise TypeError(
                f"ComposedDataset expects a list of datasets, got {type(datasets).__name__}"
            )
        self._datasets = [check_dataset(d, f"datasets[{i}]") for i, d in enumerate(datasets)]
        # ends[k] = total length of datasets[0..k]; bisect finds the owner of an index in O(log k).
        self._ends: list[int] = []
        total = 0
        for d in self._datasets:
            total += dataset_len(d)
            self._ends.append(total)

    @classmethod
    def new(cls, datasets: Iterable[Any]) -> ComposedDataset:
        """Burn's constructor name."""
        return cls(datasets)

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= len(self):
            return None
        k = bisect.bisect_right(self._ends, index)
        start = self._ends[k - 1] if k > 0 else 0
        return self._datasets[k].get(index - start)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0
