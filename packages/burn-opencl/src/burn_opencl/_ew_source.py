"""The elementwise op table as C expressions, and the one renderer that turns it into kernels.

Each op is `(inputs, scalars, output, expression)`: `inputs` spells the operands' types ("T" the
program's element type, "B" a bool mask), `scalars` how many by-value scalars of type T follow
(`s0`, `s1`), `output` "T" or "B", and the expression reads the operands as `a`, `b`, `c`, the
scalars as `s0`, `s1`, and the linear index as `i`. One program per element type holds every
op of that type (the compiler front end then runs once per type, not once per op), in two forms:
`ew_<op>` reads strided/broadcast operands through the `Lay` struct in a grid-stride loop,
`ewc_<op>` takes contiguous operands of one shape, one element per work-item.
"""

from __future__ import annotations

import numpy as np

from ._layout import LAY_C, index_code
from ._runtime import ctype

_BIN_SCALAR = ("add", "sub", "mul", "div", "remainder")
_CMP = {
    "equal": "==",
    "not_equal": "!=",
    "greater": ">",
    "greater_equal": ">=",
    "lower": "<",
    "lower_equal": "<=",
}


def _common(numeric: bool) -> dict:
    ops = {
        "copy": ("T", 0, "T", "a"),
        "fill": ("", 1, "T", "s0"),
        "mask_where": ("TBT", 0, "T", "b ? c : a"),
        "mask_fill": ("TB", 1, "T", "b ? s0 : a"),
    }
    for name, op in _CMP.items():
        if numeric or name in ("equal", "not_equal"):
            ops[name] = ("TT", 0, "B", f"a {op} b")
            ops[name + "_elem"] = ("T", 1, "B", f"a {op} s0")
    if numeric:
        ops.update(
            {
                "add": ("TT", 0, "T", "a + b"),
                "sub": ("TT", 0, "T", "a - b"),
                "mul": ("TT", 0, "T", "a * b"),
                "clamp": ("T", 2, "T", "a < s0 ? s0 : (a > s1 ? s1 : a)"),
                "clamp_min": ("T", 1, "T", "a < s0 ? s0 : a"),
                "clamp_max": ("T", 1, "T", "a > s0 ? s0 : a"),
                "neg": ("T", 0, "T", "-a"),
                "arange": ("", 2, "T", "s0 + (T)i * s1"),
            }
        )
    return ops


_FLOAT_UNARY = [
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


def _binary(ops: dict, table: dict, scalar_too) -> None:
    """Add `name` (tensor rhs) and, for names in `scalar_too`, `name_scalar` (rhs `s0`)."""
    for name, expr in table.items():
        ops[name] = ("TT", 0, "T", expr.format(b="b"))
        if name in scalar_too:
            ops[name + "_scalar"] = ("T", 1, "T", expr.format(b="s0"))


def _float_ops() -> dict:
    ops = _common(True)
    for f in _FLOAT_UNARY:
        ops[f] = ("T", 0, "T", f"{f}(a)")
    ops.update(
        {
            "recip": ("T", 0, "T", "(T)1 / a"),
            "round": ("T", 0, "T", "rint(a)"),  # half to even
            "abs": ("T", 0, "T", "fabs(a)"),
            "sign": ("T", 0, "T", "a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : a)"),
            "square": ("T", 0, "T", "a * a"),
            "is_nan": ("T", 0, "B", "isnan(a)"),
            "is_inf": ("T", 0, "B", "isinf(a)"),
            "relu": ("T", 0, "T", "a <= (T)0 ? (T)0 : a"),
            "sigmoid": ("T", 0, "T", "_sigmoid(a)"),
            "gelu": ("T", 0, "T", "(T)0.5 * a * ((T)1 + erf(a * (T)0.70710678118654752440))"),
            "relu_backward": ("TT", 0, "T", "a <= (T)0 ? (T)0 : b"),
        }
    )
    table = {
        "add": "a + {b}",
        "sub": "a - {b}",
        "mul": "a * {b}",
        "div": "a / {b}",
        "remainder": "_rem(a, {b})",
        "powf": "pow(a, {b})",
        "atan2": "atan2(a, {b})",
        "hypot": "hypot(a, {b})",
    }
    _binary(ops, table, _BIN_SCALAR + ("powf",))
    return ops


def _int_ops() -> dict:
    ops = _common(True)
    ops.update(
        {
            "abs": ("T", 0, "T", "a < 0 ? (T)(-a) : a"),
            "sign": ("T", 0, "T", "(T)((a > 0) - (a < 0))"),
            "bitwise_not": ("T", 0, "T", "~a"),
        }
    )
    table = {
        "add": "a + {b}",
        "sub": "a - {b}",
        "mul": "a * {b}",
        "div": "_div(a, {b})",
        "remainder": "_rem(a, {b})",
        "powi": "_pow(a, {b})",
        "bitwise_and": "a & {b}",
        "bitwise_or": "a | {b}",
        "bitwise_xor": "a ^ {b}",
        "bitwise_left_shift": "_shl(a, {b})",
        "bitwise_right_shift": "_shr(a, {b})",
    }
    _binary(ops, table, tuple(table))
    return ops


def _bool_ops() -> dict:
    ops = _common(False)
    ops.update(
        {
            "not": ("T", 0, "T", "!a"),
            "and": ("TT", 0, "T", "a && b"),
            "or": ("TT", 0, "T", "a || b"),
            "xor": ("TT", 0, "T", "a != b"),
        }
    )
    return ops


_FLOAT_HELPERS = """
T _rem(T a, T b) {
  T r = fmod(a, b);  /* numpy's remainder: the divisor's sign, a zero takes b's sign */
  if (r != (T)0) { if ((b < (T)0) != (r < (T)0)) r += b; } else { r = copysign((T)0, b); }
  return r;
}
T _sigmoid(T a) {  /* no exp overflows: split on the sign */
  if (a >= (T)0) return (T)1 / ((T)1 + exp(-a));
  T e = exp(a); return e / ((T)1 + e);
}
"""

# Integer division by 0 (and MIN / -1) traps on CPUs: define them as numpy does (0 / wrap).
_INT_HELPERS = """
T _div(T a, T b) { return b == 0 ? (T)0 : ((SIGNED && b == (T)-1) ? (T)(-a) : (T)(a / b)); }
T _rem(T a, T b) {
  if (b == 0 || (SIGNED && b == (T)-1)) return (T)0;
  T r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r;
}
T _shl(T a, T b) { return (b < 0 || b >= BITS) ? (T)0 : (T)(a << b); }
T _shr(T a, T b) { return (b < 0 || b >= BITS) ? (a < 0 ? (T)-1 : (T)0) : (T)(a >> b); }
T _pow(T a, T b) {
  if (b < 0) return a == 1 ? (T)1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0);
  T r = 1; while (b) { if (b & 1) r *= a; b >>= 1; if (b) a *= a; } return r;
}
"""


def ops_for(dt: np.dtype) -> dict:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _bool_ops()
    if dt.kind == "f":
        return _float_ops()
    return _int_ops()


def render_kernel(name: str, spec, types=None) -> str:
    """One grid-stride kernel; `types` maps the spec's type letters to C types."""
    ins, nscalar, out, expr = spec
    ty = types or {"T": "T", "B": "uchar"}
    args = ["const Lay L", f"__global {ty[out]}* o"]
    names = "abc"
    for k, t in enumerate(ins):
        args.append(f"__global const {ty[t]}* g{names[k]}")
    args += [f"const T s{k}" for k in range(nscalar)]
    loads = "".join(f"    {ty[t]} {names[k]} = g{names[k]}[p{k + 1}];\n" for k, t in enumerate(ins))
    return (
        f"__kernel void {name}({', '.join(args)}) {{\n"
        f"  for (int i = get_global_id(0); i < L.n; i += get_global_size(0)) {{\n"
        f"{index_code(1 + len(ins))}{loads}"
        f"    o[p0] = ({ty[out]})({expr});\n"
        f"  }}\n}}\n"
    )


def render_contiguous(name: str, spec) -> str:
    """The same op over contiguous operands of one shape (offsets from `L.off`): one element per
    work-item, no index arithmetic, no loop -- what compilers vectorise (PoCL across items) and
    what streams at full bandwidth on a GPU. Same arguments as `render_kernel`."""
    ins, nscalar, out, expr = spec
    ty = {"T": "T", "B": "uchar"}
    args = ["const Lay L", f"__global {ty[out]}* o"]
    names = "abc"
    for k, t in enumerate(ins):
        args.append(f"__global const {ty[t]}* g{names[k]}")
    args += [f"const T s{k}" for k in range(nscalar)]
    loads = "".join(
        f"  {ty[t]} {names[k]} = g{names[k]}[L.off[{k + 1}] + i];\n" for k, t in enumerate(ins)
    )
    return (
        f"__kernel void {name}({', '.join(args)}) {{\n"
        f"  int i = get_global_id(0);\n"
        f"  if (i >= L.n) return;\n"
        f"{loads}"
        f"  o[L.off[0] + i] = ({ty[out]})({expr});\n"
        f"}}\n"
    )


def render_program(dt: np.dtype) -> str:
    """Every elementwise kernel of element type `dt`."""
    dt = np.dtype(dt)
    head = f"typedef {ctype(dt)} T;\n" + LAY_C
    if dt.kind == "f":
        head += _FLOAT_HELPERS
    elif dt != np.bool_:
        signed = 1 if dt.kind == "i" else 0
        head += f"#define SIGNED {signed}\n#define BITS {dt.itemsize * 8}\n" + _INT_HELPERS
    # kernels are named ew_<op>: a bare `exp` would shadow the builtin it calls
    ops = ops_for(dt).items()
    strided = "".join(render_kernel("ew_" + n, s) for n, s in ops)
    return head + strided + "".join(render_contiguous("ewc_" + n, s) for n, s in ops)


def render_cast(src: np.dtype, dst: np.dtype) -> str:
    """One kernel `cast` converting src -> dst (float -> int truncates; -> bool is `!= 0`)."""
    expr = "a != 0" if np.dtype(dst) == np.bool_ else "a"
    head = f"typedef {ctype(src)} T;\ntypedef {ctype(dst)} D;\n" + LAY_C
    return head + render_kernel("cast", ("T", 0, "D", expr), {"T": "T", "D": "D"})
