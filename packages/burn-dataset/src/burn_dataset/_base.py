"""The `Dataset` protocol: a fixed-length, randomly accessible collection of items."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import Any, Generic, TypeVar

I = TypeVar("I")  # noqa: E741 - Burn's name for the item type


def check_index(index: Any) -> int:
    """Validate a `get` index and return it as a plain int.

    Burn indexes with `usize`, so a negative or non-integer index is a programming error here, not
    "past the end": we raise instead of returning None so that the bug surfaces where it was made.
    """
    if isinstance(index, bool):
        raise TypeError(f"dataset index must be an int, got bool ({index!r})")
    try:
        value = operator.index(index)
    except TypeError:
        raise TypeError(
            f"dataset index must be an int, got {type(index).__name__} ({index!r})"
        ) from None
    if value < 0:
        raise IndexError(
            f"dataset index must be >= 0, got {value}; use dataset[{value}] for Python-style "
            "negative indexing"
        )
    return value


class Dataset(Generic[I]):
    """Base class for datasets: `get(index)` returns the item, or None past the end.

    Subclasses implement `get` and either `__len__` or Burn's `len`; everything else (iteration,
    `dataset[i]`, `get_many`, `windows`) is derived from those two.

    Example:
        >>> class Squares(Dataset[int]):
        ...     def get(self, index):
        ...         index = check_index(index)
        ...         return index * index if index < 4 else None
        ...     def __len__(self):
        ...         return 4
        >>> ds = Squares()
        >>> ds.get(3), ds.get(4), ds.len(), list(ds), ds[-1]
        (9, None, 4, [0, 1, 4, 9], 9)
    """

    def get(self, index: int) -> I | None:
        """Return the item at `index`, or None when `index >= len(self)`."""
        raise NotImplementedError(f"{type(self).__name__} must implement get(index)")

    def __len__(self) -> int:
        # `len` and `__len__` default to each other; a subclass overriding neither gets a clear
        # error instead of infinite recursion.
        if type(self).len is Dataset.len:
            raise NotImplementedError(f"{type(self).__name__} must implement __len__ or len()")
        return self.len()

    def len(self) -> int:
        """Number of items (Burn's name; same as `len(dataset)`)."""
        if type(self).__len__ is Dataset.__len__:
            raise NotImplementedError(f"{type(self).__name__} must implement __len__ or len()")
        return self.__len__()

    def is_empty(self) -> bool:
        """True when the dataset has no items."""
        return len(self) == 0

    def get_many(self, indices: Sequence[int]) -> list[I]:
        """Return the items at `indices`; an index past the end raises IndexError.

        Sources with a cheaper bulk read (SQLite) override this.
        """
        items = []
        for index in indices:
            item = self.get(index)
            if item is None:
                raise IndexError(
                    f"index {index} out of range for dataset of length {dataset_len(self)}"
                )
            items.append(item)
        return items

    def iter(self) -> Iterator[I]:
        """Iterate over the items in index order (Burn's `iter()`)."""
        return DatasetIterator(self)

    def __iter__(self) -> Iterator[I]:
        return DatasetIterator(self)

    def __getitem__(self, key: int | slice) -> I | list[I]:
        """`dataset[i]` (negative allowed, IndexError past the end) or `dataset[a:b]` -> list."""
        n = len(self)
        if isinstance(key, slice):
            return self.get_many(range(*key.indices(n)))
        if isinstance(key, bool):
            raise TypeError("dataset index must be an int, got bool")
        try:
            index = operator.index(key)
        except TypeError:
            raise TypeError(
                f"dataset indices must be int or slice, got {type(key).__name__}"
            ) from None
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"index {key} out of range for dataset of length {n}")
        item = self.get(index)
        if item is None:
            raise IndexError(f"index {key} out of range for dataset of length {n}")
        return item

    def windows(self, size: int) -> Iterator[list[I]]:
        """Iterate over overlapping windows of `size` consecutive items (Burn's `Windows`)."""
        from burn_dataset.transform._window import WindowsDataset

        return iter(WindowsDataset(self, size))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(len={len(self)})"


class DatasetIterator(Iterator[I]):
    """Iterator over a dataset in index order; stops at the first None (the end).

    Example:
        >>> from burn_dataset import InMemDataset
        >>> list(DatasetIterator(InMemDataset([1, 2])))
        [1, 2]
    """

    def __init__(self, dataset: Any) -> None:
        self._dataset = dataset
        self._current = 0

    def __iter__(self) -> DatasetIterator[I]:
        return self

    def __next__(self) -> I:
        item = self._dataset.get(self._current)
        if item is None:
            raise StopIteration
        self._current += 1
        return item


def dataset_len(dataset: Any) -> int:
    """Length of any dataset-like object (`__len__` or Burn's `len()`)."""
    if hasattr(type(dataset), "__len__"):
        return len(dataset)
    return int(dataset.len())


def check_dataset(dataset: Any, what: str = "dataset") -> Any:
    """Raise a clear TypeError unless `dataset` has `get(index)` and a length."""
    has_get = callable(getattr(dataset, "get", None))
    has_len = hasattr(type(dataset), "__len__") or callable(getattr(dataset, "len", None))
    if isinstance(dataset, (dict, str, bytes)) or not (has_get and has_len):
        hint = ""
        if isinstance(dataset, (list, tuple)):
            hint = "; wrap a list in InMemDataset(items)"
        raise TypeError(
            f"{what} must be a Dataset (an object with get(index) and len()), "
            f"got {type(dataset).__name__}{hint}"
        )
    return dataset


def fetch_many(dataset: Any, indices: Sequence[int]) -> list[Any]:
    """`dataset.get_many(indices)` for any dataset-like object (falls back to `get`)."""
    get_many = getattr(dataset, "get_many", None)
    if callable(get_many):
        return list(get_many(indices))
    return Dataset.get_many(dataset, indices)
