"""Tensor ops of every kind on cupy arrays: burn_ndarray's namespace-generic ops run on cupy,
plus what differs on a GPU (host transfers, devices, DLPack, index kernels, cumulative extremes).

Invariant (as NdArray): no op writes into an input array; ops that assign copy first.
"""

from __future__ import annotations

import math

import burn_gpu
import numpy as np
from burn_gpu import CTYPES, RANK, RANK_GROUP, dtype_name, index_kernel, index_layout, rank_groups
from burn_tensor import TensorData
from burn_tensor.array_api import array_ops, make_numeric

from ._dtypes import KERNEL_FLOATS, kernel_dtype
from ._gpu_runtime import kernels_of
from ._kernels import i64, kernel, launch, launch_grid
from ._random import sample

_INT_MAX = 2**31 - 1

_FILLED = KERNEL_FLOATS  # dtypes of our fill kernel


def _on_device(cp):
    """`run(index, fn, *args)`: `fn(*args)` with GPU `index` current, entering cupy's device
    context only when another GPU is current (the context costs a few us per op)."""
    current = cp.cuda.runtime.getDevice

    def run(index, fn, *args):
        if current() == index:
            return fn(*args)
        with cp.cuda.Device(index):
            return fn(*args)

    return run


def _creator(cp):
    """`make(shape, dtype, device, value)`: a new array on `device`, filled with `value` (None:
    uninitialised); zeroes with a memset and fills floats with one bare launch: `cp.ones` took
    ~30 us of host time (a guide step's backward seed)."""
    run = _on_device(cp)

    def here(shape, dt, value):
        out = cp.ndarray(shape, dt)
        n = out.size
        if value is None or n == 0:
            return out
        if value == 0 and math.copysign(1.0, value) > 0:  # not -0.0
            out.data.memset_async(0, out.nbytes)  # all-zero bits: 0, +0.0, False
        elif dt in _FILLED:
            launch(kernel("fill", dt), n, out, i64(n), float(value))
        else:
            out.fill(value)
        return out

    def make(shape, dt, device, value):
        return run(0 if device is None else device.index, here, shape, dt, value)

    return make


def common_ops(cp) -> dict:
    """float_/int_/bool_ ops of every kind (without the prefix)."""
    ops = array_ops(cp)

    def from_data(self, data, device):
        with cp.cuda.Device(device.index if device is not None else 0):
            return cp.asarray(data.array)

    def into_data(self, x):
        return TensorData(cp.asnumpy(x))  # waits for the queued work that produces x

    def to_device(self, x, device):
        if x.device.id == device.index:
            return x
        with cp.cuda.Device(device.index):
            return cp.array(x, copy=True)  # peer copy

    def mask_fill(self, x, mask, value):
        return cp.where(mask, x.dtype.type(value), x)

    make = _creator(cp)

    def empty(self, shape, device, dtype):
        return make(shape, dtype.np, device, None)

    def zeros(self, shape, device, dtype):
        return make(shape, dtype.np, device, 0)

    def ones(self, shape, device, dtype):
        return make(shape, dtype.np, device, 1)

    def full(self, shape, value, device, dtype):
        return make(shape, dtype.np, device, value)

    ops.update(
        from_data=from_data,
        into_data=into_data,
        to_device=to_device,
        mask_fill=mask_fill,
        empty=empty,
        zeros=zeros,
        ones=ones,
        full=full,
    )
    return ops


def _copy(cp, x, dtype):
    """A C-contiguous copy of x in `dtype`: one device-to-device memcpy when x already is one
    (cupy's astype copy was an elementwise-kernel call, ~10 us of host time)."""
    if x.dtype != dtype or not x._c_contiguous:
        return x.astype(dtype, copy=True, order="C")
    out = cp.ndarray(x.shape, dtype)
    if x.nbytes:
        out.data.copy_from_device_async(x.data, x.nbytes)
    return out


def _el(a):
    """Element strides of cupy array `a` (the kernels get its data pointer, so no offset)."""
    return [st // a.itemsize for st in a.strides]


def _index_add(cp, x, dim, walk_shape, idx, idx_strides, values):
    """x (copied) with `values` (of `walk_shape`) added at their positions with the coordinate
    along `dim` taken from `idx` (seen with `idx_strides`): burn_gpu's atomic `scatter_add`
    (the order of adds follows thread timing; float16/bfloat16 through float32)."""
    kd = kernel_dtype(x.dtype)
    out = _copy(cp, x, kd)
    vals = values if values.dtype == kd else values.astype(kd)
    vals = vals[tuple(slice(0, n) for n in walk_shape)]  # torch-style: values may be larger
    if x.ndim > RANK:  # contiguous operands merge down to the kernels' rank
        vals, idx = cp.ascontiguousarray(vals), cp.ascontiguousarray(idx)
        idx_strides = _el(idx) if idx.ndim == x.ndim else idx_strides
    n = math.prod(walk_shape)
    if n:
        st = [_el(out), _el(vals), idx_strides]
        sizes, (ot, vt, it), (os, _, _) = index_layout(walk_shape, dim, st, 1)
        k = index_kernel(kernels_of(x), kd, idx.dtype, "scatter_add", atomic=True)
        launch(k, n, out, vals, idx, n, *sizes, *ot, *vt, *it, os, x.shape[dim], 0, 0)
    return out if kd == x.dtype else out.astype(x.dtype)


#: select_assign with at most this many indices orders them with burn_gpu's `stable_rank`
#: (k^2 compares: ~0.04 ms at the bound on a GPU) instead of thrust's sort, which a CUDA graph
#: capture refuses (a captured step with more indices runs eagerly and says why)
RANK_SORT_MAX = 16384


def _select_add_sorted(cp, x, dim, indices, values):
    """Burn's select_assign (x copied, `values` added at `indices` along `dim`) without atomics:
    the indices sorted stably (`stable_rank`, or thrust above RANK_SORT_MAX), then burn_gpu's
    `segment_add` adds each index's rows in index order, so the sums are the same bits every
    run (an embedding's gradient: the atomic form made two identical data-parallel runs differ
    by 1e-2 after 128 steps)."""
    kd = kernel_dtype(x.dtype)
    shape = list(x.shape)
    shape[dim] = k = indices.shape[0]
    vals = values[tuple(slice(0, n) for n in shape)]  # torch-style: values may be larger
    out = _copy(cp, x, kd)
    if dim:
        out, vals = cp.moveaxis(out, dim, 0), cp.moveaxis(vals, dim, 0)
        out = cp.ascontiguousarray(out)
    vals = cp.ascontiguousarray(vals if vals.dtype == kd else vals.astype(kd))
    rows = math.prod(out.shape[1:])
    n = k * rows
    if n:
        idx = indices.astype(np.int64)
        idx = cp.where(idx < 0, idx + x.shape[dim], idx)
        if k <= RANK_SORT_MAX:
            # burn_gpu's stable_rank: the same order as a stable sort, without thrust's
            # temporary allocation and sync (a captured step keeps the op inside its graph)
            order, sidx = cp.empty(k, np.int64), cp.empty(k, np.int64)
            rank = index_kernel(kernels_of(x), kd, idx.dtype, "stable_rank")
            launch_grid(rank, rank_groups(k), RANK_GROUP, order, sidx, idx, k)
        else:
            order = cp.argsort(idx)  # cupy sorts stably (thrust)
            sidx = idx[order]
        k_ = index_kernel(kernels_of(x), kd, idx.dtype, "segment_add")
        launch(k_, n, out, vals, order, sidx, n, rows, k, x.shape[dim])
    if dim:
        out = cp.ascontiguousarray(cp.moveaxis(out, 0, dim))
    return out if kd == x.dtype else out.astype(x.dtype)


def numeric_ops(cp, kind: str) -> dict:
    """float_/int_ ops shared by both numeric kinds (without the prefix)."""
    ops = make_numeric(kind, cp)
    gather0, select0 = array_ops(cp)["gather"], array_ops(cp)["select"]
    on_device = _on_device(cp)

    def scatter(self, dim, x, indices, values):
        return _index_add(cp, x, dim, indices.shape, indices, _el(indices), values)

    def gather(self, dim, x, indices):  # burn_gpu's (the code OpenCl runs)
        if dtype_name(x.dtype) not in CTYPES["cuda"]:  # float16 / bfloat16 storage
            return gather0(self, dim, x, indices)
        return burn_gpu.gather(kernels_of(x), dim, x, indices)

    def select(self, x, dim, indices):
        if dtype_name(x.dtype) not in CTYPES["cuda"]:
            return select0(self, x, dim, indices)
        return burn_gpu.select(kernels_of(x), x, dim, indices)

    def select_assign(self, x, dim, indices, values):
        if kind == "float":  # integer atomics sum the same bits in any order
            return _select_add_sorted(cp, x, dim, indices, values)
        shape = list(x.shape)
        shape[dim] = indices.shape[0]
        st = [0] * x.ndim
        st[dim] = _el(indices)[0]
        return _index_add(cp, x, dim, tuple(shape), indices, st, values)

    def cum_extreme(op):
        def run(self, x, dim):
            if x.size == 0:
                return x.copy()
            kd = kernel_dtype(x.dtype)
            # burn_gpu's scan (the one OpenCl runs): a thread per [outer, inner] line of the
            # contiguous [outer, n, inner] block, neighbours reading neighbouring addresses
            xc = cp.ascontiguousarray(x, dtype=kd)
            n = x.shape[dim]
            inner = math.prod(x.shape[dim + 1 :])
            outer = x.size // (n * inner)
            line = n * inner
            if line > _INT_MAX:
                raise ValueError(
                    f"cum{op}: {line} elements along and after dim {dim} of shape {x.shape}; "
                    f"at most {_INT_MAX} (the scan indexes with 32-bit ints)"
                )
            out = cp.empty_like(xc)
            k = kernel(f"cum{op}", kd)
            step = max(1, _INT_MAX // line)  # outer slices per launch: int indices
            flat_x, flat_o = xc.reshape(outer, line), out.reshape(outer, line)
            for a in range(0, outer, step):
                rows = min(step, outer - a)
                ints = (0, rows, n, inner)
                launch(k, rows * inner, flat_o[a:], flat_x[a:], *map(np.int32, ints))
            return out.astype(x.dtype, copy=False)

        return run

    def random(self, shape, distribution, device, dtype):
        device = self.default_device() if device is None else device
        return on_device(device.index, sample, cp, tuple(shape), distribution, dtype.np, device)

    def argmax(self, x, dim):
        return cp.argmax(x, axis=dim, keepdims=True).astype(self.int_dtype.np)

    def argmin(self, x, dim):
        return cp.argmin(x, axis=dim, keepdims=True).astype(self.int_dtype.np)

    ops.update(
        scatter=scatter,
        gather=gather,
        select=select,
        select_assign=select_assign,
        cummax=cum_extreme("max"),
        cummin=cum_extreme("min"),
        random=random,
        argmax=argmax,
        argmin=argmin,
    )
    return ops
