"""`ParamId` and `Param`: a module parameter with a stable identity (Burn's `burn::module::Param`)."""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
from collections.abc import Callable
from typing import Any

from burn_tensor import Float, Tensor


class ParamId:
    """A random 64-bit parameter id; its string form is Burn's (BASE32-DNSSEC of little-endian bytes).

    Optimizer state and records are keyed by it, so it survives `map`, `to_device`, `valid` and
    record round trips.

    Example:
        >>> pid = ParamId.from_int(42)
        >>> str(pid), ParamId.from_str(str(pid)) == pid
        ('5800000000000', True)
    """

    __slots__ = ("val", "_str")

    def __init__(self, val: int | None = None):
        object.__setattr__(
            self, "val", secrets.randbits(64) if val is None else int(val) & (2**64 - 1)
        )
        object.__setattr__(self, "_str", None)

    new = classmethod(lambda cls: cls())

    @classmethod
    def from_int(cls, val: int) -> ParamId:
        return cls(val)

    @classmethod
    def from_str(cls, s: str) -> ParamId:
        """Parse Burn's string form; legacy (uuid-like) ids are hashed to 64 bits as Burn does."""
        if isinstance(s, ParamId):
            return s
        text = str(s)
        if len(text) == 13:
            try:
                raw = base64.b32hexdecode(text.upper() + "===")
                return cls(int.from_bytes(raw, "little"))
            except ValueError:
                pass
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return cls(int.from_bytes(digest, "little"))

    def __int__(self) -> int:
        return self.val

    def __setattr__(self, name, value):
        raise AttributeError("ParamId is immutable")

    def __str__(self) -> str:
        text = self._str
        if text is None:  # cached: ids are hashed on every optimizer/record dict lookup
            text = base64.b32hexencode(self.val.to_bytes(8, "little")).decode().rstrip("=").lower()
            object.__setattr__(self, "_str", text)
        return text

    def serialize(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return f"ParamId({self})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ParamId):
            return self.val == other.val
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        # A ParamId equals its string form, so it must hash like it: `{pid: x}[str(pid)]` works.
        # The cached string skips `__str__`'s call: ids are hashed several times per parameter
        # per optimizer step.
        text = self._str
        return hash(text if text is not None else str(self))

    def __reduce__(self):
        return (ParamId, (self.val,))


class Param:
    """A parameter: a tensor, its `ParamId` and whether the optimizer should update it.

    On an autodiff device the tensor is a leaf that requires grad (unless `require_grad=False`), so
    `loss.backward()` then `param.val().grad(grads)` works. Params are values: `map` returns a new
    Param with the same id. Unknown attributes are forwarded to the tensor (`param.dims()`), as
    Burn's `Param<Tensor>` derefs to the tensor.

    Shapes: any.

    Example:
        >>> from burn_ndarray import NdArray
        >>> p = Param.from_tensor(Tensor.zeros([2, 3], NdArray().device()))
        >>> p.dims(), p.map(lambda t: t + 1).id == p.id
        ([2, 3], True)
    """

    __slots__ = ("id", "_value", "require_grad", "_lazy")

    def __init__(self, id: ParamId | str | int | None, value: Tensor, require_grad: bool = True):
        if not isinstance(value, Tensor):
            raise TypeError(f"Param: expected a Tensor, got {type(value).__name__}")
        object.__setattr__(self, "id", _param_id(id))
        object.__setattr__(self, "require_grad", bool(require_grad))
        object.__setattr__(self, "_value", _track(value, self.require_grad))
        object.__setattr__(self, "_lazy", None)

    def __setattr__(self, name, value):
        raise AttributeError("Param is immutable; use map() or Param.initialized()")

    # -- Burn constructors ---------------------------------------------------------------------
    @classmethod
    def from_tensor(cls, value: Tensor, require_grad: bool = True) -> Param:
        """A new Param with a fresh random id."""
        return cls(None, value, require_grad)

    @classmethod
    def initialized(cls, id: ParamId, value: Tensor, require_grad: bool = True) -> Param:
        return cls(id, value, require_grad)

    @classmethod
    def updated(cls, id: ParamId, value: Tensor, require_grad: bool = True) -> Param:
        """An optimizer's result as a Param: `Param(id, value, require_grad)` for a `ParamId`
        and an untracked tensor (an inner-backend result, or one just lifted onto the autodiff
        device by `Tensor.from_inner`), without `__init__`'s checks and normalisations (run for
        every parameter of every training step). A Float tensor on an autodiff device becomes
        a leaf that requires grad when `require_grad`, as `__init__` makes it."""
        p = _new(cls)
        _set(p, "id", id)
        _set(p, "require_grad", require_grad)
        if require_grad and value.kind is Float and value.device.backend.is_autodiff:
            value = value.require_grad()
        _set(p, "_value", value)
        _set(p, "_lazy", None)
        return p

    @classmethod
    def from_data(cls, data: Any, device=None) -> Param:
        return cls(None, Tensor.from_data(data, device))

    @classmethod
    def uninitialized(
        cls,
        id: ParamId | None,
        init: Callable[[Any, bool], Tensor],
        device,
        is_require_grad: bool,
        shape,
        dtype=None,
    ) -> Param:
        """A lazy parameter (Burn's `Param::uninitialized`): `init(device, is_require_grad)`
        runs on the first `val()` (a forward pass, a record, an optimizer step), once, even when
        threads race for it. Until then `shape`, `device` (`lazy_device()`), `is_initialized()`
        and loading a record into it run no initializer, so a model built to load weights never
        draws its random init. `dtype` (default: the device's float dtype) is what a record
        loaded into the uninitialized param is converted to.

        Example:
            >>> from burn_ndarray import NdArray
            >>> dev = NdArray().device()
            >>> p = Param.uninitialized(None, lambda d, rg: Tensor.ones([2], d), dev, True, [2])
            >>> p.is_initialized(), p.shape.dims, p.val().tolist(), p.is_initialized()
            (False, [2], [1.0, 1.0], True)
        """
        from burn_tensor import Shape

        p = object.__new__(cls)
        object.__setattr__(p, "id", _param_id(id))
        object.__setattr__(p, "require_grad", bool(is_require_grad))
        object.__setattr__(p, "_value", None)
        dt = device.backend.float_dtype if dtype is None else dtype
        object.__setattr__(p, "_lazy", (init, device, Shape(list(shape)), dt))
        return p

    # -- access --------------------------------------------------------------------------------
    def val(self) -> Tensor:
        """The tensor (cheap handle; the same autodiff leaf every call); a lazy parameter is
        initialized here on first use."""
        v = self._value
        return v if v is not None else self._materialize()

    value = property(val)

    def _materialize(self) -> Tensor:
        with _LAZY_LOCK:
            if self._value is None:
                init, device, shape, _ = self._lazy
                t = init(device, self.require_grad)
                if not isinstance(t, Tensor) or list(t.dims()) != list(shape.dims):
                    got = t.dims() if isinstance(t, Tensor) else type(t).__name__
                    raise ValueError(
                        f"Param {self.id}: the lazy initializer returned {got}, "
                        f"declared shape {list(shape.dims)}"
                    )
                object.__setattr__(self, "_value", _track(t, self.require_grad))
                object.__setattr__(self, "_lazy", None)
        return self._value

    def is_initialized(self) -> bool:
        """Whether the value exists (always, except for a lazy param before its first use)."""
        return self._value is not None

    def lazy_device(self):
        """The device the param is or will be on, without initializing it."""
        return self._lazy[1] if self._value is None else self._value.device

    def lazy_dtype(self):
        """The dtype the param is or will have, without initializing it."""
        return self._lazy[3] if self._value is None else self._value.dtype

    def into_value(self) -> Tensor:
        return self.val()

    def consume(self) -> tuple[ParamId, Tensor]:
        """`(id, tensor)`, as Burn's `Param::consume`."""
        return self.id, self.val()

    def map(self, fn: Callable[[Tensor], Tensor]) -> Param:
        """A Param with the same id holding `fn(tensor)` (re-marked as requiring grad if it did)."""
        return type(self)(self.id, fn(self.val()), self.require_grad)

    def set_require_grad(self, require_grad: bool) -> Param:
        if self._value is None:  # stays lazy (Burn)
            init, device, shape, dt = self._lazy
            return type(self).uninitialized(self.id, init, device, require_grad, shape.dims, dt)
        return type(self)(self.id, self._value, require_grad)

    def is_require_grad(self) -> bool:
        return self.require_grad

    @property
    def shape(self):
        """The shape (a lazy param's declared one: no initialization)."""
        return self._lazy[2] if self._value is None else self._value.shape

    @property
    def device(self):
        """The device (a lazy param's target device: no initialization)."""
        return self.lazy_device()

    def __getattr__(self, name: str):
        # Only reached for names Param lacks: forward to the tensor (Burn's Deref).
        if name.startswith("__") or name in ("_value", "_lazy"):
            raise AttributeError(name)
        return getattr(self.val(), name)

    def __repr__(self) -> str:
        if self._value is None:
            return (
                f"Param(id={self.id}, uninitialized, shape={list(self.shape.dims)}, "
                f"require_grad={self.require_grad})"
            )
        return f"Param(id={self.id}, {self._value!r}, require_grad={self.require_grad})"

    def __reduce__(self):
        return (_rebuild_param, (type(self), self.id, self.val(), self.require_grad))


_new, _set = object.__new__, object.__setattr__  # bound once: `Param.updated` runs per step

#: one lock for every lazy initialization: it runs once per parameter, so contention is moot
_LAZY_LOCK = threading.RLock()


def _param_id(id) -> ParamId:
    if isinstance(id, ParamId):
        return id
    if id is None:
        return ParamId()
    return ParamId.from_str(id) if isinstance(id, str) else ParamId(id)


def _rebuild_param(cls, pid, value, require_grad):
    return cls(pid, value, require_grad)


def _track(value: Tensor, require_grad: bool) -> Tensor:
    """Make a float tensor a leaf that requires grad on an autodiff backend (Burn's Param init)."""
    if value.kind is not Float or not value.device.backend.is_autodiff:
        return value
    if require_grad:
        if not value.is_require_grad():
            # Untracked (e.g. an optimizer's result lifted onto the autodiff device): detach()
            # would return an equal handle, so mark it directly.
            return value.require_grad()
        return value if _is_leaf(value) else value.detach().require_grad()
    return value.detach() if value.is_require_grad() else value


def _is_leaf(value: Tensor) -> bool:
    probe = getattr(value.device.backend, "is_leaf", None)
    return True if probe is None else bool(probe(value.into_primitive()))


class RunningState(Param):
    """A non-trainable state updated by the forward pass (BatchNorm's running mean/var).

    Recorded like a parameter (it has an id), never tracked by autodiff. `value()` reads it;
    `update(t)` replaces it in place (the one mutable thing in a module, as in Burn).

    Example:
        >>> from burn_ndarray import NdArray
        >>> s = RunningState.from_tensor(Tensor.zeros([2], NdArray().device()))
        >>> s.update(Tensor.ones([2], NdArray().device())); s.val().tolist()
        [1.0, 1.0]
    """

    __slots__ = ()

    def __init__(self, id, value: Tensor, require_grad: bool = False):
        super().__init__(id, value.detach(), False)

    def update(self, value: Tensor) -> None:
        object.__setattr__(self, "_value", value.detach())
        object.__setattr__(self, "_lazy", None)

    def value_sync(self) -> Tensor:
        return self._value
