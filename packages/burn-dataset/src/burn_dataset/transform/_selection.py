"""`SelectionDataset`: an arbitrary list of indices into another dataset."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len, fetch_many
from burn_dataset.transform._rng import make_rng


class SelectionDataset(Dataset[Any]):
    """Item `i` is `dataset[indices[i]]`; indices may repeat and come in any order.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> src = InMemDataset(list("abcde"))
        >>> list(SelectionDataset.from_indices_checked(src, [4, 0, 0]))
        ['e', 'a', 'a']
        >>> [list(p) for p in SelectionDataset.new_select_all(src).split(2)]
        [['a', 'b'], ['c', 'd', 'e']]
    """

    def __init__(self, dataset: Any, indices: Iterable[int], *, checked: bool = True) -> None:
        check_dataset(dataset)
        self._dataset = dataset
        if isinstance(indices, np.ndarray):
            indices = indices.tolist()
        try:
            self._indices = [operator.index(i) for i in indices]
        except TypeError:
            raise TypeError("indices must be an iterable of ints") from None
        if checked:
            n = dataset_len(dataset)
            bad = [i for i in self._indices if not 0 <= i < n]
            if bad:
                raise IndexError(
                    f"selection indices must be in [0, {n}), got out-of-range {bad[:5]}"
                    + (" ..." if len(bad) > 5 else "")
                )

    @classmethod
    def from_indices_checked(cls, dataset: Any, indices: Iterable[int]) -> SelectionDataset:
        """Select `indices`, verifying each is within the source's range."""
        return cls(dataset, indices, checked=True)

    @classmethod
    def from_indices_unchecked(cls, dataset: Any, indices: Iterable[int]) -> SelectionDataset:
        """Select `indices` without range checks (an out-of-range index reads as None)."""
        return cls(dataset, indices, checked=False)

    @classmethod
    def new_select_all(cls, dataset: Any) -> SelectionDataset:
        """Select every item, in order."""
        return cls(dataset, range(dataset_len(check_dataset(dataset))), checked=False)

    @classmethod
    def new_shuffled(cls, dataset: Any, seed: Any) -> SelectionDataset:
        """Select every item in a random order (seed: int, Generator or None)."""
        return cls.new_select_all(dataset).shuffle(seed)

    @property
    def indices(self) -> list[int]:
        return list(self._indices)

    def shuffle(self, seed: Any) -> SelectionDataset:
        """Shuffle the selected indices in place; returns self for chaining."""
        self._indices = [self._indices[i] for i in make_rng(seed).permutation(len(self._indices))]
        return self

    def slice(self, start: int, end: int) -> SelectionDataset:
        """A new selection over `indices[start:end]` (0 <= start <= end <= len)."""
        n = len(self._indices)
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= n):
            raise ValueError(f"slice needs 0 <= start <= end <= {n}, got start={start}, end={end}")
        return SelectionDataset(self._dataset, self._indices[start:end], checked=False)

    def split(self, num: int) -> list[SelectionDataset]:
        """`num` contiguous selections of `len // num` indices; the last takes the rest."""
        if isinstance(num, bool) or not isinstance(num, int) or num < 1:
            raise ValueError(f"num must be an int >= 1, got {num!r}")
        n = len(self._indices)
        size = n // num
        return [self.slice(i * size, n if i == num - 1 else (i + 1) * size) for i in range(num)]

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= len(self._indices):
            return None
        return self._dataset.get(self._indices[index])

    def get_many(self, indices: Any) -> list[Any]:
        n = len(self._indices)
        mapped = []
        for index in indices:
            index = check_index(index)
            if index >= n:
                raise IndexError(f"index {index} out of range for dataset of length {n}")
            mapped.append(self._indices[index])
        return fetch_many(self._dataset, mapped)

    def __len__(self) -> int:
        return len(self._indices)
