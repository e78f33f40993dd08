"""The fusable ops: each op of the contract that Fusion records lazily, as a C expression.

An entry is `Op(inputs, scalars, out, expr)`:
- `inputs`: one letter per tensor operand: "T" (the op's element type: the first operand's
  dtype; a differing operand is cast to it, as the inner backends do) or "B" (a bool mask);
- `scalars`: how many by-value scalars follow the tensors (they have the first operand's dtype);
- `out`: "T" (the first operand's dtype), "B" (bool) or "D" (the op's `dtype` argument: casts);
- `expr`: the C expression over `{a} {b} {c}` (operands), `{s0} {s1}` (scalars), `{T}` (the C
  type of T) and `{rem}` (the float remainder helper of T). Operands are always plain variables,
  so an expression may name one several times.

Every expression is the one the inner backends compute (burn_opencl's `_ew_source`, cupy's
ufuncs): float remainder takes the divisor's sign, `round` is half-to-even (`rint`), `sigmoid`
splits on the sign so no `exp` overflows. Integer division, remainder, powers and shifts are
not here: their results need value checks or helpers the suite pins down, so they run unfused.
"""

from __future__ import annotations

from typing import NamedTuple


class Op(NamedTuple):
    inputs: str
    scalars: int
    out: str
    expr: str


OPS: dict[str, Op] = {}

_CMP = {
    "equal": "==",
    "not_equal": "!=",
    "greater": ">",
    "greater_equal": ">=",
    "lower": "<",
    "lower_equal": "<=",
}
_FLOAT_FN = [
    "exp",
    "log",
    "log1p",
    "sqrt",
    "cos",
    "sin",
    "tan",
    "cosh",
    "sinh",
    "tanh",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "floor",
    "ceil",
    "trunc",
    "erf",
]


def _fill() -> None:
    for kind in ("float", "int", "bool"):
        numeric = kind != "bool"
        for name, op in _CMP.items():
            if numeric or name in ("equal", "not_equal"):
                OPS[f"{kind}_{name}"] = Op("TT", 0, "B", f"{{a}} {op} {{b}}")
                OPS[f"{kind}_{name}_elem"] = Op("T", 1, "B", f"{{a}} {op} {{s0}}")
        OPS[f"{kind}_mask_where"] = Op("TBT", 0, "T", "{b} ? {c} : {a}")
        OPS[f"{kind}_mask_fill"] = Op("TB", 1, "T", "{b} ? {s0} : {a}")
        if not numeric:
            continue
        for name, op in (("add", "+"), ("sub", "-"), ("mul", "*")):
            OPS[f"{kind}_{name}"] = Op("TT", 0, "T", f"{{a}} {op} {{b}}")
            OPS[f"{kind}_{name}_scalar"] = Op("T", 1, "T", f"{{a}} {op} {{s0}}")
        OPS[f"{kind}_neg"] = Op("T", 0, "T", "-{a}")
        OPS[f"{kind}_clamp"] = Op("T", 2, "T", "{a} < {s0} ? {s0} : ({a} > {s1} ? {s1} : {a})")
        OPS[f"{kind}_clamp_min"] = Op("T", 1, "T", "{a} < {s0} ? {s0} : {a}")
        OPS[f"{kind}_clamp_max"] = Op("T", 1, "T", "{a} > {s0} ? {s0} : {a}")
        OPS[f"{kind}_cast"] = Op("T", 0, "D", "({D}){a}")
    OPS["int_abs"] = Op("T", 0, "T", "{a} < 0 ? ({T})(-{a}) : {a}")
    OPS["int_sign"] = Op("T", 0, "T", "({T})(({a} > 0) - ({a} < 0))")
    OPS["int_into_float"] = Op("T", 0, "D", "({D}){a}")
    OPS["float_into_int"] = Op("T", 0, "D", "({D}){a}")  # truncates; the Tensor layer checks range
    OPS["bool_into_int"] = Op("T", 0, "D", "({D}){a}")
    OPS["bool_into_float"] = Op("T", 0, "D", "({D}){a}")
    OPS["bool_not"] = Op("T", 0, "T", "!{a}")
    OPS["bool_and"] = Op("TT", 0, "T", "{a} && {b}")
    OPS["bool_or"] = Op("TT", 0, "T", "{a} || {b}")
    OPS["bool_xor"] = Op("TT", 0, "T", "{a} != {b}")
    for f in _FLOAT_FN:
        OPS[f"float_{f}"] = Op("T", 0, "T", f"{f}({{a}})")
    OPS.update(
        {
            "float_div": Op("TT", 0, "T", "{a} / {b}"),
            "float_div_scalar": Op("T", 1, "T", "{a} / {s0}"),
            "float_remainder": Op("TT", 0, "T", "{rem}({a}, {b})"),
            "float_remainder_scalar": Op("T", 1, "T", "{rem}({a}, {s0})"),
            "float_powf": Op("TT", 0, "T", "pow({a}, {b})"),
            "float_powf_scalar": Op("T", 1, "T", "pow({a}, {s0})"),
            "float_atan2": Op("TT", 0, "T", "atan2({a}, {b})"),
            "float_hypot": Op("TT", 0, "T", "hypot({a}, {b})"),
            "float_recip": Op("T", 0, "T", "({T})1 / {a}"),
            "float_round": Op("T", 0, "T", "rint({a})"),
            "float_abs": Op("T", 0, "T", "fabs({a})"),
            "float_sign": Op("T", 0, "T", "{a} > ({T})0 ? ({T})1 : ({a} < ({T})0 ? ({T})-1 : {a})"),
            "float_square": Op("T", 0, "T", "{a} * {a}"),
            "float_is_nan": Op("T", 0, "B", "isnan({a}) ? 1 : 0"),
            "float_is_inf": Op("T", 0, "B", "isinf({a}) ? 1 : 0"),
            "relu": Op("T", 0, "T", "{a} <= ({T})0 ? ({T})0 : {a}"),
            "relu_backward": Op("TT", 0, "T", "{a} <= ({T})0 ? ({T})0 : {b}"),
            "sigmoid": Op(
                "T",
                0,
                "T",
                "{a} >= ({T})0 ? ({T})1 / (({T})1 + exp(-{a})) : exp({a}) / (({T})1 + exp({a}))",
            ),
            "gelu": Op(
                "T", 0, "T", "({T})0.5 * {a} * (({T})1 + erf({a} * ({T})0.70710678118654752440))"
            ),
        }
    )


_fill()
