"""The vector variant of an elementwise kernel: each item moves `vec` (4 or 8) consecutive
elements of every operand with 16-byte accesses (float4, int4; double2 / longlong2 for 8-byte
types; uchar4, char4, short4 for the narrow ones), as many accesses as `vec` lanes need,
computes the lanes as independent scalar chains (more loads in flight per thread, no index
arithmetic per element), and stores them the same way.

Only for a `Program` with `rank == 0` (every operand contiguous with the plan's shape: no
strided or broadcast reads, no broadcast results) -- the stream checks that, and that every base
pointer is 16-byte aligned, at launch (`Stream._vector_ok`). Items `i < n / vec` take the
vectors; the `n % vec` last elements are one per item in a scalar tail loop.
"""

from __future__ import annotations

from ._render import (
    Program,
    buffer_params,
    frame,
    kernel_head,
    load_lines,
    op_lines,
    preamble,
    scalar_params,
    store_lines,
)

#: elements per item of the vector variants
WIDTHS = (4, 8)
#: CUDA: dtype -> (vector type, lanes per access); 8-byte types take two 16-byte accesses
_CUDA_VEC = {
    "float32": ("float4", 4),
    "int32": ("int4", 4),
    "float64": ("double2", 2),
    "int64": ("longlong2", 2),
    "int16": ("short4", 4),
    "int8": ("char4", 4),
    "uint8": ("uchar4", 4),
    "bool": ("uchar4", 4),
}
_XYZW = "xyzw"


def _cuda_loads(k: int, dt: str, lanes: int) -> list:
    vt, per = _CUDA_VEC[dt]
    lines, lane = [], 0
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        lines.append(f"    const {vt} x{k}v{a} = reinterpret_cast<const {vt}*>(in{k})[{idx}];")
        for c in range(per):
            lines.append(f"    const auto x{k}_{lane} = x{k}v{a}.{_XYZW[c]};")
            lane += 1
    return lines


def _cuda_store(dst: str, dt: str, j: int, lanes: int) -> list:
    # components set one by one: needs only the vector types, not make_<type>()
    vt, per = _CUDA_VEC[dt]
    lines = []
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        lines.append(f"    {{ {vt} w;")
        for c in range(per):
            lines.append(f"      w.{_XYZW[c]} = v{j}_{a * per + c};")
        lines.append(f"      reinterpret_cast<{vt}*>({dst})[{idx}] = w; }}")
    return lines


def render_vector(prog: Program, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of `prog` (`vec` in `WIDTHS`, `rank == 0`) in `dialect`."""
    lanes = prog.vec
    if prog.rank or lanes not in WIDTHS:
        raise ValueError(f"burn_fusion: a vector kernel needs rank 0 and vec in {WIDTHS}: {prog}")
    fr = frame(dialect)
    ct = fr.ct
    name = prog.name()
    helpers: dict[str, str] = {}
    sparams, snames = scalar_params(prog, fr)
    params = ["const int n", *buffer_params(prog, fr), *sparams]
    every = range(len(prog.nodes))
    body = []
    for k, (dt, _) in enumerate(prog.inputs):
        if fr.cuda:
            body += _cuda_loads(k, dt, lanes)
        else:
            body.append(f"    const {ct[dt]}{lanes} x{k}v = vload{lanes}(i, in{k});")
            body += [f"    const {ct[dt]} x{k}_{c} = x{k}v.s{c};" for c in range(lanes)]
    for c in range(lanes):
        body += op_lines(prog, fr, snames, helpers, every, lane=f"_{c}")
    for m, (j, k, _) in enumerate(prog.outputs):
        dst = f"in{k}" if k >= 0 else f"o{m}"
        dt = prog.nodes[j].out
        if fr.cuda:
            body += _cuda_store(dst, dt, j, lanes)
        else:
            vals = ", ".join(f"v{j}_{c}" for c in range(lanes))
            body.append(f"    vstore{lanes}(({ct[dt]}{lanes})({vals}), i, {dst});")
    tail = [
        *load_lines(prog, fr, range(len(prog.inputs))),
        *op_lines(prog, fr, snames, helpers, every),
        *store_lines(prog, range(len(prog.outputs))),
    ]
    if fr.cuda:
        first, step = "blockIdx.x * blockDim.x + threadIdx.x", "blockDim.x * gridDim.x"
    else:
        first, step = "get_global_id(0)", "get_global_size(0)"
    src = (
        preamble(prog, fr, helpers)
        + kernel_head(fr, name)
        + ", ".join(params)
        + ") {\n"
        + f"  const int nv = n / {lanes};\n"
        + f"  for (int i = {first}; i < nv; i += {step}) {{\n"
        + "\n".join(body)
        + "\n  }\n"
        + f"  for (int i = nv * {lanes} + {first}; i < n; i += {step}) {{\n"
        + "\n".join(tail)
        + "\n  }\n}\n"
    )
    return src, name
