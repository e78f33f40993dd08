"""`Pins`: the buffers step-capture tapes hold in one device pool.

A recording's tape keeps referencing every buffer it read or wrote; a replay writes them again.
So a pinned buffer whose block is dropped is held (not put back on the free list, not handed to
another tensor), buffers freed during the recording are taken off the free list when the tape is
pinned, and `unpin` gives the held ones back to the driver once no tape needs them.
"""

from __future__ import annotations

from ._pool import Pool


class Pins:
    """The buffers step captures hold in one pool (installed on the pool once)."""

    def __init__(self, pool: Pool):
        self.pool = pool
        self.count: dict[int, int] = {}
        self.held: dict[int, tuple] = {}  # released while pinned: (buf, size)
        pool.release = self.release  # Block.__del__ calls pool.release: this one first

    @staticmethod
    def of(pool: Pool) -> Pins:
        pins = getattr(pool, "capture_pins", None)
        if pins is None:
            pins = pool.capture_pins = Pins(pool)
        return pins

    def release(self, buf, size: int) -> None:
        key = buf.int_ptr
        if key in self.count:
            self.pool.in_use -= size
            self.held[key] = (buf, size)
            return
        Pool.release(self.pool, buf, size)

    def pin(self, keys) -> None:
        for k in keys:
            self.count[k] = self.count.get(k, 0) + 1
        for size, bucket in self.pool.free.items():  # released during the recording
            keep = []
            for b in bucket:
                if b.int_ptr in self.count:
                    self.held[b.int_ptr] = (b, size)
                else:
                    keep.append(b)
            bucket[:] = keep

    def unpin(self, keys) -> None:
        for k in keys:
            n = self.count.get(k, 0) - 1
            if n > 0:
                self.count[k] = n
                continue
            self.count.pop(k, None)
            held = self.held.pop(k, None)
            if held is not None:  # its block is gone: the buffer goes back to the driver
                self.pool.reserved -= held[1]
        if not self.count:  # no tape left: releases take the pool's own path again
            self.pool.__dict__.pop("release", None)
            self.pool.capture_pins = None
