"""The float primitive of the Autodiff backend: an inner primitive plus its graph node.

Int and bool primitives are the inner backend's own, unchanged; only float tensors are tracked.
"""

from __future__ import annotations

from typing import Any

_new = object.__new__


class AutodiffTensor:
    """A float primitive of `Autodiff(B)`: `p` is B's primitive, `node` its graph node or None.

    `shape` and `dtype` are copied from `p` at creation (not properties) because the Tensor layer
    reads `.shape` on nearly every call: a plain slot is the cheapest lookup.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff
        >>> from burn_tensor import Tensor
        >>> t = Tensor.ones([2], Autodiff(NdArray()).device()).require_grad()
        >>> type(t.primitive).__name__, t.primitive.shape
        ('AutodiffTensor', (2,))
    """

    __slots__ = ("dtype", "node", "p", "shape")

    def __init__(self, p: Any, node: Any = None):
        self.p = p
        self.node = node
        self.shape = p.shape
        self.dtype = p.dtype

    def __repr__(self) -> str:
        state = "untracked" if self.node is None else f"node={self.node.id}"
        return f"AutodiffTensor(shape={tuple(self.shape)}, dtype={self.dtype}, {state})"


def wrap(p: Any, node: Any = None) -> AutodiffTensor:
    """Fast constructor (skips `__init__`'s call frame)."""
    t = _new(AutodiffTensor)
    t.p = p
    t.node = node
    t.shape = p.shape
    t.dtype = p.dtype
    return t


class Meta:
    """What a graph node keeps of an input it does not need the values of: shape, dtype, device."""

    __slots__ = ("device", "dtype", "shape")

    def __init__(self, p: Any):
        self.shape = p.shape
        self.dtype = p.dtype
        self.device = getattr(p, "device", None)

    def __repr__(self) -> str:
        return f"Meta(shape={tuple(self.shape)}, dtype={self.dtype})"


def meta(p: Any) -> Meta:
    """Fast `Meta(p)` (skips `__init__`'s call frame): recorded once per unkept op input
    (`_wrap.record` inlines it for a single tensor; keep the two alike)."""
    m = _new(Meta)
    m.shape = p.shape
    m.dtype = p.dtype
    m.device = getattr(p, "device", None)
    return m


def is_float_primitive(x: Any) -> bool:
    """Primitive contract: float primitives carry a numpy float dtype (kind 'f', or bfloat16)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        return False
    kind = getattr(dt, "kind", None)
    return kind == "f" or (kind == "V" and getattr(dt, "name", "") == "bfloat16")
