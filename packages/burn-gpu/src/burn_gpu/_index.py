"""Index kernels written once for both dialects: reads at indices (`gather`, `select`) and adds
at indices (`scatter`, `select_assign`), over strided operands of up to `RANK` dims.

The host collapses the layout first (`index_layout`): the walked operand's shape with each
operand's strides, the indexed dim's stride zeroed (the kernel adds `j * stride` itself), so
merged dims and broadcast indices (`select`: a 1-D index seen with stride 0 along every other
dim) need no extra code. The geometry goes as int64 arguments (`RANK - 1` sizes and `RANK`
strides per operand): Cuda's driver launcher passes 8-byte slots, not structs.

- `gather`: one item per output element (a contiguous block of the index's shape); a negative
  index counts from the end (numpy's take_along_axis, NdArray's), one still outside reads 0.
- `scatter_add`: one item per index element, adding its value with an atomic add (`add_at`, per
  dialect: CUDA's atomicAdd; OpenCL's compare-and-swap loop): the order of adds to one address
  follows thread timing. Rendered with `atomic=True`; float32/float64/int32/int64 only.
- `scatter_sum`: the deterministic gather form: one item per output element sums, in index
  order, the values whose index names it (no atomics, any element type; O(out * k)).
- `segment_add`: the deterministic sorted form of `select_assign` along dim 0 of a contiguous
  [on, rows] tensor: the indices sorted stably (`order`, `sidx` = the sorted indices; by
  `stable_rank` below, or a sort library for many indices);
  the first item of each run of equal indices adds the run's value rows in index order (as
  numpy's `add.at`), so results never depend on thread timing; O(k * rows) items, no atomics.
- `stable_rank`: `order` and `sidx` of a stable sort of int64 indices, 32 lanes per index
  counting the indices that sort before it (O(k^2), no temporary memory: capturable); launched
  as work-groups of `RANK_GROUP` items, 8 indices each (`rank_groups(k)` of them).
Both adds skip an index outside the dim (bad input must not write outside the tensor).
`scatter_add` adds into `o`, which the host has filled with a contiguous copy of the tensor;
`scatter_sum` writes a new contiguous `o` from the tensor `x` (walked with its own strides).
"""

from __future__ import annotations

from ._dialect import fill, frame
from ._layout import collapse

#: dims of the layouts the kernels walk (after collapsing)
RANK = 6
#: work-group size `stable_rank` is written for (8 indices of 32 lanes)
RANK_GROUP = 256


def rank_groups(k: int, cap: int = 2**31 // RANK_GROUP) -> int:
    """Work-groups of `RANK_GROUP` for `stable_rank` over `k` indices (8 per group), at most
    `cap` (the kernel loops over the rest)."""
    return max(1, min((k + 7) // 8, cap))
_ATOMIC = ("float32", "float64", "int32", "int64")


def _params(name: str) -> str:
    return ", ".join(f"const L {name}{d}" for d in range(RANK))


def _off(name: str) -> str:
    return "(" + " + ".join(f"c{d} * {name}{d}" for d in range(RANK)) + ")"


_SIZES = ", ".join(f"const L s{d}" for d in range(1, RANK))
_COORDS = (
    "    L r = i;\n"
    + "".join(f"    L c{d} = r % s{d}; r /= s{d};\n" for d in range(RANK - 1, 0, -1))
    + "    L c0 = r;\n"
)
_SRC = f"""
@KERNEL@gather(@G@T* o, @G@const T* x, @G@const I* idx, const L n, {_SIZES},
               {_params("xt")}, {_params("it")}, const L xs, const L xn, const L xo, const L io) {{
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {{
{_COORDS}    L j = (L)idx[io + {_off("it")}];
    if (j < 0) j += xn;
    o[i] = (j >= 0 && j < xn) ? x[xo + {_off("xt")} + j * xs] : (T)0;
  }}
}}
@KERNEL@scatter_sum(@G@T* o, @G@const T* x, @G@const T* v, @G@const I* idx, const L n,
                    {_SIZES}, {_params("xt")}, {_params("vt")}, {_params("it")}, const L k_len,
                    const L is, const L vs, const L inner, const L on, const L xo, const L vo,
                    const L io) {{
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {{
{_COORDS}    const L cd = (i / inner) % on;
    const L ib = io + {_off("it")}, vb = vo + {_off("vt")};
    T acc = x[xo + {_off("xt")}];
    for (L k = 0; k < k_len; ++k) {{ if ((L)idx[ib + k * is] == cd) acc += v[vb + k * vs]; }}
    o[i] = acc;
  }}
}}
@KERNEL@stable_rank(@G@L* order, @G@L* sidx, @G@const L* idx, const L k_len) {{
  /* item i's place in a stable sort of idx: the indices below it and its equals before it.
     O(k^2) compares without a temporary (a sort library allocates and syncs, which a CUDA
     graph capture refuses), for the few thousand indices of an embedding's gradient. Each
     item's compares are split over 32 lanes (an item per thread left 4,096 threads on the
     H200's 132 SMs, each looping over every index: 0.23 ms of a transformer step), their
     counts summed in local memory. Launch: work-groups of RANK_GROUP (256) = 8 items. */
  @LOCAL@L part[256];
  const int lid = (int)@LID@;
  const int lane = lid & 31;
  const L groups = (L)@GSIZE@ / 256;
  for (L base = (L)@GROUP@ * 8; base < k_len; base += groups * 8) {{
    const L i = base + (lid >> 5);
    L r = 0;
    if (i < k_len) {{
      const L d = idx[i];
      for (L j = lane; j < k_len; j += 32) {{
        const L e = idx[j];
        r += (e < d || (e == d && j < i)) ? 1 : 0;
      }}
    }}
    part[lid] = r;
    @BARRIER@
    if (lane == 0 && i < k_len) {{
      L s = 0;
      for (int q = 0; q < 32; ++q) s += part[lid + q];
      order[s] = i;
      sidx[s] = idx[i];
    }}
    @BARRIER@
  }}
}}
@KERNEL@segment_add(@G@T* o, @G@const T* v, @G@const L* order, @G@const L* sidx, const L n,
                    const L rows, const L k_len, const L on) {{
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {{
    const L j = i / rows, r = i - j * rows, d = sidx[j];
    if ((j > 0 && sidx[j - 1] == d) || d < 0 || d >= on) continue;
    T acc = o[d * rows + r];
    for (L q = j; q < k_len && sidx[q] == d; ++q) acc += v[order[q] * rows + r];
    o[d * rows + r] = acc;
  }}
}}
"""
_ATOMIC_SRC = f"""
@KERNEL@scatter_add(@G@T* o, @G@const T* v, @G@const I* idx, const L n, {_SIZES},
                    {_params("ot")}, {_params("vt")}, {_params("it")}, const L os, const L on,
                    const L vo, const L io) {{
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {{
{_COORDS}    L j = (L)idx[io + {_off("it")}];
    if (j >= 0 && j < on) add_at(o + {_off("ot")} + j * os, v[vo + {_off("vt")}]);
  }}
}}
"""
_ADD_AT_CUDA = {
    "float32": "atomicAdd(p, v);",
    "float64": "atomicAdd(p, v);",
    "int32": "atomicAdd(p, v);",
    "int64": "atomicAdd((unsigned long long*)p, (unsigned long long)v);",
}
# OpenCL C has integer atomics only: floats add through a compare-and-swap on their bits
_CAS = """union {{ {U} u; T f; }} old, nw;
  do {{ old.f = *p; nw.f = old.f + v; }}
  while ({cas}((volatile __global {U}*)p, old.u, nw.u) != old.u);"""
_ADD_AT_OPENCL = {
    "float32": _CAS.format(U="uint", cas="atomic_cmpxchg"),
    "float64": _CAS.format(U="ulong", cas="atom_cmpxchg"),
    "int32": "atomic_add(p, v);",
    "int64": "atom_add(p, v);",
}


def index_program(dtype: str, index_dtype: str, dialect: str, atomic: bool = False) -> str:
    """`gather` and `scatter_sum` for element type `dtype` and index type `index_dtype`
    (dtype names), plus `scatter_add` with `atomic` (float32/float64/int32/int64)."""
    fr = frame(dialect)
    head = f"typedef {fr.ct[dtype]} T;\ntypedef {fr.ct[index_dtype]} I;\n"
    head = fr.pragma([dtype]) + head + f"typedef {fr.ct['int64']} L;\n"
    src = head + fill(_SRC, fr)
    if not atomic:
        return src
    if dtype not in _ATOMIC:
        raise ValueError(f"index_program: atomic adds take {_ATOMIC}, got {dtype!r}")
    if fr.cuda:
        add = _ADD_AT_CUDA[dtype]
        return src + f"__device__ __forceinline__ void add_at(T* p, T v) {{ {add} }}\n" + fill(
            _ATOMIC_SRC, fr
        )
    ext = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n" if "64" in dtype else ""
    add = f"void add_at(volatile __global T* p, T v) {{\n  {_ADD_AT_OPENCL[dtype]}\n}}\n"
    return ext + src + add + fill(_ATOMIC_SRC, fr)


def index_layout(shape, dim: int, strides_list, zeroed: int):
    """(sizes, strides per operand, stride along `dim` per operand) of the walk over `shape`:
    the first `zeroed` operands' `dim` stride zeroed (the kernel steps along it itself), dims
    collapsed, padded to `RANK` (leading size-1 dims;
    `sizes` leaves out dim 0, which the kernel never divides by). Raises NotImplementedError
    when more than `RANK` dims remain (make the operands contiguous first)."""
    along = [st[dim] for st in strides_list]
    seen = [
        [0 if d == dim and k < zeroed else s for d, s in enumerate(st)]
        for k, st in enumerate(strides_list)
    ]
    sh, sts = collapse(shape, seen)
    if len(sh) > RANK:
        raise NotImplementedError(
            f"burn_gpu index kernels: a layout of rank > {RANK} after merging dims "
            f"(shape {list(shape)}); make the operands contiguous first"
        )
    pad = RANK - len(sh)
    sizes = ([1] * pad + list(sh))[1:]
    return sizes, [[0] * pad + list(st) for st in sts], along
