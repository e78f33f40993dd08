"""softmax / log_softmax and their backward ops, one kernel each, written once for both dialects.

The default decomposition is five launches over the whole tensor (max_dim, sub, exp, sum_dim,
div); here one kernel does a row: reduce, reduce again, write. The tensor is read as
`[outer, n, inner]` (`n` the softmax dim) from element offsets `xo` (input / output y) and `go`
(gradient). `inner == 1` (the last dim): `*_rows`, one work-group per row, a power-of-two group
of 32..256 items (`row_group(n)`) reducing through the dialect's group reduction (CUDA: warp
shuffles; OpenCL: a tree over local memory). Otherwise `*_cols`: one item per `(outer, inner)`
column walking `n` with stride `inner` (neighbouring items read neighbouring addresses).
`log_mode` picks log_softmax. Backward from the output y: softmax dx = y (g - sum(g y)),
log_softmax dx = g - exp(y) sum(g).

NaN/inf follow the decomposition: a row holding NaN or +inf gives NaN, -inf gives 0 (log: -inf).
"""

from __future__ import annotations

import math

from ._dialect import HALF, fill, frame, storage_head
from ._dtype_name import dtype_name

#: the element types of the kernels (half types: float32 registers, `_dialect.py`)
FLOATS = ("float32", "float64", *HALF)
#: items of a column-kernel work-group
COL_GROUP = 256

# Group-wide sum/max of `v` over local array `red`, per dialect (every item gets the result).
# The leading barrier keeps a previous reduction's readers of red[0] ahead of this one's writers.
_GROUP_CUDA = """
__device__ __forceinline__ T nan_max(T m, T v) { return (v != v || v > m) ? v : m; }
__device__ __forceinline__ T warp_red(T v, int mx) {
  for (int o = 16; o > 0; o >>= 1) {
    T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = mx ? nan_max(v, w) : v + w;
  }
  return v;
}
/* blockDim.x a multiple of 32, at most 1024 */
__device__ T group_red(T v, T* red, int mx) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_red(v, mx);
  __syncthreads();
  if (lane == 0) red[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < nw ? red[lane] : (mx ? NEG_INF : (T)0);
    v = warp_red(v, mx);
    if (lane == 0) red[0] = v;
  }
  __syncthreads();
  return red[0];
}
#define LSIZE ((int)blockDim.x)
#define RED_SIZE 32
"""
_GROUP_OPENCL = """
T nan_max(T m, T v) { return (v != v || v > m) ? v : m; }
/* get_local_size(0) a power of two, at most RED_SIZE */
T group_red(T v, __local T* red, int mx) {
  int l = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  red[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) >> 1; s > 0; s >>= 1) {
    if (l < s) red[l] = mx ? nan_max(red[l], red[l + s]) : red[l] + red[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return red[0];
}
#define LSIZE ((int)get_local_size(0))
#define RED_SIZE 256
"""
_SRC = """
@KERNEL@softmax_rows(@G@S* out, @G@const S* x, const int n, const int log_mode, const L xo) {
  @LOCAL@T red[RED_SIZE];
  const L row = (L)@GROUP@ * n;
  @G@const S* xr = x + xo + row;
  @G@S* o = out + row;
  const int lid = @LID@, step = LSIZE;
  T m = NEG_INF;
  for (int i = lid; i < n; i += step) m = nan_max(m, LOAD(xr, i));
  m = group_red(m, red, 1);
  T s = (T)0;
  for (int i = lid; i < n; i += step) s += exp(LOAD(xr, i) - m);
  s = group_red(s, red, 0);
  if (log_mode) {
    T ls = log(s);
    for (int i = lid; i < n; i += step) STORE(o, i, (LOAD(xr, i) - m) - ls);
  } else {
    for (int i = lid; i < n; i += step) STORE(o, i, exp(LOAD(xr, i) - m) / s);
  }
}
@KERNEL@softmax_cols(@G@S* out, @G@const S* x, const L cols, const int n, const L inner,
                     const int log_mode, const L xo) {
  const L c = (L)@GID@;
  if (c >= cols) return;
  const L base = (c / inner) * n * inner + c % inner;
  T m = NEG_INF;
  for (int k = 0; k < n; ++k) m = nan_max(m, LOAD(x, xo + base + k * inner));
  T s = (T)0;
  for (int k = 0; k < n; ++k) s += exp(LOAD(x, xo + base + k * inner) - m);
  T ls = log(s);
  for (int k = 0; k < n; ++k) {
    T v = LOAD(x, xo + base + k * inner) - m;
    STORE(out, base + k * inner, log_mode ? v - ls : exp(v) / s);
  }
}
@KERNEL@softmax_bwd_rows(@G@S* out, @G@const S* y, @G@const S* g, const int n,
                         const int log_mode, const L xo, const L go) {
  @LOCAL@T red[RED_SIZE];
  const L off = (L)@GROUP@ * n;
  const int lid = @LID@, step = LSIZE;
  T s = (T)0;
  for (int i = lid; i < n; i += step)
    s += log_mode ? LOAD(g, go + off + i) : LOAD(g, go + off + i) * LOAD(y, xo + off + i);
  s = group_red(s, red, 0);
  for (int i = lid; i < n; i += step) {
    T gi = LOAD(g, go + off + i), yi = LOAD(y, xo + off + i);
    STORE(out, off + i, log_mode ? gi - exp(yi) * s : yi * (gi - s));
  }
}
@KERNEL@softmax_bwd_cols(@G@S* out, @G@const S* y, @G@const S* g, const L cols, const int n,
                         const L inner, const int log_mode, const L xo, const L go) {
  const L c = (L)@GID@;
  if (c >= cols) return;
  const L base = (c / inner) * n * inner + c % inner;
  T s = (T)0;
  for (int k = 0; k < n; ++k) {
    L i = base + k * inner;
    s += log_mode ? LOAD(g, go + i) : LOAD(g, go + i) * LOAD(y, xo + i);
  }
  for (int k = 0; k < n; ++k) {
    L i = base + k * inner;
    T gi = LOAD(g, go + i), yi = LOAD(y, xo + i);
    STORE(out, i, log_mode ? gi - exp(yi) * s : yi * (gi - s));
  }
}
"""


def row_group(n: int) -> int:
    """Items of a `*_rows` work-group for rows of `n`: a warp for short rows (the guide's
    [64, 10] logits), up to 256 for long ones."""
    b = 32
    while b < n and b < 256:
        b *= 2
    return b


def softmax_program(dtype: str, dialect: str) -> str:
    """The four softmax kernels for element type `dtype` (a float dtype name: float32, float64,
    or a half type, read into float32 and rounded once per output) in `dialect`."""
    if dtype not in FLOATS:
        raise ValueError(f"softmax_program: dtype must be one of {FLOATS}, got {dtype!r}")
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype) + f"typedef {fr.ct['int64']} L;\n"
    head += f"#define NEG_INF (-{fr.inf(fr.compute(dtype))})\n"
    return head + (_GROUP_CUDA if fr.cuda else _GROUP_OPENCL) + fill(_SRC, fr)


def split_dim(shape, dim) -> tuple[int, int, int]:
    """(outer, n, inner): the `[outer, n, inner]` view of `shape` along `dim`."""
    return math.prod(shape[:dim]), int(shape[dim]), math.prod(shape[dim + 1 :])


class SoftmaxOps:
    """Mixin of a GPU backend: the softmax family as these kernels for float32/float64 and the
    half types (other dtypes take the decomposition of the class after it). The backend defines
    `_softmax_run(kind, arrays, dim, log_mode)`: kind 'softmax' or 'softmax_bwd', arrays its
    primitives (x, or the output y and the gradient), returning the new array."""

    def softmax(self, x, dim):
        if not _eligible(x):
            return super().softmax(x, dim)
        return self._softmax_run("softmax", (x,), dim, False)

    def log_softmax(self, x, dim):
        if not _eligible(x):
            return super().log_softmax(x, dim)
        return self._softmax_run("softmax", (x,), dim, True)

    def softmax_backward(self, output, grad, dim):
        if not _eligible(output, grad):
            return super().softmax_backward(output, grad, dim)
        return self._softmax_run("softmax_bwd", (output, grad), dim, False)

    def log_softmax_backward(self, output, grad, dim):
        if not _eligible(output, grad):
            return super().log_softmax_backward(output, grad, dim)
        return self._softmax_run("softmax_bwd", (output, grad), dim, True)


def _eligible(*arrays) -> bool:
    dt = arrays[0].dtype  # (str(dtype) is numpy's Python-level name: ~4 us a read)
    # n and the row count are 32-bit kernel arguments / group counts
    same = all(a.dtype == dt for a in arrays)
    return dtype_name(dt) in FLOATS and same and arrays[0].size < 2**31
