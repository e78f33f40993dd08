"""One renderer, two dialects: a fused elementwise `Program` as OpenCL C or CUDA C source.

A `Program` is the dialect-free description of one fused kernel, and it is also the plan-cache
key: it names ops, dtypes, which operand feeds which op, and how each input is read, but no
tensor id, size or scalar value. Those arrive as kernel arguments, so one compiled kernel serves
every size and every scalar value of the same graph.

Kernel arguments, in this order (the backends' `_fusion_hooks.launch` pass them so):
`int n`; when `rank > 0`: the output's `rank` dims, then for each strided input its `rank`
strides and its offset (elements); the outputs not written in place; every input (an input an
output is written into is not const); the scalars of every node, in node order.
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
    rank: int  # the output rank when some input is strided, else 0
    nodes: tuple  # Node per op, in recording order (dead ones already removed)
    outputs: tuple  # (node index, input index written in place or -1) per materialised result

    def name(self) -> str:
        return "fused_" + hashlib.sha1(repr(self).encode()).hexdigest()[:16]


_REM = """{dev}{T} {name}({T} a, {T} b) {{
  {T} r = fmod(a, b);  /* the divisor's sign, as numpy and the inner backends */
  if (r != ({T})0) {{ if ((b < ({T})0) != (r < ({T})0)) r += b; }} else {{ r = copysign(({T})0, b); }}
  return r;
}}
"""


def render(prog: Program, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of `prog` in `dialect` ("opencl" or "cuda")."""
    ct = CTYPES[dialect]
    cuda = dialect == "cuda"
    name = prog.name()
    gptr = "" if cuda else "__global "
    restrict = " __restrict__" if cuda else ""
    inplace = {k for _, k in prog.outputs if k >= 0}
    strided = [k for k, (_, s) in enumerate(prog.inputs) if s]

    params = ["const int n"]
    if prog.rank:
        params += [f"const int d{d}" for d in range(prog.rank)]
        for k in strided:
            params += [f"const int st{k}_{d}" for d in range(prog.rank)]
            params.append(f"const int off{k}")
    for m, (j, k) in enumerate(prog.outputs):
        if k < 0:
            params.append(f"{gptr}{ct[prog.nodes[j].out]}*{restrict} o{m}")
    for k, (dt, _) in enumerate(prog.inputs):
        const = "" if k in inplace else "const "
        params.append(f"{gptr}{const}{ct[dt]}*{restrict} in{k}")

    helpers: dict[str, str] = {}
    body: list[str] = []
    if strided:
        body.append("    int q = i;")
        for d in range(prog.rank - 1, -1, -1):
            step = f"q % d{d}" if d else "q"
            adds = " ".join(f"p{k} += c * st{k}_{d};" for k in strided)
            nxt = f" q /= d{d};" if d else ""
            body.append(f"    {{ int c = {step};{nxt} {adds} }}")
        body.insert(0, "    " + " ".join(f"int p{k} = off{k};" for k in strided))
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
    for m, (j, k) in enumerate(prog.outputs):
        dst = f"in{k}" if k >= 0 else f"o{m}"
        body.append(f"    {dst}[i] = v{j};")

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
