"""`SamplerDataset`: a dataset of a chosen size whose items are random draws from another."""

from __future__ import annotations

import operator
import threading
from typing import Any

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len
from burn_dataset.transform._rng import make_rng


class SamplerDataset(Dataset[Any]):
    """`size` items, each a random draw from `dataset` made when it is accessed.

    As in Burn, `get(i)` for any `i < size` returns a fresh draw (the index only bounds the
    length), so every epoch over a sampler sees a new sample. With replacement (the default) each
    draw is uniform and independent; without replacement the draws walk through a random
    permutation of the source and start a new one once it is used up, so any `len(dataset)`
    consecutive draws contain every item exactly once. The sequence of draws is reproducible for
    a given `seed` (draws are serialized with a lock, so threads share one sequence).

    Args:
        dataset: the source dataset (must not be empty).
        size: the number of items this dataset reports; may exceed `len(dataset)`.
        replacement: sample with (True) or without (False) replacement.
        seed: an int, a numpy Generator, or None for OS entropy.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> ds = SamplerDataset(InMemDataset(["a", "b", "c"]), 6, replacement=False, seed=1)
        >>> draws = list(ds)
        >>> len(draws), sorted(draws[:3]), sorted(draws[3:])
        (6, ['a', 'b', 'c'], ['a', 'b', 'c'])
    """

    def __init__(self, dataset: Any, size: int, replacement: bool = True, seed: Any = None) -> None:
        check_dataset(dataset)
        if isinstance(size, bool):
            raise TypeError("size must be an int, got bool")
        try:
            size = operator.index(size)
        except TypeError:
            raise TypeError(f"size must be an int, got {type(size).__name__}") from None
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be a bool, got {type(replacement).__name__}")
        if size > 0 and dataset_len(dataset) == 0:
            raise ValueError("cannot sample from an empty dataset")
        self._dataset, self._size, self._replacement = dataset, size, replacement
        self._rng = make_rng(seed)
        self._lock = threading.Lock()
        self._pool: list[int] = []  # remaining indices of the current permutation (popped at end)

    @classmethod
    def new(cls, dataset: Any, size: int, seed: Any = None) -> SamplerDataset:
        """Burn's default: sampling with replacement."""
        return cls(dataset, size, True, seed)

    @classmethod
    def with_replacement(cls, dataset: Any, size: int, seed: Any = None) -> SamplerDataset:
        return cls(dataset, size, True, seed)

    @classmethod
    def without_replacement(cls, dataset: Any, size: int, seed: Any = None) -> SamplerDataset:
        return cls(dataset, size, False, seed)

    @property
    def replacement(self) -> bool:
        return self._replacement

    def _next_index(self) -> int:
        with self._lock:
            n = dataset_len(self._dataset)
            if self._replacement:
                return int(self._rng.integers(n))
            if not self._pool:
                # Reversed so that pop() (O(1) from the end) yields the permutation in order.
                self._pool = self._rng.permutation(n).tolist()[::-1]
            return self._pool.pop()

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= self._size:
            return None
        return self._dataset.get(self._next_index())

    def __len__(self) -> int:
        return self._size
