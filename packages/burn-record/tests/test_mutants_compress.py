"""Tests written for mutants of the bounded decompression that the suite let survive
(tools/mutation): gzip's stated size is the cap, a record cut inside its magic is "truncated",
and the record's head is checked once, right after the first step."""

from __future__ import annotations

import gzip

import pytest
import zstandard
from burn_record import RecordCorruptedError
from burn_record._compress import GZIP, STEP, ZSTD, decompress
from burn_record._frame import GZIP_MAGIC, ZSTD_MAGIC

DATA = bytes(range(256)) * (3 * STEP // 256)  # three decompression steps


def _forge_isize(gz: bytes, size: int) -> bytes:
    """The same gzip stream with its trailer's length (ISIZE, last 4 bytes) rewritten."""
    return gz[:-4] + size.to_bytes(4, "little")


@pytest.mark.parametrize("stated", [1000, STEP - 1])
def test_gzip_holding_more_than_its_trailer_states_is_refused_at_that_size(stated):
    # the first step already passes the stated size: refused there, naming the container's
    # size (not decompressed to the ratio bound, to fail the length check at the very end)
    gz = _forge_isize(gzip.compress(DATA), stated)
    match = f"more than the {stated} bytes its container states"
    with pytest.raises(RecordCorruptedError, match=match):
        decompress(gz, GZIP, "test")


@pytest.mark.parametrize(
    "compression,magic", [(GZIP, GZIP_MAGIC), (ZSTD, ZSTD_MAGIC)], ids=["gzip", "zstd"]
)
def test_a_record_cut_inside_its_magic_is_truncated(compression, magic):
    cut = magic[: len(magic) - 1]
    with pytest.raises(RecordCorruptedError, match=f"record truncated to {len(cut)} bytes"):
        decompress(cut, compression, "test")


@pytest.mark.parametrize("compression", [GZIP, ZSTD])
def test_the_head_is_checked_once_after_the_first_step(compression):
    data = b"HEAD" * 8 + bytes(3 * STEP + 5)
    packed = gzip.compress(data) if compression == GZIP else zstandard.compress(data)
    seen = []
    out = decompress(packed, compression, "test", head=lambda buf: seen.append(len(buf)))
    assert bytes(out) == data
    assert len(seen) == 1 and 32 <= seen[0] <= STEP


def test_a_gzip_stream_shorter_than_its_trailer_is_truncated():
    # 12 bytes: a header and no trailer yet (a gzip stream has at least 18): nothing can be
    # stated about its size, it is simply cut short
    cut = gzip.compress(DATA)[:12]
    with pytest.raises(RecordCorruptedError, match="gzip data is truncated"):
        decompress(cut, GZIP, "test")
