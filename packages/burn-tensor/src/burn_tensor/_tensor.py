"""The user-facing `Tensor`: one class for every backend, kind and rank."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _check as check
from . import _check_data as check_data
from ._creation_args import distribution_arg as _distribution
from ._creation_args import kind_arg as _kind
from ._data import TensorData, cast, python_array
from ._device import Device
from ._distribution import Distribution
from ._dtype import Bool, DType, Float, Int, TensorKind
from ._errors import TensorCheckError
from ._shape import Shape
from ._tensor_autodiff import AutodiffMixin
from ._tensor_display import DisplayMixin
from ._tensor_index import IndexMixin
from ._tensor_extra import ExtraMixin
from ._tensor_grid import GridMixin
from ._tensor_layout import LayoutMixin
from ._tensor_linalg import LinalgMixin
from ._tensor_logic import LogicMixin
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
    LayoutMixin,
    IndexMixin,
    MathMixin,
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

    # -- creation --------------------------------------------------------------------------------
    @staticmethod
    def from_data(data: Any, device: Device | None = None, dtype: Any = None) -> Tensor:
        """Create from nested lists, numpy arrays, `TensorData` or another tensor.

        The kind comes from the data (floats -> Float, ints -> Int, bools -> Bool) or from `dtype`;
        the element type is the backend's default for that kind unless `dtype` is given.
        """
        device = _device(device)
        if isinstance(data, Tensor):
            data = data.to_data()
        if isinstance(data, TensorData):
            td = data
        else:
            try:
                # Python floats stay float64 until the one cast to the target dtype below
                td = TensorData(data if isinstance(data, np.ndarray) else python_array(data))
            except ValueError as e:  # out-of-range ints: the same error as a failed convert
                raise TensorCheckError("from_data", str(e)) from None
        backend = device.backend
        if dtype is not None:
            dt = DType.from_any(dtype)
        else:
            dt = backend.dtype_for(td.dtype.kind)
        kind = dt.kind
        if td.dtype is not dt:
            if kind is Int and td.dtype.kind is not Bool:
                try:
                    td = td.convert(dt)  # refuses non-finite and out-of-range values
                except ValueError as e:
                    raise TensorCheckError("from_data", str(e)) from None
            else:
                td = TensorData(cast(td.array, dt.np))
        prefix = _PREFIX[kind]
        p = getattr(backend, prefix + "from_data")(td, device)
        return Tensor._make(p, kind, device)

    @staticmethod
    def from_floats(values: Any, device: Device | None = None) -> Tensor:
        """A Float tensor from nested lists / a numpy array of numbers (Burn's `from_floats`)."""
        device = _device(device)
        return Tensor.from_data(
            TensorData(np.asarray(values, dtype=np.float64)), device, device.backend.float_dtype
        )

    @staticmethod
    def from_ints(values: Any, device: Device | None = None) -> Tensor:
        """An Int tensor from nested lists / a numpy array of integers (Burn's `from_ints`)."""
        device = _device(device)
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu":
            raise TensorCheckError("from_ints", f"expected integers, got dtype {arr.dtype}")
        return Tensor.from_data(TensorData(arr), device, device.backend.int_dtype)

    @staticmethod
    def from_bool(values: Any, device: Device | None = None) -> Tensor:
        """A Bool tensor from nested lists / a numpy array of bools (Burn's `Tensor::<B, D,
        Bool>::from_bool`).
        """
        return Tensor.from_data(TensorData(np.asarray(values, dtype=np.bool_)), device, DType.BOOL)

    @staticmethod
    def _create(op: str, shape, device, kind, dtype):
        device = _device(device)
        shape = tuple(Shape(shape))
        if kind is not None and not isinstance(kind, TensorKind):
            kind = _kind(op, kind)
        if dtype is not None:
            dt = DType.from_any(dtype)
            if kind is not None and dt.kind is not kind:
                raise TensorCheckError(op, f"dtype {dt.value} does not match kind {kind.value}")
            kind = dt.kind
        else:
            kind = kind or Float
            dt = device.backend.dtype_for(kind)
        return device, shape, kind, dt

    @staticmethod
    def empty(shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` whose contents are unspecified (Burn's `Tensor::empty`); Float unless
        `kind` says otherwise.
        """
        device, shape, kind, dt = Tensor._create("empty", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "empty")(shape, device, dt)
        return Tensor._make(p, kind, device)

    @staticmethod
    def zeros(shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` filled with 0 (Burn's `Tensor::zeros`); Float unless `kind` says
        otherwise.
        """
        device, shape, kind, dt = Tensor._create("zeros", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "zeros")(shape, device, dt)
        return Tensor._make(p, kind, device)

    @staticmethod
    def ones(shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` filled with 1 (Burn's `Tensor::ones`); Float unless `kind` says
        otherwise.
        """
        device, shape, kind, dt = Tensor._create("ones", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "ones")(shape, device, dt)
        return Tensor._make(p, kind, device)

    @staticmethod
    def full(shape, fill_value, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor filled with `fill_value`; the kind follows the value (float -> Float, int -> Int)."""
        if kind is None and dtype is None:
            kind = (
                Bool
                if isinstance(fill_value, bool)
                else Int
                if isinstance(fill_value, int)
                else Float
            )
        device, shape, kind, dt = Tensor._create("full", shape, device, kind, dtype)
        # An Int fill of 2.5 would truncate silently in the backend: refuse it, like int scalars.
        fill_value = check.scalar_of_kind("full", kind, fill_value)
        if kind is Int:
            check_data.int_values_fit("full", fill_value, fill_value, dt.np)
        p = getattr(device.backend, _PREFIX[kind] + "full")(shape, fill_value, device, dt)
        return Tensor._make(p, kind, device)

    def zeros_like(self) -> Tensor:
        """A tensor of 0s with this tensor's shape, kind, dtype and device (Burn's `zeros_like`)."""
        return Tensor.zeros(self.shape, self._d, dtype=self.dtype)

    def ones_like(self) -> Tensor:
        """A tensor of 1s with this tensor's shape, kind, dtype and device (Burn's `ones_like`)."""
        return Tensor.ones(self.shape, self._d, dtype=self.dtype)

    def full_like(self, fill_value) -> Tensor:
        """A tensor of this tensor's shape, kind, dtype and device filled with `fill_value` (Burn's
        `full_like`).
        """
        return Tensor.full(self.shape, fill_value, self._d, dtype=self.dtype)

    def empty_like(self) -> Tensor:
        """An uninitialised tensor with this tensor's shape, kind, dtype and device (Burn's
        `empty_like`).
        """
        return Tensor.empty(self.shape, self._d, dtype=self.dtype)

    @staticmethod
    def random(
        shape, distribution: Distribution | None = None, device=None, kind=None, dtype=None
    ) -> Tensor:
        """Sample a Float tensor (or Int with `kind=Int`) from `distribution` (default U[0, 1))."""
        distribution = _distribution("random", distribution)
        device, shape, kind, dt = Tensor._create("random", shape, device, kind, dtype)
        if kind is Bool:
            raise TensorCheckError("random", "Bool tensors cannot be sampled; compare a Float one")
        p = getattr(device.backend, _PREFIX[kind] + "random")(shape, distribution, device, dt)
        return Tensor._make(p, kind, device)

    def random_like(self, distribution: Distribution | None = None) -> Tensor:
        """A tensor with this tensor's shape and device drawn from `distribution` (default
        Uniform(0, 1)) (Burn's `random_like`).
        """
        return Tensor.random(self.shape, distribution, self._d, dtype=self.dtype)

    @staticmethod
    def int_random(shape, distribution: Distribution, device=None) -> Tensor:
        """Random Int tensor, e.g. `Distribution.uniform(0, 10)` gives ints in [0, 10)."""
        return Tensor.random(shape, distribution, device, kind=Int)

    @staticmethod
    def arange(start, end=None, device=None, step: int = 1) -> Tensor:
        """1-D Int tensor `[start, end)`; `arange(range(5, 10), device)` also works."""
        if isinstance(start, range):
            start, end, step, device = (
                start.start,
                start.stop,
                start.step,
                end if device is None else device,
            )
        elif end is None or isinstance(end, Device):
            start, end, device = 0, start, end if device is None else device
        if step != 1:
            return Tensor.arange_step(start, end, step, device)
        # Unit steps reach the backend's own `int_arange` (Burn's `Tensor::arange`).
        device = _device(device)
        backend = device.backend
        start, end = int(start), int(end)
        if end > start:  # numpy would wrap past the dtype's range: refuse it, as from_data does
            check_data.int_values_fit("arange", start, end - 1, backend.int_dtype.np)
        p = backend.int_arange(start, end, device, backend.int_dtype)
        return Tensor._make(p, Int, device)

    @staticmethod
    def arange_step(start, end=None, step: int = 1, device=None) -> Tensor:
        """Int tensor from `start` up to `end` (exclusive) by `step`.

        `arange_step(range(0, 9), 3, device)` or `arange_step(0, 9, 3, device)` (Burn's
        `arange_step(0..9, 3, &device)`).
        """
        if isinstance(start, range):
            start, end, step, device = (
                start.start,
                start.stop,
                end,
                step if device is None else device,
            )
        if step == 0:
            raise TensorCheckError("arange_step", "step must not be 0")
        device = _device(device)
        backend = device.backend
        start, end, step = int(start), int(end), int(step)
        n = len(range(start, end, step))
        if n:
            last = start + (n - 1) * step
            check_data.int_values_fit(
                "arange_step", min(start, last), max(start, last), backend.int_dtype.np
            )
        p = backend.int_arange_step(start, end, step, device, backend.int_dtype)
        return Tensor._make(p, Int, device)

    @staticmethod
    def eye(size: int, device=None, kind=None, dtype=None) -> Tensor:
        """Identity matrix `[size, size]` (Float unless kind/dtype say otherwise)."""
        device, _, kind, dt = Tensor._create("eye", (size, size), device, kind, dtype)
        return Tensor.from_data(TensorData(np.eye(size, dtype=dt.np)), device, dt)

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
        return DType.from_np(self._p.dtype)

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

    # -- data out ------------------------------------------------------------------------------------
    def to_data(self) -> TensorData:
        """The elements as a `TensorData` (Burn's `to_data()` / `into_data()`), read from the
        device.
        """
        return self._o.into_data(self._p)

    into_data = to_data

    def numpy(self) -> np.ndarray:
        """The elements as a numpy array (a copy, read from the device), in the tensor's dtype."""
        return self.to_data().numpy()

    def tolist(self):
        """The elements as nested Python lists (numpy's `tolist`)."""
        return self.to_data().tolist()

    def into_scalar(self):
        """The single element as a Python number (`item()` in PyTorch)."""
        if self.numel() != 1:
            raise TensorCheckError(
                "into_scalar", f"expected a single-element tensor, got shape {list(self._p.shape)}"
            )
        return self.to_data().array.reshape(()).item()

    item = into_scalar

    def __array__(self, dtype=None, copy=None):
        arr = self.to_data().array
        if dtype is not None:
            arr = arr.astype(dtype)
        return arr.copy() if copy is not False else arr

    def _exported(self):
        # The array that shares this tensor's memory: the primitive itself, or what a decorator
        # backend (Fusion) holds inside its handle, after running what is pending on it.
        hook = getattr(self._d.backend, "dlpack_primitive", None)
        return self._p if hook is None else hook(self._p)

    def __dlpack__(self, *args, **kwargs):
        # A device primitive (a cupy array on Cuda) exports its own memory: zero-copy to torch,
        # jax or cupy on the same GPU. Host backends export through numpy.
        p = self._exported()
        if not isinstance(p, np.ndarray) and hasattr(p, "__dlpack__"):
            return p.__dlpack__(*args, **kwargs)
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        p = self._exported()
        if not isinstance(p, np.ndarray) and hasattr(p, "__dlpack_device__"):
            return p.__dlpack_device__()
        return (1, 0)  # kDLCPU: data is exported through the host

    @staticmethod
    def from_dlpack(obj, device: Device | None = None) -> Tensor:
        """Import any DLPack producer (numpy, torch, jax, cupy), keeping its dtype.

        A backend with a `from_dlpack(obj, device)` hook (Cuda) takes the producer's memory
        without a copy when it lives on its kind of device; other producers come through the
        host. With no `device`, a producer on a CUDA GPU lands on that GPU of the `cuda`
        backend when it is installed, else on the default device.
        """
        if device is None and hasattr(obj, "__dlpack_device__"):
            dev_type, dev_id = obj.__dlpack_device__()
            if int(dev_type) == 2:  # kDLCUDA
                from ._registry import BackendError, get_backend

                try:
                    device = get_backend("cuda").device(int(dev_id))
                except BackendError:
                    device = None
        hook = getattr(device.backend, "from_dlpack", None) if device is not None else None
        if hook is not None:
            p = hook(obj, device)
            return Tensor._make(p, DType.from_np(p.dtype).kind, device)
        arr = np.from_dlpack(obj)
        return Tensor.from_data(TensorData(arr), device, DType.from_np(arr.dtype))

    def __reduce__(self):
        if self.is_quantized():  # keep the stored integers, not their float values
            return (Tensor.from_quantized_data, (self.quantized_data(), self._d))
        return (_unpickle, (self.to_data(), self._d))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise TensorCheckError(
                "__bool__", f"truth value of a tensor with shape {list(self._p.shape)} is ambiguous"
            )
        return bool(self.into_scalar())

    def __float__(self) -> float:
        return float(self.into_scalar())

    def __int__(self) -> int:
        return int(self.into_scalar())

    def __index__(self) -> int:
        check.kind("__index__", self, Int)
        return int(self.into_scalar())

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
    return Tensor.from_data(TensorData(arr), device, _device(device).backend.float_dtype)


Tensor.one_hot = hybridmethod(classmethod(_one_hot_cls).__func__, LayoutMixin._one_hot_inst)


_PREFIX = {Float: "float_", Int: "int_", Bool: "bool_"}


def _device(device):
    if device is None:
        from ._registry import default_device

        return default_device()
    if not isinstance(device, Device):
        raise TypeError(f"expected a Device, got {type(device).__name__} ({device!r})")
    return device


def _unpickle(data: TensorData, device: Device) -> Tensor:
    return Tensor.from_data(data, device, data.dtype)
