"""Layer norm's forward as one kernel per row, written once for both dialects: `layer_norm_rows`.

x is read as contiguous rows of `d` elements (the last dim); each work-group normalizes one row:
the mean, then the biased variance of the centred values (two passes over the row, both summed
in the compute type: float32 for half storage), then `(x - mean) * rstd * gamma (+ beta)` with
`rstd = 1 / sqrt(var + epsilon)`, rounded once per element -- burn-tensor's `layer_norm`
formula (`_ops_norm.py`), whose decomposition is about ten launches. The group reduction is
softmax's (`_softmax.py`: CUDA warp shuffles, OpenCL a tree over local memory); a group has
`row_group(d)` items. Arguments: out, x, gamma, beta (unread without `has_beta`), d,
has_beta, epsilon (compute type), then the element offsets of x, gamma and beta in their
buffers (`Runtime.layout`: an OpenCL view passes its whole buffer). The backward is
`_norm_bwd.py`; `_ops_norm.py` runs both on a backend.

CUDA also gets `layer_norm_rows_w` (`warp_rows`): the same loops with a warp per row, several
rows per block, the reductions warp shuffles only (no shared memory, no block barrier) and
`rows` as a last argument (the grid's last block may have warps past it). A [4096, 512] row
set was ~2.5x the time its bytes take at the H200's bandwidth with a block of 256 per row:
each row's four block barriers and a grid of small blocks, not memory, set the pace.
"""

from __future__ import annotations

from ._dialect import fill, frame, storage_head
from ._softmax import _GROUP_CUDA, _GROUP_OPENCL, FLOATS

#: the row statistics both directions compute (the backward recomputes them from x): `mean`,
#: then `rstd` from the biased variance of the centred values, summed in the compute type T
ROW_STATS = """\
  T s = (T)0;
  for (int i = lid; i < d; i += step) s += LOAD(xr, i);
  const T mean = group_red(s, red, 0) / (T)d;
  T v = (T)0;
  for (int i = lid; i < d; i += step) { const T c = LOAD(xr, i) - mean; v += c * c; }
  const T rstd = (T)1 / sqrt(group_red(v, red, 0) / (T)d + eps);"""

_SRC = """
@KERNEL@layer_norm_rows(@G@S* out, @G@const S* x, @G@const S* gamma, @G@const S* beta,
                        const int d, const int has_beta, const T eps, const L xo, const L go,
                        const L bo) {
  @LOCAL@T red[RED_SIZE];
  const L row = (L)@GROUP@ * d;
  @G@const S* xr = x + xo + row;
  gamma += go;
  beta += bo;
  @G@S* o = out + row;
  const int lid = @LID@, step = LSIZE;
@ROW_STATS@
  for (int i = lid; i < d; i += step) {
    T y = ((LOAD(xr, i) - mean) * rstd) * LOAD(gamma, i);
    if (has_beta) y += LOAD(beta, i);
    STORE(o, i, y);
  }
}
"""


def layer_norm_program(dtype: str, dialect: str) -> str:
    """`layer_norm_rows` for element type `dtype` (float32, float64 or a half type) in
    `dialect`; CUDA's also has `layer_norm_rows_w` (a warp per row)."""
    if dtype not in FLOATS:
        raise ValueError(f"layer_norm_program: dtype must be one of {FLOATS}, got {dtype!r}")
    src = _SRC + (warp_rows(_SRC, "layer_norm_rows") if dialect == "cuda" else "")
    return norm_program(src, dtype, dialect)


def warp_rows(src: str, name: str) -> str:
    """Kernel `name` of `src` (a row per group: `@GROUP@` the row, `LSIZE` its items, group
    reductions `group_red(v, red, 0)`) as `name_w`: a warp per row, `LSIZE / 32` rows a
    group, warp-shuffle reductions, and a last argument `rows` past which a warp returns."""
    start = src.index(f"@KERNEL@{name}(")
    end = src.index("\n}\n", start) + 3
    k = src[start:end].replace(f"@KERNEL@{name}(", f"@KERNEL@{name}_w(", 1)
    head_end = k.index(") {")
    k = k[:head_end] + ", const L rows" + k[head_end:]
    k = k.replace("(L)@GROUP@", "((L)@GROUP@ * (LSIZE >> 5) + (@LID@ >> 5))")
    k = k.replace("  @LOCAL@T red[RED_SIZE];\n", "")
    k = k.replace("const int lid = @LID@, step = LSIZE;",
                  "const int lid = @LID@ & 31, step = 32;\n  if (ROW_OF_WARP >= rows) return;")
    k = k.replace("@ROW_STATS@", ROW_STATS)
    k = k.replace("group_red(", "warp_red(").replace(", red, 0)", ", 0)")
    return k


def norm_program(src: str, dtype: str, dialect: str) -> str:
    """Kernel text `src` (with `@ROW_STATS@` where a row's statistics go) for element type
    `dtype` in `dialect`, behind the storage head and the group reduction of softmax."""
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype) + f"typedef {fr.ct['int64']} L;\n"
    head += f"#define NEG_INF (-{fr.inf(fr.compute(dtype))})\n"
    body = fill(src.replace("@ROW_STATS@", ROW_STATS), fr)
    if fr.cuda:  # the row a warp of a `warp_rows` kernel owns
        head += "#define ROW_OF_WARP ((long long)blockIdx.x * (LSIZE >> 5) + (threadIdx.x >> 5))\n"
    return head + (_GROUP_CUDA if fr.cuda else _GROUP_OPENCL) + body
