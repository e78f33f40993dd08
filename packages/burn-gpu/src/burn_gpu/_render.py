"""One renderer, two dialects: a fused elementwise `Program` as OpenCL C or CUDA C source.

A `Program` is the dialect-free description of one fused kernel, and it is also the plan-cache
key: it names ops, dtypes, which operand feeds which op, how each input is read and whether the
kernel moves 16-byte vectors, but no tensor id, size or scalar value. Those arrive as kernel
arguments, so one compiled kernel serves every size and every scalar value of the same graph.

Kernel arguments, in this order (`burn_gpu.Runtime.launch` passes them so):
`int n`; when `rank > 0`: the plan's `rank` dims, then for each strided input its `rank`
strides and its offset (elements; stride 0 along broadcast dims), then for each broadcast result
its `rank` strides (0 along its broadcast dims); the results not written in place; every input
(an input a result is written into is not const); the scalars of every node, in node order.
Scalar kernels: one item per element, grid-stride `for (i = first; i < n; i += step)`. Vector
kernels (`vec` 4 or 8, only with `rank == 0`): item `i` moves elements `vec*i .. vec*i+vec-1` of
every operand with 16-byte (or narrower, for 1- and 2-byte types) accesses, for `i < n / vec`,
then the `n % vec` tail elements one per item (`_render_vec.py`).
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from . import _helpers
from ._dialect import CTYPES, HALF, Frame, frame
from ._expr import OPS

#: dtypes a fused kernel can hold (the half types are stored as such and computed in float32
#: registers; every half-typed node's value is rounded to its type, as the unfused op stores it)
FUSABLE_DTYPES = frozenset(CTYPES["cuda"]) | frozenset(HALF)
#: the reduction nodes of a row kernel (`_render_row.py`): op name -> how rows are combined
REDUCE_OPS = {"reduce_sum": "sum", "reduce_mean": "mean", "reduce_max": "max", "reduce_min": "min"}


class Node(NamedTuple):
    """One op of a program: `refs` are operands (`k >= 0`: node k; `k < 0`: input `-k - 1`)."""

    op: str
    refs: tuple
    dtype: str  # the op's element type T (its first operand's dtype)
    out: str  # the result dtype


class Program(NamedTuple):
    inputs: tuple  # (dtype name, strided: bool) per input
    rank: int  # the plan's rank when an input is strided or a result broadcast, else 0
    nodes: tuple  # Node per op, in recording order (dead ones already removed)
    #: per materialised result: (node index, input index written in place or -1, the dims along
    #: which the result has size 1 while the plan does not -- () for a full-size result)
    outputs: tuple
    #: elements per item moved as vectors (4 or 8), or 0: one scalar element per item
    vec: int = 0

    def name(self) -> str:
        return "fused_" + hashlib.sha1(repr(self).encode()).hexdigest()[:16]


def value_dtype(prog: Program, ref: int) -> str:
    """The dtype of operand `ref` (a node or an input)."""
    return prog.nodes[ref].out if ref >= 0 else prog.inputs[-ref - 1][0]


def scalar_params(prog: Program, fr: Frame) -> tuple[list, dict]:
    """(parameters, node index -> its scalars' names): every node's scalars, in node order."""
    params, names, count = [], {}, 0
    for j, node in enumerate(prog.nodes):
        if node.op in REDUCE_OPS:
            continue
        k = OPS[node.op].scalars
        names[j] = [f"s{count + s}" for s in range(k)]
        params += [f"const {fr.compute(node.dtype)} s{count + s}" for s in range(k)]
        count += k
    return params, names


def buffer_params(prog: Program, fr: Frame) -> list:
    """The results not written in place, then every input (const unless written in place)."""
    inplace = {k for _, k, _ in prog.outputs if k >= 0}
    params = []
    for m, (j, k, _) in enumerate(prog.outputs):
        if k < 0:
            params.append(f"{fr.gptr}{fr.storage(prog.nodes[j].out)}*{fr.restrict} o{m}")
    for k, (dt, _) in enumerate(prog.inputs):
        const = "" if k in inplace else "const "
        params.append(f"{fr.gptr}{const}{fr.storage(dt)}*{fr.restrict} in{k}")
    return params


def layout_params(prog: Program) -> list:
    """Dims, strided inputs' strides and offsets, broadcast results' strides (rank > 0)."""
    if not prog.rank:
        return []
    params = [f"const int d{d}" for d in range(prog.rank)]
    for k, (_, s) in enumerate(prog.inputs):
        if s:
            params += [f"const int st{k}_{d}" for d in range(prog.rank)]
            params.append(f"const int off{k}")
    for m, (_, _, b) in enumerate(prog.outputs):
        if b:
            params += [f"const int ost{m}_{d}" for d in range(prog.rank)]
    return params


def coordinate_lines(prog: Program, inputs) -> list:
    """The item's coordinates from flat index `i`, then strided `inputs`' element offsets."""
    if not prog.rank:
        return []
    lines = ["    int q = i;"]
    for d in range(prog.rank - 1, 0, -1):
        lines.append(f"    const int c{d} = q % d{d}; q /= d{d};")
    lines.append("    const int c0 = q;")
    for k in inputs:
        if prog.inputs[k][1]:
            terms = " + ".join(f"c{d} * st{k}_{d}" for d in range(prog.rank))
            lines.append(f"    const int p{k} = off{k} + {terms};")
    return lines


def load_lines(prog: Program, fr: Frame, inputs) -> list:
    """Scalar loads of `inputs` at item `i` (strided ones at their offset `p{k}`)."""
    return [
        f"    {fr.compute(dt)} x{k} = {fr.load(dt, f'in{k}', f'p{k}' if s else 'i')};"
        for k, (dt, s) in ((k, prog.inputs[k]) for k in inputs)
    ]


def op_lines(prog, fr, snames, helpers, keep, lane="", stat=None) -> list:
    """One line per kept node: `v{j}{lane} = <its C expression>`; operands are `v{ref}{lane}` or
    `x{k}{lane}`. A reduction node's value is `stat` (the row kernel's reduced value). Values
    are in compute types (`Frame.compute`); a half-typed value is rounded to its type (so a
    fused chain gives the unfused ops' bits), an operand of another dtype too."""
    lines = []
    for j in keep:
        node = prog.nodes[j]
        O = fr.compute(node.out)
        if node.op in REDUCE_OPS:
            lines.append(f"    const {O} v{j}{lane} = {fr.round(node.out, stat)};")
            continue
        spec = OPS[node.op]
        T = fr.compute(node.dtype)
        operands = {}
        for letter, kind, ref in zip("abc", spec.inputs, node.refs):
            var = f"v{ref}{lane}" if ref >= 0 else f"x{-ref - 1}{lane}"
            if kind == "T" and value_dtype(prog, ref) != node.dtype:
                var = f"(({T}){var})"
                if node.dtype in HALF:
                    var = f"({fr.round(node.dtype, var)})"
            operands[letter] = var
        for s, name in enumerate(snames.get(j, ())):
            operands[f"s{s}"] = name
        calls = helper_names(fr, node.dtype, spec.expr, helpers)
        expr = spec.expr.format(T=T, D=O, i="i", **operands, **calls)
        lines.append(f"    const {O} v{j}{lane} = {fr.round(node.out, f'({O})({expr})')};")
    return lines


def store_lines(prog: Program, outputs, fr: Frame) -> list:
    """Scalar stores at item `i` of the outputs numbered `outputs`; a broadcast result is
    written once, by the items at index 0 of its broadcast dims."""
    lines = []
    for m in outputs:
        j, k, b = prog.outputs[m]
        dt = prog.nodes[j].out
        if b:
            cond = " && ".join(f"c{d} == 0" for d in b)
            idx = " + ".join(f"c{d} * ost{m}_{d}" for d in range(prog.rank))
            lines.append(f"    if ({cond}) {fr.store(dt, f'o{m}', idx, f'v{j}')};")
        else:
            lines.append(f"    {fr.store(dt, f'in{k}' if k >= 0 else f'o{m}', 'i', f'v{j}')};")
    return lines


def helper_names(fr: Frame, dtype: str, expr: str, helpers: dict) -> dict:
    """Helper placeholder -> function name for the helpers `expr` calls (their sources are
    added to `helpers`, once per name)."""
    names = {}
    if dtype in HALF:  # computed in float registers: float32's helpers
        dtype = "float32"
    for which in _helpers.used(expr):
        name, src = _helpers.helper(which, dtype, fr.ct[dtype], fr.cuda)
        helpers[name] = src
        names[which] = name
    return names


def preamble(prog: Program, fr: Frame, helpers: dict) -> str:
    return fr.pragma(dtypes(prog)) + "".join(helpers.values())


def dtypes(prog: Program):
    yield from (dt for dt, _ in prog.inputs)
    for node in prog.nodes:
        yield node.dtype
        yield node.out


def render(prog: Program, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of elementwise `prog` in `dialect` ("opencl" or "cuda")."""
    if prog.vec:
        from ._render_vec import render_vector

        return render_vector(prog, dialect)
    fr = frame(dialect)
    name = prog.name()
    helpers: dict[str, str] = {}
    sparams, snames = scalar_params(prog, fr)
    params = ["const int n", *layout_params(prog), *buffer_params(prog, fr), *sparams]
    everything = range(len(prog.inputs))
    body = [
        *coordinate_lines(prog, everything),
        *load_lines(prog, fr, everything),
        *op_lines(prog, fr, snames, helpers, range(len(prog.nodes))),
        *store_lines(prog, range(len(prog.outputs)), fr),
    ]
    loop = f"  for (int i = {fr.gid}; i < n; i += {fr.gsize}) {{"
    src = (
        preamble(prog, fr, helpers)
        + fr.head(name)
        + ", ".join(params)
        + ") {\n"
        + loop
        + "\n"
        + "\n".join(body)
        + "\n  }\n}\n"
    )
    return src, name
