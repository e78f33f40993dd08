"""`ParamId` and `Param`: a module parameter with a stable identity (Burn's `burn::module::Param`)."""

from __future__ import annotations

import base64
import hashlib
import secrets
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

    __slots__ = ("id", "_value", "require_grad")

    def __init__(self, id: ParamId | str | int | None, value: Tensor, require_grad: bool = True):
        if not isinstance(value, Tensor):
            raise TypeError(f"Param: expected a Tensor, got {type(value).__name__}")
        pid = (
            id
            if isinstance(id, ParamId)
            else ParamId()
            if id is None
            else (ParamId.from_str(id) if isinstance(id, str) else ParamId(id))
        )
        object.__setattr__(self, "id", pid)
        object.__setattr__(self, "require_grad", bool(require_grad))
        object.__setattr__(self, "_value", _track(value, self.require_grad))

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
    def from_data(cls, data: Any, device=None) -> Param:
        return cls(None, Tensor.from_data(data, device))

    # -- access --------------------------------------------------------------------------------
    def val(self) -> Tensor:
        """The tensor (cheap handle; the same autodiff leaf every call)."""
        return self._value

    value = property(val)

    def into_value(self) -> Tensor:
        return self._value

    def consume(self) -> tuple[ParamId, Tensor]:
        """`(id, tensor)`, as Burn's `Param::consume`."""
        return self.id, self._value

    def map(self, fn: Callable[[Tensor], Tensor]) -> Param:
        """A Param with the same id holding `fn(tensor)` (re-marked as requiring grad if it did)."""
        return type(self)(self.id, fn(self._value), self.require_grad)

    def set_require_grad(self, require_grad: bool) -> Param:
        return type(self)(self.id, self._value, require_grad)

    def is_require_grad(self) -> bool:
        return self.require_grad

    @property
    def shape(self):
        return self._value.shape

    @property
    def device(self):
        return self._value.device

    def __getattr__(self, name: str):
        # Only reached for names Param lacks: forward to the tensor (Burn's Deref).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._value, name)

    def __repr__(self) -> str:
        return f"Param(id={self.id}, {self._value!r}, require_grad={self.require_grad})"

    def __reduce__(self):
        return (_rebuild_param, (type(self), self.id, self._value, self.require_grad))


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

    def value_sync(self) -> Tensor:
        return self._value
