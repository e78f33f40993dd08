"""Lazy dataset transforms (Burn's `burn_dataset::transform`).

Example:
    >>> from burn_dataset import InMemDataset
    >>> from burn_dataset.transform import MapperDataset, PartialDataset, ShuffledDataset
    >>> ds = ShuffledDataset.with_seed(InMemDataset(range(10)), 0)
    >>> train = MapperDataset(PartialDataset(ds, 0, 8), lambda x: x * 2)
    >>> len(train)
    8
"""

from burn_dataset.transform._composed import ComposedDataset
from burn_dataset.transform._mapper import Mapper, MapperDataset
from burn_dataset.transform._partial import PartialDataset
from burn_dataset.transform._sampler import SamplerDataset
from burn_dataset.transform._selection import SelectionDataset
from burn_dataset.transform._shuffle import ShuffledDataset
from burn_dataset.transform._window import WindowsDataset

__all__ = [
    "ComposedDataset",
    "Mapper",
    "MapperDataset",
    "PartialDataset",
    "SamplerDataset",
    "SelectionDataset",
    "ShuffledDataset",
    "WindowsDataset",
]
