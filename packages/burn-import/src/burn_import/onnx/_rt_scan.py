"""Run-time helpers of the loops that ONNX Scan and Loop are written as (`_codegen_scan`,
`_codegen_loop`)."""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor


def scan_slice(x: Tensor, axis: int, t: int, length: int, reverse: bool) -> Tensor:
    """Step t's slice of a scan input: index t (from the end if `reverse`) along `axis`, the
    axis removed (a rank-1 input gives rank-0 slices, held as `[1]`)."""
    s = x.narrow(axis, length - 1 - t if reverse else t, 1)
    return s.squeeze_dim(axis) if x.rank() > 1 else s


def scan_stack(parts: list[Tensor], axis: int, reverse: bool, rank: int) -> Tensor:
    """The per-step outputs stacked along a new `axis` (in reverse step order if `reverse`);
    `rank` is the ONNX rank of one step's output (0: each is held as `[1]`)."""
    parts = parts[::-1] if reverse else parts
    if rank == 0:
        return Tensor.cat(parts, 0)
    return Tensor.stack(parts, axis)


def loop_limits(trip, cond) -> tuple[int | None, bool]:
    """Loop's trip count (None: unbounded) and first condition (True when not given)."""
    m = None if trip is None else int(np.asarray(trip.numpy()).reshape(-1)[0])
    return m, True if cond is None else truth(cond)


def loop_counter(i: int, go: bool, device) -> tuple[Tensor, Tensor]:
    """The body's iteration number (int64) and incoming condition (bool) as tensors."""
    return (
        Tensor.from_data(np.array([i], np.int64), device, DType.I64),
        Tensor.from_data(np.array([go]), device),
    )


def truth(cond: Tensor) -> bool:
    """A one-element condition tensor as a Python bool."""
    return bool(np.asarray(cond.numpy()).reshape(-1)[0])
