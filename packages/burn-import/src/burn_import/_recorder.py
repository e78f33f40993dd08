"""`PyTorchFileRecorder` and `SafetensorsFileRecorder`: Burn's import recorders.

Both follow one pipeline: read the file's tensors (no torch, no code execution), pick the
top-level key, remap keys, optionally print them, then either build the target module's record
(adapters, shape and dtype checks, partial loading; see `_adapt`) or, without a target, nest the
tensors by their dotted keys as they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from burn_nn import Module
from burn_record import FullPrecisionSettings, ParamRecord, PrecisionSettings, flatten
from burn_tensor import TensorData

from ._adapt import LoadReport, build_record, convert
from ._errors import RecordImportError
from ._keys import debug_print, flatten_tensors, nest, remap, select
from ._load_args import AdapterType, LoadArgs
from ._pt_reader import read_pt
from ._safetensors_io import read_safetensors, write_safetensors

# `__metadata__` entries of the safetensors files burn-py writes: their layout is Burn's (no
# adapter needed) and they carry each parameter's id.
BURN_FORMAT = "burn"
IDS_KEY = "burn.param_ids"


class _ImportRecorder:
    def __init__(self, settings: PrecisionSettings | type[PrecisionSettings] | None = None):
        if settings is None:
            settings = FullPrecisionSettings()
        elif isinstance(settings, type) and issubclass(settings, PrecisionSettings):
            settings = settings()
        if not isinstance(settings, PrecisionSettings):
            raise TypeError(f"settings must be PrecisionSettings, got {settings!r}")
        self._settings = settings

    @classmethod
    def new(cls, settings: PrecisionSettings | type[PrecisionSettings] | None = None):
        """Burn's `Recorder::new()` / `default()`."""
        return cls(settings)

    default = new

    @property
    def settings(self) -> PrecisionSettings:
        return self._settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._settings!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._settings == other._settings  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._settings))

    def load(
        self,
        args: LoadArgs | str | os.PathLike,
        device: Any = None,
        *,
        target: Module | None = None,
    ) -> dict:
        """Read the file into a record; `target.load_record(record)` accepts it.

        Args:
            args: a `LoadArgs`, or just the file path.
            device: accepted for Burn parity (records hold host data; `load_record` moves it).
            target: the module to fill. It plays the part of Burn's record type annotation
                (`let record: NetRecord<B> = ...`): its layer types choose the adapters, its
                parameters say which keys, shapes and kinds are expected, its ids are kept.
                Without it, the tensors are returned nested by their (remapped) keys as stored.

        Returns:
            A nested dict of `ParamRecord`s (with `target`) or `TensorData` (without).

        Raises:
            RecordImportError: unreadable file, refused pickle global (`UnsafePickleError`),
                tensors that do not fit `target` (`TensorMismatchError`).
        """
        return self.load_with_report(args, device, target=target)[0]

    def load_with_report(
        self,
        args: LoadArgs | str | os.PathLike,
        device: Any = None,
        *,
        target: Module | None = None,
    ) -> tuple[dict, LoadReport]:
        """`load`, plus a `LoadReport` of loaded, adapted, missing and unused keys."""
        args = args if isinstance(args, LoadArgs) else LoadArgs(args)
        name = args.file.name
        tensors, dtypes, ids, burn_layout = self._read(args)
        sources = remap(tensors, dtypes, args, name)
        if args.debug:
            debug_print(sources)
        adapter = args.adapter_type
        if adapter is None:
            adapter = AdapterType.NoAdapter if burn_layout else AdapterType.PyTorch
        if target is not None:
            if not isinstance(target, Module):
                raise TypeError(f"target must be a burn_nn Module, got {type(target).__name__}")
            return build_record(
                target,
                sources,
                self._settings,
                adapter is AdapterType.PyTorch,
                args.allow_missing,
                args.error_on_unused,
                ids,
            )
        flat: dict[str, Any] = {}
        for key, src in sources.items():
            data = convert(src.data, self._settings, f"{name}: {key}")
            flat[key] = ParamRecord(ids[src.original], data) if src.original in ids else data
        return nest(flat, name), LoadReport(loaded={k: s.original for k, s in sources.items()})

    def _read(self, args: LoadArgs) -> tuple[dict, dict, dict, bool]:
        raise NotImplementedError


class PyTorchFileRecorder(_ImportRecorder):
    """Reads PyTorch `.pt`/`.pth` files (zip and legacy formats) without torch (Burn's
    `burn_import::pytorch::PyTorchFileRecorder`). Pickles are read by a restricted unpickler that
    refuses every global outside a tensor-rebuild allowlist, before anything runs.

    Args:
        settings: `PrecisionSettings` class or instance (default `FullPrecisionSettings`): the
            float / int types of the returned record (`load_record` then converts to the module's).

    Example:
        >>> import tempfile, pathlib
        >>> from burn_ndarray import NdArray
        >>> from burn_nn import LinearConfig
        >>> device = NdArray().device()
        >>> model = LinearConfig(3, 2).init(device)
        >>> path = pathlib.Path(__file__).parents[2] / "tests/fixtures/pt/linear.pt"
        >>> args = LoadArgs(path).with_key_remap(r"^fc\\.", "")
        >>> record = PyTorchFileRecorder(FullPrecisionSettings).load(args, device, target=model)
        >>> model = model.load_record(record)
        >>> model.weight.val().dims()               # torch's [2, 3] weight, transposed
        [3, 2]
    """

    def _read(self, args: LoadArgs) -> tuple[dict, dict, dict, bool]:
        obj, dtypes = read_pt(args.file)
        name = args.file.name
        obj = select(obj, args.top_level_key, name)
        prefix = "" if args.top_level_key is None else f"{args.top_level_key}."
        tensors = flatten_tensors(obj, name)
        if not tensors:
            hint = ""
            if isinstance(obj, dict):
                hint = "; top-level keys: " + ", ".join(repr(k) for k in list(obj)[:20])
            raise RecordImportError(f"{name}: no tensors found{hint}")
        return tensors, {k[len(prefix) :]: v for k, v in dtypes.items()}, {}, False

    def record(self, item: Any, path: str | os.PathLike) -> Path:
        """Not supported, as in Burn: write burn-py records or safetensors instead."""
        raise NotImplementedError(
            "PyTorchFileRecorder only loads; save with SafetensorsFileRecorder or a burn_record "
            "recorder (e.g. NamedMpkFileRecorder)"
        )


class SafetensorsFileRecorder(_ImportRecorder):
    """Loads and saves safetensors files (Burn's `burn_import::safetensors`), numpy only.

    Loading: the same `LoadArgs` options as `PyTorchFileRecorder` (the adapter defaults to
    PyTorch's, or to none for files burn-py wrote; `with_top_level_key(k)` keeps the keys under
    `k.`). f16 is kept or converted by the precision settings; bf16 is widened to f32 exactly
    first, since Burn's dtypes have no bf16. Saving: `record(item, path)` writes a record (or a
    module) in Burn's layout with the settings' float / int types and the parameter ids.

    Example:
        >>> import tempfile
        >>> from burn_ndarray import NdArray
        >>> from burn_nn import LinearConfig
        >>> device = NdArray().device()
        >>> model = LinearConfig(3, 2).init(device)
        >>> rec = SafetensorsFileRecorder()
        >>> path = rec.record(model.into_record(), tempfile.mkdtemp() + "/model")
        >>> path.name
        'model.safetensors'
        >>> back = LinearConfig(3, 2).init(device).load_record(rec.load(path, device))
        >>> back.weight.val().equal(model.weight.val()).all().into_scalar()
        True
    """

    def file_extension(self) -> str:
        return "safetensors"

    def file_path(self, path: str | os.PathLike) -> Path:
        """`path` with `.safetensors` appended unless it already ends with it."""
        path = Path(path)
        return (
            path
            if path.name.endswith(".safetensors")
            else path.with_name(path.name + ".safetensors")
        )

    def _read(self, args: LoadArgs) -> tuple[dict, dict, dict, bool]:
        tensors, metadata, dtypes = read_safetensors(args.file)
        ids: dict[str, str] = {}
        if IDS_KEY in metadata:
            try:
                ids = json.loads(metadata[IDS_KEY])
            except ValueError:
                ids = None  # type: ignore[assignment]
            if not isinstance(ids, dict) or not all(isinstance(v, str) for v in ids.values()):
                raise RecordImportError(f"{args.file.name}: malformed {IDS_KEY} metadata")
        key = args.top_level_key
        if key is not None:
            cut = len(key) + 1
            tensors = {k[cut:]: v for k, v in tensors.items() if k.startswith(key + ".")}
            dtypes = {k[cut:]: v for k, v in dtypes.items() if k.startswith(key + ".")}
            ids = {k[cut:]: v for k, v in ids.items() if k.startswith(key + ".")}
            if not tensors:
                raise RecordImportError(
                    f"{args.file.name}: no tensor key starts with {key + '.'!r}"
                )
        return tensors, dtypes, ids, metadata.get("format") == BURN_FORMAT

    def record(self, item: Any, path: str | os.PathLike) -> Path:
        """Write `item` (a module record, or a `Module`) to `path` + `.safetensors`.

        Tensor keys are the record's dotted paths; non-tensor leaves (None biases, constants) are
        not stored. Returns the path written.
        """
        if isinstance(item, Module):
            item = item.into_record()
        tensors: dict[str, TensorData] = {}
        ids: dict[str, str] = {}
        for key, leaf in flatten(item).items():
            if isinstance(leaf, ParamRecord):
                ids[key], leaf = leaf.id, leaf.value
            if isinstance(leaf, TensorData):
                tensors[key] = convert(leaf, self._settings, key)
        metadata = {"format": BURN_FORMAT, IDS_KEY: json.dumps(ids, separators=(",", ":"))}
        return write_safetensors(tensors, self.file_path(path), metadata)
