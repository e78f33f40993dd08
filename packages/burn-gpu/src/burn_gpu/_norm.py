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
    `dialect`."""
    if dtype not in FLOATS:
        raise ValueError(f"layer_norm_program: dtype must be one of {FLOATS}, got {dtype!r}")
    return norm_program(_SRC, dtype, dialect)


def norm_program(src: str, dtype: str, dialect: str) -> str:
    """Kernel text `src` (with `@ROW_STATS@` where a row's statistics go) for element type
    `dtype` in `dialect`, behind the storage head and the group reduction of softmax."""
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype) + f"typedef {fr.ct['int64']} L;\n"
    head += f"#define NEG_INF (-{fr.inf(fr.compute(dtype))})\n"
    body = fill(src.replace("@ROW_STATS@", ROW_STATS), fr)
    return head + (_GROUP_CUDA if fr.cuda else _GROUP_OPENCL) + body
