"""`Recorder` base classes: precision settings, encode/decode, files (atomic) and bytes."""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from . import _bin, _json, _mpk
from ._atomic import atomic_write
from ._compress import NONE, compress, decompress, write
from ._diff import apply_dtypes
from ._errors import (
    RecordCorruptedError,
    RecordError,
    RecordFormatError,
    RecordNotFoundError,
    RecordReadError,
)
from ._frame import JSON_PREFIX, MAGIC_BIN, MAGIC_MPK, NAMES, describe, frame, unframe
from ._metadata import build_metadata, check_metadata
from ._named import from_plain, to_plain
from ._settings import FullPrecisionSettings, PrecisionSettings, resolve_settings

# Recorder names by wire format (payload, compression): a file written by any recorder of a wire
# format can be read by every other recorder of that format (e.g. CompactRecorder and
# NamedMpkGzFileRecorder), whatever their precision settings.
_NAMES_BY_WIRE: dict[tuple[str, str], set[str]] = {}


class Recorder:
    """Serializes records with precision settings and a format (Burn's `Recorder` trait).

    Subclasses set the payload (`"mpk"`, `"bin"`, `"json"`), the compression and the default
    settings; see `FileRecorder` and `BytesRecorder` for the I/O methods.

    Args:
        settings: a `PrecisionSettings` class or instance; each recorder has Burn's default.
    """

    _payload: ClassVar[str | None] = None
    _compression: ClassVar[str] = NONE
    _pretty: ClassVar[bool] = False
    _default_settings: ClassVar[type[PrecisionSettings]] = FullPrecisionSettings

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls._payload is not None:
            _NAMES_BY_WIRE.setdefault((cls._payload, cls._compression), set()).add(cls.__name__)

    def __init__(self, settings: PrecisionSettings | type[PrecisionSettings] | None = None):
        if self._payload is None:
            raise TypeError(f"{type(self).__name__} is abstract; use a concrete recorder")
        self._settings = resolve_settings(settings, self._default_settings)

    @classmethod
    def new(cls, settings: PrecisionSettings | type[PrecisionSettings] | None = None):
        """Burn's `Recorder::new()`."""
        return cls(settings)

    @property
    def settings(self) -> PrecisionSettings:
        return self._settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._settings!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._settings == other._settings  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._settings))

    # -- encoding ------------------------------------------------------------------------------
    def _chunks(self, item: Any) -> Iterator[bytes | memoryview]:
        """The uncompressed record, chunk by chunk (lazily, so a file can be streamed)."""
        meta = build_metadata(type(self).__name__, self._settings)
        if self._payload == "bin":
            return frame(_bin.encode(meta, item, self._settings), MAGIC_BIN)
        if self._payload == "mpk":
            tree = {"metadata": meta, "item": to_plain(item, self._settings, lambda v: v)}
            return frame(_mpk.pack(tree), MAGIC_MPK)
        tree = {"metadata": meta, "item": to_plain(item, self._settings, _json.encode_bytes)}
        return iter([_json.dumps(tree, pretty=self._pretty)])

    def to_bytes(self, item: Any) -> bytes:
        """Encode `item` exactly as this recorder would write it (compression included)."""
        return compress(self._chunks(item), self._compression)

    def from_bytes(self, data: bytes | bytearray | memoryview, *, target: Any = None) -> Any:
        """Decode bytes produced by `to_bytes` (or a file's contents); see `load` for `target`."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"expected bytes, got {type(data).__name__}")
        return self._decode(data, target)

    def _decode(self, data: Any, target: Any) -> Any:
        """`from_bytes` of bytes, or of a binary file open at them (compressed records only:
        they are decompressed a step at a time straight from the file)."""
        reader = type(self).__name__
        size = os.fstat(data.fileno()).st_size if hasattr(data, "fileno") else len(data)
        if size == 0:
            # An empty file is far more often an interrupted copy than a different format.
            raise RecordCorruptedError(f"{reader}: the record is empty")
        raw = decompress(data, self._compression, reader, _head_check(self._payload, reader))
        accepted = _NAMES_BY_WIRE[(self._payload, self._compression)]  # type: ignore[index]
        if self._payload == "bin":
            meta, cursor = _bin.decode_header(unframe(raw, MAGIC_BIN, reader))
            check_metadata(meta, accepted, reader)
            item = _bin.decode_item(cursor)
        else:
            if self._payload == "mpk":
                tree, decode_bytes = _mpk.unpack(unframe(raw, MAGIC_MPK, reader)), _mpk.decode_bytes
            else:
                tree, decode_bytes = _json.loads(raw, reader), _json.decode_bytes
            if not isinstance(tree, dict) or set(tree) != {"metadata", "item"}:
                raise RecordCorruptedError(f"{reader}: record lacks its metadata/item members")
            check_metadata(tree["metadata"], accepted, reader)
            item = from_plain(tree["item"], decode_bytes)
        return item if target is None else apply_dtypes(item, target)


def _head_check(payload: str | None, reader: str):
    """A check of a decompressed stream's first bytes: the record's magic (or JSON prefix)."""
    if payload == "json":
        magic, what = JSON_PREFIX, "a JSON record"
    else:
        magic = MAGIC_BIN if payload == "bin" else MAGIC_MPK
        what = NAMES[magic]

    def check(buf: bytearray) -> None:
        n = min(len(buf), len(magic))
        if bytes(buf[:n]) != magic[:n]:
            raise RecordFormatError(
                f"{reader} expects {what}, but got {describe(memoryview(buf)[:32])}; load the "
                "file with the recorder that wrote it"
            )

    return check


class FileRecorder(Recorder):
    """A recorder writing files; the extension is added by the recorder (Burn's `FileRecorder`).

    Example:
        >>> import tempfile, os
        >>> from burn_record import NamedMpkFileRecorder, ParamRecord, TensorData
        >>> rec = NamedMpkFileRecorder()
        >>> item = {"w": ParamRecord("a1", TensorData([1.0]))}
        >>> path = rec.record(item, os.path.join(tempfile.mkdtemp(), "m"))
        >>> path.name, rec.load(path)["w"].id
        ('m.mpk', 'a1')
    """

    _extension: ClassVar[str] = ""

    def file_extension(self) -> str:
        """The extension this recorder writes, without the leading dot (`"mpk.gz"`)."""
        return self._extension

    def file_path(self, path: str | os.PathLike) -> Path:
        """`path` with this recorder's extension appended unless it already ends with it."""
        path = Path(path)
        suffix = "." + self._extension
        return path if path.name.endswith(suffix) else path.with_name(path.name + suffix)

    def record(self, item: Any, path: str | os.PathLike) -> Path:
        """Write `item` to `path` + extension, atomically; returns the final path.

        Args:
            item: nested dicts (str keys) / lists / tuples of int, float, str, bool, None,
                `TensorData` and `ParamRecord`.
            path: file path, with or without the extension.

        Returns:
            The path written.
        """
        target = self.file_path(path)
        return atomic_write(target, lambda f: write(f, self._chunks(item), self._compression))

    def load(self, path: str | os.PathLike, device: Any = None, *, target: Any = None) -> Any:
        """Read the item back. Tensors keep their stored dtype unless `target` is given.

        Args:
            path: file path, with or without the extension.
            device: accepted for Burn parity; records hold host data (`TensorData`), which the
                module moves to its device when it loads the record.
            target: a reference item (e.g. the module's current record); each tensor is converted
                to the dtype of the tensor at the same key path there (see `apply_dtypes`).
        """
        file = self.file_path(path)
        try:
            f = open(file, "rb")
        except FileNotFoundError:
            raise RecordNotFoundError(f"{type(self).__name__}: no record file at {file}") from None
        except OSError as err:  # a directory, no permission, ...
            raise RecordReadError(
                f"{type(self).__name__}: cannot open {file} ({err.strerror or err})"
            ) from None
        try:
            with f:
                return self._load_open(f, target)
        except RecordError as err:
            # Name the file in every error (the decoders only know the recorder).
            if err.args and isinstance(err.args[0], str) and str(file) not in err.args[0]:
                err.args = (f"{err.args[0]} [file: {file}]", *err.args[1:])
            raise
        except OSError as err:
            raise RecordReadError(
                f"{type(self).__name__}: cannot read {file} ({err.strerror or err})"
            ) from None

    def _load_open(self, f: Any, target: Any) -> Any:
        if self._compression != NONE:
            # Decompressed straight from the file: the compressed bytes are never all in memory,
            # so a refused bomb costs its decompression bound and nothing more.
            return self._decode(f, target)
        mapped = _map_file(f) if MMAP_LOADS else None
        if mapped is None:
            data = bytearray(os.fstat(f.fileno()).st_size)
            n = f.readinto(data)
            return self.from_bytes(memoryview(data)[:n], target=target)
        view = memoryview(mapped)
        try:
            return self.from_bytes(view, target=target)
        finally:
            try:
                view.release()
                mapped.close()
            except BufferError:  # a traceback still holds a slice; the mapping closes with it
                pass


# Files are read into memory by default. A memory map (`MMAP_LOADS = True`, or
# BURN_RECORD_MMAP=1) reuses the page cache's pages instead of copying them into a fresh buffer
# (~0.2 s per 400 MB on some hosts), and every tensor is still copied out before `load` returns;
# but a file truncated in place by another program while it is being loaded then ends the process
# with SIGBUS, which no Python code can catch. burn-record's own saves never do that (they write a
# new file and rename it), so the map is safe where only burn writes the files: an opt-in.
MMAP_LOADS = os.environ.get("BURN_RECORD_MMAP", "").strip() == "1"


def _map_file(f) -> mmap.mmap | None:
    """A read-only, pre-faulted map of the whole file, or None where mapping is not possible."""
    try:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        if hasattr(mmap, "MAP_SHARED"):  # POSIX
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            return mmap.mmap(f.fileno(), size, flags=flags, prot=mmap.PROT_READ)
        return mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
    except (OSError, ValueError, OverflowError):  # e.g. a pipe or a file system without mmap
        return None


class BytesRecorder(Recorder):
    """A recorder to and from in-memory bytes (Burn's `BinBytesRecorder`, `NamedMpkBytesRecorder`).

    Example:
        >>> from burn_record import BinBytesRecorder
        >>> rec = BinBytesRecorder()
        >>> rec.load(rec.record({"step": 3, "lr": 1e-3}))
        {'step': 3, 'lr': 0.001}
    """

    def record(self, item: Any) -> bytes:
        """Encode `item` to bytes."""
        return self.to_bytes(item)

    def load(
        self, data: bytes | bytearray | memoryview, device: Any = None, *, target: Any = None
    ) -> Any:
        """Decode bytes from `record`; `device` and `target` as in `FileRecorder.load`."""
        return self.from_bytes(data, target=target)


def as_recorder(recorder: Any, default: type[Recorder], what: str = "recorder") -> Recorder:
    """A recorder instance from an instance, a recorder class (Burn's `CompactRecorder::new()`
    written as the class, `load_file(p, CompactRecorder)`) or None (`default()`).

    Example:
        >>> from burn_record import CompactRecorder, NamedMpkFileRecorder
        >>> as_recorder(CompactRecorder, NamedMpkFileRecorder)
        CompactRecorder(HalfPrecisionSettings)
    """
    if recorder is None:
        return default()
    if isinstance(recorder, type) and issubclass(recorder, Recorder):
        return recorder()
    if isinstance(recorder, Recorder):
        return recorder
    raise TypeError(
        f"{what}: expected a burn_record recorder (an instance or class such as "
        f"CompactRecorder), got {recorder!r:.80} of type {type(recorder).__name__}"
    )
