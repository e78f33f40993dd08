"""Implementations shared by the float and int families (casts, division, reductions, sorting,
clamps).

`make_numeric(kind, xp)` builds them over an array namespace: numpy for NdArray (with
ufunc-reduce fast paths), cupy for burn_cuda, which overrides what has no cupy equivalent here
(scatter-adds, cumulative max/min). Random draws are each backend's own (its generators).
"""

from __future__ import annotations

import numpy as np

# Bound ufunc reductions: `np.sum`/`np.max`/`np.mean` add two or three Python frames
# (_wrapreduction, _methods._mean) that dominate on small tensors.
_add_reduce = np.add.reduce
_mul_reduce = np.multiply.reduce
_max_reduce = np.maximum.reduce
_min_reduce = np.minimum.reduce
_true_divide = np.true_divide
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def sum_dtype(dtype) -> np.dtype:
    """The dtype a sum (or mean) of `dtype` elements accumulates in: float32 for float16, rounded
    to float16 once at the end (as torch's and cupy's own half sums do), else `dtype` itself.

    numpy reduces a float16 array over any axis but the last by adding whole rows into a
    float16 buffer, so every partial sum is rounded to 11 bits: summing 64 rows of N(0, 2)
    values came out 0.015 off where float32 accumulation is within float16's last bit.
    """
    # bfloat16 (ml_dtypes' on numpy) keeps 8 bits: its partial sums are rounded worse still
    return _F32 if dtype == _F16 or getattr(dtype, "name", "") == "bfloat16" else dtype


def _int_div(x, y):
    # Integer division truncating toward zero (Rust/Burn semantics), not numpy's floor division.
    q = np.floor_divide(x, y)
    r = np.remainder(x, y)
    fix = (r != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0))
    return np.where(fix, q + 1, q).astype(np.result_type(x, y), copy=False)


def int_div_for(xp):
    """`_int_div` over namespace `xp`; `y` is an array of `xp` or a numpy scalar (device
    namespaces take no host arrays, so nothing here wraps operands with `np.asarray`)."""
    if xp is np:
        return _int_div

    def int_div(x, y):
        q = xp.floor_divide(x, y)
        r = xp.remainder(x, y)
        fix = (r != 0) & ((x < 0) != (y < 0))
        return xp.where(fix, q + 1, q).astype(q.dtype, copy=False)

    return int_div


def _reducers(xp):
    """(sum, prod, max, min) reductions with numpy's ufunc-reduce positional signature
    `(x, axis, dtype, out, keepdims)`: numpy's bound `reduce`s (no Python frame), else the
    namespace's functions."""
    if xp is np:
        return _add_reduce, _mul_reduce, _max_reduce, _min_reduce

    def add(x, axis, dtype=None, out=None, keepdims=False):
        return xp.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)

    def mul(x, axis, dtype=None, out=None, keepdims=False):
        return xp.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)

    def max_(x, axis, dtype=None, out=None, keepdims=False):
        return xp.max(x, axis=axis, keepdims=keepdims)

    def min_(x, axis, dtype=None, out=None, keepdims=False):
        return xp.min(x, axis=axis, keepdims=keepdims)

    return add, mul, max_, min_


def make_numeric(kind: str, xp=np) -> dict:
    """The float (`kind="float"`) or int family's shared ops over array namespace `xp`.

    Example:
        >>> ops = make_numeric("float")
        >>> ops["sum_dim"](None, np.ones((2, 3), np.float32), 1).tolist()
        [[3.0], [3.0]]
    """
    is_float = kind == "float"
    on_numpy = xp is np
    _add_reduce, _mul_reduce, _max_reduce, _min_reduce = _reducers(xp)
    int_div = int_div_for(xp)

    def cast(self, x, dtype):
        return x.astype(dtype.np)

    def div(self, x, y):
        return xp.divide(x, y) if is_float else int_div(x, y)

    def div_scalar(self, x, s):
        if is_float:
            return xp.divide(x, s).astype(x.dtype, copy=False)
        return int_div(x, np.asarray(s, x.dtype) if on_numpy else x.dtype.type(s))

    def sum_(self, x):
        if x.dtype == _F16 or x.dtype.kind == "V":  # f32 accumulation, bf16 too (sum_dtype)
            return _add_reduce(x, None, _F32).astype(x.dtype).reshape(1)
        return _add_reduce(x, None, x.dtype).reshape(1)

    def prod(self, x):
        return _mul_reduce(x, None, x.dtype).reshape(1)

    def sum_dim(self, x, dim):
        if x.dtype == _F16 or x.dtype.kind == "V":  # f32 accumulation, bf16 too (sum_dtype)
            return _add_reduce(x, dim, _F32, None, True).astype(x.dtype)
        return _add_reduce(x, dim, x.dtype, None, True)

    def prod_dim(self, x, dim):
        return _mul_reduce(x, dim, x.dtype, None, True)

    def mean_dim(self, x, dim):
        if is_float:
            n = x.shape[dim]
            if n == 0:  # np.mean's NaN result (and its warning) for an empty dim
                return xp.mean(x, axis=dim, keepdims=True, dtype=x.dtype)
            # What np.mean does, without its Python frames: sum, then divide in place
            # (float16 accumulates in float32, see sum_dtype).
            s = _add_reduce(x, dim, sum_dtype(x.dtype), None, True)
            if not on_numpy:
                return (s / n).astype(x.dtype, copy=False)
            s = _true_divide(s, n, out=s, casting="unsafe")
            return s if s.dtype == x.dtype else s.astype(x.dtype)
        n = max(x.shape[dim], 1)
        total = xp.sum(x, axis=dim, keepdims=True, dtype=np.int64)
        return int_div(total, np.int64(n)).astype(x.dtype)

    def mean(self, x):
        if is_float:
            if x.size == 0:
                return xp.mean(x, dtype=x.dtype).reshape(1)
            total = _add_reduce(x, None, sum_dtype(x.dtype))
            return (total / x.size).astype(x.dtype, copy=False).reshape(1)
        total = xp.sum(x, dtype=np.int64)
        return int_div(total, np.int64(max(x.size, 1))).astype(x.dtype).reshape(1)

    def argmax(self, x, dim):
        return x.argmax(axis=dim, keepdims=True).astype(self.int_dtype.np)

    def argmin(self, x, dim):
        return x.argmin(axis=dim, keepdims=True).astype(self.int_dtype.np)

    def max_dim(self, x, dim):
        return _max_reduce(x, dim, None, None, True)

    def min_dim(self, x, dim):
        return _min_reduce(x, dim, None, None, True)

    def max_(self, x):
        return _max_reduce(x, None).reshape(1)

    def min_(self, x):
        return _min_reduce(x, None).reshape(1)

    def max_dim_with_indices(self, x, dim):
        idx = xp.argmax(x, axis=dim, keepdims=True)
        return xp.take_along_axis(x, idx, axis=dim), idx.astype(self.int_dtype.np)

    def min_dim_with_indices(self, x, dim):
        idx = xp.argmin(x, axis=dim, keepdims=True)
        return xp.take_along_axis(x, idx, axis=dim), idx.astype(self.int_dtype.np)

    def cumsum(self, x, dim):
        acc = sum_dtype(x.dtype)  # float16: float32 running sums, each rounded once
        out = xp.cumsum(x, axis=dim, dtype=acc)
        return out if acc == x.dtype else out.astype(x.dtype)

    def cumprod(self, x, dim):
        return xp.cumprod(x, axis=dim, dtype=x.dtype)

    def cummin(self, x, dim):
        return np.minimum.accumulate(x, axis=dim)

    def cummax(self, x, dim):
        return np.maximum.accumulate(x, axis=dim)

    # Scatter-adds copy x into the sum dtype (float16 -> float32, as Cuda's kernels do) so
    # duplicate indices accumulate there and the result is rounded to float16 once.
    def scatter(self, dim, x, indices, values):
        out = x.astype(sum_dtype(x.dtype), order="C")  # a C-ordered copy, as x.copy()
        idx = list(np.indices(indices.shape, sparse=True))
        idx[dim] = indices.astype(np.intp, copy=False)
        np.add.at(out, tuple(idx), values)
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def select_assign(self, x, dim, indices, values):
        out = x.astype(sum_dtype(x.dtype), order="C")  # a C-ordered copy, as x.copy()
        np.add.at(out, (slice(None),) * dim + (indices.astype(np.intp, copy=False),), values)
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def argsort(x, dim):
        # cupy's argsort is always stable and takes no `kind`.
        return np.argsort(x, axis=dim, kind="stable") if on_numpy else xp.argsort(x, axis=dim)

    def sort_with_indices(self, x, dim, descending=False):
        if descending:
            # Stable descending: sort the flipped rows ascending, then flip back, so equal
            # values keep their original order (a plain reversal would invert it).
            n = x.shape[dim]
            idx = xp.flip(argsort(xp.flip(x, dim), dim), dim)
            idx = (n - 1) - idx
        else:
            idx = argsort(x, dim)
        return xp.take_along_axis(x, idx, axis=dim), idx.astype(self.int_dtype.np)

    # Scalars as the tensor's own dtype: numpy 0-d arrays, numpy scalars for device namespaces.
    def scalar(v, dtype):
        return np.asarray(v, dtype) if on_numpy else dtype.type(v)

    def clamp(self, x, lo, hi):
        return xp.clip(x, scalar(lo, x.dtype), scalar(hi, x.dtype))

    def clamp_min(self, x, lo):
        return xp.maximum(x, scalar(lo, x.dtype))

    def clamp_max(self, x, hi):
        return xp.minimum(x, scalar(hi, x.dtype))

    def sign(self, x):
        return xp.sign(x)

    fns = {
        "cast": cast,
        "div": div,
        "div_scalar": div_scalar,
        "sum": sum_,
        "prod": prod,
        "sum_dim": sum_dim,
        "prod_dim": prod_dim,
        "mean_dim": mean_dim,
        "mean": mean,
        "argmax": argmax,
        "argmin": argmin,
        "max_dim": max_dim,
        "min_dim": min_dim,
        "max": max_,
        "min": min_,
        "max_dim_with_indices": max_dim_with_indices,
        "min_dim_with_indices": min_dim_with_indices,
        "cumsum": cumsum,
        "cumprod": cumprod,
        "cummin": cummin,
        "cummax": cummax,
        "scatter": scatter,
        "select_assign": select_assign,
        "sort_with_indices": sort_with_indices,
        "clamp": clamp,
        "clamp_min": clamp_min,
        "clamp_max": clamp_max,
        "sign": sign,
    }
    return fns
