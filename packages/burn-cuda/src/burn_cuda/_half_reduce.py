"""The reductions, scan and Adam of Cuda's half backends (float16 / bfloat16
storage): burn_gpu's templates rendered for the half dtype, accumulating in float32 and rounding
each output once (`_half_ops.py` holds the elementwise ops, data movement and the op table).
"""

from __future__ import annotations

import math

import numpy as np
from burn_gpu import adam_program, col_program, reduce_program, use_cols

from ._half_ops import (
    BLOCK,
    RWG,
    SUM_ALL_MAX,
    _MAX_N,
    _cast,
    _grid,
    _rawkernel,
    contiguous,
    empty,
)
from ._colsum import COL_BLOCK, launch_cols
from ._kernels import launch_grid
from ._optim import launch_adam
from ._platform import load_cupy


def _reduce_kernel(dtype, index_dtype, name: str):
    # keyed by the dtype objects (`dtype.name` cost ~1.5 us per read); names only to render
    key = ("reduce", dtype, index_dtype, name)
    return _rawkernel(
        key, lambda: (reduce_program(dtype.name, index_dtype.name, RWG, "cuda"), name)
    )


_I32, _F32 = np.dtype(np.int32), np.dtype(np.float32)


def _split(shape, dim):
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])


#: (dtype, op) -> burn_gpu's (`{op}_cols`, `{op}_cols_fin`) for that half dtype (`_colsum.py`)
_COLS: dict = {}


def _col_kernels(dtype, op: str):
    ks = _COLS.get((dtype, op))
    if ks is None:
        ks = _COLS[(dtype, op)] = tuple(
            _rawkernel(
                ("cols", dtype, name), lambda name=name: (col_program(dtype.name, COL_BLOCK, "cuda"), name)
            )
            for name in (f"{op}_cols", f"{op}_cols_fin")
        )
    return ks


def _go(k, grid: int, block: int, args) -> None:
    launch_grid(k, grid, block, *args)


def _scratch(size: int, dtype):
    return load_cupy().ndarray((size,), dtype)


def reduce_dim(kind: str, x, dim: int):
    """sum/mean/max/min of half array `x` along `dim` (kept as 1): the column kernels for few
    outputs along a long dim other than the last (`_colsum.py`), one group per output along the
    last dim of long rows (`*_tree`), a thread per output otherwise (`*_rows`)."""
    if x.size > _MAX_N or x.ndim == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    out = empty(shape, x.dtype)
    outs = outer * inner
    if outs == 0:
        return out
    op = "sum" if kind == "mean" else kind
    div = n if kind == "mean" else 1
    geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
    if n == 0 and kind in ("max", "min"):
        return None
    if use_cols(outer, n, inner):  # few outputs, long columns: tiles and chunks, float32 partials
        launch_cols(_col_kernels(x.dtype, op), _go, _scratch, x, out, outer, n, inner, div)
    elif inner == 1 and n >= 64:
        k = _reduce_kernel(x.dtype, _I32, f"{op}_tree")
        launch_grid(k, outs, RWG, out, x, *geo, np.int32(1), np.int32(div))
    else:
        k = _reduce_kernel(x.dtype, _I32, f"{op}_rows")
        launch_grid(k, _grid(outs), BLOCK, out, x, *geo, np.int32(div))
    return out


def reduce_all(kind: str, x):
    """sum / mean of a whole (small) half array: one work-group, float32 accumulation."""
    if x.size > SUM_ALL_MAX or x.size == 0:
        return None
    x = contiguous(x)
    out = empty((1,), x.dtype)
    div = x.size if kind == "mean" else 1
    k = _reduce_kernel(x.dtype, _I32, "sum_tree")
    geo = (np.int32(0), np.int32(1), np.int32(x.size), np.int32(1))
    launch_grid(k, 1, RWG, out, x, *geo, np.int32(1), np.int32(div))
    return out


def arg_dim(kind: str, x, dim: int, index_dtype):
    """argmax / argmin along `dim` (kept as 1) in `index_dtype` (first max; NaN wins)."""
    if x.size > _MAX_N or x.ndim == 0 or x.shape[dim] == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    out = load_cupy().ndarray(shape, index_dtype)
    if out.size:
        k = _reduce_kernel(x.dtype, np.dtype(index_dtype), f"{kind}_rows")
        geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
        launch_grid(k, _grid(out.size), BLOCK, out, x, *geo)
    return out


def cumsum(x, dim: int):
    """Running sum along `dim` in float32, each output rounded once."""
    if x.size > _MAX_N or x.ndim == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    out = empty(x.shape, x.dtype)
    if x.size:
        k = _reduce_kernel(x.dtype, _I32, "cumsum")
        geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
        launch_grid(k, _grid(outer * inner), BLOCK, out, x, *geo)
    return out


# -- Adam -----------------------------------------------------------------------------------------
def adam_update(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
    """One Adam step of a half parameter in float32 registers, the parameter rounded once;
    moments of the parameter's dtype, or float32 when they arrive so (burn_gpu's
    `adam_program` for the half type)."""
    dt = param.dtype
    p = contiguous(param)
    g = contiguous(grad if grad.dtype == dt else _cast(grad, dt))
    first = moment_1 is None
    mdt = dt if first or moment_1.dtype != _F32 else _F32
    if first:
        m1 = m2 = p  # unread on a first step
    else:
        m1, m2 = (contiguous(m if m.dtype == mdt else _cast(m, mdt)) for m in (moment_1, moment_2))
    shape, n = p.shape, p.size
    out = (empty(shape, dt), empty(shape, mdt), empty(shape, mdt))
    if n:
        grid = min((n + BLOCK - 1) // BLOCK, 4096)
        moments = None if mdt == dt else "float32"

        def kernel_of(at: bool):
            name = "adam_update_at" if at else "adam_update"
            return _rawkernel(
                ("adam", dt, moments, at),
                lambda: (adam_program(dt.name, "cuda", moments, scalars_from=at), name),
            )

        # float32 scalars (the half kernel computes in float32)
        launch_adam(kernel_of, _F32, grid, (p, g, m1, m2, *out), n, first, lr, beta_1, beta_2,
                    epsilon, time)  # fmt: skip
    return out
