"""Tests written for mutants of the bounded decompression (`_decompress.py`) that the suite let
survive (tools/mutation): what each refusal says (the compression's name, a record cut inside
its magic, a gzip trailer stating more than the cap), the cap checked at every step, and the
head checked exactly once."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import zstandard
from burn_record import RecordCorruptedError, RecordFormatError
from burn_record._decompress import GZIP, ZSTD, decompress
from burn_record._frame import GZIP_MAGIC, ZSTD_MAGIC

DATA = bytes(range(256)) * 64


def _pack(compression, data):
    """As records are written: gzip (its CRC) or a zstandard frame with its checksum."""
    if compression == GZIP:
        return gzip.compress(data, mtime=0)
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


@pytest.mark.parametrize("compression,name", [(GZIP, "gzip"), (ZSTD, "zstandard")])
def test_errors_name_the_expected_compression(compression, name):
    other = _pack(ZSTD if compression == GZIP else GZIP, DATA)
    with pytest.raises(RecordFormatError, match=f"expects {name}-compressed data"):
        decompress(other, compression, "test")
    damaged = bytearray(_pack(compression, DATA))
    damaged[len(damaged) // 2] ^= 0xFF  # one byte flipped inside the compressed blocks
    with pytest.raises(RecordCorruptedError, match=f"damaged {name} data"):
        decompress(bytes(damaged), compression, "test")


@pytest.mark.parametrize(
    "compression,magic", [(GZIP, GZIP_MAGIC), (ZSTD, ZSTD_MAGIC)], ids=["gzip", "zstd"]
)
def test_a_record_cut_inside_its_magic_is_truncated_other_bytes_are_another_format(
    compression, magic
):
    cut = magic[: len(magic) - 1]
    with pytest.raises(RecordCorruptedError, match=f"record truncated to {len(cut)} bytes"):
        decompress(cut, compression, "test")
    for other in (b"a", b"not a compressed record at all"):
        with pytest.raises(RecordFormatError, match="expects"):
            decompress(other, compression, "test")


def test_a_gzip_trailer_stating_more_than_the_cap_is_refused_after_one_step():
    # three steps of output: the first is out (and checked) long before the trailer is read
    gz = gzip.compress(bytes(range(256)) * (3 << 12), mtime=0)
    liar = gz[:-4] + (2**32 - 1).to_bytes(4, "little")
    with pytest.raises(RecordCorruptedError, match="states that it decompresses to 4294967295"):
        decompress(liar, GZIP, "test")


def test_a_gzip_stream_cut_before_its_trailer_is_truncated():
    # 17 bytes: no trailer yet, whatever its last four bytes hold (here a huge "size")
    rng = np.random.default_rng(0)
    for _ in range(100):
        gz = gzip.compress(rng.bytes(4096), mtime=0, compresslevel=1)
        if int.from_bytes(gz[13:17], "little") > 1 << 30:
            break
    with pytest.raises(RecordCorruptedError, match="gzip data is truncated"):
        decompress(gz[:17], GZIP, "test")


@pytest.mark.parametrize("size", [31, 32, 33])
@pytest.mark.parametrize("compression", [GZIP, ZSTD])
def test_a_record_of_about_32_bytes_has_its_head_checked_once(compression, size):
    data = bytes(range(size))
    seen = []
    out = decompress(_pack(compression, data), compression, "t", head=lambda b: seen.append(bytes(b)))
    assert bytes(out) == data and seen == [data[:32]]


def test_a_gzip_stream_past_the_cap_is_refused_at_the_step_that_passes_it():
    # 34 MiB of zeros against a cap of 32 MiB + 3 x the compressed size, the trailer forged
    # small so that only the cap can stop it: refused at the step that passes the cap, not
    # decompressed to the end (where only the length check would catch the lie)
    from burn_record._decompress import STEP, max_output

    gz = gzip.compress(bytes(34 * STEP), mtime=0)  # refused at step 33 of 34
    cap = max_output(len(gz), "test")
    assert 32 * STEP < cap < 33 * STEP
    liar = gz[:-4] + (1000).to_bytes(4, "little")
    with pytest.raises(RecordCorruptedError, match=f"more than the {cap} bytes that"):
        decompress(liar, GZIP, "test")


def test_a_gzip_record_of_exactly_the_cap_loads():
    # the cap is inclusive: FLOOR + ratio x size bytes may come out of `size` bytes
    from burn_record._decompress import FLOOR, max_output

    n = FLOOR
    for _ in range(5):  # a fixed point: the output is the cap of its own compressed size
        packed = gzip.compress(bytes(n), 6, mtime=0)
        n = max_output(len(packed), "t")
    packed = gzip.compress(bytes(n), 6, mtime=0)
    assert max_output(len(packed), "t") == n
    assert len(decompress(packed, GZIP, "t")) == n


def test_gzip_trailer_is_read_from_18_bytes_on():
    # 40 zeros: their deflate is short, so a 17- or an 18-byte cut already decodes 40 bytes.
    # 17 bytes cannot hold header + trailer: truncated. From 18 the last 4 bytes are read as
    # the stated size (ISIZE), here over the cap, which is refused before decoding on.
    packed = gzip.compress(bytes(40), mtime=0)
    with pytest.raises(RecordCorruptedError, match="gzip data is truncated"):
        decompress(packed[:17], GZIP, "t")
    with pytest.raises(RecordCorruptedError, match="the gzip data states that it decompresses"):
        decompress(packed[:18], GZIP, "t")


def test_wrong_recorder_description_reads_32_bytes():
    # 31 spaces then JSON: the description looks at the first 32 bytes, as `describe` does
    data = b" " * 31 + b'{"a": 1}'
    with pytest.raises(RecordFormatError, match="JSON text that is not a burn record"):
        decompress(data, GZIP, "t")
