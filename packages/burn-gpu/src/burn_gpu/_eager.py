"""The eager elementwise kernels: every op of the expression table (`_expr.KERNELS`) as a kernel
of one element type, in either dialect.

One program per element type holds every op of that type's kind (the compiler front end then
runs once per type, not once per op), in two forms over the same arguments
`(const Lay L, out, operands..., scalars...)`:
- `ew_<op>` reads strided / broadcast operands through the `Lay` struct (`_layout.py`) in a
  grid-stride loop;
- `ewc_<op>` takes contiguous operands of one shape (offsets from `L.off`): one element per
  item, no index arithmetic, no loop -- what compilers vectorise (PoCL across items) and what
  streams at full bandwidth on a GPU.
`cast_program(src, dst)` holds the one kernel `cast` (float -> int truncates, -> bool is
`!= 0`). Half types (float16, bfloat16) are buffers of `S` computed as `T` = float
(`_dialect.py`): every op of the float kind loads them into float registers and rounds its
result once when it stores; the scalars of a half program are float32. Kernels are named `ew_<op>` because a bare `exp` would shadow the builtin it calls.
"""

from __future__ import annotations

from ._dialect import Frame, frame
from ._expr import CAST_EXPR, CAST_TO_BOOL_EXPR, KERNELS, Op, kind_of
from ._layout import LAY_C, index_code
from ._render import helper_names

_NAMES = "abc"


def _types(fr: Frame, op: Op, out: str) -> tuple[dict, dict]:
    """(letter -> buffer element type, letter -> register type) of the kernel's operands: "T"
    (the program's element type: storage `S`, computed as `T`), "B" (bool), "D" (a cast's
    target: storage `DS`, computed as `D`)."""
    b = fr.ct["bool"]
    return {"T": "S", "B": b, "D": "DS"}, {"T": "T", "B": b, "D": "D"}


def _signature(fr: Frame, name: str, op: Op, out: str) -> str:
    buf, _ = _types(fr, op, out)
    args = ["const Lay L", f"{fr.gptr}{buf[out]}*{fr.restrict} o"]
    args += [f"{fr.gptr}const {buf[t]}*{fr.restrict} g{_NAMES[k]}" for k, t in enumerate(op.inputs)]
    args += [f"const T s{k}" for k in range(op.scalars)]
    return fr.head(name) + ", ".join(args) + ") {\n"


def _access(fr: Frame, dts: dict, letter: str, ptr: str, idx: str, value: str = "") -> str:
    """Load (no `value`) or store of an operand of kind `letter` ("T", "B", "D") whose dtype
    names are `dts` (a bool is its byte as is)."""
    dt = dts.get(letter, "bool")
    if value:
        return fr.store(dt, ptr, idx, value)
    return fr.load(dt, ptr, idx)


def _strided(fr: Frame, name: str, op: Op, expr: str, out: str, dts: dict) -> str:
    _, reg = _types(fr, op, out)
    loads = "".join(
        f"    {reg[t]} {_NAMES[k]} = {_access(fr, dts, t, 'g' + _NAMES[k], f'p{k + 1}')};\n"
        for k, t in enumerate(op.inputs)
    )
    store = _access(fr, dts, out, "o", "p0", f"({reg[out]})({expr})")
    return (
        _signature(fr, name, op, out)
        + f"  for (int i = {fr.gid}; i < L.n; i += {fr.gsize}) {{\n"
        + f"{index_code(1 + len(op.inputs))}{loads}"
        + f"    {store};\n  }}\n}}\n"
    )


def _contiguous(fr: Frame, name: str, op: Op, expr: str, out: str, dts: dict) -> str:
    _, reg = _types(fr, op, out)
    loads = "".join(
        f"  {reg[t]} {_NAMES[k]} = "
        f"{_access(fr, dts, t, 'g' + _NAMES[k], f'L.off[{k + 1}] + i')};\n"
        for k, t in enumerate(op.inputs)
    )
    store = _access(fr, dts, out, "o", "L.off[0] + i", f"({reg[out]})({expr})")
    return (
        _signature(fr, name, op, out)
        + f"  int i = {fr.gid};\n  if (i >= L.n) return;\n"
        + loads
        + f"  {store};\n}}\n"
    )


def _expr(op: Op, fr: Frame, dtype: str, helpers: dict, D: str = "D") -> str:
    calls = helper_names(fr, dtype, op.expr, helpers)
    return op.expr.format(a="a", b="b", c="c", s0="s0", s1="s1", i="i", T="T", D=D, **calls)


def eager_ops(dtype: str) -> dict:
    """Kernel name -> Op of the eager program of `dtype` (every op of its kind but casts)."""
    return {n: op for n, op in KERNELS[kind_of(dtype)].items() if op.out != "D"}


def eager_program(dtype: str, dialect: str) -> str:
    """Every eager elementwise kernel of element type `dtype` (a dtype name) in `dialect`."""
    fr = frame(dialect)
    helpers: dict = {}
    kernels = []
    dts = {"T": dtype}
    for name, op in eager_ops(dtype).items():
        expr = _expr(op, fr, dtype, helpers)
        kernels.append(_strided(fr, "ew_" + name, op, expr, op.out, dts))
        kernels.append(_contiguous(fr, "ewc_" + name, op, expr, op.out, dts))
    head = fr.pragma([dtype]) + _typedefs(fr, "T", "S", dtype) + LAY_C
    return head + "".join(helpers.values()) + "".join(kernels)


def _typedefs(fr: Frame, reg: str, buf: str, dtype: str) -> str:
    """`typedef <compute type> reg;` and, under name `buf`, its buffer element type (the same
    but for the half types: float registers over half storage)."""
    return f"typedef {fr.compute(dtype)} {reg};\ntypedef {fr.storage(dtype)} {buf};\n"


def cast_program(src: str, dst: str, dialect: str) -> str:
    """One kernel `cast` converting dtype `src` to `dst` over strided operands."""
    fr = frame(dialect)
    expr = (CAST_TO_BOOL_EXPR if dst == "bool" else CAST_EXPR).format(a="a", D="D")
    head = fr.pragma([src, dst]) + _typedefs(fr, "T", "S", src) + _typedefs(fr, "D", "DS", dst)
    return head + LAY_C + _strided(fr, "cast", Op("T", 0, "D", expr), expr, "D", {"T": src, "D": dst})
