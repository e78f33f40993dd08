"""A memory pool per device: device buffers are reused by size class instead of re-allocated.

Every tensor's buffer is owned by a `Block`; views share it. When the last array referencing a
block is dropped, its buffer goes back to the free list of its size class. Reuse is safe while
kernels are still queued: the device has one in-order queue, so a kernel writing a reused buffer
runs after every earlier kernel that read it.

Size classes: powers of two up to 1 MiB (from 512 B), then eight classes per octave (at most
12.5% unused). Cached bytes are capped (a quarter of the device's memory by default); past the
cap a released buffer goes back to the driver. `stats()` reports bytes in use (live blocks) and reserved (in use + cached).
"""

from __future__ import annotations

import pyopencl as cl

_SMALL = 1 << 20


def size_class(nbytes: int) -> int:
    n = max(int(nbytes), 512)
    p = 1 << (n - 1).bit_length()
    if p <= _SMALL:
        return p
    step = p >> 4  # eight classes between p/2 and p
    return -(-n // step) * step


class Block:
    """Owner of one pooled buffer; returns it to the pool when garbage-collected."""

    __slots__ = ("buf", "pool", "size")

    def __init__(self, buf, size: int, pool: Pool):
        self.buf = buf
        self.size = size
        self.pool = pool

    def __del__(self):
        pool = self.pool
        if pool is not None:
            pool.release(self.buf, self.size)


class Pool:
    def __init__(self, ctx, max_cached: int):
        self.ctx = ctx
        #: cached (free) bytes above this are given back to the driver on release
        self.max_cached = max_cached
        self.free: dict[int, list] = {}
        self.in_use = 0
        self.reserved = 0
        self.allocations = 0
        self.reuses = 0

    def alloc(self, nbytes: int) -> Block:
        size = size_class(nbytes)
        bucket = self.free.get(size)
        if bucket:
            buf = bucket.pop()
            self.reuses += 1
        else:
            try:
                buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size)
            except cl.MemoryError:
                self.trim()  # give cached buffers back to the driver, then retry once
                buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size)
            self.reserved += size
            self.allocations += 1
        self.in_use += size
        return Block(buf, size, self)

    def release(self, buf, size: int) -> None:
        self.in_use -= size
        if self.reserved - self.in_use > self.max_cached:
            self.reserved -= size  # dropping the last reference frees it in the driver
            return
        self.free.setdefault(size, []).append(buf)

    def trim(self) -> int:
        """Release every cached (unused) buffer to the driver; returns the bytes freed."""
        freed = 0
        for size, bucket in self.free.items():
            freed += size * len(bucket)
            bucket.clear()
        self.reserved -= freed
        return freed

    def stats(self) -> dict:
        return {
            "bytes_in_use": self.in_use,
            "bytes_reserved": self.reserved,
            "allocations": self.allocations,
            "reuses": self.reuses,
        }
