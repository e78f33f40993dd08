"""`ShuffledDataset`: a fixed random permutation of another dataset's items."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len, fetch_many
from burn_dataset.transform._rng import make_rng


class ShuffledDataset(Dataset[Any]):
    """Maps index `i` to `permutation[i]`, drawn once at construction (only indices are stored).

    Args:
        dataset: the source dataset.
        rng: a seed (int), a numpy `Generator` (its state advances), or None for a random order.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> ds = ShuffledDataset.with_seed(InMemDataset(range(5)), 42)
        >>> again = ShuffledDataset(InMemDataset(range(5)), 42)
        >>> sorted(ds) == [0, 1, 2, 3, 4], list(ds) == list(again)
        (True, True)
    """

    def __init__(self, dataset: Any, rng: Any = None) -> None:
        check_dataset(dataset)
        self._dataset = dataset
        self._indices = make_rng(rng).permutation(dataset_len(dataset)).astype(np.int64)

    @classmethod
    def new(cls, dataset: Any, rng: Any) -> ShuffledDataset:
        """Burn's constructor name (takes a Generator or a seed)."""
        return cls(dataset, rng)

    @classmethod
    def with_seed(cls, dataset: Any, seed: int) -> ShuffledDataset:
        """Shuffle reproducibly: the same seed always gives the same order."""
        return cls(dataset, seed)

    @property
    def indices(self) -> np.ndarray:
        """The permutation: item `i` of this dataset is item `indices[i]` of the source."""
        return self._indices.copy()

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= len(self._indices):
            return None
        return self._dataset.get(int(self._indices[index]))

    def get_many(self, indices: Any) -> list[Any]:
        n = len(self._indices)
        mapped = []
        for index in indices:
            index = check_index(index)
            if index >= n:
                raise IndexError(f"index {index} out of range for dataset of length {n}")
            mapped.append(int(self._indices[index]))
        return fetch_many(self._dataset, mapped)

    def __len__(self) -> int:
        return len(self._indices)
