"""Making tensors: from data (lists, numpy arrays, `TensorData`), filled (`zeros`, `full`,
`eye`, ...), sampled (`random`) and ranges (`arange`); the `*_like` forms of each.

`CreationMixin` is part of `Tensor` (`_tensor.py`); its constructors are classmethods, so they
build through `cls._make` without importing the class back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from ._tensor import Tensor

#: the backend op prefix of each kind: `zeros` of an Int tensor is `backend.int_zeros`
_PREFIX = {Float: "float_", Int: "int_", Bool: "bool_"}


def device_or_default(device):
    """`device`, or the default device when None; anything else than a `Device` is refused."""
    if device is None:
        from ._registry import default_device

        return default_device()
    if not isinstance(device, Device):
        raise TypeError(f"expected a Device, got {type(device).__name__} ({device!r})")
    return device



class CreationMixin:
    """The constructors of `Tensor` (Burn's `Tensor::from_data`, `zeros`, `random`, `arange`...)."""

    __slots__ = ()


    @classmethod
    def from_data(cls, data: Any, device: Device | None = None, dtype: Any = None) -> Tensor:
        """Create from nested lists, numpy arrays, `TensorData` or another tensor.

        The kind comes from the data (floats -> Float, ints -> Int, bools -> Bool) or from `dtype`;
        the element type is the backend's default for that kind unless `dtype` is given.
        """
        device = device_or_default(device)
        if isinstance(data, CreationMixin):
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
        return cls._make(p, kind, device)

    @classmethod
    def from_floats(cls, values: Any, device: Device | None = None) -> Tensor:
        """A Float tensor from nested lists / a numpy array of numbers (Burn's `from_floats`)."""
        device = device_or_default(device)
        return cls.from_data(
            TensorData(np.asarray(values, dtype=np.float64)), device, device.backend.float_dtype
        )

    @classmethod
    def from_ints(cls, values: Any, device: Device | None = None) -> Tensor:
        """An Int tensor from nested lists / a numpy array of integers (Burn's `from_ints`)."""
        device = device_or_default(device)
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu":
            raise TensorCheckError("from_ints", f"expected integers, got dtype {arr.dtype}")
        return cls.from_data(TensorData(arr), device, device.backend.int_dtype)

    @classmethod
    def from_bool(cls, values: Any, device: Device | None = None) -> Tensor:
        """A Bool tensor from nested lists / a numpy array of bools (Burn's `Tensor::<B, D,
        Bool>::from_bool`).
        """
        return cls.from_data(TensorData(np.asarray(values, dtype=np.bool_)), device, DType.BOOL)

    @classmethod
    def _create(cls, op: str, shape, device, kind, dtype):
        device = device_or_default(device)
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

    @classmethod
    def empty(cls, shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` whose contents are unspecified (Burn's `Tensor::empty`); Float unless
        `kind` says otherwise.
        """
        device, shape, kind, dt = cls._create("empty", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "empty")(shape, device, dt)
        return cls._make(p, kind, device)

    @classmethod
    def zeros(cls, shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` filled with 0 (Burn's `Tensor::zeros`); Float unless `kind` says
        otherwise.
        """
        device, shape, kind, dt = cls._create("zeros", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "zeros")(shape, device, dt)
        return cls._make(p, kind, device)

    @classmethod
    def ones(cls, shape, device=None, kind: TensorKind | None = None, dtype=None) -> Tensor:
        """A tensor of `shape` filled with 1 (Burn's `Tensor::ones`); Float unless `kind` says
        otherwise.
        """
        device, shape, kind, dt = cls._create("ones", shape, device, kind, dtype)
        p = getattr(device.backend, _PREFIX[kind] + "ones")(shape, device, dt)
        return cls._make(p, kind, device)

    @classmethod
    def full(
        cls, shape, fill_value, device=None, kind: TensorKind | None = None, dtype=None
    ) -> Tensor:
        """A tensor filled with `fill_value`; the kind follows the value (float -> Float, int -> Int)."""
        if kind is None and dtype is None:
            kind = (
                Bool
                if isinstance(fill_value, bool)
                else Int
                if isinstance(fill_value, int)
                else Float
            )
        device, shape, kind, dt = cls._create("full", shape, device, kind, dtype)
        # An Int fill of 2.5 would truncate silently in the backend: refuse it, like int scalars.
        fill_value = check.scalar_of_kind("full", kind, fill_value)
        if kind is Int:
            check_data.int_values_fit("full", fill_value, fill_value, dt.np)
        p = getattr(device.backend, _PREFIX[kind] + "full")(shape, fill_value, device, dt)
        return cls._make(p, kind, device)

    def zeros_like(self) -> Tensor:
        """A tensor of 0s with this tensor's shape, kind, dtype and device (Burn's `zeros_like`)."""
        return self.zeros(self.shape, self._d, dtype=self.dtype)

    def ones_like(self) -> Tensor:
        """A tensor of 1s with this tensor's shape, kind, dtype and device (Burn's `ones_like`)."""
        return self.ones(self.shape, self._d, dtype=self.dtype)

    def full_like(self, fill_value) -> Tensor:
        """A tensor of this tensor's shape, kind, dtype and device filled with `fill_value` (Burn's
        `full_like`).
        """
        return self.full(self.shape, fill_value, self._d, dtype=self.dtype)

    def empty_like(self) -> Tensor:
        """An uninitialised tensor with this tensor's shape, kind, dtype and device (Burn's
        `empty_like`).
        """
        return self.empty(self.shape, self._d, dtype=self.dtype)

    @classmethod
    def random(
        cls,
        shape, distribution: Distribution | None = None, device=None, kind=None, dtype=None
    ) -> Tensor:
        """Sample a Float tensor (or Int with `kind=Int`) from `distribution` (default U[0, 1))."""
        distribution = _distribution("random", distribution)
        device, shape, kind, dt = cls._create("random", shape, device, kind, dtype)
        if kind is Bool:
            raise TensorCheckError("random", "Bool tensors cannot be sampled; compare a Float one")
        p = getattr(device.backend, _PREFIX[kind] + "random")(shape, distribution, device, dt)
        return cls._make(p, kind, device)

    def random_like(self, distribution: Distribution | None = None) -> Tensor:
        """A tensor with this tensor's shape and device drawn from `distribution` (default
        Uniform(0, 1)) (Burn's `random_like`).
        """
        return self.random(self.shape, distribution, self._d, dtype=self.dtype)

    @classmethod
    def int_random(cls, shape, distribution: Distribution, device=None) -> Tensor:
        """Random Int tensor, e.g. `Distribution.uniform(0, 10)` gives ints in [0, 10)."""
        return cls.random(shape, distribution, device, kind=Int)

    @classmethod
    def arange(cls, start, end=None, device=None, step: int = 1) -> Tensor:
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
            return cls.arange_step(start, end, step, device)
        # Unit steps reach the backend's own `int_arange` (Burn's `Tensor::arange`).
        device = device_or_default(device)
        backend = device.backend
        start, end = int(start), int(end)
        if end > start:  # numpy would wrap past the dtype's range: refuse it, as from_data does
            check_data.int_values_fit("arange", start, end - 1, backend.int_dtype.np)
        p = backend.int_arange(start, end, device, backend.int_dtype)
        return cls._make(p, Int, device)

    @classmethod
    def arange_step(cls, start, end=None, step: int = 1, device=None) -> Tensor:
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
        device = device_or_default(device)
        backend = device.backend
        start, end, step = int(start), int(end), int(step)
        n = len(range(start, end, step))
        if n:
            last = start + (n - 1) * step
            check_data.int_values_fit(
                "arange_step", min(start, last), max(start, last), backend.int_dtype.np
            )
        p = backend.int_arange_step(start, end, step, device, backend.int_dtype)
        return cls._make(p, Int, device)

    @classmethod
    def eye(cls, size: int, device=None, kind=None, dtype=None) -> Tensor:
        """Identity matrix `[size, size]` (Float unless kind/dtype say otherwise)."""
        device, _, kind, dt = cls._create("eye", (size, size), device, kind, dtype)
        return cls.from_data(TensorData(np.eye(size, dtype=dt.np)), device, dt)
