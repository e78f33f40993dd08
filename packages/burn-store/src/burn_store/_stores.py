"""The stores (Burn 0.20's `BurnpackStore`, `SafetensorsStore`, `PytorchStore`) and
`save_into`/`load_from`, the module methods of Burn's `ModuleSnapshot`.

A store is configured with builder methods (filter, key remapping, adapters, partial loading,
validation, overwrite, metadata); `save_into(module, store)` collects the module's tensors into
it, `load_from(module, store)` applies the store's tensors to a copy of the module and returns
an `ApplyResult` whose `module` is that copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from burn_import import load_pytorch, load_safetensors, save_safetensors
from burn_record import flatten
from burn_tensor import TensorData

from ._adapter import IdentityAdapter, ModuleAdapter, PyTorchToBurnAdapter
from ._apply import ApplyResult, apply, collect
from ._burnpack import BurnpackReader, Entry, write_burnpack, write_burnpack_file
from ._filter import KeyRemapper, PathFilter
from ._snapshot import TensorSnapshot

PRODUCER_VERSION = "0.20.1"  # the Burn release whose store format this package follows


class StoreError(ValueError):
    """A store could not save or load (file exists, missing tensors, shape errors, ...)."""


class _Store:
    """Builder options shared by the three stores."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._filter: PathFilter | None = None
        self._remapper = KeyRemapper()
        self._allow_partial = False
        self._validate = True
        self._overwrite = False
        self._from_adapter: ModuleAdapter = IdentityAdapter()
        self._to_adapter: ModuleAdapter = IdentityAdapter()
        self._cache: dict[str, TensorSnapshot] | None = None

    # -- filter ------------------------------------------------------------------------------
    def _f(self) -> PathFilter:
        if self._filter is None:
            self._filter = PathFilter()
        return self._filter

    def filter(self, filter: PathFilter) -> Any:
        """Save/load only the paths `filter` keeps (default: all)."""
        self._filter = filter
        return self

    with_filter = filter

    def with_regex(self, pattern: str) -> Any:
        self._f().with_regex(pattern)
        return self

    def with_regexes(self, patterns: Iterable[str]) -> Any:
        self._f().with_regexes(patterns)
        return self

    def with_full_path(self, path: str) -> Any:
        self._f().with_full_path(path)
        return self

    def with_full_paths(self, paths: Iterable[str]) -> Any:
        self._f().with_full_paths(paths)
        return self

    def with_predicate(self, predicate: Callable[[str, str], bool]) -> Any:
        self._f().with_predicate(predicate)
        return self

    def with_predicates(self, predicates: Iterable[Callable[[str, str], bool]]) -> Any:
        self._f().with_predicates(predicates)
        return self

    def match_all(self) -> Any:
        self._f().match_all()
        return self

    # -- names, adapters, checks ----------------------------------------------------------------
    def remap(self, remapper: KeyRemapper) -> Any:
        """Rename stored tensors with `remapper` (on load; safetensors also on save)."""
        self._remapper = remapper
        self._cache = None
        return self

    def with_key_remapping(self, pattern: str, replacement: str) -> Any:
        self._remapper.add_pattern(pattern, replacement)
        self._cache = None
        return self

    with_remap_pattern = with_key_remapping

    def allow_partial(self, allow: bool = True) -> Any:
        """Accept module tensors the store does not hold (they keep their values)."""
        self._allow_partial = bool(allow)
        return self

    def validate(self, validate: bool = True) -> Any:
        """Raise on shape errors (default) instead of only reporting them in the result."""
        self._validate = bool(validate)
        return self

    def overwrite(self, overwrite: bool = True) -> Any:
        self._overwrite = bool(overwrite)
        return self

    def with_from_adapter(self, adapter: ModuleAdapter) -> Any:
        """Adapter applied to stored tensors when loading (e.g. `PyTorchToBurnAdapter()`)."""
        self._from_adapter = adapter
        return self

    def with_to_adapter(self, adapter: ModuleAdapter) -> Any:
        """Adapter applied to module tensors when saving (e.g. `BurnToPyTorchAdapter()`)."""
        self._to_adapter = adapter
        return self

    # -- reading ----------------------------------------------------------------------------------
    def _read(self) -> list[TensorSnapshot]:
        raise NotImplementedError

    def get_all_snapshots(self) -> dict[str, TensorSnapshot]:
        """The stored tensors by (remapped) path."""
        if self._cache is None:
            out: dict[str, TensorSnapshot] = {}
            original: dict[str, str] = {}
            for s in self._read():
                path = self._remapper.remap_path(s.path)
                if path in out:
                    raise StoreError(
                        f"{self._name()}: key remapping maps {original[path]!r} and {s.path!r} "
                        f"both to {path!r}"
                    )
                out[path], original[path] = s.renamed(path), s.path
            self._cache = out
        return self._cache

    def get_snapshot(self, name: str) -> TensorSnapshot | None:
        return self.get_all_snapshots().get(name)

    def keys(self) -> list[str]:
        return list(self.get_all_snapshots())

    def _name(self) -> str:
        return str(self.path) if self.path is not None else "<bytes>"

    def apply_to(self, module: Any) -> ApplyResult:
        """Load into a copy of `module`; `result.module` is the loaded module."""
        result = apply(module, self.get_all_snapshots().values(), self._filter, self._from_adapter)
        if self._validate and result.errors:
            raise StoreError(
                f"{self._name()}: {len(result.errors)} tensor(s) could not be loaded: "
                + "; ".join(str(e) for e in result.errors)
            )
        if not self._allow_partial and result.missing:
            raise StoreError(
                f"{self._name()}: missing tensors {[p for p, _ in result.missing]} (the store "
                f"holds {sorted(self.keys())}); use allow_partial(True) to keep their values"
            )
        return result

    def _target(self, suffix: str | None) -> Path:
        if self.path is None:
            raise StoreError("this store has no file to write")
        path = self.path
        if suffix and not path.suffix:
            path = path.with_suffix(suffix)
        if path.exists() and not self._overwrite:
            raise StoreError(f"File already exists: {path}. Use .overwrite(True) to overwrite.")
        return path


class BurnpackStore(_Store):
    """Burn's native format (`.bpk`): `BurnpackStore.from_file(path)` or `.from_bytes(b)`.

    Saving writes Burn's exact layout (see `burn_store._burnpack`) with the metadata
    `format=burnpack`, `producer=burn`, `version` (change with `.metadata(k, v)`,
    `.clear_metadata()`); a path without an extension gets `.bpk` (`auto_extension(False)`
    keeps it as given).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_nn import LinearConfig
        >>> model = LinearConfig(2, 3).init(NdArray().device())
        >>> store = BurnpackStore.from_bytes(None)
        >>> save_into(model, store)
        >>> loaded = load_from(LinearConfig(2, 3).init(NdArray().device()), store)
        >>> w = loaded.module.weight.val().numpy()
        >>> loaded.applied, bool((w == model.weight.val().numpy()).all())
        (['weight', 'bias'], True)
    """

    def __init__(self, path: Path | None = None, data: bytes | None = None) -> None:
        super().__init__(path)
        self._bytes = data
        self._metadata = {"format": "burnpack", "producer": "burn", "version": PRODUCER_VERSION}
        self._auto_extension = path is not None

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> BurnpackStore:
        return cls(Path(path))

    @classmethod
    def from_bytes(cls, data: bytes | None) -> BurnpackStore:
        return cls(None, None if data is None else bytes(data))

    def metadata(self, key: str, value: str) -> BurnpackStore:
        self._metadata[str(key)] = str(value)
        return self

    def clear_metadata(self) -> BurnpackStore:
        self._metadata.clear()
        return self

    def auto_extension(self, enable: bool = True) -> BurnpackStore:
        self._auto_extension = bool(enable)
        return self

    def _file(self) -> Path:
        assert self.path is not None
        if self._auto_extension and not self.path.suffix:
            return self.path.with_suffix(".bpk")
        return self.path

    def reader(self) -> BurnpackReader:
        if self.path is not None:
            return BurnpackReader(self._file())
        if self._bytes is None:
            raise StoreError("BurnpackStore.from_bytes(None) holds nothing to read yet")
        return BurnpackReader(self._bytes)

    def get_bytes(self) -> bytes:
        if self.path is not None:
            return self._file().read_bytes()
        if self._bytes is None:
            raise StoreError("no bytes: save a module into this store first")
        return self._bytes

    def file_metadata(self) -> dict[str, str]:
        """The string metadata stored in the file."""
        return self.reader().metadata

    def _read(self) -> list[TensorSnapshot]:
        r = self.reader()
        return [
            TensorSnapshot(name, d.shape, d.dtype, lambda n=name: r.read(n), d.param_id)
            for name, d in r.descriptors.items()
        ]

    def collect_from(self, module: Any) -> None:
        entries = [
            Entry(s.path, s.to_data(), s.param_id)
            for s in collect(module, self._filter, self._to_adapter)
        ]
        self._cache = None
        if self.path is None:
            self._bytes = write_burnpack(entries, self._metadata)
            return
        path = self._file()
        if path.exists() and not self._overwrite:
            raise StoreError(f"File already exists: {path}. Use .overwrite(True) to overwrite.")
        write_burnpack_file(path, entries, self._metadata)


class SafetensorsStore(_Store):
    """Safetensors files (`SafetensorsStore.from_file(path)`), read and written with
    burn_import's safetensors reader/writer. Loading a PyTorch export needs
    `.with_from_adapter(PyTorchToBurnAdapter())`; saving for PyTorch
    `.with_to_adapter(BurnToPyTorchAdapter())`."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._metadata = {"format": "safetensors", "producer": "burn", "version": PRODUCER_VERSION}

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> SafetensorsStore:
        return cls(Path(path))

    def metadata(self, key: str, value: str) -> SafetensorsStore:
        self._metadata[str(key)] = str(value)
        return self

    def clear_metadata(self) -> SafetensorsStore:
        self._metadata.clear()
        return self

    def _read(self) -> list[TensorSnapshot]:
        tensors = load_safetensors(self.path)
        return [
            TensorSnapshot(k, tuple(t.shape), t.dtype, lambda t=t: t) for k, t in tensors.items()
        ]

    def collect_from(self, module: Any) -> None:
        path = self._target(None)
        tensors = {}
        for s in collect(module, self._filter, self._to_adapter):
            tensors[self._remapper.remap_path(s.path)] = s.to_data()
        self._cache = None
        save_safetensors(tensors, path, self._metadata)


class PytorchStore(_Store):
    """PyTorch `.pt`/`.pth` files, read without torch through burn_import's restricted
    unpickler (Burn's `PytorchStore`, load only). `PyTorchToBurnAdapter` is applied by default
    (Linear weights transposed, norm weight/bias as gamma/beta); `with_top_level_key("state_dict")`
    picks a nested dict."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._from_adapter = PyTorchToBurnAdapter()
        self._top_level_key: str | None = None

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> PytorchStore:
        return cls(Path(path))

    def with_top_level_key(self, key: str) -> PytorchStore:
        self._top_level_key = str(key)
        self._cache = None
        return self

    def _read(self) -> list[TensorSnapshot]:
        obj = load_pytorch(self.path, self._top_level_key)
        tensors = {k: t for k, t in flatten(obj).items() if isinstance(t, TensorData)}
        return [
            TensorSnapshot(k, tuple(t.shape), t.dtype, lambda t=t: t) for k, t in tensors.items()
        ]

    def collect_from(self, module: Any) -> None:
        raise StoreError("PytorchStore reads .pt files only; save with SafetensorsStore")


def save_into(module: Any, store: _Store) -> None:
    """Save `module`'s tensors into `store` (Burn's `module.save_into(&mut store)`)."""
    store.collect_from(module)


def load_from(module: Any, store: _Store) -> ApplyResult:
    """Load `store` into a copy of `module` (Burn's `module.load_from(&mut store)`); the
    returned `ApplyResult` reports every path, and its `module` is the loaded module."""
    return store.apply_to(module)
