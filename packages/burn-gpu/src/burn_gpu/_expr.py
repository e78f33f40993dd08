"""The one expression table: every elementwise op of the contract as a C expression, shared by
Fusion's fused kernels and the eager kernels of both runtimes (OpenCL C and CUDA C).

An entry is `Op(inputs, scalars, out, expr, fuse)`:
- `inputs`: one letter per tensor operand: "T" (the op's element type: the first operand's
  dtype; a differing operand is cast to it, as the backends do) or "B" (a bool mask);
- `scalars`: how many by-value scalars follow the tensors (they have the first operand's dtype);
- `out`: "T" (the first operand's dtype), "B" (bool) or "D" (the op's `dtype` argument: casts);
- `expr`: the C expression over `{a} {b} {c}` (operands), `{s0} {s1}` (scalars), `{i}` (the
  element's linear index), `{T}` / `{D}` (the C types of T and D) and helper calls `{rem}`,
  `{div}`, `{pow}`, `{shl}`, `{shr}` (`_helpers.py`, one function per element type). Operands
  are always plain variables, so an expression may name one several times;
- `fuse`: whether Fusion records the op lazily. Integer division, remainder, powers and shifts
  are not fused: their value checks run in the backends' eager ops first.

Semantics (pinned by the conformance suite): float remainder takes the divisor's sign, `round`
is half-to-even (`rint`), `sigmoid` splits on the sign so no `exp` overflows, integer division
and remainder by 0 give 0 (numpy's), shifts past the width give 0 (or -1 for negative values
shifted right), `int_powi` with a negative exponent gives 0 except for bases 1 and -1.

`OPS` holds the contract's op names; `KERNELS` the eager kernels of each element kind (`float`,
`int`, `bool`), named by the op's name without the kind prefix (`add`, `equal_elem`) plus the
kernels no contract op names alone (`copy`, `fill`, `arange`).
"""

from __future__ import annotations

from typing import NamedTuple


class Op(NamedTuple):
    inputs: str
    scalars: int
    out: str
    expr: str
    fuse: bool = True


OPS: dict[str, Op] = {}
#: kind -> {kernel name -> Op}: the eager elementwise kernels of one element kind
KERNELS: dict[str, dict[str, Op]] = {"float": {}, "int": {}, "bool": {}}
#: the contract's op name of eager kernel (kind, name) when it is not f"{kind}_{name}"
_FULL_NAMES = {
    ("float", "relu"): "relu",
    ("float", "relu_backward"): "relu_backward",
    ("float", "sigmoid"): "sigmoid",
    ("float", "gelu"): "gelu",
    ("float", "gelu_backward"): "gelu_backward",
}
CMP = {
    "equal": "==",
    "not_equal": "!=",
    "greater": ">",
    "greater_equal": ">=",
    "lower": "<",
    "lower_equal": "<=",
}
FLOAT_FN = [
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
#: cast of `{a}` to D: to bool is `!= 0` (a 0.5 is true), anything else a C conversion
CAST_EXPR = "({D}){a}"
CAST_TO_BOOL_EXPR = "{a} != 0"


def _put(kind: str, name: str, op: Op, contract: bool = True) -> None:
    KERNELS[kind][name] = op
    if contract:
        OPS[_FULL_NAMES.get((kind, name), f"{kind}_{name}")] = op


def _binary(kind: str, table: dict, scalar_too, fuse: bool = True) -> None:
    """`name` (tensor rhs `{b}`) and, for names in `scalar_too`, `name_scalar` (rhs `{s0}`)."""
    for name, expr in table.items():
        _put(kind, name, Op("TT", 0, "T", expr, fuse))
        if name in scalar_too:
            _put(kind, name + "_scalar", Op("T", 1, "T", expr.replace("{b}", "{s0}"), fuse))


def _common(kind: str) -> None:
    numeric = kind != "bool"
    for name, op in CMP.items():
        if numeric or name in ("equal", "not_equal"):
            _put(kind, name, Op("TT", 0, "B", f"{{a}} {op} {{b}}"))
            _put(kind, name + "_elem", Op("T", 1, "B", f"{{a}} {op} {{s0}}"))
    _put(kind, "mask_where", Op("TBT", 0, "T", "{b} ? {c} : {a}"))
    _put(kind, "mask_fill", Op("TB", 1, "T", "{b} ? {s0} : {a}"))
    _put(kind, "copy", Op("T", 0, "T", "{a}"), contract=False)
    _put(kind, "fill", Op("", 1, "T", "{s0}"), contract=False)
    if not numeric:
        return
    arith = {"add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}"}
    _binary(kind, arith, tuple(arith))
    _put(kind, "neg", Op("T", 0, "T", "-{a}"))
    _put(kind, "clamp", Op("T", 2, "T", "{a} < {s0} ? {s0} : ({a} > {s1} ? {s1} : {a})"))
    _put(kind, "clamp_min", Op("T", 1, "T", "{a} < {s0} ? {s0} : {a}"))
    _put(kind, "clamp_max", Op("T", 1, "T", "{a} > {s0} ? {s0} : {a}"))
    _put(kind, "cast", Op("T", 0, "D", CAST_EXPR))
    _put(kind, "arange", Op("", 2, "T", "{s0} + ({T}){i} * {s1}"), contract=False)


def _casts_and_logic() -> None:
    _put("int", "abs", Op("T", 0, "T", "{a} < 0 ? ({T})(-{a}) : {a}"))
    # a kernel, not a contract op (no int_square is declared): Cuda's hot path squares ints too
    _put("int", "square", Op("T", 0, "T", "{a} * {a}"), contract=False)
    _put("int", "sign", Op("T", 0, "T", "({T})(({a} > 0) - ({a} < 0))"))
    _put("int", "into_float", Op("T", 0, "D", CAST_EXPR))
    _put("float", "into_int", Op("T", 0, "D", CAST_EXPR))  # truncates; Tensor checks range
    _put("bool", "into_int", Op("T", 0, "D", CAST_EXPR))
    _put("bool", "into_float", Op("T", 0, "D", CAST_EXPR))
    _put("bool", "not", Op("T", 0, "T", "!{a}"))
    _put("bool", "and", Op("TT", 0, "T", "{a} && {b}"))
    _put("bool", "or", Op("TT", 0, "T", "{a} || {b}"))
    _put("bool", "xor", Op("TT", 0, "T", "{a} != {b}"))


def _float() -> None:
    for f in FLOAT_FN:
        _put("float", f, Op("T", 0, "T", f"{f}({{a}})"))
    _binary(
        "float",
        {
            "div": "{a} / {b}",
            "remainder": "{rem}({a}, {b})",
            "powf": "pow({a}, {b})",
            "atan2": "atan2({a}, {b})",
            "hypot": "hypot({a}, {b})",
        },
        ("div", "remainder", "powf"),
    )
    for name, op in {
        "recip": Op("T", 0, "T", "({T})1 / {a}"),
        "round": Op("T", 0, "T", "rint({a})"),
        "abs": Op("T", 0, "T", "fabs({a})"),
        "sign": Op("T", 0, "T", "{a} > ({T})0 ? ({T})1 : ({a} < ({T})0 ? ({T})-1 : {a})"),
        "square": Op("T", 0, "T", "{a} * {a}"),
        "is_nan": Op("T", 0, "B", "isnan({a}) ? 1 : 0"),
        "is_inf": Op("T", 0, "B", "isinf({a}) ? 1 : 0"),
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
        # gelu_backward(x, grad): grad * (cdf(x) + x * pdf(x)), the exact erf form
        # (burn-tensor's decomposition, about ten launches); 0.3989... = 1 / sqrt(2 pi)
        "gelu_backward": Op(
            "TT",
            0,
            "T",
            "{b} * (({T})0.5 * (({T})1 + erf({a} * ({T})0.70710678118654752440))"
            " + {a} * ({T})0.39894228040143267794 * exp(({T})-0.5 * {a} * {a}))",
        ),
    }.items():
        _put("float", name, op)


def _int() -> None:
    """The integer ops Fusion leaves to the backends (value checks first; see the docstring)."""
    _put("int", "bitwise_not", Op("T", 0, "T", "~{a}", False))
    table = {
        "div": "{div}({a}, {b})",
        "remainder": "{rem}({a}, {b})",
        "powi": "{pow}({a}, {b})",
        "bitwise_and": "{a} & {b}",
        "bitwise_or": "{a} | {b}",
        "bitwise_xor": "{a} ^ {b}",
        "bitwise_left_shift": "{shl}({a}, {b})",
        "bitwise_right_shift": "{shr}({a}, {b})",
    }
    _binary("int", table, tuple(table), fuse=False)
    for name in list(KERNELS["int"]):  # the bitwise ops' contract names have no kind prefix
        if name.startswith("bitwise_"):
            OPS[name] = OPS.pop(f"int_{name}")


for _kind in KERNELS:
    _common(_kind)
_casts_and_logic()
_float()
_int()
#: the ops Fusion records lazily
FUSED: dict[str, Op] = {name: op for name, op in OPS.items() if op.fuse}


def kind_of(dtype: str) -> str:
    """The element kind ("float", "int", "bool") of dtype name `dtype`."""
    if dtype == "bool":
        return "bool"
    return "float" if dtype.startswith(("float", "bfloat")) else "int"
