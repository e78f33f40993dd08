"""JSON payload: the named tree as JSON text, tensors' bytes as base64 strings.

The file stays one valid JSON document, readable in any editor, yet carries a version, length and
CRC32 on its first line, which is always exactly

    {"burn_record": "json/<version> len=<n> crc32=<8 hex digits>",

where `n` and the checksum cover every byte after that line's newline. The rest of the document is
the
`metadata` and `item` members. Floats use Python's JSON dialect (NaN, Infinity) so values survive.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from typing import Any

from ._errors import RecordCorruptedError, RecordFormatError
from ._frame import JSON_PREFIX, describe
from ._metadata import check_version
from ._mpk import max_objects

JSON_VERSION = 1
_HEADER = re.compile(rb'\{"burn_record": "json/(\d{1,9}) len=(\d{1,20}) crc32=([0-9a-f]{8})",\n')


def encode_bytes(view: memoryview) -> str:
    return base64.b64encode(view).decode("ascii")


def decode_bytes(value: Any, path: str) -> bytes:
    if not isinstance(value, str):
        raise RecordCorruptedError(f"{path or '<root>'}: tensor bytes are not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise RecordCorruptedError(
            f"{path or '<root>'}: tensor bytes are not valid base64"
        ) from None


def dumps(record: dict[str, Any], pretty: bool) -> bytes:
    """Serialize `{"metadata", "item"}` (already a named tree) with the checksummed first line."""
    if pretty:
        text = json.dumps(record, indent=2)
    else:
        text = json.dumps(record, separators=(",", ":"))
    # Drop the opening brace: the header line supplies it and the record's members follow it.
    body = text[1:].lstrip("\n").encode("ascii")
    header = (
        f'{{"burn_record": "json/{JSON_VERSION} len={len(body)} crc32={zlib.crc32(body):08x}",\n'
    )
    return header.encode("ascii") + body


def loads(data: bytes | bytearray | memoryview, reader: str) -> dict[str, Any]:
    """Check the first line, then parse; returns the `{"metadata", "item"}` named tree."""
    view = memoryview(data)
    if bytes(view[: len(JSON_PREFIX)]) != JSON_PREFIX:
        if len(view) < len(JSON_PREFIX) and JSON_PREFIX.startswith(bytes(view)) and len(view):
            raise RecordCorruptedError(f"{reader}: record truncated to {len(view)} bytes")
        raise RecordFormatError(
            f"{reader} expects a JSON record, but got {describe(view)}; "
            "load the file with the recorder that wrote it"
        )
    match = _HEADER.match(bytes(view[:80]))
    if match is None:
        raise RecordCorruptedError(f"{reader}: malformed or truncated JSON record header")
    check_version(int(match.group(1)), f"{reader}: JSON record")
    body = view[match.end() :]
    if len(body) != int(match.group(2)):
        raise RecordCorruptedError(
            f"{reader}: JSON record is truncated or has trailing data "
            f"({len(body)} bytes after the header, {int(match.group(2))} expected)"
        )
    if zlib.crc32(body) != int(match.group(3), 16):
        raise RecordCorruptedError(f"{reader}: checksum mismatch, the record is corrupted")
    # Every JSON container opens with a bracket and every further element follows a comma (base64
    # tensor text has neither): their count bounds the objects parsing would build, checked
    # before building any of them.
    raw = bytes(view)
    objects = raw.count(b"{") + raw.count(b"[") + raw.count(b",")
    limit = max_objects()
    if objects > limit:
        raise RecordCorruptedError(
            f"{reader}: JSON record holds up to {objects} containers and elements, more than "
            f"{limit}; a record of a module holds a few per tensor (BURN_RECORD_MAX_OBJECTS "
            "raises the limit)"
        )
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise RecordCorruptedError(f"{reader}: malformed JSON record: {err}") from None
    if not isinstance(doc, dict) or "burn_record" not in doc:
        raise RecordCorruptedError(f"{reader}: malformed JSON record")
    del doc["burn_record"]
    return doc
