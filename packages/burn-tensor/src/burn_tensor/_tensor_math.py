"""Elementwise arithmetic, numeric unary ops and matmul for `Tensor` (Float-only math:
`_tensor_float.py`; dot and cross: `_tensor_linalg.py`)."""

from __future__ import annotations

from . import _check as check
from . import _check_data as check_data
from ._dtype import Bool, Float, Int
from ._autocast import current_policy, run_half
from ._errors import TensorCheckError
from .quantization._primitive import QuantizedPrimitive

_new = object.__new__


def _broadcastable(sa, sb) -> bool:
    """Burn broadcasting (equal ranks, dims equal or 1): `check.binary`'s shape rule, no messages."""
    if len(sa) != len(sb):
        return False
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _binary(name: str, scalar_name: str, int_divides: bool = False):
    """Build `add`-style methods: tensor operand -> `name`, Python scalar -> `scalar_name`.

    The fast path (same kind view, same device, same shape) costs a few attribute reads; a
    broadcast of the same kind and device skips the message-building `check.binary`.
    `int_divides` (div, remainder): an Int divisor holding a zero raises `TensorZeroDivisionError`.
    """

    def method(self, other):
        o = self._o
        if type(other) is type(self):
            p, q = self._p, other._p
            if int_divides and o.kind is Int and other._o.kind is Int:
                check_data.no_zero_divisor(name, other)
            # Devices of one backend share `_o`, so the device is compared on its own.
            if other._o is not o or other._d is not self._d or p.shape != q.shape or o.kind is Bool:
                if o.kind is Bool:
                    check.numeric(name, self)
                if (
                    other._o is not o
                    or other._d is not self._d
                    or not _broadcastable(p.shape, q.shape)
                ):
                    check.binary(name, self, other)
                if type(q) is QuantizedPrimitive:  # float op quantized: dequantize the rhs
                    q = self._d.backend.q_dequantize(q, o.dtype)
            t = _new(type(self))
            t._p = getattr(o, name)(p, q)
            t._o = o
            t._d = self._d
            return t
        if o.kind is Bool:
            check.numeric(name, self)
        # check.scalar_for returns a float unchanged for a Float tensor: skip the call then.
        s = (
            other
            if type(other) is float and o.kind is Float
            else check.scalar_for(name, self, other)
        )
        if int_divides and s == 0 and o.kind is Int:
            raise check_data.TensorZeroDivisionError(
                name, "integer division by zero (ZeroDivisionError)"
            )
        t = _new(type(self))
        t._p = getattr(o, scalar_name)(self._p, s)
        t._o = o
        t._d = self._d
        return t

    method.__name__ = name
    method.__doc__ = (
        f"Elementwise `{name}` with a tensor (same rank, size-1 dims broadcast) or a scalar.\n\n"
        f"Shapes: [d...] op [d...] -> [d...]"
    )
    return method


class MathMixin:
    __slots__ = ()

    add = _binary("add", "add_scalar")
    sub = _binary("sub", "sub_scalar")
    mul = _binary("mul", "mul_scalar")
    div = _binary("div", "div_scalar", int_divides=True)
    remainder = _binary("remainder", "remainder_scalar", int_divides=True)

    def add_scalar(self, s):
        """self + s, elementwise (Burn's `add_scalar`); `t + 2.0` calls it."""
        return self.add(check.scalar_for("add_scalar", self, s))

    def sub_scalar(self, s):
        """self - s, elementwise (Burn's `sub_scalar`); `t - 2.0` calls it."""
        return self.sub(check.scalar_for("sub_scalar", self, s))

    def mul_scalar(self, s):
        """self * s, elementwise (Burn's `mul_scalar`); `t * 2.0` calls it."""
        return self.mul(check.scalar_for("mul_scalar", self, s))

    def div_scalar(self, s):
        """self / s, elementwise (Burn's `div_scalar`; Int divides with truncation as Burn does); `t
        / 2.0` calls it.
        """
        return self.div(check.scalar_for("div_scalar", self, s))

    def remainder_scalar(self, s):
        """self mod s, elementwise, with the sign of `s` as Python's `%` (Burn's
        `remainder_scalar`).
        """
        return self.remainder(check.scalar_for("remainder_scalar", self, s))

    __add__ = __radd__ = add
    __sub__ = sub
    __mul__ = __rmul__ = mul
    __truediv__ = div
    __mod__ = remainder

    def __rsub__(self, other):
        return self.neg().add(other)

    def __rtruediv__(self, other):
        return self.full_like(other).div(self)

    def __floordiv__(self, other):
        if self._o.kind is Int:
            # Burn's Int div truncates (-7 / 2 == -3) but `%` is Burn's remainder (divisor sign,
            # -7 % 2 == 1): floor so that a == (a // b) * b + a % b, as in Python and PyTorch.
            return self.sub(self.remainder(other)).div(other)
        return self.div(other).floor()

    def __rfloordiv__(self, other):
        return self.full_like(other).__floordiv__(self)

    def __rmod__(self, other):
        return self.full_like(other).remainder(self)

    def __neg__(self):
        return self.neg()

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __pow__(self, other):
        from ._tensor import Tensor

        if isinstance(other, Tensor):
            # An Int exponent is powi on either kind (x ** n with n an Int tensor).
            return self.powf(other) if other._o.kind is Float else self.powi(other)
        if self._o.kind is Int:
            return self.powi_scalar(other)
        return self.powf_scalar(other)

    def __rpow__(self, other):
        return self.full_like(other).__pow__(self)

    def __matmul__(self, other):
        return self.matmul(other)

    def __invert__(self):
        if self._o.kind is Bool:
            return self.bool_not()
        return self._like(self._d.backend.bitwise_not(self._p))

    def __and__(self, other):
        return self.bool_and(other) if self._o.kind is Bool else self.bitwise_and(other)

    def __or__(self, other):
        return self.bool_or(other) if self._o.kind is Bool else self.bitwise_or(other)

    def __xor__(self, other):
        return self.bool_xor(other) if self._o.kind is Bool else self.bitwise_xor(other)

    # -- numeric unary -------------------------------------------------------------------------------
    def neg(self):
        """-self, elementwise (Burn's `neg`); `-t` calls it."""
        check.numeric("neg", self)
        return self._like(self._o.neg(self._p))

    def abs(self):
        """|x|, elementwise (Burn's `abs`); Float or Int."""
        check.numeric("abs", self)
        return self._like(self._o.abs(self._p))

    def sign(self):
        """-1, 0 or 1 by the sign of each element (Burn's `sign`), in the tensor's kind."""
        check.numeric("sign", self)
        return self._like(self._o.sign(self._p))

    def square(self):
        """x * x, elementwise (Float through the backend's `float_square`)."""
        check.numeric("square", self)
        if self._o.kind is Float:
            return self._like(self._o.square(self._p))
        return self.mul(self)

    def powf(self, other):
        """Float power with a Float tensor exponent (or a scalar)."""
        from ._tensor import Tensor

        check.float_("powf", self)
        if not isinstance(other, Tensor):
            return self.powf_scalar(other)
        check.binary("powf", self, other)
        return self._like(self._o.powf(self._p, other._p))

    def powf_scalar(self, s):
        """self ** s for a float exponent, elementwise (Burn's `powf_scalar`)."""
        check.float_("powf_scalar", self)
        return self._like(self._o.powf_scalar(self._p, float(s)))

    def powi(self, other):
        """Power with an Int tensor exponent (on Float or Int tensors)."""
        from ._tensor import Tensor

        check.numeric("powi", self)
        if not isinstance(other, Tensor):
            return self.powi_scalar(other)
        check.kind("powi", other, Int)
        check.broadcast_shape("powi", self._p.shape, other._p.shape)
        check.same_device("powi", self, other)
        return self._like(self._o.powi(self._p, other._p))

    def powi_scalar(self, s):
        """self ** s for an integer exponent, elementwise (Burn's `powi_scalar`)."""
        check.numeric("powi_scalar", self)
        if isinstance(s, float) and not s.is_integer():
            raise TensorCheckError("powi_scalar", f"exponent must be an integer, got {s}")
        return self._like(self._o.powi_scalar(self._p, int(s)))

    def clamp(self, min, max):
        """Each element limited to [min, max] (Burn's `clamp`); `min > max` raises TensorCheckError.
        """
        check.numeric("clamp", self)
        if min > max:
            raise TensorCheckError("clamp", f"min ({min}) must be <= max ({max})")
        return self._like(
            self._o.clamp(
                self._p, check.scalar_for("clamp", self, min), check.scalar_for("clamp", self, max)
            )
        )

    def clamp_min(self, min):
        """Each element limited to at least `min` (Burn's `clamp_min`)."""
        check.numeric("clamp_min", self)
        return self._like(self._o.clamp_min(self._p, check.scalar_for("clamp_min", self, min)))

    def clamp_max(self, max):
        """Each element limited to at most `max` (Burn's `clamp_max`)."""
        check.numeric("clamp_max", self)
        return self._like(self._o.clamp_max(self._p, check.scalar_for("clamp_max", self, max)))

    def max_pair(self, other):
        """Elementwise maximum of two tensors."""
        check.binary("max_pair", self, other)
        check.numeric("max_pair", self)
        return self.mask_where(self.lower(other), other)

    def min_pair(self, other):
        """The elementwise minimum of two tensors of the same shape (Burn's `min_pair`)."""
        check.binary("min_pair", self, other)
        check.numeric("min_pair", self)
        return self.mask_where(self.greater(other), other)

    def matmul(self, other):
        """Matrix product over the last two dims; leading (batch) dims broadcast (same rank).

        Shapes: [..., m, k] @ [..., k, n] -> [..., m, n]
        """
        policy = current_policy()
        if policy is not None:  # inside `autocast(...)`: runs in half (see _autocast.py)
            return run_half(policy, MathMixin.matmul, (self, other), {})
        o = self._o
        if (
            type(other) is type(self)
            and other._o is o
            and other._d is self._d
            and o.kind is not Bool
        ):
            # Fast path for the common 2-D case: exactly the checks below, without the import.
            sa, sb = self._p.shape, other._p.shape
            if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]:
                t = _new(type(self))
                t._p = o.matmul(self._p, other._p)
                t._o = o
                t._d = self._d
                return t
        check.numeric("matmul", self)
        from ._tensor import Tensor

        if not isinstance(other, Tensor):
            raise TensorCheckError("matmul", f"expected a Tensor, got {type(other).__name__}")
        sa, sb = self._p.shape, other._p.shape
        problems = []
        if other._o.kind is not self._o.kind:
            problems.append(f"kinds differ: {self._o.kind.value} vs {other._o.kind.value}")
        if other._d is not self._d:
            problems.append(check.device_mismatch(self, other))
        if len(sa) != len(sb) or len(sa) < 2:
            problems.append(f"expected equal ranks >= 2, got {list(sa)} and {list(sb)}")
        elif sa[-1] != sb[-2]:
            problems.append(
                f"inner dims differ: lhs {list(sa)} has {sa[-1]}, rhs {list(sb)} has {sb[-2]}"
            )
        else:
            bad = [
                i for i, (x, y) in enumerate(zip(sa[:-2], sb[:-2])) if x != y and x != 1 and y != 1
            ]
            if bad:
                problems.append(f"batch dims {bad} of {list(sa)} and {list(sb)} do not broadcast")
        if problems:
            raise TensorCheckError("matmul", problems)
        if type(self._p) is QuantizedPrimitive or type(other._p) is QuantizedPrimitive:
            # the backend's quantized matmul (int8 kernels where it has them); a float result
            return Tensor._make(self._d.backend.q_matmul(self._p, other._p), self._o.kind, self._d)
        return self._like(self._o.matmul(self._p, other._p))
