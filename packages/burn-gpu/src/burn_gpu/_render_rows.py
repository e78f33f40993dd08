"""Row kernels of several reductions of the same rows: layer norm (forward and backward) as one
kernel.

A `Reduction` whose program holds more than one reduction node (all over the same rows: the row
kernel's geometry) is rendered here; one reduction node stays `_render_row.py`'s. Reductions
are grouped by dependency *level*: a reduction whose operand reads no other reduction is level
0, one whose operand reads a level-k reduction's value is level k + 1. Per row, the work-group
walks the row once per level -- computing what that level's operands need, with the earlier
levels' reduced values (`st{j}`) at hand, accumulating every reduction of the level at once --
then tree-reduces each in its own local/shared array; a last walk computes and writes the other
results. Layer norm's mean (level 0) and variance (level 1) thus take two walks and the
normalisation a third, in one launch instead of two; its backward's four row statistics take
three walks. Kernel arguments and geometry are the single row kernel's (`_render_row.py`).
"""

from __future__ import annotations

from ._render import (
    REDUCE_OPS,
    coordinate_lines,
    frame,
    load_lines,
    op_lines,
    scalar_params,
    store_lines,
)
from ._render_row import (
    _combine,
    _init,
    kernel_source,
    needs,
    row_params,
    row_walk,
    tree_reduce_lines,
)


def levels(prog) -> list:
    """The reduction nodes grouped by level (see the module docstring), level 0 first."""
    reds = [j for j, nd in enumerate(prog.nodes) if nd.op in REDUCE_OPS]
    cuts = set(reds)
    level: dict = {}
    for j in reds:
        (src,) = prog.nodes[j].refs
        deps = [d for d in needs(prog, [src], cuts) if d in cuts] if src >= 0 else []
        level[j] = 1 + max(level[d] for d in deps) if deps else 0
    out: list = [[] for _ in range(1 + max(level.values()))]
    for j in reds:
        out[level[j]].append(j)
    return out


def _walk_body(prog, fr, snames, helpers, keep, direct) -> list:
    """Coordinates, loads, given reduced values and op lines of one walk over a row: `keep` the
    nodes computed (reductions among them read as `st{j}`), `direct` inputs read as operands."""
    reds = [j for j in keep if prog.nodes[j].op in REDUCE_OPS]
    ops = [j for j in keep if prog.nodes[j].op not in REDUCE_OPS]
    ins = sorted({-r - 1 for j in ops for r in prog.nodes[j].refs if r < 0} | set(direct))
    return [
        *coordinate_lines(prog, ins),
        *load_lines(prog, fr, ins),
        *[
            f"    const {fr.compute(prog.nodes[j].out)} v{j} = "
            f"{fr.round(prog.nodes[j].out, f'st{j}')};"
            for j in reds
        ],
        *op_lines(prog, fr, snames, helpers, ops),
    ]


def render_rows(red, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of row kernel `red` (a `Reduction` of several reduction nodes)."""
    prog, L = red.prog, red.local
    fr = frame(dialect)
    name = red.name()
    groups_of = levels(prog)
    reds = {j for lv in groups_of for j in lv}
    helpers: dict[str, str] = {}
    sparams, snames = scalar_params(prog, fr)
    params = row_params(prog, fr, sparams)
    lid, barrier = fr.lid, fr.barrier
    walk = row_walk(L)
    # accumulators and reduced values in compute types: float32 for a half type, rounded once
    T = {j: fr.compute(prog.nodes[j].out) for j in reds}
    kind = {j: REDUCE_OPS[prog.nodes[j].op] for j in reds}
    lines = [f"  {fr.local}{T[j]} sm{j}[{L}];" for j in sorted(reds)]
    lines += [
        f"  const int lid = {lid};",
        f"  for (int r = {fr.group}; r < rows; r += {fr.groups}) {{",
        "    const int base = (r / inner) * red * inner + r % inner;",
    ]
    for lv in groups_of:
        srcs = [prog.nodes[j].refs[0] for j in lv]
        keep = needs(prog, [s for s in srcs if s >= 0], reds)
        direct = [-s - 1 for s in srcs if s < 0]
        lines += [f"    {T[j]} acc{j} = {_init(kind[j], T[j], fr)};" for j in lv]
        lines += [*walk, *_walk_body(prog, fr, snames, helpers, keep, direct)]
        for j, s in zip(lv, srcs):
            value = f"v{s}" if s >= 0 else f"x{-s - 1}"
            lines.append(f"    {_combine(kind[j], f'acc{j}', f'(({T[j]}){value})')}")
        lines.append("    }")
        lines += [f"    sm{j}[lid] = acc{j};" for j in lv]
        lines.append(f"    {barrier}")
        lines += tree_reduce_lines(fr, L, [(kind[j], T[j], f"sm{j}") for j in lv])
        for j in lv:
            mean = f" / ({T[j]})div" if kind[j] == "mean" else ""
            lines.append(f"    const {T[j]} st{j} = sm{j}[0]{mean};")
        lines.append(f"    {barrier}")
        for m, (j, _, _) in enumerate(prog.outputs):
            if j in lv:
                store = fr.store(prog.nodes[j].out, f"o{m}", "r", f"st{j}")
                lines.append(f"    if (lid == 0) {store};")
    rest = [m for m, (j, _, _) in enumerate(prog.outputs) if j not in reds]
    if rest:
        keep = needs(prog, [prog.outputs[m][0] for m in rest], reds)
        lines += [
            *walk,
            *_walk_body(prog, fr, snames, helpers, keep, []),
            *store_lines(prog, rest, fr),
            "    }",
        ]
    lines.append("  }")
    return kernel_source(prog, fr, helpers, name, L, params, lines), name
