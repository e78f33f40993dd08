"""`QuantizedPrimitive`: what a quantized float tensor holds on any backend."""

from __future__ import annotations

import math

from ._scheme import QFloat, QuantScheme


class QuantizedPrimitive:
    """Integer values and float scales of one quantized tensor, both primitives of its backend.

    - `values`: an int primitive. `QuantStore.PACKED_U32`: int32 words (the bits of Burn's u32
      words), shape `[..., ceil(last / num_quants)]`, packed along the last dim with the first
      value in the lowest bits; `QuantStore.NATIVE`: int8 values of the tensor's shape.
    - `scales`: a float primitive of `scheme.params_shape(shape)`, dtype `scheme.param`.
    - `shape`: the logical (unpacked) shape.

    `.dtype` is a `QFloat`, so `tensor.dtype` reads like Burn's `DType::QFloat(scheme)`.
    Immutable, as every primitive.
    """

    __slots__ = ("values", "scales", "scheme", "shape")

    def __init__(self, values, scales, scheme: QuantScheme, shape: tuple):
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "scales", scales)
        object.__setattr__(self, "scheme", scheme)
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))

    def __setattr__(self, name, value):
        raise AttributeError("QuantizedPrimitive is immutable")

    @property
    def dtype(self) -> QFloat:
        return QFloat(self.scheme)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def device(self):
        """The device of the values (what `Backend.device_of` reads)."""
        return getattr(self.values, "device", None)

    def __repr__(self) -> str:
        return f"QuantizedPrimitive(shape={list(self.shape)}, {self.dtype!r})"


def is_quantized_primitive(p) -> bool:
    return type(p) is QuantizedPrimitive
