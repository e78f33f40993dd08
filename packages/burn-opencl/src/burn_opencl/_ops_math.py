"""Elementwise ops of the contract as methods, generated from the kernel table's names.

Every method is a thin closure over `_ew.run`: the op name picks the kernel, the element type of
the first operand picks the program.
"""

from __future__ import annotations

from burn_gpu import FLOAT_FN

from . import _ew

BOOL = _ew.BOOL


def _unary(name, out_bool=False):
    def op(self, x):
        return _ew.unary(name, x, BOOL if out_bool else None)

    return op


def _binary(name, out_bool=False):
    def op(self, x, y):
        return _ew.binary(name, x, y, BOOL if out_bool else None)

    return op


def _scalar(name, out_bool=False):
    def op(self, x, *s):
        return _ew.scalar(name, x, *s, out_dtype=BOOL if out_bool else None)

    return op


def _cast(self, x, dtype):
    return _ew.cast(x, dtype.np)


_CMP = ("greater", "greater_equal", "lower", "lower_equal")
_ARITH = ("add", "sub", "mul", "div", "remainder")


def _numeric(prefix: str) -> dict:
    ops = {}
    for n in _CMP:
        ops[f"{prefix}{n}"] = _binary(n, True)
        ops[f"{prefix}{n}_elem"] = _scalar(n + "_elem", True)
    for n in _ARITH:
        ops[f"{prefix}{n}"] = _binary(n)
        ops[f"{prefix}{n}_scalar"] = _scalar(n + "_scalar")
    for n in ("abs", "neg", "sign"):
        ops[f"{prefix}{n}"] = _unary(n)
    for n in ("clamp", "clamp_min", "clamp_max"):
        ops[f"{prefix}{n}"] = _scalar(n)
    ops[f"{prefix}cast"] = _cast
    return ops


def _int_powi_scalar(self, x, s):
    if s < 0:
        raise ValueError("int_powi_scalar: negative exponents are not defined for Int tensors")
    return _ew.scalar("powi_scalar", x, s)


def _int_arange_step(self, start, end, step, device, dtype):
    n = max(0, -(-(end - start) // step)) if step > 0 else max(0, -(-(start - end) // -step))
    return _ew.run("arange", dtype.np, dtype.np, (n,), [], (start, step), rt=self._rt(device))


def elementwise_ops() -> dict:
    ops = {**_numeric("float_"), **_numeric("int_")}
    for n in FLOAT_FN + ["recip", "round", "square"]:
        ops[f"float_{n}"] = _unary(n)
    ops["float_is_nan"] = _unary("is_nan", True)
    ops["float_is_inf"] = _unary("is_inf", True)
    for n in ("powf", "atan2", "hypot"):
        ops[f"float_{n}"] = _binary(n)
    ops["float_powf_scalar"] = _scalar("powf_scalar")
    ops["float_into_int"] = _cast
    ops["int_into_float"] = _cast
    ops["bool_into_int"] = _cast
    ops["bool_into_float"] = _cast
    ops["int_powi"] = _binary("powi")
    ops["int_powi_scalar"] = _int_powi_scalar
    ops["int_arange_step"] = _int_arange_step
    for n in ("and", "or", "xor", "left_shift", "right_shift"):
        ops[f"bitwise_{n}"] = _binary(f"bitwise_{n}")
        ops[f"bitwise_{n}_scalar"] = _scalar(f"bitwise_{n}_scalar")
    ops["bitwise_not"] = _unary("bitwise_not")
    ops["bool_not"] = _unary("not")
    for n in ("and", "or", "xor"):
        ops[f"bool_{n}"] = _binary(n)
    # activations with one kernel instead of their decompositions
    ops["relu"] = _unary("relu")
    ops["sigmoid"] = _unary("sigmoid")
    ops["gelu"] = _unary("gelu")
    ops["relu_backward"] = _binary("relu_backward")
    ops["gelu_backward"] = _binary("gelu_backward")
    return ops
