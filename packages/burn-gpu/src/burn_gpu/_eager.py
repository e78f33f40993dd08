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
`!= 0`). Kernels are named `ew_<op>` because a bare `exp` would shadow the builtin it calls.
"""

from __future__ import annotations

from ._dialect import Frame, frame
from ._expr import CAST_EXPR, CAST_TO_BOOL_EXPR, KERNELS, Op, kind_of
from ._layout import LAY_C, index_code
from ._render import helper_names

_NAMES = "abc"


def _signature(fr: Frame, name: str, op: Op, T: str, out: str) -> str:
    ty = {"T": "T", "B": fr.ct["bool"], "D": "D"}
    args = ["const Lay L", f"{fr.gptr}{ty[out]}*{fr.restrict} o"]
    args += [f"{fr.gptr}const {ty[t]}*{fr.restrict} g{_NAMES[k]}" for k, t in enumerate(op.inputs)]
    args += [f"const T s{k}" for k in range(op.scalars)]
    return fr.head(name) + ", ".join(args) + ") {\n"


def _strided(fr: Frame, name: str, op: Op, expr: str, out: str) -> str:
    ty = {"T": "T", "B": fr.ct["bool"], "D": "D"}
    loads = "".join(
        f"    {ty[t]} {_NAMES[k]} = g{_NAMES[k]}[p{k + 1}];\n" for k, t in enumerate(op.inputs)
    )
    return (
        _signature(fr, name, op, "T", out)
        + f"  for (int i = {fr.gid}; i < L.n; i += {fr.gsize}) {{\n"
        + f"{index_code(1 + len(op.inputs))}{loads}"
        + f"    o[p0] = ({ty[out]})({expr});\n  }}\n}}\n"
    )


def _contiguous(fr: Frame, name: str, op: Op, expr: str, out: str) -> str:
    ty = {"T": "T", "B": fr.ct["bool"], "D": "D"}
    loads = "".join(
        f"  {ty[t]} {_NAMES[k]} = g{_NAMES[k]}[L.off[{k + 1}] + i];\n"
        for k, t in enumerate(op.inputs)
    )
    return (
        _signature(fr, name, op, "T", out)
        + f"  int i = {fr.gid};\n  if (i >= L.n) return;\n"
        + loads
        + f"  o[L.off[0] + i] = ({ty[out]})({expr});\n}}\n"
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
    for name, op in eager_ops(dtype).items():
        expr = _expr(op, fr, dtype, helpers)
        kernels.append(_strided(fr, "ew_" + name, op, expr, op.out))
        kernels.append(_contiguous(fr, "ewc_" + name, op, expr, op.out))
    head = fr.pragma([dtype]) + f"typedef {fr.ct[dtype]} T;\n" + LAY_C
    return head + "".join(helpers.values()) + "".join(kernels)


def cast_program(src: str, dst: str, dialect: str) -> str:
    """One kernel `cast` converting dtype `src` to `dst` over strided operands."""
    fr = frame(dialect)
    expr = (CAST_TO_BOOL_EXPR if dst == "bool" else CAST_EXPR).format(a="a", D="D")
    head = fr.pragma([src, dst]) + f"typedef {fr.ct[src]} T;\ntypedef {fr.ct[dst]} D;\n" + LAY_C
    return head + _strided(fr, "cast", Op("T", 0, "D", expr), expr, "D")
