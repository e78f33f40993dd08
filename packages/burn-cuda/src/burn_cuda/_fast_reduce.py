"""The hot path's reductions (`_fast.ops` installs them): float_sum of small tensors in one
block, float_sum_dim / mean_dim / max_dim as a warp per row along the last dim, burn_gpu's
column kernels for few outputs along a long other dim (`_colsum.py`), else a thread per output
(burn_gpu's `{op}_rows`, the kernels OpenCl runs); other cases fall back to the table's entries.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import use_cols

from ._colsum import launch_cols
from ._dtypes import KERNEL_FLOATS

#: threads per block of the hot path's kernels
BLOCK = 256
_FLOATS = KERNEL_FLOATS
#: a full sum of at most this many elements runs in one 256-thread block (one launch)
SUM_ALL_MAX = 1 << 16
#: row reductions (one warp per row) for rows up to this long
ROW_MAX = 1 << 15
_INT_MAX = 2**31 - 1


def reductions(cp, table: dict, get, oom, alloc_error, go) -> dict:
    """float_sum (small tensors: one block), float_sum_dim / mean_dim / max_dim (a warp per row
    along the last dim; along any other burn_gpu's column kernels for few outputs and a long dim
    (`_colsum.py`), else a thread per output: burn_gpu's `{op}_rows`, the kernels OpenCl runs);
    other cases fall back to the table's entries."""
    cp_new = cp.ndarray
    out: dict = {}

    def row(name, op, fallback):
        def run(self, x, dim):
            dt = x.dtype
            shape = x.shape
            nd = len(shape)
            if dt in _FLOATS and x._c_contiguous and nd and -nd <= dim < nd:
                dim %= nd
                length = shape[dim]
                inner = 1
                for d in shape[dim + 1 :]:
                    inner *= d
                total = x.size // length if length else 0
                # the shared thread-per-output and column kernels index with ints
                fits = inner == 1 or x.size <= _INT_MAX
                if fits and use_cols(total // inner if inner else 0, length, inner):
                    # few outputs, long columns: burn_gpu's column kernels (tiles over the
                    # columns, chunks of the dim, a fixed-order second pass)
                    o = _cols(name, op, x, shape, dim, total, length, inner)
                    if o is not None:
                        return o
                # a thread per output walks its whole column: only with short columns or
                # enough outputs to fill the GPU (cupy's tree reduction does the rest: few
                # long columns get here only when the column kernels did not compile)
                few_long = inner > 1 and length > 256 and total < 8192
                if 0 < length and (inner > 1 or length <= ROW_MAX) and not few_long and fits:
                    # the last dim (inner 1): a warp per row; any other: a thread per output
                    k = get("row" if inner == 1 else "mid", op, dt)
                    if k is not None:
                        try:
                            o = cp_new(shape[:dim] + (1,) + shape[dim + 1 :], dt)
                        except oom as exc:
                            raise alloc_error(name, exc) from exc
                        if total == 0:
                            return o
                        if inner == 1:
                            go.p2ii(k, (total + 7) // 8, BLOCK, x, o, total, length)
                        else:
                            # burn_gpu's `{op}_rows(o, x, xo, outer, n, inner, div)`
                            grid = (total + BLOCK - 1) // BLOCK
                            div = length if op == "mean" else 1
                            ints = (0, total // inner, length, inner, div)
                            go.args(k, grid, BLOCK, (o, x, *map(np.int32, ints)))
                        return o
            return fallback(self, x, dim)

        run.__name__ = f"{op}_dim"
        return run

    def _cols(name, op, x, shape, dim, total, length, inner):
        """`op` along `dim` by the column kernels; None when they do not compile here."""
        dt = x.dtype
        kop = "sum" if op == "mean" else op
        kernels = (get("col", f"{kop}_cols", dt), get("col", f"{kop}_cols_fin", dt))
        if None in kernels:
            return None
        try:
            o = cp_new(shape[:dim] + (1,) + shape[dim + 1 :], dt)
        except oom as exc:
            raise alloc_error(name, exc) from exc

        def new(size, pdt):
            try:
                return cp_new((size,), pdt)
            except oom as exc:
                raise alloc_error(name, exc) from exc

        div = length if op == "mean" else 1
        return launch_cols(kernels, go.args, new, x, o, total // inner, length, inner, div)

    for op in ("sum", "mean", "max"):
        name = f"float_{op}_dim"
        if name in table:
            out[name] = row(name, op, table[name])

    if "float_sum" in table:
        fallback = table["float_sum"]

        def float_sum(self, x):
            dt = x.dtype
            if dt in _FLOATS and x._c_contiguous and 0 < x.size <= SUM_ALL_MAX:
                k = get("sum_all", "", dt)
                if k is not None:
                    try:
                        o = cp_new((1,), dt)
                    except oom as exc:
                        raise alloc_error("float_sum", exc) from exc
                    go.p2i(k, 1, x, o, x.size)
                    return o
            return fallback(self, x)

        out["float_sum"] = float_sum
    return out
