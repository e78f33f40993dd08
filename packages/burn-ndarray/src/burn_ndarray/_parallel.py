"""Chunked numpy kernels on the thread pool: elementwise maps, reductions, batch splits.

Chunks are contiguous ranges: the flat range of same-shape C-contiguous operands, else a range
of one output axis (operands that broadcast along it are passed whole). Each chunk writes its
slice of a preallocated output (`out=` for ufuncs), so elementwise results are bitwise those of
one numpy call whatever the thread count. Reductions along a dim split the other axes, so each
output element is reduced by numpy exactly as in one call; reductions over all elements add
per-block partials over fixed blocks (`block`, independent of the thread count), so their
result does not depend on the thread count either.

Example:
    >>> import numpy as np
    >>> x = np.arange(8.0)
    >>> bool((elementwise(np.add, 4, 2, x, 1.0) == x + 1.0).all())
    True
"""

from __future__ import annotations

import math

import numpy as np

from . import _blas
from ._threads import run_chunks


def ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous ranges covering [0, n), sizes differing by at most one."""
    q, r = divmod(n, parts)
    out, a = [], 0
    for i in range(parts):
        b = a + q + (i < r)
        out.append((a, b))
        a = b
    return out


def _split_axis(shape, parts: int, skip: int = -1) -> int:
    """The outermost axis (not `skip`) with at least `parts` entries, else the longest one."""
    best = -1
    for i, s in enumerate(shape):
        if i == skip:
            continue
        if s >= parts:
            return i
        if best < 0 or s > shape[best]:
            best = i
    return best


def _slicer(arg, axis: int, ndim: int):
    """(a, b) -> the part of `arg` that output rows [a, b) of `axis` read (whole if broadcast)."""
    if not isinstance(arg, np.ndarray):
        return None
    j = axis - (ndim - arg.ndim)
    if j < 0 or arg.shape[j] == 1:
        return None
    lead = (slice(None),) * j
    return lambda a, b: arg[lead + (slice(a, b),)]


def _ufunc_chunk(fn, out, args):
    fn(*args, out=out)


def _call_chunk(fn, out, args):
    out[...] = fn(*args)


def elementwise(fn, threads: int, grain: int, *args):
    """fn(*args) (a ufunc or an elementwise function of arrays and scalars), in chunks of at
    least `grain` output elements on up to `threads` threads."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    shape = arrays[0].shape if len(arrays) == 1 else np.broadcast_shapes(*(a.shape for a in arrays))
    n = math.prod(shape)
    parts = min(threads, n // max(grain, 1))
    if parts < 2 or not shape:
        return fn(*args)
    # The result dtype, with numpy's own promotion rules: one element of each operand.
    probe = fn(*(a.reshape(-1)[:1] if isinstance(a, np.ndarray) else a for a in args))
    out = np.empty(shape, probe.dtype)
    kernel = _ufunc_chunk if isinstance(fn, np.ufunc) else _call_chunk
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        flat = [a.reshape(-1) if isinstance(a, np.ndarray) else a for a in args]
        o = out.reshape(-1)
        chunks = [
            (fn, o[a:b], [f[a:b] if isinstance(f, np.ndarray) else f for f in flat])
            for a, b in ranges(n, parts)
        ]
    else:
        axis = _split_axis(shape, parts)
        parts = min(parts, shape[axis])
        if parts < 2:
            return fn(*args)
        cut = [_slicer(a, axis, len(shape)) for a in args]
        lead = (slice(None),) * axis
        chunks = [
            (
                fn,
                out[lead + (slice(a, b),)],
                [x if c is None else c(a, b) for x, c in zip(args, cut)],
            )
            for a, b in ranges(shape[axis], parts)
        ]
    run_chunks(kernel, chunks)
    return out


def _reduce_blocks(reduce, x, out, dtype):
    reduce(x, 1, dtype, out)


def reduce_all(ufunc, x, threads: int, block: int, dtype=None):
    """ufunc.reduce over every element of x (a 0-d result): per-block partials over fixed
    blocks of `block` elements, then the partials reduced in order."""
    flat = x.reshape(-1)  # a copy if x is not contiguous
    n = flat.shape[0]
    nb = n // block
    parts = min(threads, nb)
    reduce = ufunc.reduce
    if parts < 2:
        return reduce(flat, 0, dtype)
    tail = n - nb * block
    partials = np.empty(nb + (tail > 0), dtype or x.dtype)
    blocks = flat[: nb * block].reshape(nb, block)
    chunks = [(reduce, blocks[a:b], partials[a:b], dtype) for a, b in ranges(nb, parts)]
    run_chunks(_reduce_blocks, chunks)
    if tail:
        partials[nb] = reduce(flat[nb * block :], 0, dtype)
    return reduce(partials, 0, dtype)


def _reduce_dim_chunk(reduce, x, dim, dtype, out):
    reduce(x, dim, dtype, out, True)


def _call_dim_chunk(fn, x, dim, out):
    out[...] = fn(x, dim)


def reduce_dim(fn, x, dim: int, threads: int, grain: int, dtype=None, out_dtype=None):
    """fn along `dim` with kept dims, splitting another axis: `fn` is a ufunc (reduced with
    `dtype`) or a function (x, dim) -> kept-dim result of `out_dtype` (argmax)."""
    parts = min(threads, x.size // max(grain, 1))
    axis = _split_axis(x.shape, parts, skip=dim) if parts >= 2 else -1
    if axis < 0 or min(parts, x.shape[axis]) < 2:
        if isinstance(fn, np.ufunc):
            return fn.reduce(x, dim, dtype, None, True)
        return fn(x, dim)
    parts = min(parts, x.shape[axis])
    shape = list(x.shape)
    shape[dim] = 1
    lead = (slice(None),) * axis
    if isinstance(fn, np.ufunc):
        out = np.empty(shape, dtype or x.dtype)
        kernel, first = _reduce_dim_chunk, fn.reduce
        chunks = [
            (first, x[lead + (slice(a, b),)], dim, dtype, out[lead + (slice(a, b),)])
            for a, b in ranges(x.shape[axis], parts)
        ]
    else:
        out = np.empty(shape, out_dtype)
        kernel = _call_dim_chunk
        chunks = [
            (fn, x[lead + (slice(a, b),)], dim, out[lead + (slice(a, b),)])
            for a, b in ranges(x.shape[axis], parts)
        ]
    run_chunks(kernel, chunks)
    return out


def _single_blas(fn, args):
    return fn(*args)


def batch_map(
    fn, threads: int, split: tuple, whole: tuple = (), combine: str = "cat", parts: int = 0
):
    """fn(*split_parts, *whole) on parts of the leading (batch) axis of the `split` arrays,
    with one BLAS thread per part; results (arrays or tuples of arrays) are concatenated along
    axis 0 (`combine="cat"`) or added (`"sum"`, for gradients summed over the batch). `parts`
    (when > 0) caps the number of parts below `threads`: the caller's measure of the work."""
    n = split[0].shape[0]
    parts = min(threads, n, parts or threads)
    if parts < 2:
        return fn(*split, *whole)
    chunks = [(fn, tuple(s[a:b] for s in split) + tuple(whole)) for a, b in ranges(n, parts)]
    _blas.set_threads(1)
    try:
        results = run_chunks(_single_blas, chunks)
    finally:
        _blas.set_threads(threads)
    if combine == "sum":
        total = results[0]
        for r in results[1:]:
            total = total + r
        return total
    if isinstance(results[0], tuple):
        return tuple(_concat([r[i] for r in results], threads) for i in range(len(results[0])))
    return _concat(results, threads)


def _matmul_chunk(x, y, out):
    np.matmul(x, y, out=out)


# Per-matrix multiply-adds below which one BLAS call is too small to use many threads well:
# a batch of such matrices is split over the pool instead (one BLAS thread per part).
SMALL_GEMM = 1 << 22


def matmul(x, y, threads: int):
    """np.matmul with the budget: a batch of small matrices is split over the pool along its
    (flattened) batch dims, one BLAS thread per part; otherwise one BLAS call with `threads`
    BLAS threads. The batch is every leading dim, not only the first: attention's
    [batch, heads, seq, dim] products with a small batch and many heads split over the heads
    too (a single call would run each head's small GEMM on all BLAS threads in turn)."""
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    batch_shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    batch = math.prod(batch_shape)
    _blas.set_threads(_blas.gemm_threads(batch * m * k * n, threads))
    if batch < 2 or (m * k * n >= SMALL_GEMM and batch < threads):
        return np.matmul(x, y)
    xb, yb = _batch_view(x, batch_shape, batch), _batch_view(y, batch_shape, batch)
    if xb is None or yb is None:  # a partial broadcast, or a view that would need a copy
        return _matmul_first_axis(x, y, threads)
    probe = np.matmul(xb[:1, :1], yb[:1, :, :1])
    out = np.empty(batch_shape + (m, n), probe.dtype)
    ob = out.reshape(batch, m, n)
    chunks = [
        (xb[a:b] if xb.shape[0] > 1 else xb, yb[a:b] if yb.shape[0] > 1 else yb, ob[a:b])
        for a, b in ranges(batch, min(threads, batch))
    ]
    _blas.set_threads(1)
    try:
        run_chunks(_matmul_chunk, chunks)
    finally:
        _blas.set_threads(threads)
    return out


def _matmul_first_axis(x, y, threads: int):
    """np.matmul split along the first axis only (operands whose batch dims do not flatten to
    a view, or broadcast in part); one call when that axis cannot be split."""
    if x.ndim < 3 or x.shape[0] < 2 or y.ndim not in (2, x.ndim):
        return np.matmul(x, y)
    if y.ndim == x.ndim and y.shape[0] not in (1, x.shape[0]):
        return np.matmul(x, y)
    ys = y.ndim == x.ndim and y.shape[0] != 1
    probe = np.matmul(x[:1, ..., :1, :], y[:1, ..., :1] if ys else y[..., :1])
    shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) + (x.shape[-2], y.shape[-1])
    out = np.empty(shape, probe.dtype)
    parts = min(threads, x.shape[0])
    chunks = [(x[a:b], y[a:b] if ys else y, out[a:b]) for a, b in ranges(x.shape[0], parts)]
    _blas.set_threads(1)
    try:
        run_chunks(_matmul_chunk, chunks)
    finally:
        _blas.set_threads(threads)
    return out


def _batch_view(a, batch_shape, batch: int):
    """`a` [..., r, c] as a [batch or 1, r, c] view (1: broadcast over the batch), or None
    when that needs a copy or the batch dims broadcast only in part."""
    lead = a.shape[:-2]
    if lead == tuple(batch_shape):
        size = batch
    elif math.prod(lead) == 1:
        size = 1
    else:
        return None
    try:
        return np.reshape(a, (size,) + a.shape[-2:], copy=False)
    except ValueError:  # not expressible as a view of these strides
        return None


def _copy(dst, src):
    np.copyto(dst, src)


def _concat(parts: list, threads: int):
    """np.concatenate(parts) along axis 0, the copies on the pool."""
    first = parts[0]
    out = np.empty((sum(p.shape[0] for p in parts),) + first.shape[1:], first.dtype)
    chunks, a = [], 0
    for p in parts:
        chunks.append((out[a : a + p.shape[0]], p))
        a += p.shape[0]
    run_chunks(_copy, chunks)
    return out
