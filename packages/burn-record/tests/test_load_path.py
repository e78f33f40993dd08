"""The load path: the zero-copy msgpack reader and memory-mapped file reads.

`_mpk.unpack` replaces `msgpack.unpackb` on load so tensor bytes are copied once; it must decode
every valid msgpack document exactly as msgpack does (bins as zero-copy views), and refuse only
with RecordCorruptedError. File loads go through a read-only memory map that is closed afterwards.
"""

from __future__ import annotations

import math

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import burn_record as br
from burn_record import _mpk, _recorder

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, width=32)
    | st.text(max_size=40)
    | st.binary(max_size=300)
)
TREES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=10), inner, max_size=20)
    ),
    max_leaves=60,
)


def _plain(obj):
    if isinstance(obj, memoryview):
        return bytes(obj)
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


# 300 examples (the reader is cheap), or the profile's count when larger (`long`: 2,000).
@settings(max_examples=max(300, settings.default.max_examples), deadline=None)
@given(TREES, st.booleans())
def test_reader_matches_msgpack(tree, single_float):
    data = msgpack.packb(tree, use_bin_type=True, use_single_float=single_float)
    expected = msgpack.unpackb(data, raw=False, strict_map_key=True)
    got = _plain(_mpk.unpack(memoryview(data)))
    assert repr(got) == repr(expected)


def test_reader_bins_are_views_and_float32_is_exact():
    payload = bytearray(msgpack.packb({"b": b"\x01" * 70000, "f": 0.1}, use_single_float=True))
    tree = _mpk.unpack(memoryview(payload))
    assert isinstance(tree["b"], memoryview) and tree["b"].obj is payload
    assert tree["f"] == float(np.float32(0.1))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xc1",
        b"\xc7\x01\x00\x00",
        b"\xd4\x00\x00",
        b"\x92\x01",
        b"\xdd\xff\xff\xff\xff",
        b"\xdf\xff\xff\xff\xff\x00",
        b"\xc6\x00\x00\x01\x00abc",
        b"\xa2\xff\xfe",
        b"\x81\x01\x02",
        b"\x81\xc4\x01a\x02",
        b"\x01\x02",
        b"\xcb\x00",
        b"\x91" * 100_000,
    ],
)
def test_reader_refuses_malformed(data):
    with pytest.raises(br.RecordCorruptedError):
        _mpk.unpack(memoryview(data))


@pytest.mark.parametrize("use_mmap", [True, False])
@pytest.mark.parametrize(
    "cls",
    [
        br.NamedMpkFileRecorder,
        br.BinFileRecorder,
        br.NamedMpkZstFileRecorder,
        br.PrettyJsonFileRecorder,
    ],
)
def test_file_loads_own_writable_arrays(cls, use_mmap, tmp_path, monkeypatch):
    monkeypatch.setattr(_recorder, "MMAP_LOADS", use_mmap)
    w = np.arange(math.prod([300, 70]), dtype=np.float32).reshape(300, 70)
    item = {"w": br.ParamRecord("a", br.TensorData(w)), "n": 3}
    rec = cls()
    path = rec.record(item, tmp_path / "m")
    loaded = rec.load(path)
    arr = loaded["w"].value.array
    owner = arr if arr.base is None else arr.base
    assert arr.flags.writeable and arr.flags.aligned and owner.flags.owndata
    assert not isinstance(owner, memoryview | bytes)
    np.testing.assert_array_equal(arr, w)
    arr[0, 0] = -1  # writable, and not the file
    np.testing.assert_array_equal(rec.load(path)["w"].value.array, w)
    path.unlink()  # the mapping is closed: the file can go (and on Windows, be deleted)


@pytest.mark.parametrize("cls", [br.NamedMpkFileRecorder, br.BinFileRecorder])
def test_corrupted_mapped_file_raises_record_error(cls, tmp_path):
    rec = cls()
    path = rec.record({"w": br.TensorData(np.ones(100_000, np.float32))}, tmp_path / "m")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(br.RecordCorruptedError):
        rec.load(path)
    path.write_bytes(bytes(raw[: len(raw) // 3]))
    with pytest.raises(br.RecordCorruptedError):
        rec.load(path)
    path.write_bytes(b"")
    with pytest.raises(br.RecordCorruptedError):
        rec.load(path)
