"""Batched input copies of step capture on OpenCL: `copy_many(pairs)` and `copy_plan(pairs)`.

An OpenCL tape rebinds its inputs instead of copying them, so these serve a tape that cannot
(tests' `CudaRulesTape`, a CUDA graph's rules on PoCL): the capture layer binds a replay's new
inputs with one `copy_many`, and copies the results a training step passes back into their
input slots after each replay with a prepared `copy_plan` (burn-cuda's launches one recorded
CUDA graph; here the enqueues' arguments are worked out once).
"""

from __future__ import annotations

from ._capture_tape import copy_into
from ._runtime import Runtime


def copy_many(pairs) -> None:
    """`copy_into(dst, src)` for every (dst, src) pair, on the queue, in order."""
    for dst, src in pairs:
        copy_into(dst, src)


def copy_plan(pairs):
    """A function `go()` doing `copy_many(pairs)` each call (the values the arrays hold then),
    its enqueue arguments worked out once (the arrays are kept alive by `go`).

    Example:
        >>> go = copy_plan([(dst, src)])  # doctest: +SKIP
        >>> go()  # dst now holds src's values  # doctest: +SKIP
    """
    pairs = list(pairs)
    plain, rest = [], []
    for dst, src in pairs:
        if src.shape != dst.shape or src.dtype != dst.dtype or not src.is_contiguous():
            rest.append((dst, src))  # (copy_into checks, or makes it contiguous, each call)
            continue
        isz = src.dtype.itemsize
        if src.size:
            plain.append((src.rt, dst.buf, src.buf, src.size * isz, src.offset * isz,
                          dst.offset * isz))  # fmt: skip
    copy = Runtime.copy

    def go() -> None:
        for args in plain:
            copy(*args)
        for dst, src in rest:
            copy_into(dst, src)

    go.pairs = pairs
    return go
