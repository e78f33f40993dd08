"""Comparisons (-> Bool tensors), Bool logic and Int bitwise ops of `Tensor`."""

from __future__ import annotations

from . import _check as check
from ._dtype import Bool, Int
from ._tensor_math import _broadcastable

_new = object.__new__

#: Burn's defaults for `is_close` / `all_close` when a tolerance is None (burn-tensor `api/float.rs`).
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-8


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


_SYMBOLS = {
    "equal_elem": "==",
    "not_equal_elem": "!=",
    "greater_elem": ">",
    "greater_equal_elem": ">=",
    "lower_elem": "<",
    "lower_equal_elem": "<=",
}


def _compare_elem(name: str):
    def method(self, scalar):
        if self._o.kind is Bool and not name.startswith(("equal", "not_equal")):
            check.numeric(name, self)
        return _bool_result(
            self, getattr(self._o, name)(self._p, check.scalar_for(name, self, scalar))
        )

    method.__name__ = name
    symbol = _SYMBOLS[name]
    method.__doc__ = (
        f"Bool tensor, true where `x {symbol} scalar` (Burn's `{name}`; "
        f"the `*_scalar` name is an alias)."
    )
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

    def is_close(self, other, rtol: float | None = None, atol: float | None = None):
        """Elementwise `|self - other| <= atol + rtol * |other|` (Burn's `is_close`, torch.isclose).

        `None` takes Burn's defaults, `DEFAULT_RTOL` = 1e-5 and `DEFAULT_ATOL` = 1e-8, so the
        book's `t.is_close(other, None, None)` reads as in Rust. NaN is never close; an infinity
        is close only to the same infinity.

        Shapes: [...] and [...] (same rank, broadcast over size-1 dims) -> Bool [...]

        Example:
            >>> from burn_ndarray import NdArray
            >>> device = NdArray().device()
            >>> a = Tensor.from_data([1.0, 2.0], device)
            >>> a.is_close(Tensor.from_data([1.0, 2.1], device), None, None).tolist()
            [True, False]
        """
        check.numeric("is_close", self)
        check.binary("is_close", self, other)
        rtol = DEFAULT_RTOL if rtol is None else rtol
        atol = DEFAULT_ATOL if atol is None else atol
        a = self.float() if self._o.kind is Int else self
        b = other.float() if other._o.kind is Int else other
        close = a.sub(b).abs().lower_equal(b.abs().mul_scalar(rtol).add_scalar(atol))
        # The tolerance test only counts where both are finite (|1 - inf| <= inf is true, yet
        # 1 is not close to inf); equal infinities are close (inf - inf is NaN), as in Burn.
        finite = a.is_finite().bool_and(b.is_finite())
        same_inf = a.is_inf().bool_and(a.equal(b))
        return close.bool_and(finite).bool_or(same_inf)

    def all_close(self, other, rtol: float | None = None, atol: float | None = None) -> bool:
        """Whether every element `is_close` (Burn's `all_close(other, rtol, atol)`; None = default).

        Example:
            >>> from burn_ndarray import NdArray
            >>> t = Tensor.from_data([[1.0, -2.0, 3.0]], NdArray().device())
            >>> t.all_close(t, None, None), t.all_close(t + 1e-3, None, None)
            (True, False)
        """
        return bool(self.is_close(other, rtol, atol).all().into_scalar())

    # -- bool ops ------------------------------------------------------------------------------------
    def bool_not(self):
        """Logical not of a Bool tensor (Burn's `bool_not`); `~t` and `logical_not` are the same."""
        check.kind("bool_not", self, Bool)
        return self._like(self._d.backend.bool_not(self._p))

    def bool_and(self, other):
        """Logical and of two Bool tensors of the same shape (Burn's `bool_and`); `a & b`."""
        check.kind("bool_and", self, Bool)
        check.binary("bool_and", self, other)
        return self._like(self._d.backend.bool_and(self._p, other._p))

    def bool_or(self, other):
        """Logical or of two Bool tensors of the same shape (Burn's `bool_or`); `a | b`."""
        check.kind("bool_or", self, Bool)
        check.binary("bool_or", self, other)
        return self._like(self._d.backend.bool_or(self._p, other._p))

    def bool_xor(self, other):
        """Logical xor of two Bool tensors of the same shape (Burn's `bool_xor`); `a ^ b`."""
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
        """self & other, bit by bit, with a tensor or an int (Burn's `bitwise_and` /
        `bitwise_and_scalar`); Int only.
        """
        return self._bitwise("bitwise_and", other)

    def bitwise_or(self, other):
        """self | other, bit by bit, with a tensor or an int (Burn's `bitwise_or`); Int only."""
        return self._bitwise("bitwise_or", other)

    def bitwise_xor(self, other):
        """self ^ other, bit by bit, with a tensor or an int (Burn's `bitwise_xor`); Int only."""
        return self._bitwise("bitwise_xor", other)

    def bitwise_left_shift(self, other):
        """self << other, with a tensor or an int (Burn's `bitwise_left_shift`); Int only."""
        return self._bitwise("bitwise_left_shift", other)

    def bitwise_right_shift(self, other):
        """self >> other, with a tensor or an int (Burn's `bitwise_right_shift`); Int only."""
        return self._bitwise("bitwise_right_shift", other)

    def bitwise_not(self):
        """~self, bit by bit (Burn's `bitwise_not`); Int only."""
        check.kind("bitwise_not", self, Int)
        return self._like(self._d.backend.bitwise_not(self._p))


LogicMixin.__lshift__ = LogicMixin.bitwise_left_shift
LogicMixin.__rshift__ = LogicMixin.bitwise_right_shift
