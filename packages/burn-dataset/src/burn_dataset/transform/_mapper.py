"""`MapperDataset`: apply a function to each item, lazily, when it is fetched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from burn_dataset._base import Dataset, check_dataset, check_index, dataset_len, fetch_many


@runtime_checkable
class Mapper(Protocol):
    """Burn's `Mapper` trait: an object with `map(item) -> new_item`.

    Example:
        >>> class Double:
        ...     def map(self, item):
        ...         return 2 * item
        >>> isinstance(Double(), Mapper)
        True
    """

    def map(self, item: Any) -> Any: ...


class MapperDataset(Dataset[Any]):
    """`dataset` with `mapper` applied to every item on access (nothing is precomputed).

    Args:
        dataset: the source dataset.
        mapper: a callable `item -> new_item`, or an object with a `map(item)` method.

    Example:
        >>> from burn_dataset import InMemDataset
        >>> ds = MapperDataset(InMemDataset([1, 2, 3]), lambda x: x * 10)
        >>> list(ds)
        [10, 20, 30]
    """

    def __init__(self, dataset: Any, mapper: Callable[[Any], Any] | Mapper) -> None:
        check_dataset(dataset)
        if isinstance(mapper, Mapper) and not isinstance(mapper, type):
            self._fn = mapper.map
        elif callable(mapper):
            self._fn = mapper
        else:
            raise TypeError(
                f"mapper must be a callable or have a map(item) method, got {type(mapper).__name__}"
            )
        self._dataset = dataset

    @classmethod
    def new(cls, dataset: Any, mapper: Callable[[Any], Any] | Mapper) -> MapperDataset:
        """Burn's constructor name."""
        return cls(dataset, mapper)

    def get(self, index: int) -> Any:
        item = self._dataset.get(check_index(index))
        return None if item is None else self._fn(item)

    def get_many(self, indices: Any) -> list[Any]:
        return [self._fn(item) for item in fetch_many(self._dataset, indices)]

    def __len__(self) -> int:
        return dataset_len(self._dataset)
