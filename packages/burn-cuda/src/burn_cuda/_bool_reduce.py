"""Bool `any` / `all` (whole, and along a dim) as burn_gpu's max / min reduction kernels over
the bool bytes: any is the max of {0, 1}, all the min.

Why not cupy's `any` / `all`: on a fresh kernel cache cupy compiles a reduction kernel for each
new geometry it meets, about 1.4 s each on the H200; text generation without a cache calls
`mask.all_dim(3)` in every attention layer at a new key length every token (`burn_nn._attend`),
and a 256-token generation on `Fusion(Cuda())` spent 5.7 s of its 8 s in those compiles (cProfile,
session 21). burn_gpu's kernels take the geometry as arguments: one compile per process.

Example:
    >>> reduce_bool("min", cp.array([[True, False], [True, True]]), 1).ravel().tolist()
    ... # doctest: +SKIP
    [False, True]
"""

from __future__ import annotations

import numpy as np

from ._half_ops import BLOCK, RWG, _MAX_N, _grid, contiguous
from ._half_reduce import _I32, _reduce_kernel, _split
from ._kernels import launch_grid
from ._platform import load_cupy

_BOOL = np.dtype(np.bool_)


def reduce_bool(kind: str, x, dim: int):
    """`kind` "max" (any) or "min" (all) of bool array `x` along `dim`, kept as size 1; None
    where the caller's fallback runs (an empty dim: min's identity is True, the kernels' is
    not; a 0-d or oversized array)."""
    if x.dtype != _BOOL or x.ndim == 0 or x.size > _MAX_N or x.shape[dim] == 0:
        return None
    cp = load_cupy()
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    out = cp.empty(shape, _BOOL)
    outer, n, inner = _split(x.shape, dim)
    outs = outer * inner
    if outs == 0:
        return out
    x = contiguous(x)
    geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
    if inner == 1 and n >= 64:  # long rows: a group per output
        k = _reduce_kernel(_BOOL, _I32, f"{kind}_tree")
        launch_grid(k, outs, RWG, out, x, *geo, np.int32(1), np.int32(1))
    else:
        k = _reduce_kernel(_BOOL, _I32, f"{kind}_rows")
        launch_grid(k, _grid(outs), BLOCK, out, x, *geo, np.int32(1))
    return out


def reduce_bool_all(kind: str, x):
    """`kind` of every element of `x` -> [1] (None for an empty array: the caller's fallback)."""
    if x.size == 0:
        return None
    out = reduce_bool(kind, contiguous(x).reshape(-1), 0)
    return None if out is None else out.reshape(1)
