"""Comparisons (-> Bool tensors), Bool logic and Int bitwise ops of `Tensor`."""

from __future__ import annotations

from . import _check as check
from ._dtype import Bool, Int
from ._tensor_math import _broadcastable

_new = object.__new__


def _bool_result(t, p):
    """A Bool tensor on t's device (the Bool view is linked from t's view: no dict lookup)."""
    out = _new(type(t))
    out._p = p
    out._o = t._o._bool
    out._d = t._d
    return out


def _compare(name: str):
    numeric_only = name not in ("equal", "not_equal")

    def method(self, other):
        o = self._o
        if type(other) is type(self):  # fast path: same checks, in the same order, inlined
            p, q = self._p, other._p
            if (
                other._o is not o
                or other._d is not self._d
                or (p.shape != q.shape and not _broadcastable(p.shape, q.shape))
            ):
                check.binary(name, self, other)
            if numeric_only and o.kind is Bool:
                check.numeric(name, self)
            t = _new(type(self))
            t._p = getattr(o, name)(p, q)
            t._o = o._bool
            t._d = self._d
            return t
        if isinstance(other, LogicMixin):  # a Tensor (its only subclass) of another type object
            check.binary(name, self, other)
            if o.kind is Bool and name not in ("equal", "not_equal"):
                check.numeric(name, self)
            return _bool_result(self, getattr(o, name)(self._p, other._p))
        if o.kind is Bool and name not in ("equal", "not_equal"):
            check.numeric(name + "_elem", self)
        return _bool_result(
            self, getattr(o, name + "_elem")(self._p, check.scalar_for(name, self, other))
        )

    method.__name__ = name
    method.__doc__ = f"Elementwise `{name}` -> Bool tensor; `other` is a tensor or a scalar."
    return method


def _compare_elem(name: str):
    def method(self, scalar):
        if self._o.kind is Bool and not name.startswith(("equal", "not_equal")):
            check.numeric(name, self)
        return _bool_result(
            self, getattr(self._o, name)(self._p, check.scalar_for(name, self, scalar))
        )

    method.__name__ = name
    return method


class LogicMixin:
    __slots__ = ()

    # -- comparisons ---------------------------------------------------------------------------------
    equal = _compare("equal")
    not_equal = _compare("not_equal")
    greater = _compare("greater")
    greater_equal = _compare("greater_equal")
    lower = _compare("lower")
    lower_equal = _compare("lower_equal")
    equal_elem = _compare_elem("equal_elem")
    not_equal_elem = _compare_elem("not_equal_elem")
    greater_elem = _compare_elem("greater_elem")
    greater_equal_elem = _compare_elem("greater_equal_elem")
    lower_elem = _compare_elem("lower_elem")
    lower_equal_elem = _compare_elem("lower_equal_elem")
    equal_scalar = equal_elem
    not_equal_scalar = not_equal_elem
    greater_scalar = greater_elem
    greater_equal_scalar = greater_equal_elem
    lower_scalar = lower_elem
    lower_equal_scalar = lower_equal_elem

    __eq__ = equal
    __ne__ = not_equal
    __gt__ = greater
    __ge__ = greater_equal
    __lt__ = lower
    __le__ = lower_equal

    def is_close(self, other, rtol: float = 1e-5, atol: float = 1e-8):
        """|self - other| <= atol + rtol * |other| (torch.isclose), NaN never close."""
        check.numeric("is_close", self)
        check.binary("is_close", self, other)
        a = self.float() if self._o.kind is Int else self
        b = other.float() if other._o.kind is Int else other
        close = a.sub(b).abs().lower_equal(b.abs().mul_scalar(rtol).add_scalar(atol))
        # equal infinities are close (inf - inf is NaN), as torch.isclose
        return close.bool_or(a.equal(b))

    def all_close(self, other, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
        return bool(self.is_close(other, rtol, atol).all().into_scalar())

    # -- bool ops ------------------------------------------------------------------------------------
    def bool_not(self):
        check.kind("bool_not", self, Bool)
        return self._like(self._d.backend.bool_not(self._p))

    def bool_and(self, other):
        check.kind("bool_and", self, Bool)
        check.binary("bool_and", self, other)
        return self._like(self._d.backend.bool_and(self._p, other._p))

    def bool_or(self, other):
        check.kind("bool_or", self, Bool)
        check.binary("bool_or", self, other)
        return self._like(self._d.backend.bool_or(self._p, other._p))

    def bool_xor(self, other):
        check.kind("bool_xor", self, Bool)
        check.binary("bool_xor", self, other)
        return self._like(self._d.backend.bool_xor(self._p, other._p))

    logical_not = bool_not

    # -- bitwise (Int) -------------------------------------------------------------------------------
    def _bitwise(self, name, other):
        from ._tensor import Tensor

        check.kind(name, self, Int)
        b = self._d.backend
        if isinstance(other, Tensor):
            check.binary(name, self, other)
            return self._like(getattr(b, name)(self._p, other._p))
        return self._like(
            getattr(b, name + "_scalar")(self._p, check.scalar_for(name, self, other))
        )

    def bitwise_and(self, other):
        return self._bitwise("bitwise_and", other)

    def bitwise_or(self, other):
        return self._bitwise("bitwise_or", other)

    def bitwise_xor(self, other):
        return self._bitwise("bitwise_xor", other)

    def bitwise_left_shift(self, other):
        return self._bitwise("bitwise_left_shift", other)

    def bitwise_right_shift(self, other):
        return self._bitwise("bitwise_right_shift", other)

    def bitwise_not(self):
        check.kind("bitwise_not", self, Int)
        return self._like(self._d.backend.bitwise_not(self._p))


LogicMixin.__lshift__ = LogicMixin.bitwise_left_shift
LogicMixin.__rshift__ = LogicMixin.bitwise_right_shift
