"""`Device`: a value naming one device of one backend."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ._backend import Backend


class Device:
    """A device bound to one backend: `NdArray().device()`, `Cuda().device(1)`.

    Devices are interned: equal (backend, index) pairs are the same object, so identity comparison is a
    valid (and fast) equality test. A `Device` is callable and returns itself, so Burn's
    `tensor.device()` and PyTorch's `tensor.device` both read naturally.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> d is NdArray().device(0)
        True
    """

    __slots__ = ("backend", "index", "_inner", "__weakref__")

    _cache: ClassVar[dict[tuple, Device]] = {}
    # Publishing takes the lock so concurrent creators agree on one object; lookups do not.
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __new__(cls, backend: Backend, index: int = 0) -> Device:
        key = (backend, index)
        dev = cls._cache.get(key)
        if dev is not None:
            return dev
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"Device: index must be an int >= 0, got {index!r}")
        dev = object.__new__(cls)
        object.__setattr__(dev, "backend", backend)
        object.__setattr__(dev, "index", index)
        object.__setattr__(dev, "_inner", None)
        with cls._lock:
            return cls._cache.setdefault(key, dev)

    def __setattr__(self, name, value):
        raise AttributeError("Device is immutable")

    def __call__(self) -> Device:
        return self

    def inner(self) -> Device:
        """The same physical device on the wrapped backend (for decorators like Autodiff)."""
        # Cached: autodiff and optimizer code asks for it several times per op and parameter,
        # and building it hashes the backend's options. Devices are interned, so it never changes.
        dev = self._inner
        if dev is None:
            inner = self.backend.inner
            dev = self if inner is None else Device(inner, self.index)
            object.__setattr__(self, "_inner", dev)
        return dev

    def seed(self, seed: int) -> None:
        """Make random ops on this device's backend deterministic."""
        self.backend.seed(seed, self)

    def sync(self) -> None:
        """Wait for all queued work on this device."""
        self.backend.sync(self)

    def memory_stats(self) -> dict:
        """Memory figures of this device where its backend keeps a pool (e.g. `bytes_in_use`,
        `bytes_reserved`); an empty dict where it does not."""
        return self.backend.memory_stats(self)

    def fusion_stats(self) -> dict:
        """Counters of this device's fusion stream (a device of `Fusion(B)` or of a decorator
        over it); a TypeError on any other backend."""
        return self.backend.fusion_stats(self)

    def reset_fusion_stats(self) -> None:
        """Set every counter of this device's fusion stream to 0."""
        self.backend.reset_fusion_stats(self)

    @property
    def kind(self) -> str:
        """The backend's `device_kind` (`Cpu` for NdArray), as the device's printed name says."""
        return self.backend.device_kind

    def __reduce__(self):
        return (Device, (self.backend, self.index))

    def __repr__(self) -> str:
        return (
            f"{self.backend.device_kind}({self.index})" if self.index else self.backend.device_kind
        )

    def __str__(self) -> str:
        return self.__repr__()
