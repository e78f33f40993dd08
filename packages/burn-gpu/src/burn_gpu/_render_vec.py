"""The vector variant of an elementwise kernel: each item moves `vec` (4 or 8) consecutive
elements of every operand with 16-byte accesses (float4, int4; double2 / longlong2 for 8-byte
types; uchar4, char4, short4 for the narrow ones), as many accesses as `vec` lanes need,
computes the lanes as independent scalar chains (more loads in flight per thread, no index
arithmetic per element), and stores them the same way.

OpenCL: `vloadN`/`vstoreN` of at most 32 bytes (float8, double4, ...): an 8-wide item of an
8-byte type takes two 4-wide halves. A 64-byte vector (double8, long8) passed to a built-in
crashes PoCL 3.0 (LLVM 14) on AVX-512 CPUs that LLVM 14 names without AVX-512 (Zen 4 reads as
znver3): the kernel is compiled for the CPU name while the built-in library is the AVX-512 one,
so the two disagree on how a 512-bit vector is passed -- SIGSEGV at launch, and a `program.bc`
in PoCL's cache that cannot be read back (every later build of the source has no kernels).

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
    "uint16": ("ushort4", 4),
    "uint32": ("uint4", 4),
    "uint64": ("ulonglong2", 2),
    "bool": ("uchar4", 4),
    "float16": ("ushort4", 4),  # 16-bit patterns, converted per lane (`_dialect.py`)
    "bfloat16": ("ushort4", 4),
}
_XYZW = "xyzw"
#: OpenCL: widest vector access in bytes (see the module docstring: no 512-bit vectors)
_CL_MAX_BYTES = 32
_CL_BYTES = {
    "float32": 4,
    "int32": 4,
    "float64": 8,
    "int64": 8,
    "int16": 2,
    "int8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
}
_CL_BYTES.update(float16=2, bfloat16=2)


def _cl_lanes(dt: str, lanes: int) -> int:
    """Lanes per OpenCL access of `dt`: all `lanes` up to `_CL_MAX_BYTES`, else fewer."""
    return min(lanes, _CL_MAX_BYTES // _CL_BYTES.get(dt, 1))


def _cl_loads(fr, k: int, dt: str, lanes: int) -> list:
    """float16 through `vload_halfN` (floatN out), bfloat16 as ushortN converted per lane."""
    per = _cl_lanes(dt, lanes)
    ctype, load = fr.storage(dt), f"vload{per}"
    if dt == "float16":
        ctype, load = "float", f"vload_half{per}"
    lines = []
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        lines.append(f"    const {ctype}{per} x{k}v{a} = {load}({idx}, in{k});")
        lines += [
            f"    const {fr.compute(dt)} x{k}_{a * per + c} = "
            f"{fr.from_storage(dt, f'x{k}v{a}.s{c:x}') if dt != 'float16' else f'x{k}v{a}.s{c:x}'};"
            for c in range(per)
        ]
    return lines


def _cl_store(fr, dst: str, dt: str, j: int, lanes: int) -> list:
    per = _cl_lanes(dt, lanes)
    lines = []
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        vals = [f"v{j}_{a * per + c}" for c in range(per)]
        if dt == "float16":
            lines.append(f"    vstore_half{per}_rte((float{per})({', '.join(vals)}), {idx}, {dst});")
            continue
        vals = ", ".join(fr.to_storage(dt, v) for v in vals)
        lines.append(f"    vstore{per}(({fr.storage(dt)}{per})({vals}), {idx}, {dst});")
    return lines


def _cuda_loads(fr, k: int, dt: str, lanes: int) -> list:
    vt, per = _CUDA_VEC[dt]
    lines, lane = [], 0
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        lines.append(f"    const {vt} x{k}v{a} = reinterpret_cast<const {vt}*>(in{k})[{idx}];")
        for c in range(per):
            value = fr.from_storage(dt, f"x{k}v{a}.{_XYZW[c]}")
            lines.append(f"    const auto x{k}_{lane} = {value};")
            lane += 1
    return lines


def _cuda_store(fr, dst: str, dt: str, j: int, lanes: int) -> list:
    # components set one by one: needs only the vector types, not make_<type>()
    vt, per = _CUDA_VEC[dt]
    lines = []
    for a in range(lanes // per):
        idx = "i" if per == lanes else f"{lanes // per} * i + {a}"
        lines.append(f"    {{ {vt} w;")
        for c in range(per):
            lines.append(f"      w.{_XYZW[c]} = {fr.to_storage(dt, f'v{j}_{a * per + c}')};")
        lines.append(f"      reinterpret_cast<{vt}*>({dst})[{idx}] = w; }}")
    return lines


def render_vector(prog: Program, dialect: str) -> tuple[str, str]:
    """(source, kernel name) of `prog` (`vec` in `WIDTHS`, `rank == 0`) in `dialect`."""
    lanes = prog.vec
    if prog.rank or lanes not in WIDTHS:
        raise ValueError(f"burn_fusion: a vector kernel needs rank 0 and vec in {WIDTHS}: {prog}")
    fr = frame(dialect)
    name = prog.name()
    helpers: dict[str, str] = {}
    sparams, snames = scalar_params(prog, fr)
    params = ["const int n", *buffer_params(prog, fr), *sparams]
    every = range(len(prog.nodes))
    body = []
    for k, (dt, _) in enumerate(prog.inputs):
        if fr.cuda:
            body += _cuda_loads(fr, k, dt, lanes)
        else:
            body += _cl_loads(fr, k, dt, lanes)
    for c in range(lanes):
        body += op_lines(prog, fr, snames, helpers, every, lane=f"_{c}")
    for m, (j, k, _) in enumerate(prog.outputs):
        dst = f"in{k}" if k >= 0 else f"o{m}"
        dt = prog.nodes[j].out
        if fr.cuda:
            body += _cuda_store(fr, dst, dt, j, lanes)
        else:
            body += _cl_store(fr, dst, dt, j, lanes)
    tail = [
        *load_lines(prog, fr, range(len(prog.inputs))),
        *op_lines(prog, fr, snames, helpers, every),
        *store_lines(prog, range(len(prog.outputs)), fr),
    ]
    first, step = fr.gid, fr.gsize
    src = (
        preamble(prog, fr, helpers)
        + fr.head(name)
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
