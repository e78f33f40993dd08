"""Record metadata (Burn's `BurnMetadata`) and the format version that guards compatibility."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ._errors import RecordCorruptedError, RecordFormatError, RecordVersionError
from ._settings import PrecisionSettings

# Version of the record structure (`metadata` + `item` tree and its tags). Bump it on any change a
# reader must know about, and keep decoding every older version. Readers refuse newer versions.
RECORD_VERSION = 1
SUPPORTED_VERSIONS = frozenset({1})

METADATA_KEYS = ("float", "int", "format", "version", "settings")


def build_metadata(format_name: str, settings: PrecisionSettings) -> dict[str, Any]:
    """The metadata written in front of every item.

    Example:
        >>> from burn_record import FullPrecisionSettings
        >>> build_metadata("NamedMpkFileRecorder", FullPrecisionSettings())["float"]
        'f32'
    """
    return {
        "float": settings.float_name,
        "int": settings.int_name,
        "format": format_name,
        "version": RECORD_VERSION,
        "settings": repr(settings),
    }


def check_version(version: object, where: str) -> None:
    if type(version) is not int:
        raise RecordCorruptedError(f"{where}: malformed format version {version!r:.40}")
    if version not in SUPPORTED_VERSIONS:
        newest = max(SUPPORTED_VERSIONS)
        hint = "upgrade burn-record to read it" if version > newest else "it is not a known version"
        raise RecordVersionError(
            f"{where}: record format version {version} is not supported (this build reads "
            f"versions {sorted(SUPPORTED_VERSIONS)}); {hint}"
        )


def check_metadata(meta: object, accepted_formats: Collection[str], reader: str) -> dict[str, Any]:
    """Validate decoded metadata: all fields present, a readable version, a compatible format."""
    if not isinstance(meta, dict) or set(meta) != set(METADATA_KEYS):
        raise RecordCorruptedError(f"malformed record metadata {meta!r:.120}")
    for key in ("float", "int", "format", "settings"):
        if not isinstance(meta[key], str):
            raise RecordCorruptedError(f"malformed record metadata field {key}={meta[key]!r:.40}")
    check_version(meta["version"], "record metadata")
    if meta["format"] not in accepted_formats:
        raise RecordFormatError(
            f"record was written by {meta['format']!r:.60}, whose format {reader} cannot read; "
            f"load it with the recorder that wrote it (readable here: {sorted(accepted_formats)})"
        )
    return meta
