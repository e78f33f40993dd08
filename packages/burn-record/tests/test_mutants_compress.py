"""Tests written for mutants of the bounded decompression that the suite let survive
(tools/mutation): which size caps a stream (gzip's trailer, a zstandard frame's content size,
else a ratio of the compressed size and its floor) and what each refusal says, a record cut
inside its magic, the head checked once after the first step, any buffer format."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import zstandard
from burn_record import RecordCorruptedError, RecordFormatError
from burn_record._compress import FLOOR, GZIP, STEP, ZSTD, decompress
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
    with pytest.raises(RecordCorruptedError, match=match) as err:
        decompress(gz, GZIP, "test")
    assert "BURN_RECORD_MAX_RATIO" not in str(err.value)  # a stated size is not a ratio


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


def _gzip_of_size(n: int) -> bytes:
    """A gzip stream of exactly `n` bytes (incompressible data, its length adjusted)."""
    src = np.random.default_rng(0).bytes(n + 4096)
    k = n - 64
    for _ in range(8):
        gz = gzip.compress(src[:k], compresslevel=1, mtime=0)
        if len(gz) == n:
            return gz
        k += n - len(gz)
    raise AssertionError(f"no gzip stream of {n} bytes")


def test_a_gzip_stream_too_large_for_its_trailer_is_capped_by_the_ratio():
    # 4,161,790 compressed bytes are the first that may hold 4 GiB (1032 * n + 1024 >= 2**32),
    # which the 32-bit trailer cannot state: the cap is the ratio bound, and a forged trailer
    # is found by the length check at the end (damaged), not taken as the size
    gz = _forge_isize(_gzip_of_size(4_161_790), 1000)
    with pytest.raises(RecordCorruptedError, match="damaged gzip data.*length"):
        decompress(gz, GZIP, "test")


def test_a_zstd_frame_without_content_size_is_capped_by_ratio_and_floor(monkeypatch):
    # no size stated: any length up to the cap is fine (no "truncated"); past the floor
    # (64 MiB) and the default ratio it is refused with the hint; a larger ratio lets it in
    small = zstandard.ZstdCompressor(write_content_size=False).compress(DATA)
    assert decompress(small, ZSTD, "test") == DATA
    big = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(FLOOR + STEP))
    with pytest.raises(RecordCorruptedError, match="allows .*set BURN_RECORD_MAX_RATIO"):
        decompress(big, ZSTD, "test")
    monkeypatch.setenv("BURN_RECORD_MAX_RATIO", str(4 * FLOOR // len(big)))
    assert len(decompress(big, ZSTD, "test")) == FLOOR + STEP


def test_a_buffer_of_another_format_is_read_as_bytes():
    packed = zstandard.compress(DATA)
    assert decompress(memoryview(packed).cast("c"), ZSTD, "test") == DATA


@pytest.mark.parametrize(
    "compression,name,other",
    [(GZIP, "gzip", zstandard.compress(DATA)), (ZSTD, "zstandard", gzip.compress(DATA))],
)
def test_errors_name_the_expected_compression(compression, name, other):
    with pytest.raises(RecordFormatError, match=f"expects {name}-compressed data"):
        decompress(other, compression, "test")
    good = gzip.compress(DATA) if compression == GZIP else zstandard.compress(DATA)
    damaged = bytearray(good)
    damaged[len(good) // 2] ^= 0xFF  # one byte flipped inside the compressed blocks
    with pytest.raises(RecordCorruptedError, match=f"damaged {name} data"):
        decompress(damaged, compression, "test")
