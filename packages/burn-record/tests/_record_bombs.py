"""Decompression bombs that begin as a real record would, built without compressing their bulk.

A deflate stream of zeros is periodic: after a full flush, 1 MiB of zeros compresses to the same
~1 KB every time, so 4 GiB of zeros is that block repeated 4096 times (4 MB, built at once). The
gzip trailer's CRC-32 of the zeros is computed by shifting the CRC register through GF(2)
matrices instead of over 4 GiB of bytes. zstandard bombs go through the compressor in 1 MiB
chunks (zeros compress at GB/s).
"""

from __future__ import annotations

import io
import zlib

import zstandard

STEP = 1 << 20
_POLY = 0xEDB88320  # CRC-32, reflected


def _times(matrix: list[int], vector: int) -> int:
    out, i = 0, 0
    while vector:
        if vector & 1:
            out ^= matrix[i]
        vector >>= 1
        i += 1
    return out


def _square(matrix: list[int]) -> list[int]:
    return [_times(matrix, column) for column in matrix]


def crc32_then_zeros(crc: int, n: int) -> int:
    """`zlib.crc32(bytes(n), crc)` in O(log n): the CRC register is linear in GF(2), and one
    zero bit shifts it right, folding in the polynomial when the bit shifted out is set.

    Example:
        >>> crc32_then_zeros(zlib.crc32(b"ab"), 1000) == zlib.crc32(bytes(1000), zlib.crc32(b"ab"))
        True
    """
    op = [_POLY] + [1 << (i - 1) for i in range(1, 32)]  # one zero bit
    for _ in range(3):
        op = _square(op)  # one zero byte
    register = crc ^ 0xFFFFFFFF
    while n:
        if n & 1:
            register = _times(op, register)
        n >>= 1
        if n:
            op = _square(op)
    return register ^ 0xFFFFFFFF


def gzip_bomb(head: bytes, zeros: int) -> bytes:
    """A valid gzip member of `head` then `zeros` (a multiple of 1 MiB) zero bytes."""
    assert zeros % STEP == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(STEP)) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(bytes(STEP)) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == again, "the compressor's output for a zero block is not periodic"
    last = c.flush()
    crc = crc32_then_zeros(zlib.crc32(head), zeros)
    size = (len(head) + zeros) % (1 << 32)  # ISIZE: the size modulo 2^32
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    body = first + block * (zeros // STEP) + last
    return header + body + crc.to_bytes(4, "little") + size.to_bytes(4, "little")


def zstd_bomb(head: bytes, zeros: int, declare: bool = True) -> bytes:
    """A zstandard frame of `head` then `zeros` zero bytes, stating its size or not."""
    size = len(head) + zeros if declare else -1
    buf = io.BytesIO()
    cctx = zstandard.ZstdCompressor(level=1, write_content_size=declare)
    with cctx.stream_writer(buf, size=size, closefd=False) as w:
        w.write(head)
        chunk = bytes(STEP)
        for _ in range(zeros // STEP):
            w.write(chunk)
    return buf.getvalue()


def forge_content_size(frame: bytes, size: int) -> bytes:
    """The same zstandard frame with its (4- or 8-byte) content-size field rewritten."""
    fhd = frame[4]
    assert fhd >> 6 in (2, 3), "expected a 4- or 8-byte content size field"
    at = 5 + (0 if (fhd >> 5) & 1 else 1) + (0, 1, 2, 4)[fhd & 3]
    width = 4 if fhd >> 6 == 2 else 8
    return frame[:at] + size.to_bytes(width, "little") + frame[at + width :]
