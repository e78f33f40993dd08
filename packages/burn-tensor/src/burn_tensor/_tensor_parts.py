"""`tensor_parts(t)`: a tensor's primitive, kind and device in one call, for decorators' hot paths.

`t.into_primitive()`, `t.kind` and `t.device` say the same through three calls (two properties);
step capture reads all three for every leaf of every captured call, so one call that returns the
tuple keeps that path as cheap as reading the internals directly, without other packages
depending on how a `Tensor` stores them (`tests/test_public_surface.py` checks they don't).
"""

from __future__ import annotations


def tensor_parts(t) -> tuple:
    """`(primitive, kind, device)` of tensor `t`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> from burn_tensor.ops import tensor_parts
        >>> p, kind, device = tensor_parts(Tensor.ones([2], NdArray().device()))
        >>> p.shape, kind.value, device.index
        ((2,), 'float', 0)
    """
    return t._p, t._o.kind, t._d
