"""Layer norm's backward in three kernels, written once for both dialects.

burn-tensor's `layer_norm_backward(x, gamma, output_grad, epsilon) -> (dx, dgamma, dbeta)`
(`_ops_norm.py`: about seventeen launches composed) with xhat = (x - mean) * rstd and
gg = output_grad * gamma:

- `layer_norm_bwd_rows`: one work-group per row of `d` (as `layer_norm_rows`): the mean and
  rstd = 1 / sqrt(var + epsilon) recomputed from x (two group reductions), then mean(gg) and
  mean(gg * xhat) (two more), then dx = rstd * (gg - mean(gg) - xhat * mean(gg * xhat)). Its
  first item writes the row's (mean, rstd) to `stats` (compute type) for the column kernels.
- `layer_norm_bwd_part`: dgamma / dbeta without float atomics (deterministic: the same sums in
  the same order on every run). Rows are cut into `chunks` runs of `chunk` rows; item
  (c, j) sums output_grad * xhat and output_grad over column j of run c, in row order, into
  `part[c * d + j]` and `part[chunks * d + c * d + j]` (neighbouring items read neighbouring
  columns).
- `layer_norm_bwd_cols`: item j sums its column of partials over the runs in order and stores
  dgamma[j], dbeta[j] (rounded once for a half type).

Every sum is in the compute type (float32 for float16/bfloat16 storage, double for float64).
`bwd_chunks(rows, d)` picks the runs: enough (chunk, column) items to fill a GPU, at most one
run per row. Offsets (`xo`, `go`, `yo`: x, gamma, output_grad) are elements into their
buffers, as `Runtime.layout` gives them.
"""

from __future__ import annotations

from ._norm import norm_program, warp_rows
from ._softmax import FLOATS

#: (chunk, column) items the partial kernel aims for: an H200 holds ~270k resident threads,
#: a CPU (PoCL) takes any number; 64k keeps the partial buffer small (2 * 64k values)
PART_ITEMS = 1 << 16

_SRC = """
@KERNEL@layer_norm_bwd_rows(@G@S* dx, @G@T* stats, @G@const S* x, @G@const S* gamma,
                            @G@const S* g, const int d, const T eps, const L xo, const L go,
                            const L yo) {
  @LOCAL@T red[RED_SIZE];
  const L r = (L)@GROUP@;
  const L row = r * d;
  @G@const S* xr = x + xo + row;
  @G@const S* gr = g + yo + row;
  gamma += go;
  @G@S* o = dx + row;
  const int lid = @LID@, step = LSIZE;
@ROW_STATS@
  T a = (T)0, b = (T)0;
  for (int i = lid; i < d; i += step) {
    const T gg = LOAD(gr, i) * LOAD(gamma, i);
    a += gg;
    b += gg * ((LOAD(xr, i) - mean) * rstd);
  }
  const T mg = group_red(a, red, 0) / (T)d;
  const T mgx = group_red(b, red, 0) / (T)d;
  for (int i = lid; i < d; i += step) {
    const T gg = LOAD(gr, i) * LOAD(gamma, i);
    const T xh = (LOAD(xr, i) - mean) * rstd;
    STORE(o, i, ((gg - mg) - xh * mgx) * rstd);
  }
  if (lid == 0) {
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}
@KERNEL@layer_norm_bwd_part(@G@T* part, @G@const S* x, @G@const S* g, @G@const T* stats,
                            const L rows, const int d, const L chunk, const L items,
                            const L xo, const L yo) {
  const L t = (L)@GID@;
  if (t >= items) return;
  const L c = t / d, j = t % d;
  const L r0 = c * chunk;
  const L r1 = r0 + chunk < rows ? r0 + chunk : rows;
  T sg = (T)0, sb = (T)0;
  for (L r = r0; r < r1; ++r) {
    const T gv = LOAD(g, yo + r * d + j);
    sg += gv * ((LOAD(x, xo + r * d + j) - stats[2 * r]) * stats[2 * r + 1]);
    sb += gv;
  }
  part[t] = sg;
  part[items + t] = sb;
}
@KERNEL@layer_norm_bwd_cols(@G@S* dgamma, @G@S* dbeta, @G@const T* part, const L chunks,
                            const int d) {
  const L j = (L)@GID@;
  if (j >= d) return;
  const L items = chunks * d;
  T sg = (T)0, sb = (T)0;
  for (L c = 0; c < chunks; ++c) {
    sg += part[c * d + j];
    sb += part[items + c * d + j];
  }
  STORE(dgamma, j, sg);
  STORE(dbeta, j, sb);
}
"""


def layer_norm_bwd_program(dtype: str, dialect: str) -> str:
    """The three backward kernels for element type `dtype` (float32, float64 or a half type)
    in `dialect`; CUDA's also has `layer_norm_bwd_rows_w` (a warp per row, `_norm.warp_rows`)."""
    if dtype not in FLOATS:
        raise ValueError(f"layer_norm_bwd_program: dtype must be one of {FLOATS}, got {dtype!r}")
    src = _SRC + (warp_rows(_SRC, "layer_norm_bwd_rows") if dialect == "cuda" else "")
    return norm_program(src, dtype, dialect)


def bwd_chunks(rows: int, d: int) -> tuple[int, int]:
    """(chunks, chunk): `rows` cut into `chunks` runs of `chunk` rows (the last may be
    shorter) for `layer_norm_bwd_part`, about `PART_ITEMS` (run, column) items in all."""
    if rows < 1 or d < 1:
        raise ValueError(f"bwd_chunks: rows and d must be >= 1, got rows={rows}, d={d}")
    want = min(rows, max(1, -(-PART_ITEMS // d)))
    chunk = -(-rows // want)
    return -(-rows // chunk), chunk
