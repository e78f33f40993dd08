"""gather and select written once over the runtime contract: burn_gpu's `gather` kernel
(`index_program`) over strided operands, their layouts from `Runtime.layout`. `select` is a
gather whose 1-D index is seen with stride 0 along every other dim. The adds at indices stay in
each backend: Cuda's atomic `scatter_add`, OpenCl's deterministic `scatter_sum`."""

from __future__ import annotations

import math

from ._dtype_name import dtype_name
from ._index import RANK, index_layout, index_program
from ._runtime import Runtime, ints


def index_kernel(rt: Runtime, dtype, index_dtype, name: str, atomic: bool = False):
    """Kernel `name` of `index_program` for these dtypes on `rt`."""
    dt, idt = dtype_name(dtype), dtype_name(index_dtype)
    render = lambda: index_program(dt, idt, rt.dialect, atomic)
    return rt.kernel(("index", dt, idt, atomic), name, render)


def gather_into(rt: Runtime, out, x, dim: int, idx, idx_strides):
    """`out[c] = x[c with c[dim] = idx at c]`, the index seen with `idx_strides` over out's
    shape (a negative index counts from the end; one still outside reads 0). Operands of more
    than `RANK` dims are made contiguous first (contiguous operands merge down)."""
    if len(x.shape) > RANK:
        x, idx = rt.contiguous(x), rt.contiguous(idx)
        if len(idx.shape) == len(x.shape):
            idx_strides = rt.layout(idx)[0]
    n = math.prod(out.shape)
    if n:
        (x_st, xo), io = rt.layout(x), rt.layout(idx)[1]
        sizes, (xt, it), (xs, _) = index_layout(out.shape, dim, [x_st, idx_strides], 1)
        geo = ints([n, *sizes, *xt, *it, xs, x.shape[dim], xo, io], "int64")
        rt.call(index_kernel(rt, x.dtype, idx.dtype, "gather"), n, [out, x, idx, *geo])
    return out


def gather(rt: Runtime, dim: int, x, indices):
    """Burn's gather: the index has x's rank."""
    out = rt.empty(tuple(indices.shape), x.dtype)
    return gather_into(rt, out, x, dim, indices, rt.layout(indices)[0])


def select(rt: Runtime, x, dim: int, indices):
    """Burn's select: x's entries at the 1-D `indices` along `dim`."""
    shape = list(x.shape)
    shape[dim] = indices.shape[0]
    st = [0] * len(shape)
    st[dim] = rt.layout(indices)[0][0]
    return gather_into(rt, rt.empty(tuple(shape), x.dtype), x, dim, indices, st)
