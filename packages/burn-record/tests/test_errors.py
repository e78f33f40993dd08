"""Clear errors: wrong recorder, truncation, corruption, unknown dtype/version/format, bad items."""

from __future__ import annotations

import json
import shutil
import struct
import zlib

import msgpack
import numpy as np
import pytest

import burn_record as br
from burn_record import _frame

ITEM = {"w": br.ParamRecord("p", br.TensorData(np.arange(64, dtype=np.float32))), "n": 3}
FILE_RECORDERS = [
    br.NamedMpkFileRecorder,
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.JsonGzFileRecorder,
    br.PrettyJsonFileRecorder,
]


def _wire(cls):
    return (cls._payload, cls._compression)


@pytest.mark.parametrize("writer", FILE_RECORDERS, ids=lambda c: c.__name__)
def test_wrong_recorder_is_a_format_error(writer, tmp_path):
    src = writer().record(ITEM, tmp_path / "m")
    for reader_cls in FILE_RECORDERS:
        reader = reader_cls()
        dst = tmp_path / f"copy.{reader.file_extension()}"
        shutil.copyfile(src, dst)
        if _wire(reader_cls) == _wire(writer):
            assert reader.load(dst)["n"] == 3
            continue
        with pytest.raises(br.RecordFormatError, match="recorder that wrote it"):
            reader.load(dst)


def test_wrong_recorder_messages_name_both_formats(tmp_path):
    gz = br.NamedMpkGzFileRecorder().to_bytes(ITEM)
    with pytest.raises(br.RecordFormatError, match="expects zstandard.*got gzip"):
        br.NamedMpkZstFileRecorder().from_bytes(gz)
    mpk = br.NamedMpkFileRecorder().to_bytes(ITEM)
    with pytest.raises(br.RecordFormatError, match="expects a JSON record.*named-msgpack"):
        br.PrettyJsonFileRecorder().from_bytes(mpk)
    with pytest.raises(br.RecordFormatError, match="positional binary.*named-msgpack"):
        br.BinBytesRecorder().load(mpk)
    with pytest.raises(br.RecordFormatError, match="got gzip"):
        br.NamedMpkFileRecorder().from_bytes(gz)
    with pytest.raises(br.RecordFormatError, match="JSON text that is not a burn record"):
        br.PrettyJsonFileRecorder().from_bytes(b'{"a": 1}')


@pytest.mark.parametrize("cls", FILE_RECORDERS, ids=lambda c: c.__name__)
def test_truncated_and_corrupted(cls):
    rec = cls()
    data = rec.to_bytes(ITEM)
    for cut in sorted({0, 1, 3, 11, len(data) // 2, len(data) - 5, len(data) - 1}):
        with pytest.raises(br.RecordCorruptedError):
            rec.from_bytes(data[:cut])
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x40
    with pytest.raises(br.RecordCorruptedError):
        rec.from_bytes(bytes(flipped))
    with pytest.raises(br.RecordCorruptedError):
        rec.from_bytes(data + b"garbage!")


def test_checksum_error_message():
    data = bytearray(br.BinBytesRecorder().record(ITEM))
    data[100] ^= 1
    with pytest.raises(br.RecordCorruptedError, match="checksum mismatch"):
        br.BinBytesRecorder().load(bytes(data))


def _edit_mpk(data: bytes, edit) -> bytes:
    doc = msgpack.unpackb(data[12:-16])
    edit(doc)
    return b"".join(_frame.frame([msgpack.packb(doc)], _frame.MAGIC_MPK))


def _edit_json(data: bytes, edit) -> bytes:
    doc = json.loads(data)
    del doc["burn_record"]
    edit(doc)
    body = json.dumps(doc)[1:].encode()
    return (
        f'{{"burn_record": "json/1 len={len(body)} crc32={zlib.crc32(body):08x}",\n'.encode() + body
    )


def test_unknown_dtype():
    def q8(doc):
        doc["item"]["w"]["param"]["dtype"] = "Q8"

    bad = _edit_mpk(br.NamedMpkBytesRecorder().record(ITEM), q8)
    with pytest.raises(br.RecordDTypeError, match=r"w: unknown dtype 'Q8'"):
        br.NamedMpkBytesRecorder().load(bad)
    bad = _edit_json(br.PrettyJsonFileRecorder().to_bytes(ITEM), q8)
    with pytest.raises(br.RecordDTypeError, match="Q8"):
        br.PrettyJsonFileRecorder().from_bytes(bad)
    # Positional binary: the dtype code follows the param id; 99 is no dtype.
    raw = bytearray(br.BinBytesRecorder().record({"w": br.TensorData([1.0])}))
    payload = raw[12:-16]
    at = payload.index(b"\x0a\x01\x01") + 1  # tensor tag, dtype F32, rank 1
    payload[at] = 99
    bad = b"".join(_frame.frame([bytes(payload)], _frame.MAGIC_BIN))
    with pytest.raises(br.RecordDTypeError, match="unknown dtype code 99"):
        br.BinBytesRecorder().load(bad)


def test_newer_versions_are_refused_clearly():
    def v2(doc):
        doc["metadata"]["version"] = 2

    bad = _edit_mpk(br.NamedMpkBytesRecorder().record(ITEM), v2)
    with pytest.raises(br.RecordVersionError, match="version 2 is not supported.*upgrade"):
        br.NamedMpkBytesRecorder().load(bad)
    bad = _edit_json(br.PrettyJsonFileRecorder().to_bytes(ITEM), v2)
    with pytest.raises(br.RecordVersionError, match="upgrade"):
        br.PrettyJsonFileRecorder().from_bytes(bad)
    # The frame's own version, and the JSON header's.
    data = bytearray(br.BinBytesRecorder().record(ITEM))
    struct.pack_into("<H", data, 8, 7)
    with pytest.raises(br.RecordVersionError, match="frame version 7"):
        br.BinBytesRecorder().load(bytes(data))
    text = br.PrettyJsonFileRecorder().to_bytes(ITEM).replace(b"json/1 ", b"json/3 ", 1)
    with pytest.raises(br.RecordVersionError, match="version 3"):
        br.PrettyJsonFileRecorder().from_bytes(text)
    # Metadata version 2 in the positional format.
    raw = bytearray(br.BinBytesRecorder().record(ITEM))
    payload = raw[12:-16]
    at = payload.index(b"BinBytesRecorder") + len("BinBytesRecorder")
    struct.pack_into("<I", payload, at, 2)
    with pytest.raises(br.RecordVersionError):
        br.BinBytesRecorder().load(b"".join(_frame.frame([bytes(payload)], _frame.MAGIC_BIN)))
    assert issubclass(br.RecordVersionError, br.RecordFormatError)


def test_unknown_format_name_is_refused():
    def other(doc):
        doc["metadata"]["format"] = "SafetensorsFileRecorder"

    bad = _edit_mpk(br.NamedMpkBytesRecorder().record(ITEM), other)
    with pytest.raises(br.RecordFormatError, match="SafetensorsFileRecorder"):
        br.NamedMpkBytesRecorder().load(bad)


def test_missing_file(tmp_path):
    with pytest.raises(br.RecordNotFoundError, match="nope.mpk") as info:
        br.NamedMpkFileRecorder().load(tmp_path / "nope")
    assert isinstance(info.value, FileNotFoundError)


@pytest.mark.parametrize(
    "cls", [br.BinBytesRecorder, br.NamedMpkBytesRecorder, br.JsonGzFileRecorder]
)
def test_unsupported_items(cls):
    rec = cls()
    deep: list = []
    for _ in range(300):
        deep = [deep]
    for bad, match in [
        ({"a": {1, 2}}, "a: cannot record a value of type set"),
        ({"a": [b"raw"]}, "a.0: cannot record"),
        ({"a": object()}, "cannot record"),
        ({1: "x"}, "dict keys must be str"),
        ({"big": 2**64}, "outside the storable range"),
        (deep, "nested deeper"),
    ]:
        with pytest.raises(br.UnsupportedItemError, match=match):
            rec.to_bytes(bad)
    with pytest.raises(TypeError):
        rec.from_bytes("not bytes")


def test_param_record_validates_its_fields():
    with pytest.raises(TypeError):
        br.ParamRecord(1, br.TensorData([1.0]))
    with pytest.raises(TypeError):
        br.ParamRecord("x", [1.0])
