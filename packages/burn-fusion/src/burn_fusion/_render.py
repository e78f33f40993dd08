"""One renderer, two dialects: a fused elementwise `Program` as OpenCL C or CUDA C source.

A `Program` is the dialect-free description of one fused kernel, and it is also the plan-cache
key: it names ops, dtypes, which operand feeds which op, and how each input is read, but no
tensor id, size or scalar value. Those arrive as kernel arguments, so one compiled kernel serves
every size and every scalar value of the same graph.

Kernel arguments, in this order (the backends' `_fusion_hooks.launch` pass them so):
`int n`; when `rank > 0`: the plan's `rank` dims, then for each strided input its `rank`
strides and its offset (elements; stride 0 along broadcast dims), then for each broadcast result
its `rank` strides (0 along its broadcast dims); the results not written in place; every input
(an input a result is written into is not const); the scalars of every node, in node order.
One work item per element, grid-stride: `for (i = first; i < n; i += step)`.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np

from ._ops import OPS

_B = np.dtype(np.bool_)

CTYPES = {
    "opencl": {
        "float64": "double",
        "float32": "float",
        "int64": "long",
        "int32": "int",
        "int16": "short",
        "int8": "char",
        "uint8": "uchar",
        "bool": "uchar",
    },
    "cuda": {
        "float64": "double",
        "float32": "float",
        "int64": "long long",
        "int32": "int",
        "int16": "short",
        "int8": "signed char",
        "uint8": "unsigned char",
        "bool": "unsigned char",
    },
}
#: dtypes a fused kernel can hold (float16/bfloat16 tensors run unfused)
FUSABLE_DTYPES = frozenset(CTYPES["cuda"])


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

    def name(self) -> str:
        return "fused_" + hashlib.sha1(repr(self).encode()).hexdigest()[:16]


_REM = """{dev}{T} {name}({T} a, {T} b) {{
  {T} r = fmod(a, b);  /* the divisor's sign, as numpy and the inner backends */
  if (r != ({T})0) {{ if ((b < ({T})0) != (r < ({T})0)) r += b; }} else {{ r = copysign(({T})0, b); }}
  return r;
}}
"""


class Reduction(NamedTuple):
    """A sum (or mean: the same kernel, another divisor) of one value of a `Program` (`ref`:
    node `k >= 0` or input `-k - 1`) along one axis, with the program as its prologue: the
    reduced tensor is never written. `local` is the work-group size (a compile-time constant).

    Kernel arguments: `int n, int rows, int red, int inner, int div`, then the program's
    layout ints, the output (one value per row), the inputs, the scalars. Row `r` reduces the
    `red` elements `base + k * inner` (`base = (r / inner) * red * inner + r % inner`), those
    `< n`; the result is the sum divided by `div`.
    """

    prog: Program
    ref: int
    local: int

    def name(self) -> str:
        return "fused_sum_" + hashlib.sha1(repr(self).encode()).hexdigest()[:16]


def render_reduction(red: Reduction, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of a fused reduction in `dialect`."""
    return render(red.prog, dialect, red)


def render(prog: Program, dialect: str, reduction: Reduction | None = None) -> tuple[str, str]:
    """(source, kernel name) of `prog` in `dialect` ("opencl" or "cuda")."""
    ct = CTYPES[dialect]
    cuda = dialect == "cuda"
    name = prog.name() if reduction is None else reduction.name()
    gptr = "" if cuda else "__global "
    restrict = " __restrict__" if cuda else ""
    inplace = {k for _, k, _ in prog.outputs if k >= 0}
    strided = [k for k, (_, s) in enumerate(prog.inputs) if s]

    bcast = [m for m, (_, _, b) in enumerate(prog.outputs) if b]
    params = ["const int n"]
    if reduction is not None:
        params += ["const int rows", "const int red", "const int inner", "const int div"]
    if prog.rank:
        params += [f"const int d{d}" for d in range(prog.rank)]
        for k in strided:
            params += [f"const int st{k}_{d}" for d in range(prog.rank)]
            params.append(f"const int off{k}")
        for m in bcast:
            params += [f"const int ost{m}_{d}" for d in range(prog.rank)]
    if reduction is not None:
        ref = reduction.ref
        acc_dt = prog.nodes[ref].out if ref >= 0 else prog.inputs[-ref - 1][0]
        acc_t = ct[acc_dt]
        params.append(f"{gptr}{acc_t}*{restrict} ro")
    for m, (j, k, _) in enumerate(prog.outputs):
        if k < 0:
            params.append(f"{gptr}{ct[prog.nodes[j].out]}*{restrict} o{m}")
    for k, (dt, _) in enumerate(prog.inputs):
        const = "" if k in inplace else "const "
        params.append(f"{gptr}{const}{ct[dt]}*{restrict} in{k}")

    helpers: dict[str, str] = {}
    body: list[str] = []
    if prog.rank:  # the item's coordinates, then each strided operand's element offset
        body.append("    int q = i;")
        for d in range(prog.rank - 1, 0, -1):
            body.append(f"    const int c{d} = q % d{d}; q /= d{d};")
        body.append("    const int c0 = q;")
        for k in strided:
            terms = " + ".join(f"c{d} * st{k}_{d}" for d in range(prog.rank))
            body.append(f"    const int p{k} = off{k} + {terms};")
    for k, (dt, s) in enumerate(prog.inputs):
        body.append(f"    {ct[dt]} x{k} = in{k}[{f'p{k}' if s else 'i'}];")

    nscalar = 0
    for j, node in enumerate(prog.nodes):
        spec = OPS[node.op]
        T = ct[node.dtype]
        operands = {}
        for letter, kind, ref in zip("abc", spec.inputs, node.refs):
            var = f"v{ref}" if ref >= 0 else f"x{-ref - 1}"
            src_dt = prog.nodes[ref].out if ref >= 0 else prog.inputs[-ref - 1][0]
            if kind == "T" and src_dt != node.dtype:
                var = f"(({T}){var})"
            operands[letter] = var
        for s in range(spec.scalars):
            operands[f"s{s}"] = f"s{nscalar + s}"
            params.append(f"const {T} s{nscalar + s}")
        nscalar += spec.scalars
        rem = ""
        if "{rem}" in spec.expr:
            rem = "_rem_" + T
            helpers[rem] = _REM.format(dev="__device__ " if cuda else "", T=T, name=rem)
        expr = spec.expr.format(T=T, D=ct[node.out], rem=rem, **operands)
        O = ct[node.out]
        body.append(f"    {O} v{j} = ({O})({expr});")
    for m, (j, k, b) in enumerate(prog.outputs):
        if b:  # a broadcast result: one writer per element, at index 0 of its broadcast dims
            cond = " && ".join(f"c{d} == 0" for d in b)
            idx = " + ".join(f"c{d} * ost{m}_{d}" for d in range(prog.rank))
            body.append(f"    if ({cond}) o{m}[{idx}] = v{j};")
        else:
            dst = f"in{k}" if k >= 0 else f"o{m}"
            body.append(f"    {dst}[i] = v{j};")

    if reduction is not None:
        return _reduce_source(reduction, cuda, name, params, helpers, body, acc_t), name
    if cuda:
        head = f'extern "C" __global__ void {name}('
        loop = (
            "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;"
            " i += blockDim.x * gridDim.x) {"
        )
    else:
        head = f"__kernel void {name}("
        loop = "  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {"
    pre = ""
    if not cuda and any(dt == "float64" for dt in _dtypes(prog)):
        pre = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    src = (
        pre
        + "".join(helpers.values())
        + head
        + ", ".join(params)
        + ") {\n"
        + loop
        + "\n"
        + "\n".join(body)
        + "\n  }\n}\n"
    )
    return src, name


def _dtypes(prog: Program):
    yield from (dt for dt, _ in prog.inputs)
    for node in prog.nodes:
        yield node.dtype
        yield node.out


def _reduce_source(red: Reduction, cuda: bool, name, params, helpers, body, acc_t) -> str:
    L = red.local
    value = f"v{red.ref}" if red.ref >= 0 else f"x{-red.ref - 1}"
    if cuda:
        head = f'extern "C" __global__ void {name}('
        lid, group, groups = "threadIdx.x", "blockIdx.x", "gridDim.x"
        shared = f"  __shared__ {acc_t} sm[{L}];"
        barrier = "__syncthreads();"
    else:
        head = f"__kernel __attribute__((reqd_work_group_size({L}, 1, 1))) void {name}("
        lid, group, groups = "get_local_id(0)", "get_group_id(0)", "get_num_groups(0)"
        shared = f"  __local {acc_t} sm[{L}];"
        barrier = "barrier(CLK_LOCAL_MEM_FENCE);"
    lines = [
        shared,
        f"  const int lid = {lid};",
        f"  for (int r = {group}; r < rows; r += {groups}) {{",
        f"    {acc_t} acc = ({acc_t})0;",
        "    const int base = (r / inner) * red * inner + r % inner;",
        f"    for (int k = lid; k < red; k += {L}) {{",
        "    const int i = base + k * inner;",
        "    if (i >= n) break;",
        *body,
        f"    acc += {value};",
        "    }",
        "    sm[lid] = acc;",
        f"    {barrier}",
        f"    for (int s = {L // 2}; s > 0; s >>= 1) {{",
        "      if (lid < s) sm[lid] += sm[lid + s];",
        f"      {barrier}",
        "    }",
        f"    if (lid == 0) ro[r] = sm[0] / ({acc_t})div;",
        f"    {barrier}",
        "  }",
    ]
    pre = ""
    if not cuda and any(dt == "float64" for dt in _dtypes(red.prog)):
        pre = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    return (
        pre
        + "".join(helpers.values())
        + head
        + ", ".join(params)
        + ") {\n"
        + "\n".join(lines)
        + "\n}\n"
    )
