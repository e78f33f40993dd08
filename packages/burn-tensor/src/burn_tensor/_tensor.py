"""The user-facing `Tensor`: one class for every backend, kind and rank.

The class is assembled from mixins of one idea each (`_tensor_creation.py`, `_tensor_data.py`,
`_tensor_layout.py`, `_tensor_math.py`, ...); this file holds its storage, metadata, the
primitive surface for backends and decorators, pickling, and device/kind conversion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _check as check
from . import _check_data as check_data
from ._data import TensorData
from ._device import Device
from ._dtype import _FROM_NP, Bool, DType, Float, Int, TensorKind
from ._errors import TensorCheckError
from ._shape import Shape
from ._tensor_autodiff import AutodiffMixin
from ._tensor_combine import CombineMixin
from ._tensor_creation import CreationMixin, device_or_default
from ._tensor_data import DataMixin
from ._tensor_display import DisplayMixin
from ._tensor_index import IndexMixin
from ._tensor_extra import ExtraMixin
from ._tensor_grid import GridMixin
from ._tensor_layout import LayoutMixin
from ._tensor_linalg import LinalgMixin
from ._tensor_logic import LogicMixin
from ._tensor_float import FloatMathMixin
from ._tensor_math import MathMixin
from ._tensor_reduce import ReduceMixin
from .quantization._primitive import QuantizedPrimitive
from .quantization._tensor_quant import QuantMixin, quantized_to_device

_new = object.__new__


class hybridmethod:
    """A method usable on the class (Burn's `Tensor::one_hot(i, n, device)`) or an instance."""

    def __init__(self, cls_fn, inst_fn):
        self.cls_fn, self.inst_fn = cls_fn, inst_fn

    def __get__(self, obj, cls):
        if obj is None:
            return self.cls_fn.__get__(cls, type(cls))
        return self.inst_fn.__get__(obj, cls)


class Tensor(
    CreationMixin,
    DataMixin,
    LayoutMixin,
    CombineMixin,
    IndexMixin,
    MathMixin,
    FloatMathMixin,
    LogicMixin,
    ReduceMixin,
    AutodiffMixin,
    DisplayMixin,
    LinalgMixin,
    GridMixin,
    ExtraMixin,
    QuantMixin,
):
    """An immutable n-dimensional tensor on a device of some backend.

    Its kind (`Float`, `Int`, `Bool`) and rank are runtime values; every op checks them and raises
    `TensorCheckError` naming the op. Binary ops need equal ranks and broadcast size-1 dims (Burn).

    Shapes: documented per method as `[d0, d1, ...]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> device = NdArray().device()
        >>> t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
        >>> (t + 1).sum().into_scalar()
        14.0
    """

    __slots__ = ("_p", "_o", "_d", "__weakref__")

    # -- internal constructors ---------------------------------------------------------------------
    @staticmethod
    def _make(p, kind: TensorKind, device: Device) -> Tensor:
        t = _new(Tensor)
        t._p = p
        t._o = device.backend.kind_ops[kind]
        t._d = device
        return t

    def _like(self, p) -> Tensor:
        t = _new(Tensor)
        t._p = p
        t._o = self._o
        t._d = self._d
        return t

    def _as(self, p, kind: TensorKind) -> Tensor:
        t = _new(Tensor)
        t._p = p
        t._o = self._d.backend.kind_ops[kind]
        t._d = self._d
        return t

    def __init__(self, data: Any, device: Device | None = None, dtype: Any = None):
        src = Tensor.from_data(data, device, dtype)
        self._p, self._o, self._d = src._p, src._o, src._d

    # -- metadata ----------------------------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        """The dims as a `Shape` (callable too: `t.shape()` as in Burn)."""
        return Shape(self._p.shape)

    def dims(self) -> list[int]:
        """The shape as a list of ints (Burn's `dims()`): `Tensor.zeros([2, 3], d).dims() == [2,
        3]`.
        """
        return list(self._p.shape)

    def size(self, dim: int | None = None):
        """The dims as a list (Burn's `dims()`), or one dim's size: `size(1)` (PyTorch's form).

        Example:
            >>> from burn_ndarray import NdArray
            >>> device = NdArray().device()
            >>> Tensor.zeros([2, 3], device).size(), Tensor.zeros([2, 3], device).size(-1)
            ([2, 3], 3)
        """
        if dim is None:
            return list(self._p.shape)
        return self._p.shape[check.dim("size", dim, len(self._p.shape))]

    def rank(self) -> int:
        """The number of dims (Burn's `D` const parameter, a runtime value here)."""
        return len(self._p.shape)

    @property
    def ndim(self) -> int:
        """The number of dims (numpy's name; the same as `rank()`)."""
        return len(self._p.shape)

    def numel(self) -> int:
        """The number of elements, the product of the dims (Burn's `shape().num_elements()`)."""
        n = 1
        for d in self._p.shape:
            n *= d
        return n

    @property
    def kind(self) -> TensorKind:
        """The tensor kind: `Float`, `Int` or `Bool` (Burn's `K` type parameter, a runtime value
        here).
        """
        return self._o.kind

    @property
    def dtype(self) -> DType:
        """The element type, a `DType` (Burn's `dtype()`): F32 by default for Float, I32 for Int on
        NdArray.
        """
        # `DType.from_np`'s table read inline (its call only for a dtype the table lacks): the
        # optimizer reads each parameter's and moment's dtype on every step
        dt = _FROM_NP.get(self._p.dtype)
        return dt if dt is not None else DType.from_np(self._p.dtype)

    @property
    def device(self) -> Device:
        """The `Device` holding this tensor (Burn's `device()`)."""
        return self._d

    @property
    def backend(self):
        """The backend this tensor's device belongs to (Burn's `B`), e.g. `NdArray()`."""
        return self._o.backend

    def __len__(self) -> int:
        if not self._p.shape:
            raise TypeError("len() of a rank-0 tensor")
        return self._p.shape[0]

    # -- primitives (the extension surface for backends and decorators) ------------------------------
    def into_primitive(self):
        """The backend's own tensor (Burn's `into_primitive`): what its ops take and return.

        A numpy array on NdArray, an `AutodiffTensor` on Autodiff. The tensor is immutable: never
        write into the primitive.
        """
        return self._p

    primitive = property(into_primitive)

    @staticmethod
    def from_primitive(p, kind: TensorKind, device: Device) -> Tensor:
        """Wrap a primitive of `device.backend` (Burn's `Tensor::from_primitive`).

        Args:
            p: a primitive the backend produced, with `.shape` and a numpy `.dtype` of `kind`.
            kind: `Float`, `Int` or `Bool`.
            device: the device `p` lives on.

        Example:
            >>> from burn_ndarray import NdArray
            >>> device = NdArray().device()
            >>> t = Tensor.ones([2], device)
            >>> Tensor.from_primitive(t.into_primitive(), Float, device).tolist()
            [1.0, 1.0]
        """
        if not isinstance(device, Device):
            raise TypeError(f"from_primitive: expected a Device, got {type(device).__name__}")
        if kind not in (Float, Int, Bool):
            raise TypeError(f"from_primitive: kind must be Float, Int or Bool, got {kind!r}")
        return Tensor._make(p, kind, device)

    def clone(self) -> Tensor:
        """A new handle to the same (immutable) contents: no copy."""
        return self._like(self._p)

    def __reduce__(self):
        if self.is_quantized():  # keep the stored integers, not their float values
            return (Tensor.from_quantized_data, (self.quantized_data(), self._d))
        return (_unpickle, (self.to_data(), self._d))

    __hash__ = object.__hash__

    # -- device and kind conversion ------------------------------------------------------------------
    def to_device(self, device: Device) -> Tensor:
        """This tensor moved to `device` (Burn's `to_device`); `to` is the same method."""
        if device is self._d:
            return self
        if type(self._p) is QuantizedPrimitive:  # stays quantized (values, scales, scheme)
            return quantized_to_device(self, device)
        if device.backend is self._d.backend:
            return Tensor._make(self._o.to_device(self._p, device), self._o.kind, device)
        # Across backends: go through the host.
        return Tensor.from_data(self.to_data(), device, self.dtype)

    to = to_device

    def float(self) -> Tensor:
        """Convert to a Float tensor of the backend's float dtype."""
        k = self._o.kind
        if k is Float:
            return self
        b = self._d.backend
        fn = b.int_into_float if k is Int else b.bool_into_float
        return self._as(fn(self._p, b.float_dtype), Float)

    def int(self) -> Tensor:
        """Convert to an Int tensor (floats truncate toward zero).

        NaN, infinities and floats outside the int dtype's range raise `TensorCheckError`
        (numpy and C casts give an arbitrary value, -2**31 on x86); see the README's "Checks".
        """
        k = self._o.kind
        if k is Int:
            return self
        b = self._d.backend
        if k is Float:
            check_data.float_to_int("int", self, b.int_dtype.np)
        fn = b.float_into_int if k is Float else b.bool_into_int
        return self._as(fn(self._p, b.int_dtype), Int)

    def bool(self) -> Tensor:
        """Nonzero -> True."""
        if self._o.kind is Bool:
            return self
        return self.not_equal_elem(0)

    def cast(self, dtype) -> Tensor:
        """Change the element type within the kind (`DType.F16`, "float64", ...)."""
        dt = DType.from_any(dtype)
        k = self._o.kind
        if dt.kind is not k:
            raise TensorCheckError(
                "cast", f"cannot cast a {k.value} tensor to {dt.value}; use float()/int()"
            )
        if dt is self.dtype:
            return self
        if k is Bool:
            return self
        return self._like(self._o.cast(self._p, dt))

    def to_full_precision(self) -> Tensor:
        """This tensor on the backend's full precision (Float32/64) variant (Burn's
        `to_full_precision`).
        """
        check.float_("to_full_precision", self)
        # Burn's FullPrecision element of both half types is f32 (bf16 was left as it was)
        return self.cast(DType.F32) if self.dtype in (DType.F16, DType.BF16) else self

    @staticmethod
    def from_full_precision(tensor: Tensor) -> Tensor:
        """Back from `to_full_precision`: the tensor on its original backend (Burn's
        `from_full_precision`).
        """
        return tensor.cast(tensor._d.backend.float_dtype)


def _one_hot_cls(cls, index: int, num_classes: int, device=None) -> Tensor:
    """Burn's `Tensor::one_hot(index, num_classes, device)`: a 1-D Float tensor."""
    if not 0 <= index < num_classes:
        raise TensorCheckError("one_hot", f"index {index} out of range for {num_classes} classes")
    arr = np.zeros(num_classes, dtype=np.float64)
    arr[index] = 1
    return Tensor.from_data(TensorData(arr), device, device_or_default(device).backend.float_dtype)


Tensor.one_hot = hybridmethod(classmethod(_one_hot_cls).__func__, LayoutMixin._one_hot_inst)


def _unpickle(data: TensorData, device: Device) -> Tensor:
    return Tensor.from_data(data, device, data.dtype)
