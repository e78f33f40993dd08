"""The concrete recorders of the Burn Book's table, plus zstandard variants and Burn's aliases.

Each is `Recorder(settings=None)`; `settings` is a `PrecisionSettings` class or instance and
defaults
to `FullPrecisionSettings` except where noted.
"""

from __future__ import annotations

from ._compress import GZIP, NONE, ZSTD
from ._recorder import BytesRecorder, FileRecorder
from ._settings import HalfPrecisionSettings


class NamedMpkFileRecorder(FileRecorder):
    """Named MessagePack file, uncompressed, extension `.mpk` (Burn's default file recorder).

    Example:
        >>> NamedMpkFileRecorder().file_extension()
        'mpk'
    """

    _payload, _compression, _extension = "mpk", NONE, "mpk"


class NamedMpkGzFileRecorder(FileRecorder):
    """Named MessagePack file, gzip-compressed, extension `.mpk.gz`.

    Example:
        >>> NamedMpkGzFileRecorder().file_extension()
        'mpk.gz'
    """

    _payload, _compression, _extension = "mpk", GZIP, "mpk.gz"


class NamedMpkZstFileRecorder(FileRecorder):
    """Named MessagePack file, zstandard-compressed, extension `.mpk.zst`.

    Example:
        >>> NamedMpkZstFileRecorder().file_extension()
        'mpk.zst'
    """

    _payload, _compression, _extension = "mpk", ZSTD, "mpk.zst"


class BinFileRecorder(FileRecorder):
    """Positional binary file, uncompressed, extension `.bin` (the smallest uncompressed format).

    Example:
        >>> BinFileRecorder().file_extension()
        'bin'
    """

    _payload, _compression, _extension = "bin", NONE, "bin"


class BinGzFileRecorder(FileRecorder):
    """Positional binary file, gzip-compressed, extension `.bin.gz`.

    Example:
        >>> BinGzFileRecorder().file_extension()
        'bin.gz'
    """

    _payload, _compression, _extension = "bin", GZIP, "bin.gz"


class BinZstFileRecorder(FileRecorder):
    """Positional binary file, zstandard-compressed, extension `.bin.zst`.

    Example:
        >>> BinZstFileRecorder().file_extension()
        'bin.zst'
    """

    _payload, _compression, _extension = "bin", ZSTD, "bin.zst"


class JsonGzFileRecorder(FileRecorder):
    """Compact JSON file, gzip-compressed, extension `.json.gz`.

    Example:
        >>> JsonGzFileRecorder().file_extension()
        'json.gz'
    """

    _payload, _compression, _extension = "json", GZIP, "json.gz"


class PrettyJsonFileRecorder(FileRecorder):
    """Indented JSON file, uncompressed, extension `.json`: for reading weights while debugging.

    Example:
        >>> PrettyJsonFileRecorder().file_extension()
        'json'
    """

    _payload, _compression, _extension, _pretty = "json", NONE, "json", True


class BinBytesRecorder(BytesRecorder):
    """Positional binary, in memory; reads what `BinFileRecorder` writes (embed a model's bytes).

    Example:
        >>> rec = BinBytesRecorder()
        >>> rec.load(rec.record((1, 2.0, None)))
        (1, 2.0, None)
    """

    _payload, _compression = "bin", NONE


class NamedMpkBytesRecorder(BytesRecorder):
    """Named MessagePack, in memory; reads what `NamedMpkFileRecorder` writes.

    Example:
        >>> rec = NamedMpkBytesRecorder()
        >>> rec.load(rec.record({"a": [True, "x"]}))
        {'a': [True, 'x']}
    """

    _payload, _compression = "mpk", NONE


# Burn: `type DefaultFileRecorder<S> = NamedMpkFileRecorder<S>`; an alias, so it writes the same
# name.
DefaultFileRecorder = NamedMpkFileRecorder


class DefaultRecorder(NamedMpkFileRecorder):
    """Burn's `DefaultRecorder`: `NamedMpkFileRecorder` with full precision.

    Example:
        >>> DefaultRecorder()
        DefaultRecorder(FullPrecisionSettings)
    """


class CompactRecorder(NamedMpkGzFileRecorder):
    """Named MessagePack, gzip, half precision (f16 floats, i16 ints): small checkpoints.

    Example:
        >>> CompactRecorder(), CompactRecorder().file_extension()
        (CompactRecorder(HalfPrecisionSettings), 'mpk.gz')
    """

    _default_settings = HalfPrecisionSettings


class SensitiveCompactRecorder(BinGzFileRecorder):
    """Burn's `SensitiveCompactRecorder`: positional binary, gzip, half precision.

    Example:
        >>> SensitiveCompactRecorder().file_extension()
        'bin.gz'
    """

    _default_settings = HalfPrecisionSettings
