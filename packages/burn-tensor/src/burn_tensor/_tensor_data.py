"""Reading a tensor's elements out (`to_data`, `numpy`, `tolist`, `into_scalar`, Python's number
protocols) and exchanging memory through DLPack, both ways.

`DataMixin` is part of `Tensor` (`_tensor.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _check as check
from ._data import TensorData
from ._device import Device
from ._dtype import DType, Int
from ._errors import TensorCheckError

if TYPE_CHECKING:
    from ._tensor import Tensor


class DataMixin:
    """The elements of a `Tensor` on the host, and DLPack export and import."""

    __slots__ = ()

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

    @classmethod
    def from_dlpack(cls, obj, device: Device | None = None) -> Tensor:
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
            return cls._make(p, DType.from_np(p.dtype).kind, device)
        arr = np.from_dlpack(obj)
        return cls.from_data(TensorData(arr), device, DType.from_np(arr.dtype))
