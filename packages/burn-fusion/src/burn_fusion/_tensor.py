"""`FusionTensor`: the primitive of `Fusion(B)` -- a handle on an inner primitive that may not
exist yet.

A handle is either materialised (`prim` is B's primitive) or pending (`node` is its op in the
stream's current plan, `prim` is None). Its live references are counted by CPython itself (the
Tensor layer's `clone()` shares the handle, so a clone is one more reference); a weak reference
held by the plan is the finaliser that tells the stream when the count reached zero: a pending
handle no one holds is never materialised, and a materialised one the plan alone still reads
may be overwritten in place by the kernel that reads it (when `owned`).
"""

from __future__ import annotations

from typing import Any

_new = object.__new__


class FusionTensor:
    """A float, int or bool primitive of `Fusion(B)`: `.shape` and `.dtype` (numpy) as every
    primitive; `prim` the inner primitive or None while pending.

    Example:
        >>> from burn_opencl import OpenCl
        >>> from burn_tensor import Tensor
        >>> t = Tensor.ones([2], Fusion(OpenCl()).device()).exp()
        >>> t.into_primitive().prim is None  # recorded, not run
        True
    """

    __slots__ = ("__weakref__", "dtype", "node", "owned", "prim", "shape", "stream")

    def __repr__(self) -> str:
        state = "pending" if self.prim is None else "ready"
        return f"FusionTensor(shape={list(self.shape)}, dtype={self.dtype}, {state})"


def ready(prim: Any, owned: bool = False, stream: Any = None) -> FusionTensor:
    """A materialised handle on inner primitive `prim`. `owned`: a fused kernel allocated the
    buffer and no inner op has seen it (so no view of it can exist). `stream`: the device's
    stream (the delegated ops' results, hundreds a step, set it at once)."""
    t = _new(FusionTensor)
    t.shape = prim.shape
    t.dtype = prim.dtype
    t.prim = prim
    t.node = None
    t.stream = stream
    t.owned = owned
    return t


def pending(shape: tuple, dtype, stream, node: int) -> FusionTensor:
    t = _new(FusionTensor)
    t.shape = shape
    t.dtype = dtype
    t.prim = None
    t.node = node
    t.stream = stream
    t.owned = False
    return t
