"""Batching and loading (Burn's `burn::data::dataloader`).

Example:
    >>> from burn_dataset import InMemDataset
    >>> from burn_dataset.dataloader import DataLoaderBuilder
    >>> loader = DataLoaderBuilder(lambda items, device: items).batch_size(2).build(
    ...     InMemDataset(["a", "b", "c"]))
    >>> list(loader)
    [['a', 'b'], ['c']]
"""

from burn_dataset.dataloader._batcher import Batcher
from burn_dataset.dataloader._builder import DataLoaderBuilder
from burn_dataset.dataloader._iterator import DataLoaderIterator
from burn_dataset.dataloader._loader import DataLoader, split_dataloader
from burn_dataset.dataloader._progress import Progress
from burn_dataset.dataloader._shard import Shard, shares

__all__ = [
    "Batcher",
    "DataLoader",
    "DataLoaderBuilder",
    "DataLoaderIterator",
    "Progress",
    "Shard",
    "shares",
    "split_dataloader",
]
