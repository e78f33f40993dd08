"""gather / select (reads at indices) and scatter / select_assign (adds at indices).

Both reads share one kernel: `select` is a `gather` whose 1-D indices are viewed as broadcast
along every other dim. Both adds share one deterministic kernel in gather form: each output
element sums the values whose index points at it, in index order, so results never depend on
thread timing (no atomics, any element type). An out-of-range index reads 0 and adds nothing:
bad input must not crash the device.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import LAY_C, index_code, pack

from . import _ew
from ._array import ClArray
from ._runtime import ctype

_SRC = """
__kernel void gather(const Lay L, __global T* o, __global const I* gi, __global const T* gx,
                     int xs, int xn) {
  for (int i = get_global_id(0); i < L.n; i += get_global_size(0)) {
%(idx3)s    long j = (long)gi[p1];
    o[p0] = (j >= 0 && j < xn) ? gx[p2 + (int)j * xs] : (T)0;
  }
}
__kernel void scatter_add(const Lay L, __global T* o, __global const T* gx, __global const I* gi,
                          __global const T* gv, int k_len, int is, int vs, int inner, int n) {
  for (int i = get_global_id(0); i < L.n; i += get_global_size(0)) {
%(idx4)s    int cd = (i / inner) %% n;
    T acc = gx[p1];
    for (int k = 0; k < k_len; ++k) { if ((long)gi[p2 + k * is] == (long)cd) acc += gv[p3 + k * vs]; }
    o[p0] = acc;
  }
}
"""


def _kernel(rt, dt, idt, name):
    dt, idt = np.dtype(dt), np.dtype(idt)

    def render():
        head = f"typedef {ctype(dt)} T;\ntypedef {ctype(idt)} I;\n" + LAY_C
        return head + _SRC % {"idx3": index_code(3), "idx4": index_code(4)}

    return rt.kernel(("index", dt.str, idt.str), name, render)


def _zero(strides, dim):
    st = list(strides)
    st[dim] = 0
    return st


def _gather_into(out: ClArray, x: ClArray, dim: int, idx_strides, idx: ClArray) -> ClArray:
    n = out.size
    if n:
        rt = x.rt
        lay = pack(
            n,
            out.shape,
            [out.strides, idx_strides, _zero(x.strides, dim)],
            [0, idx.offset, x.offset],
        )
        i32 = np.int32
        args = [lay, out.buf, idx.buf, x.buf, i32(x.strides[dim]), i32(x.shape[dim])]
        rt.launch1d(_kernel(rt, x.dtype, idx.dtype, "gather"), n, args)
    return out


def gather(self, dim, x, indices):
    out = ClArray.empty(x.rt, indices.shape, x.dtype)
    return _gather_into(out, x, dim, indices.strides, indices)


def select(self, x, dim, indices):
    shape = list(x.shape)
    shape[dim] = indices.shape[0]
    out = ClArray.empty(x.rt, tuple(shape), x.dtype)
    st = [0] * len(shape)
    st[dim] = indices.strides[0]
    return _gather_into(out, x, dim, st, indices)


def _scatter_add(x, dim, idx_strides, idx, k_len, i_stride, values) -> ClArray:
    rt = x.rt
    out = ClArray.empty(rt, x.shape, x.dtype)
    n = out.size
    if n:
        if values.dtype != x.dtype:
            values = _ew.cast(values, x.dtype)
        strides = [out.strides, x.strides, idx_strides, _zero(values.strides, dim)]
        lay = pack(n, x.shape, strides, [0, x.offset, idx.offset, values.offset])
        inner = 1
        for s in x.shape[dim + 1 :]:
            inner *= s
        i32 = np.int32
        args = [lay, out.buf, x.buf, idx.buf, values.buf, i32(k_len), i32(i_stride)]
        args += [i32(values.strides[dim]), i32(inner), i32(x.shape[dim])]
        rt.launch1d(_kernel(rt, x.dtype, idx.dtype, "scatter_add"), n, args)
    return out


def scatter(self, dim, x, indices, values):
    other = [d for d in range(x.ndim) if d != dim]
    if any(indices.shape[d] != x.shape[d] for d in other):
        return _scatter_host(self, dim, x, indices, values)
    k_len = indices.shape[dim]
    return _scatter_add(
        x, dim, _zero(indices.strides, dim), indices, k_len, indices.strides[dim], values
    )


def select_assign(self, x, dim, indices, values):
    k_len = indices.shape[0]
    return _scatter_add(x, dim, [0] * x.ndim, indices, k_len, indices.strides[0], values)


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
