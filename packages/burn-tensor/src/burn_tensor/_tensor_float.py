"""Float-only elementwise math of `Tensor`: exp/log/trig and the other unary functions, atan2,
hypot, fmod, angle conversion and the NaN/inf tests."""

from __future__ import annotations

from . import _check as check
from ._dtype import Bool, Float

_new = object.__new__


def _float_unary(name: str):
    def method(self):
        if self._o.kind is not Float:
            check.float_(name, self)
        t = _new(type(self))
        t._p = getattr(self._o, name)(self._p)
        t._o = self._o
        t._d = self._d
        return t

    method.__name__ = name
    method.__doc__ = f"Elementwise `{name}` of a Float tensor. Shapes: [d...] -> [d...]"
    return method


class FloatMathMixin:
    """The Float-only math of `Tensor` (each raises `TensorCheckError` on an Int or Bool tensor)."""

    __slots__ = ()

    exp = _float_unary("exp")
    log = _float_unary("log")
    log1p = _float_unary("log1p")
    sqrt = _float_unary("sqrt")
    recip = _float_unary("recip")
    cos = _float_unary("cos")
    sin = _float_unary("sin")
    tan = _float_unary("tan")
    cosh = _float_unary("cosh")
    sinh = _float_unary("sinh")
    tanh = _float_unary("tanh")
    acos = _float_unary("acos")
    acosh = _float_unary("acosh")
    asin = _float_unary("asin")
    asinh = _float_unary("asinh")
    atan = _float_unary("atan")
    atanh = _float_unary("atanh")
    round = _float_unary("round")
    floor = _float_unary("floor")
    ceil = _float_unary("ceil")
    trunc = _float_unary("trunc")
    erf = _float_unary("erf")

    def atan2(self, other):
        """The angle of (other, self), i.e. atan(self / other) in the right quadrant, elementwise
        (Burn's `atan2`); Float, same shape.
        """
        check.float_("atan2", self)
        check.binary("atan2", self, other)
        return self._like(self._o.atan2(self._p, other._p))

    def hypot(self, other):
        """sqrt(self**2 + other**2), elementwise (Burn's `hypot`); Float, same shape."""
        check.float_("hypot", self)
        check.binary("hypot", self, other)
        return self._like(self._o.hypot(self._p, other._p))

    def fmod(self, other):
        """C's `fmod` (Burn `fmod`): `x - y * trunc(x / y)`, the sign of the dividend (unlike
        `remainder`, which takes the divisor's); a finite `x` over an infinite `y` gives `x`.

        Shapes: [d...] fmod [d...] -> [d...]
        """
        from ._tensor import Tensor

        check.float_("fmod", self)
        if not isinstance(other, Tensor):
            return self.fmod_scalar(other)
        check.binary("fmod", self, other)
        q = self.div(other).trunc()
        # 0 * inf is NaN: a zero quotient over an infinite divisor contributes 0 (Burn).
        prod = other.mul(q).mask_fill(q.equal_elem(0.0).bool_and(other.is_inf()), 0.0)
        return self.sub(prod)

    def fmod_scalar(self, s):
        """`fmod` with a scalar divisor: `[5.3, -5.3].fmod_scalar(2.0) == [1.3, -1.3]`."""
        check.float_("fmod_scalar", self)
        s = check.scalar_for("fmod_scalar", self, s)
        if s in (float("inf"), float("-inf")):
            return self
        return self.sub(self.div_scalar(s).trunc().mul_scalar(s))

    def deg2rad(self):
        """Degrees to radians, elementwise (Burn's `deg2rad`); Float."""
        check.float_("deg2rad", self)
        return self.mul_scalar(3.141592653589793 / 180.0)

    def rad2deg(self):
        """Radians to degrees, elementwise (Burn's `rad2deg`); Float."""
        check.float_("rad2deg", self)
        return self.mul_scalar(180.0 / 3.141592653589793)

    def is_nan(self):
        """Bool tensor: true where the element is NaN (Burn's `is_nan`); Float only."""
        check.float_("is_nan", self)
        return self._as(self._o.is_nan(self._p), Bool)

    def is_inf(self):
        """Bool tensor: true where the element is +inf or -inf (Burn's `is_inf`); Float only."""
        check.float_("is_inf", self)
        return self._as(self._o.is_inf(self._p), Bool)

    def is_finite(self):
        """Bool tensor: true where the element is neither NaN nor infinite (Burn's `is_finite`)."""
        return self.is_nan().bool_or(self.is_inf()).bool_not()

    def contains_nan(self) -> bool:
        """Whether any element is NaN (Burn's `contains_nan`, as a Python bool); Float only."""
        return bool(self.is_nan().any().into_scalar())
