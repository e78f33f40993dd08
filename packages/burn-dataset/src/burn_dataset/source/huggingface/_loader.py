"""`HuggingfaceDatasetLoader`: import a Hugging Face dataset once into SQLite, then read it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from burn_dataset._cache import default_cache_dir
from burn_dataset._sqlite_dataset import SqliteDataset
from burn_dataset._sqlite_storage import SqliteDatasetStorage
from burn_dataset._sqlite_writer import SqliteDatasetWriter

_ROWS_PER_CHUNK = 1000


def _require_datasets() -> Any:
    # Imported lazily: `datasets` pulls in pyarrow and pandas, which most users of burn-dataset
    # never need; they only pay for it when they load a Hugging Face dataset.
    try:
        import datasets
    except ImportError as err:
        raise ImportError(
            "HuggingfaceDatasetLoader needs the Hugging Face `datasets` package; install it with "
            "pip install 'burn-dataset[huggingface]'"
        ) from err
    return datasets


def _encoding_for(feature: Any, datasets: Any) -> str:
    """Column encoding for an HF feature (so nulls in the first row do not decide the type)."""
    if isinstance(feature, datasets.ClassLabel):
        return "int"
    if isinstance(feature, datasets.Image):
        return "bytes"  # the encoded file (PNG/JPEG...), as Burn's importer stores it
    if isinstance(feature, datasets.Value):
        dtype = feature.dtype
        if dtype == "bool":
            return "bool"
        if dtype.startswith(("int", "uint")):
            return "int"
        if dtype.startswith("float") or dtype == "double":
            return "float"
        if dtype in ("string", "large_string"):
            return "str"
        if dtype in ("binary", "large_binary"):
            return "bytes"
    return "msgpack"  # sequences, dicts, audio, arrays


def _convert_value(value: Any, feature: Any, datasets: Any) -> Any:
    if isinstance(feature, datasets.Image) and isinstance(value, dict):
        if value.get("bytes") is not None:
            return value["bytes"]
        return Path(value["path"]).read_bytes() if value.get("path") else None
    return value


class HuggingfaceDatasetLoader:
    """Load a dataset from the Hugging Face Hub (or local files) into an SQLite cache.

    The first `dataset(split)` call runs `datasets.load_dataset(...)` and writes every split to
    `<base_dir>/<name>[-<subset>].db` (one table per split, one column per feature; images are
    stored as their encoded bytes). Later calls, in any process, read that file directly and do
    not import `datasets` at all. Needs the `[huggingface]` extra.

    Args:
        name: a Hub dataset id ("dbpedia_14", "ylecun/mnist") or a builder such as "csv" or
            "parquet" used with `with_huggingface_data_files`.

    Example:
        >>> ds = HuggingfaceDatasetLoader("dbpedia_14").dataset("train")  # doctest: +SKIP
        >>> ds.get(0)["title"]  # doctest: +SKIP
        'E. D. Abbott Ltd'
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"dataset name must be a non-empty string, got {name!r}")
        self._name = name
        self._subset: str | None = None
        self._base_dir: Path | None = None
        self._token: str | None = None
        self._hf_cache_dir: str | None = None
        self._data_dir: str | None = None
        self._data_files: Any = None
        self._trust_remote_code = False

    @classmethod
    def new(cls, name: str) -> HuggingfaceDatasetLoader:
        """Burn's constructor name."""
        return cls(name)

    def with_subset(self, subset: str) -> HuggingfaceDatasetLoader:
        """The dataset configuration ("subset") to load, e.g. "en" or "mnist"."""
        self._subset = subset
        return self

    def with_base_dir(self, base_dir: str | os.PathLike[str]) -> HuggingfaceDatasetLoader:
        """Where the SQLite file goes (default `default_cache_dir()`)."""
        self._base_dir = Path(base_dir)
        return self

    def with_huggingface_token(self, token: str) -> HuggingfaceDatasetLoader:
        """A Hub token, for gated or private datasets."""
        self._token = token
        return self

    def with_huggingface_cache_dir(
        self, cache_dir: str | os.PathLike[str]
    ) -> HuggingfaceDatasetLoader:
        """The `datasets` download cache (default: its own, `~/.cache/huggingface`)."""
        self._hf_cache_dir = str(cache_dir)
        return self

    def with_huggingface_data_dir(
        self, data_dir: str | os.PathLike[str]
    ) -> HuggingfaceDatasetLoader:
        """`data_dir` passed to `load_dataset` (a sub-folder of the repository, or local files)."""
        self._data_dir = str(data_dir)
        return self

    def with_huggingface_data_files(self, data_files: Any) -> HuggingfaceDatasetLoader:
        """`data_files` for `load_dataset`, e.g. `{"train": "train.csv", "test": "test.csv"}`."""
        self._data_files = (
            {k: str(v) for k, v in data_files.items()}
            if isinstance(data_files, dict)
            else str(data_files)
            if isinstance(data_files, (str, os.PathLike))
            else [str(f) for f in data_files]
        )
        return self

    def with_trust_remote_code(self, trust: bool) -> HuggingfaceDatasetLoader:
        """Allow datasets that run a loading script (if the `datasets` version supports it)."""
        self._trust_remote_code = bool(trust)
        return self

    def db_file(self) -> Path:
        """The SQLite file this loader reads (and creates on first use)."""
        name = self._name if self._subset is None else f"{self._name}-{self._subset}"
        if self._data_files is not None or self._data_dir is not None:
            # Different local files under the same builder name ("csv") must not share a cache.
            key = json.dumps([self._data_files, self._data_dir], sort_keys=True)
            name += "-" + hashlib.sha256(key.encode()).hexdigest()[:12]
        base = self._base_dir if self._base_dir is not None else default_cache_dir()
        return SqliteDatasetStorage.from_name(name).with_base_dir(base).db_file()

    def dataset(self, split: str, item_type: Any = None) -> SqliteDataset:
        """The `split` of this dataset, importing everything on first use.

        Args:
            split: e.g. "train", "test", "validation".
            item_type: None for dict rows, or a dataclass/callable built from each row.
        """
        db_file = self.db_file()
        if not db_file.is_file():
            self._import(db_file)
        return SqliteDataset(db_file, split, item_type)

    def _import(self, db_file: Path) -> None:
        datasets = _require_datasets()
        kwargs: dict[str, Any] = {}
        for key, value in (
            ("cache_dir", self._hf_cache_dir),
            ("data_dir", self._data_dir),
            ("data_files", self._data_files),
            ("token", self._token),
        ):
            if value is not None:
                kwargs[key] = value
        if self._trust_remote_code:
            kwargs["trust_remote_code"] = True
        loaded = datasets.load_dataset(self._name, self._subset, **kwargs)
        if not isinstance(loaded, datasets.DatasetDict):
            loaded = datasets.DatasetDict({"train": loaded})
        with SqliteDatasetWriter(db_file, overwrite=True, storage="columns") as writer:
            for split, table in loaded.items():
                self._write_split(writer, split, table, datasets)

    @staticmethod
    def _write_split(writer: SqliteDatasetWriter, split: str, table: Any, datasets: Any) -> None:
        features = table.features
        for column, feature in features.items():
            # Undecoded media: keep the file bytes instead of decoding into PIL/arrays.
            if isinstance(feature, datasets.Image) or type(feature).__name__ == "Audio":
                table = table.cast_column(column, type(feature)(decode=False))
        features = table.features
        columns = list(features)
        writer.declare_split(split, {c: _encoding_for(features[c], datasets) for c in columns})
        for chunk in table.iter(batch_size=_ROWS_PER_CHUNK):
            for values in zip(*(chunk[c] for c in columns), strict=True):
                writer.write(
                    split,
                    {
                        c: _convert_value(v, features[c], datasets)
                        for c, v in zip(columns, values, strict=True)
                    },
                )
