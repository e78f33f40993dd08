"""cupy's memory pool per device: figures for `device.memory_stats()`, and out-of-memory errors
that say which op asked for how much while how much was in use."""

from __future__ import annotations

import functools
import re

from ._platform import load_cupy


class CudaOutOfMemoryError(MemoryError):
    """A GPU allocation failed inside op `op`.

    Attributes: `op`, `device` (index), `requested` (bytes asked, None when cupy did not say),
    `in_use` (bytes held by live tensors in the pool), `reserved` (pool total, cached blocks
    included), `device_free` / `device_total` (the driver's figures).
    """

    def __init__(self, op, device, requested, in_use, reserved, device_free, device_total):
        self.op, self.device, self.requested = op, device, requested
        self.in_use, self.reserved = in_use, reserved
        self.device_free, self.device_total = device_free, device_total
        asked = "an unknown size" if requested is None else _fmt(requested)
        super().__init__(
            f"{op}: out of GPU memory on cuda:{device}: asked for {asked}; "
            f"{_fmt(in_use)} in use by tensors, {_fmt(reserved)} reserved by the pool, "
            f"{_fmt(device_free)} free of {_fmt(device_total)} on the device "
            "(free tensors you no longer need, or use a smaller batch)"
        )


def _fmt(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


_ASKED = re.compile(r"allocating ([\d,]+) bytes")


def requested_bytes(message: str) -> int | None:
    """The size in cupy's message 'Out of memory allocating 1,024 bytes (...)', else None."""
    m = _ASKED.search(message)
    return int(m.group(1).replace(",", "")) if m else None


def stats(index: int) -> dict:
    """Pool and device figures of GPU `index`, in bytes."""
    cp = load_cupy()
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(index):
        in_use, reserved = pool.used_bytes(), pool.total_bytes()
        free, total = cp.cuda.runtime.memGetInfo()
        limit = pool.get_limit()
    return {
        "bytes_in_use": int(in_use),
        "bytes_reserved": int(reserved),
        "bytes_cached": int(reserved - in_use),
        "device_free": int(free),
        "device_total": int(total),
        "pool_limit": int(limit),
    }


def cleanup(index: int) -> int:
    """Give GPU `index`'s cached blocks back to the driver; returns the bytes released."""
    cp = load_cupy()
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(index):
        before = pool.total_bytes()
        pool.free_all_blocks()
        return int(before - pool.total_bytes())


def oom_error(op: str, exc: BaseException) -> CudaOutOfMemoryError:
    cp = load_cupy()
    index = cp.cuda.runtime.getDevice()
    s = stats(index)
    return CudaOutOfMemoryError(
        op,
        index,
        requested_bytes(str(exc)),
        s["bytes_in_use"],
        s["bytes_reserved"],
        s["device_free"],
        s["device_total"],
    )


def guarded(name: str, fn, oom_type):
    """`fn` (an op taking self) re-raising cupy's out-of-memory error as `CudaOutOfMemoryError`
    naming op `name`. A try block costs nothing until it raises."""

    @functools.wraps(fn)
    def op(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except oom_type as exc:
            raise oom_error(name, exc) from exc

    return op


def guard(name: str, fn, oom_type):
    """`fn` (a function without self: a per-instance op) re-raising cupy's out-of-memory error
    as `CudaOutOfMemoryError` naming op `name`."""

    def op(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except oom_type as exc:
            raise oom_error(name, exc) from exc

    op.__name__ = name
    return op
