"""`PartialDataset`: a contiguous view `[start, end)` of another dataset."""

from __future__ import annotations

import operator
from typing import Any

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len, fetch_many


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None


class PartialDataset(Dataset[Any]):
    """Items `start .. end-1` of `dataset`, without copying (Burn's train/valid/test splits).

    Args:
        dataset: the dataset to view.
        start: first index (inclusive), `0 <= start <= end`.
        end: last index (exclusive), `end <= len(dataset)`.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> ds = InMemDataset(range(10))
        >>> n = len(ds)
        >>> train, test = PartialDataset(ds, 0, n * 8 // 10), PartialDataset(ds, n * 8 // 10, n)
        >>> list(train)[-1], list(test)
        (7, [8, 9])
    """

    def __init__(self, dataset: Any, start: int, end: int) -> None:
        check_dataset(dataset)
        start, end = _as_int(start, "start"), _as_int(end, "end")
        n = dataset_len(dataset)
        if not 0 <= start <= end <= n:
            raise ValueError(
                f"PartialDataset needs 0 <= start <= end <= len(dataset) = {n}, "
                f"got start={start}, end={end}"
            )
        self._dataset, self._start, self._end = dataset, start, end

    @classmethod
    def new(cls, dataset: Any, start: int, end: int) -> PartialDataset:
        """Burn's constructor name."""
        return cls(dataset, start, end)

    @property
    def start(self) -> int:
        return self._start

    @property
    def end(self) -> int:
        return self._end

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= self._end - self._start:
            return None
        return self._dataset.get(self._start + index)

    def get_many(self, indices: Any) -> list[Any]:
        n = self._end - self._start
        shifted = []
        for index in indices:
            index = check_index(index)
            if index >= n:
                raise IndexError(f"index {index} out of range for dataset of length {n}")
            shifted.append(self._start + index)
        return fetch_many(self._dataset, shifted)

    def __len__(self) -> int:
        return self._end - self._start

    @staticmethod
    def split(dataset: Any, num: int) -> list[PartialDataset]:
        """Split into `num` contiguous parts of `len // num` items; the last takes the rest.

        Example:
            >>> from burn_dataset import InMemDataset
            >>> [list(p) for p in PartialDataset.split(InMemDataset(range(7)), 3)]
            [[0, 1], [2, 3], [4, 5, 6]]
        """
        check_dataset(dataset)
        num = _as_int(num, "num")
        if num < 1:
            raise ValueError(f"num must be >= 1, got {num}")
        n = dataset_len(dataset)
        size = n // num
        return [
            PartialDataset(dataset, i * size, n if i == num - 1 else (i + 1) * size)
            for i in range(num)
        ]

    @staticmethod
    def split_chunks(dataset: Any, num: int, batch_size: int) -> list[PartialDataset]:
        """Split into `num` parts whose boundaries fall on multiples of `batch_size`.

        The `ceil(len / batch_size)` batches are dealt out as evenly as possible (the first parts
        get one more when they do not divide), so only the very last part may end with a partial
        batch. Used to give each data-loader worker whole batches.

        Example:
            >>> from burn_dataset import InMemDataset
            >>> [len(p) for p in PartialDataset.split_chunks(InMemDataset(range(10)), 2, 3)]
            [6, 4]
        """
        check_dataset(dataset)
        num, batch_size = _as_int(num, "num"), _as_int(batch_size, "batch_size")
        if num < 1 or batch_size < 1:
            raise ValueError(f"num and batch_size must be >= 1, got {num} and {batch_size}")
        n = dataset_len(dataset)
        batches = -(-n // batch_size)
        base, extra = divmod(batches, num)
        parts, start_batch = [], 0
        for i in range(num):
            end_batch = start_batch + base + (1 if i < extra else 0)
            parts.append(
                PartialDataset(
                    dataset, min(n, start_batch * batch_size), min(n, end_batch * batch_size)
                )
            )
            start_batch = end_batch
        return parts
