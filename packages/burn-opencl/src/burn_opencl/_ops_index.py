"""gather / select (reads at indices: burn_gpu's, the code Cuda runs) and scatter /
select_assign (adds at indices) through burn_gpu's index kernels (`index_program`).

`select` is a `gather` whose 1-D indices are seen with stride 0 along every other dim. The adds
run the deterministic gather form (`scatter_sum`: each output element sums the values whose
index names it, in index order; no atomics, results never depend on thread timing). A negative
gather index counts from the end (as NdArray); an index outside the dim reads 0 and adds nothing:
bad input must not crash the device.
"""

from __future__ import annotations

import math

import burn_gpu
import numpy as np
from burn_gpu import RANK, index_kernel, index_layout

from . import _ew
from ._array import ClArray
from ._gpu_runtime import kernels_of


def _fit(x, *arrays):
    """The arrays contiguous when x has more dims than the kernels walk (contiguous operands
    merge down to their rank), else as they are."""
    return [_ew.contiguous(a) for a in arrays] if x.ndim > RANK else list(arrays)


def gather(self, dim, x, indices):
    return burn_gpu.gather(kernels_of(x), dim, x, indices)


def select(self, x, dim, indices):
    return burn_gpu.select(kernels_of(x), x, dim, indices)


def _scatter_sum(x, dim, idx_strides, idx, k_len, values) -> ClArray:
    rt = x.rt
    out = ClArray.empty(rt, x.shape, x.dtype)
    n = out.size
    if n:
        if values.dtype != x.dtype:
            values = _ew.cast(values, x.dtype)
        # the index and values are seen with dim zeroed (the kernel loops over k), x walked
        st = [values.strides, idx_strides, x.strides]
        sizes, (vt, it, xt), (vs, is_, _) = index_layout(x.shape, dim, st, 2)
        inner = math.prod(x.shape[dim + 1 :])
        ints = [n, *sizes, *xt, *vt, *it, k_len, is_, vs, inner, x.shape[dim]]
        ints += [x.offset, values.offset, idx.offset]
        args = [out.buf, x.buf, values.buf, idx.buf, *map(np.int64, ints)]
        rt.launch1d(index_kernel(kernels_of(x), x.dtype, idx.dtype, "scatter_sum"), n, args)
    return out


def scatter(self, dim, x, indices, values):
    other = [d for d in range(x.ndim) if d != dim]
    if any(indices.shape[d] != x.shape[d] for d in other):
        return _scatter_host(self, dim, x, indices, values)
    x, indices, values = _fit(x, x, indices, values)
    return _scatter_sum(x, dim, indices.strides, indices, indices.shape[dim], values)


def select_assign(self, x, dim, indices, values):
    x, values = _fit(x, x, values)
    st = [0] * x.ndim
    st[dim] = indices.strides[0]
    return _scatter_sum(x, dim, st, indices, indices.shape[0], values)


def _scatter_host(self, dim, x, indices, values):
    """torch-style scatter with indices smaller than x in other dims: through the host (rare)."""
    from ._ops_tensor import into_data

    xa = into_data(self, x).array.copy()
    ia = into_data(self, indices).array.astype(np.intp)
    va = into_data(self, values).array
    pos = list(np.indices(ia.shape, sparse=True))
    pos[dim] = ia
    np.add.at(xa, tuple(pos), va[tuple(slice(0, s) for s in ia.shape)])
    return ClArray.from_numpy(x.rt, xa)


INDEX_OPS = {}
for _p in ("float_", "int_", "bool_"):
    INDEX_OPS[_p + "gather"] = gather
    INDEX_OPS[_p + "select"] = select
for _p in ("float_", "int_"):
    INDEX_OPS[_p + "scatter"] = scatter
    INDEX_OPS[_p + "select_assign"] = select_assign
