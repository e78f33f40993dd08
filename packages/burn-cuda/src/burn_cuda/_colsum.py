"""Column reductions on Cuda: burn_gpu's `col_program` kernels (`{op}_cols`, `{op}_cols_fin`,
the ones OpenCl runs) for sum / mean / max / min of a contiguous array viewed as
`[outer, n, inner]` along `n` when `burn_gpu.use_cols` says so: few outputs, a long dim other
than the last (a Linear bias gradient over 4,096 rows). One launch, or two with per-chunk
partials in the compute type (float32 for half storage, float64 for float64) in a scratch array;
no atomics, so the same bits every run.

Used by the float32/float64 hot path (`_fast.py`, its own kernel cache and launcher) and the
half reductions (`_half_reduce.py`): both hand `launch_cols` the two kernels, how to launch
them and how to allocate the scratch.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import col_plan

#: threads of a block of the column kernels (the RWG `col_program` is rendered for)
COL_BLOCK = 256
_I32 = np.int32
_F32 = np.dtype(np.float32)


def partial_dtype(dtype) -> np.dtype:
    """The dtype of the per-chunk partials: the kernels' compute type."""
    dtype = np.dtype(dtype)
    return _F32 if dtype.itemsize == 2 and dtype.kind not in "iub" else dtype


def launch_cols(kernels, go, new, x, out, outer: int, n: int, inner: int, div: int):
    """A column reduction of contiguous `x` as `[outer, n, inner]` along `n` (n >= 1) into
    `out` (outer * inner elements of x's dtype) by `kernels` = (`{op}_cols`, `{op}_cols_fin`)
    compiled for x's dtype (op: sum / max / min; a mean is the sum with `div` = n).
    `go(k, grid, block, args)` launches a kernel, `new(size, dtype)` allocates the scratch of
    partials. Returns `out`."""
    plan = col_plan(outer, n, inner, COL_BLOCK)
    part = out
    if plan.chunks > 1:
        part = new(outer * plan.chunks * inner, partial_dtype(x.dtype))
    geo = (_I32(outer), _I32(n), _I32(inner), _I32(plan.chunks), _I32(plan.ltx), _I32(div))
    go(kernels[0], plan.groups, COL_BLOCK, (out, part, x, _I32(0), *geo))
    if plan.chunks > 1:
        fin = (_I32(0), _I32(outer), _I32(plan.chunks), _I32(inner), _I32(plan.ltx), _I32(div))
        go(kernels[1], plan.fin_groups, COL_BLOCK, (out, part, *fin))
    return out
