"""Row kernels: one work-group per row of a reduction, which first reduces its row and then runs
the plan's elementwise epilogue over the same row with the reduced value at hand.

A `Reduction` is a `Program` holding one reduction node (`reduce_sum`, `reduce_mean`,
`reduce_max`, `reduce_min` over one operand; several: `_render_rows.py`), plus the work-group
size. The kernel, per row:
1. *phase 1*: every item of the group walks the row's elements (stride: the group size),
   computing only the ops the reduced operand needs (the prologue), and accumulates;
2. a tree reduction in local/shared memory; every item reads the result (`stat`);
3. *phase 2* (when the plan has other results): the group walks the row again, computing the
   ops those results need, with the reduction node's value being `stat` -- so softmax's
   `e / e.sum_dim(1)` recomputes `e` there instead of storing it, and writes only the quotient.
The reduction node's own value (if it is a result) is written once per row, at `o[r]`.

Kernel arguments: `int n, int rows, int red, int inner, int div`, then the program's layout
ints, buffers and scalars (`_render.py`). Row `r` covers the `red` elements
`base + k * inner` (`base = (r / inner) * red * inner + r % inner`) that are `< n`; a mean is
the sum divided by `div`. With `inner == 1` and `red` a chunk size this is also the partial-sums
stage of a whole-tensor reduction.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from ._render import (
    REDUCE_OPS,
    Program,
    buffer_params,
    coordinate_lines,
    frame,
    layout_params,
    load_lines,
    op_lines,
    preamble,
    scalar_params,
    store_lines,
)


class Reduction(NamedTuple):
    """A row kernel (the plan-cache key of one): `prog` with one reduction node; `local` the
    work-group size (a power of two, a compile-time constant)."""

    prog: Program
    local: int

    def name(self) -> str:
        return "fused_row_" + hashlib.sha1(repr(self).encode()).hexdigest()[:16]

    def reduce_node(self) -> int:
        (j,) = [j for j, nd in enumerate(self.prog.nodes) if nd.op in REDUCE_OPS]
        return j


def needs(prog: Program, roots, cuts) -> list:
    """Sorted node indices `roots` need, not looking through the nodes in `cuts` (reductions:
    their values are given)."""
    need, stack = set(), list(roots)
    while stack:
        j = stack.pop()
        if j in need:
            continue
        need.add(j)
        if j not in cuts:
            stack += [r for r in prog.nodes[j].refs if r >= 0]
    return sorted(need)


def _inputs_of(prog: Program, keep) -> list:
    return sorted({-r - 1 for j in keep for r in prog.nodes[j].refs if r < 0})


def _combine(kind: str, acc: str, v: str) -> str:
    """`acc` updated with `v`: max/min propagate NaN (as numpy and the inner backends)."""
    if kind == "max":
        return f"{acc} = ({acc} != {acc} || {acc} > {v}) ? {acc} : {v};"
    if kind == "min":
        return f"{acc} = ({acc} != {acc} || {acc} < {v}) ? {acc} : {v};"
    return f"{acc} += {v};"


def _init(kind: str, T: str, fr) -> str:
    if kind in ("sum", "mean"):
        return f"({T})0"
    return f"-{fr.inf(T)}" if kind == "max" else fr.inf(T)


def row_params(prog: Program, fr, sparams: list) -> list:
    """A row kernel's parameters: the geometry ints (module docstring), then the program's
    layout ints, buffers and scalars."""
    return [
        "const int n",
        "const int rows",
        "const int red",
        "const int inner",
        "const int div",
        *layout_params(prog),
        *buffer_params(prog, fr),
        *sparams,
    ]


def row_walk(L: int) -> list:
    """The head of one walk of the work-group over its row's elements (`i`), stride `L`."""
    return [
        f"    for (int k = lid; k < red; k += {L}) {{",
        "    const int i = base + k * inner;",
        "    if (i >= n) break;",
    ]


def tree_reduce_lines(fr, L: int, arrays) -> list:
    """One halving loop combining each local/shared array of `L` accumulators into its `[0]`:
    `arrays` holds `(kind, compute type, array name)`, all combined in the same steps."""
    step = [
        f"      if (lid < s) {{ {T} a = {sm}[lid]; const {T} b = {sm}[lid + s]; "
        f"{_combine(kind, 'a', 'b')} {sm}[lid] = a; }}"
        for kind, T, sm in arrays
    ]
    return [f"    for (int s = {L // 2}; s > 0; s >>= 1) {{", *step, f"      {fr.barrier}", "    }"]


def kernel_source(prog: Program, fr, helpers: dict, name: str, L: int, params, lines) -> str:
    """The whole kernel: preamble (helpers), head, parameters and body `lines`; OpenCL fixes
    the work-group size `L` at compile time."""
    attrs = "" if fr.cuda else f"__attribute__((reqd_work_group_size({L}, 1, 1))) "
    return (
        preamble(prog, fr, helpers)
        + fr.head(name, attrs)
        + ", ".join(params)
        + ") {\n"
        + "\n".join(lines)
        + "\n}\n"
    )


def render_reduction(red: Reduction, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of row kernel `red` in `dialect`."""
    if sum(nd.op in REDUCE_OPS for nd in red.prog.nodes) > 1:  # several: `_render_rows.py`
        from ._render_rows import render_rows

        return render_rows(red, dialect)
    prog, L = red.prog, red.local
    fr = frame(dialect)
    name = red.name()
    j_red = red.reduce_node()
    node = prog.nodes[j_red]
    kind = REDUCE_OPS[node.op]
    T = fr.compute(node.out)  # the accumulator: float32 for a half type, rounded once
    (src_ref,) = node.refs
    helpers: dict[str, str] = {}
    sparams, snames = scalar_params(prog, fr)
    params = row_params(prog, fr, sparams)
    # phase 1: the reduced operand's prologue
    keep1 = needs(prog, [src_ref], ()) if src_ref >= 0 else []
    ins1 = sorted(set(_inputs_of(prog, keep1)) | ({-src_ref - 1} if src_ref < 0 else set()))
    value = f"v{src_ref}" if src_ref >= 0 else f"x{-src_ref - 1}"
    # phase 2: what the other results need, the reduction node given
    rest = [m for m, (j, _, _) in enumerate(prog.outputs) if j != j_red]
    keep2 = needs(prog, [prog.outputs[m][0] for m in rest], (j_red,))
    ins2 = _inputs_of(prog, [j for j in keep2 if j != j_red])
    own = [m for m, (j, _, _) in enumerate(prog.outputs) if j == j_red]

    lid, group, groups, barrier = fr.lid, fr.group, fr.groups, fr.barrier
    shared = f"  {fr.local}{T} sm[{L}];"
    walk = row_walk(L)
    lines = [
        shared,
        f"  const int lid = {lid};",
        f"  for (int r = {group}; r < rows; r += {groups}) {{",
        "    const int base = (r / inner) * red * inner + r % inner;",
        f"    {T} acc = {_init(kind, T, fr)};",
        *walk,
        *coordinate_lines(prog, ins1),
        *load_lines(prog, fr, ins1),
        *op_lines(prog, fr, snames, helpers, keep1),
        f"    {_combine(kind, 'acc', f'(({T}){value})')}",
        "    }",
        "    sm[lid] = acc;",
        f"    {barrier}",
        *tree_reduce_lines(fr, L, [(kind, T, "sm")]),
        f"    const {T} stat = sm[0]" + (f" / ({T})div;" if kind == "mean" else ";"),
        f"    {barrier}",
        *[f"    if (lid == 0) {fr.store(node.out, f'o{m}', 'r', 'stat')};" for m in own],
    ]
    if rest:
        lines += [
            *walk,
            *coordinate_lines(prog, ins2),
            *load_lines(prog, fr, ins2),
            *op_lines(prog, fr, snames, helpers, keep2, stat="stat"),
            *store_lines(prog, rest, fr),
            "    }",
        ]
    lines.append("  }")
    return kernel_source(prog, fr, helpers, name, L, params, lines), name
