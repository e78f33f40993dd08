"""burn_dataset: datasets, lazy transforms, sources and data loading for burn-py.

Mirrors Burn's `burn-dataset` crate (plus `burn::data::dataloader`): a `Dataset` is a fixed-length,
randomly accessible collection (`get(index)` -> item or None past the end); transforms compose
lazily; `DataLoaderBuilder` batches items with a `Batcher`, in background threads if asked.

Example:
    >>> from burn_dataset import DataLoaderBuilder, InMemDataset, PartialDataset, ShuffledDataset
    >>> ds = ShuffledDataset.with_seed(InMemDataset(range(10)), 42)
    >>> train = PartialDataset(ds, 0, 8)
    >>> loader = DataLoaderBuilder(lambda items, device: items).batch_size(3).build(train)
    >>> [len(batch) for batch in loader]
    [3, 3, 2]
"""

from burn_dataset._base import Dataset, DatasetIterator
from burn_dataset._cache import default_cache_dir
from burn_dataset._errors import DatasetError
from burn_dataset._fake import FakeDataset
from burn_dataset._in_memory import InMemDataset
from burn_dataset._sqlite_dataset import SqliteDataset
from burn_dataset._sqlite_storage import SqliteDatasetStorage
from burn_dataset._sqlite_writer import SqliteDatasetWriter
from burn_dataset.dataloader import (
    Batcher,
    DataLoader,
    DataLoaderBuilder,
    DataLoaderIterator,
    Progress,
    split_dataloader,
)
from burn_dataset.source import HuggingfaceDatasetLoader
from burn_dataset.transform import (
    ComposedDataset,
    Mapper,
    MapperDataset,
    PartialDataset,
    SamplerDataset,
    SelectionDataset,
    ShuffledDataset,
    WindowsDataset,
)
from burn_dataset import nlp
from burn_dataset.nlp import AgNewsDataset, DbPediaDataset, TextFolderDataset
from burn_dataset.vision import (
    CifarDataset,
    CifarType,
    DigitsDataset,
    DownloadError,
    ImageDatasetItem,
    ImageFolderDataset,
    MnistDataset,
    MnistItem,
)

__all__ = [
    "AgNewsDataset",
    "Batcher",
    "CifarDataset",
    "CifarType",
    "DbPediaDataset",
    "FakeDataset",
    "TextFolderDataset",
    "nlp",
    "ComposedDataset",
    "DataLoader",
    "DataLoaderBuilder",
    "DataLoaderIterator",
    "Dataset",
    "DatasetIterator",
    "DigitsDataset",
    "DatasetError",
    "DownloadError",
    "HuggingfaceDatasetLoader",
    "ImageDatasetItem",
    "ImageFolderDataset",
    "InMemDataset",
    "Mapper",
    "MapperDataset",
    "MnistDataset",
    "MnistItem",
    "PartialDataset",
    "Progress",
    "SamplerDataset",
    "SelectionDataset",
    "ShuffledDataset",
    "SqliteDataset",
    "SqliteDatasetStorage",
    "SqliteDatasetWriter",
    "WindowsDataset",
    "default_cache_dir",
    "split_dataloader",
]
