"""Run-time helpers of the loop that ONNX Scan is written as (`_codegen_scan`)."""

from __future__ import annotations

from burn_tensor import Tensor


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
