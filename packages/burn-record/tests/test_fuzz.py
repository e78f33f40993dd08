"""Property tests: random and mutated bytes make every loader return or raise a RecordError.

Nothing else may escape (no IndexError, struct.error, MemoryError, RecursionError...), and nothing
may hang: hypothesis' deadline fails any example that takes too long. Mutations are applied both to
the stored bytes (mostly caught by checksums) and, re-checksummed, to the payload inside the frame,
so the decoders themselves see malformed structure.

The number of examples comes from the hypothesis profile (see `conftest.py`): `ci` runs the same
25 per test and recorder every time; `HYPOTHESIS_PROFILE=long` runs 4,000 new random ones.
"""

from __future__ import annotations

import gzip
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

import burn_record as br
from burn_record import _frame

ITEM = {
    "layer": {
        "weight": br.ParamRecord("w", br.TensorData(np.arange(6, dtype=np.float32).reshape(2, 3))),
        "bias": None,
    },
    "state": (br.TensorData(np.array([1, -2], np.int64)), br.TensorData(np.array([True]))),
    "meta": {"step": 3, "lr": 0.5, "name": "x", "flags": [True, False]},
}
RECORDERS = [
    br.NamedMpkFileRecorder,
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.JsonGzFileRecorder,
    br.PrettyJsonFileRecorder,
    br.BinBytesRecorder,
    br.NamedMpkBytesRecorder,
]
PREFIXES = [
    b"",
    _frame.MAGIC_MPK,
    _frame.MAGIC_BIN,
    _frame.JSON_PREFIX,
    b"\x1f\x8b",
    b"\x28\xb5\x2f\xfd",
]


def _load(rec, data: bytes):
    """Load through the public API; return the item or the RecordError raised (nothing else)."""
    try:
        if isinstance(rec, br.FileRecorder):
            with tempfile.TemporaryDirectory() as d:
                path = Path(d) / f"m.{rec.file_extension()}"
                path.write_bytes(data)
                return rec.load(path)
        return rec.load(data)
    except br.RecordError as err:
        return err


def _check(rec, data: bytes) -> None:
    out = _load(rec, data)
    if not isinstance(out, br.RecordError):
        # Whatever loads must be a well-formed item: it re-encodes and round-trips.
        rec2 = br.BinBytesRecorder(br.DoublePrecisionSettings)
        assert br.record_diff(out, rec2.load(rec2.record(out))) == br.RecordDiff([], [], [])


def _mutate(data: bytes, flips, cut, extra) -> bytes:
    buf = bytearray(data)
    for pos, mask in flips:
        if buf:
            buf[pos % len(buf)] ^= mask
    if cut is not None:
        buf = buf[: cut % (len(buf) + 1)]
    return bytes(buf) + extra


def _reframe(rec, data: bytes, mutate) -> bytes:
    """Mutate the payload under the compression and checksums, then rebuild both."""
    raw = data
    if rec._compression == "gzip":
        raw = gzip.decompress(data)
    elif rec._compression == "zstd":
        raw = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if rec._payload == "json":
        _, body = raw.split(b"\n", 1)
        body = mutate(body)
        raw = (
            f'{{"burn_record": "json/1 len={len(body)} crc32={zlib.crc32(body):08x}",\n'.encode()
            + body
        )
    else:
        raw = b"".join(_frame.frame([mutate(raw[12:-16])], raw[:8]))
    if rec._compression == "gzip":
        return gzip.compress(raw)
    if rec._compression == "zstd":
        return zstandard.ZstdCompressor(write_checksum=True).compress(raw)
    return raw


flips = st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=4)
cuts = st.none() | st.integers(0, 10_000)
extras = st.binary(max_size=16)


@pytest.mark.parametrize("cls", RECORDERS, ids=lambda c: c.__name__)
@given(prefix=st.sampled_from(PREFIXES), tail=st.binary(max_size=200))
def test_random_bytes(cls, prefix, tail):
    out = _load(cls(), prefix + tail)
    assert isinstance(out, br.RecordError) or prefix + tail == b""


@pytest.mark.parametrize("cls", RECORDERS, ids=lambda c: c.__name__)
@given(flips=flips, cut=cuts, extra=extras)
def test_mutated_files(cls, flips, cut, extra):
    rec = cls()
    _check(rec, _mutate(rec.to_bytes(ITEM), flips, cut, extra))


@pytest.mark.parametrize("cls", RECORDERS, ids=lambda c: c.__name__)
@given(flips=flips, cut=cuts, extra=extras)
def test_mutated_payloads_with_valid_checksums(cls, flips, cut, extra):
    rec = cls()
    data = _reframe(rec, rec.to_bytes(ITEM), lambda p: _mutate(p, flips, cut, extra))
    _check(rec, data)


def test_reframing_without_mutation_is_lossless():
    # Guards the fuzz harness itself: an identity mutation must still load.
    for cls in RECORDERS:
        rec = cls()
        out = rec.from_bytes(_reframe(rec, rec.to_bytes(ITEM), lambda p: p))
        assert out["layer"]["weight"] == ITEM["layer"]["weight"]


@pytest.mark.parametrize(
    "cls", [br.BinBytesRecorder, br.NamedMpkBytesRecorder, br.PrettyJsonFileRecorder]
)
def test_hostile_structures(cls):
    rec = cls()
    if cls is br.BinBytesRecorder:
        head = rec.record(None)[12:-17]  # metadata without the item's None tag
        hostile = [
            head + b"\x07" * 100_000,  # deeply nested lists
            head + b"\x07\xff\xff\xff\xff",  # a list claiming 4 billion values
            head + b"\x0a\x01\x08" + b"\xff" * 64,  # a tensor with absurd dims
            head + b"\x0a\x01\x40" + b"\x00" * 8,  # rank 64 but no dims
        ]
        payloads = [b"".join(_frame.frame([h], _frame.MAGIC_BIN)) for h in hostile]
    elif cls is br.NamedMpkBytesRecorder:
        deep = b"\x91" * 100_000 + b"\xc0"  # 100k nested one-element arrays
        meta = rec.record(None)[12:-16]
        payloads = [
            b"".join(_frame.frame([meta[:-1] + deep], _frame.MAGIC_MPK)),
            b"".join(_frame.frame([b"\xdd\xff\xff\xff\xff"], _frame.MAGIC_MPK)),
        ]
    else:
        body = b'"metadata": 1, "item": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        header = f'{{"burn_record": "json/1 len={len(body)} crc32={zlib.crc32(body):08x}",\n'
        payloads = [header.encode() + body]
    for data in payloads:
        with pytest.raises(br.RecordError):
            rec.from_bytes(data)
