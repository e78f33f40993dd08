"""Default decompositions shared by the float and int op families.

`NumericDefaults` is written once against a kind prefix: `make_numeric_defaults("float")` produces the
methods `float_neg`, `float_max_dim`, ... each calling the backend's own required ops, so a decorator
backend (Autodiff) running a default records only the primitive ops it is made of.
"""

from __future__ import annotations

import math

import numpy as np

from ._data import TensorData


def make_numeric_defaults(k: str) -> dict:
    """Default ops for kind prefix `k` ("float" or "int")."""

    def op(self, name):
        return getattr(self, f"{k}_{name}")

    def zeros(self, shape, device, dtype):
        return op(self, "from_data")(TensorData(np.zeros(shape, dtype.np)), device)

    def ones(self, shape, device, dtype):
        return op(self, "from_data")(TensorData(np.ones(shape, dtype.np)), device)

    def full(self, shape, value, device, dtype):
        return op(self, "from_data")(TensorData(np.full(shape, value, dtype.np)), device)

    def neg(self, x):
        return op(self, "mul_scalar")(x, -1)

    def sign(self, x):
        pos = op(self, "greater_elem")(x, 0)
        neg_ = op(self, "lower_elem")(x, 0)
        conv = self.bool_into_float if k == "float" else self.bool_into_int
        dtype = _dtype_of(x)
        return op(self, "sub")(conv(pos, dtype), conv(neg_, dtype))

    def clamp_min(self, x, lo):
        return op(self, "mask_fill")(x, op(self, "lower_elem")(x, lo), lo)

    def clamp_max(self, x, hi):
        return op(self, "mask_fill")(x, op(self, "greater_elem")(x, hi), hi)

    def clamp(self, x, lo, hi):
        return op(self, "clamp_max")(op(self, "clamp_min")(x, lo), hi)

    def transpose(self, x):
        n = len(x.shape)
        return op(self, "swap_dims")(x, n - 2, n - 1) if n >= 2 else x

    def repeat_dim(self, x, dim, times):
        # [.., d, ..] -> [.., 1, d, ..] -> expand [.., times, d, ..] -> reshape [.., times*d, ..]
        shape = tuple(x.shape)
        y = op(self, "reshape")(x, shape[:dim] + (1,) + shape[dim:])
        y = op(self, "expand")(y, shape[:dim] + (times,) + shape[dim:])
        return op(self, "reshape")(y, shape[:dim] + (times * shape[dim],) + shape[dim + 1 :])

    def not_equal(self, x, y):
        return self.bool_not(op(self, "equal")(x, y))

    def not_equal_elem(self, x, s):
        return self.bool_not(op(self, "equal_elem")(x, s))

    def mean(self, x):
        n = math.prod(x.shape)
        flat = op(self, "reshape")(x, (n,))
        return op(self, "mean_dim")(flat, 0)

    def max_dim(self, x, dim):
        return op(self, "gather")(dim, x, op(self, "argmax")(x, dim))

    def min_dim(self, x, dim):
        return op(self, "gather")(dim, x, op(self, "argmin")(x, dim))

    def max_dim_with_indices(self, x, dim):
        idx = op(self, "argmax")(x, dim)
        return op(self, "gather")(dim, x, idx), idx

    def min_dim_with_indices(self, x, dim):
        idx = op(self, "argmin")(x, dim)
        return op(self, "gather")(dim, x, idx), idx

    def max(self, x):
        return op(self, "max_dim")(op(self, "reshape")(x, (math.prod(x.shape),)), 0)

    def min(self, x):
        return op(self, "min_dim")(op(self, "reshape")(x, (math.prod(x.shape),)), 0)

    def max_abs(self, x):
        return op(self, "max")(op(self, "abs")(x))

    def max_abs_dim(self, x, dim):
        return op(self, "max_dim")(op(self, "abs")(x), dim)

    def any(self, x):
        return self.bool_any(op(self, "not_equal_elem")(x, 0))

    def any_dim(self, x, dim):
        return self.bool_any_dim(op(self, "not_equal_elem")(x, 0), dim)

    def all(self, x):
        return self.bool_all(op(self, "not_equal_elem")(x, 0))

    def all_dim(self, x, dim):
        return self.bool_all_dim(op(self, "not_equal_elem")(x, 0), dim)

    def powi(self, x, y):
        if k == "float":
            return self.float_powf(x, self.int_into_float(y, _dtype_of(x)))
        return _host_binary(self, "int", x, y, lambda a, b: a**b)

    def powi_scalar(self, x, s):
        if k == "float":
            return self.float_powf_scalar(x, float(s))
        # Integer powers by repeated multiplication keep exact integer semantics.
        if s < 0:
            raise ValueError("int_powi_scalar: negative exponents are not defined for Int tensors")
        out = None
        base = x
        e = int(s)
        while e:
            if e & 1:
                out = base if out is None else op(self, "mul")(out, base)
            e >>= 1
            if e:
                base = op(self, "mul")(base, base)
        if out is None:
            out = op(self, "add_scalar")(op(self, "mul_scalar")(x, 0), 1)
        return out

    def sort_with_indices(self, x, dim, descending=False):
        return _host_sort(self, k, x, dim, descending)

    def sort(self, x, dim, descending=False):
        return op(self, "sort_with_indices")(x, dim, descending)[0]

    def argsort(self, x, dim, descending=False):
        return op(self, "sort_with_indices")(x, dim, descending)[1]

    def unfold(self, x, dim, size, step):
        # windows of `size` every `step` along dim, appended as a new last dim (torch.Tensor.unfold)
        n = x.shape[dim]
        count = (n - size) // step + 1 if n >= size else 0
        parts = []
        for i in range(count):
            sl = tuple(
                slice(i * step, i * step + size, 1) if d == dim else slice(0, s, 1)
                for d, s in enumerate(x.shape)
            )
            w = op(self, "slice")(x, sl)
            w = op(self, "reshape")(w, tuple(w.shape) + (1,))
            w = op(self, "swap_dims")(w, dim, len(w.shape) - 1)
            parts.append(w)
        if not parts:
            shape = list(x.shape)
            shape[dim] = 0
            return op(self, "empty")(tuple(shape) + (size,), None, _dtype_of(x))
        return op(self, "cat")(parts, dim)

    fns = {
        "zeros": zeros,
        "ones": ones,
        "full": full,
        "neg": neg,
        "sign": sign,
        "clamp_min": clamp_min,
        "clamp_max": clamp_max,
        "clamp": clamp,
        "transpose": transpose,
        "repeat_dim": repeat_dim,
        "not_equal": not_equal,
        "not_equal_elem": not_equal_elem,
        "mean": mean,
        "max_dim": max_dim,
        "min_dim": min_dim,
        "max_dim_with_indices": max_dim_with_indices,
        "min_dim_with_indices": min_dim_with_indices,
        "max": max,
        "min": min,
        "max_abs": max_abs,
        "max_abs_dim": max_abs_dim,
        "any": any,
        "any_dim": any_dim,
        "all": all,
        "all_dim": all_dim,
        "powi": powi,
        "powi_scalar": powi_scalar,
        "sort_with_indices": sort_with_indices,
        "sort": sort,
        "argsort": argsort,
        "unfold": unfold,
    }
    out = {}
    for name, fn in fns.items():
        full_name = f"{k}_{name}"
        fn.__name__ = fn.__qualname__ = full_name
        out[full_name] = fn
    return out


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)


def _host_sort(self, k, x, dim, descending):
    """Sort through the host: correct on every backend; fast backends override it."""
    into = getattr(self, f"{k}_into_data")
    frm = getattr(self, f"{k}_from_data")
    arr = into(x).array
    key = -arr if (descending and arr.dtype.kind != "u") else arr
    idx = np.argsort(key, axis=dim, kind="stable")
    if descending and arr.dtype.kind == "u":
        idx = np.flip(np.argsort(arr, axis=dim, kind="stable"), axis=dim)
    vals = np.take_along_axis(arr, idx, axis=dim)
    device = _device_hint(self, x)
    return frm(TensorData(vals), device), self.int_from_data(
        TensorData(idx.astype(self.int_dtype.np)), device
    )


def _host_binary(self, k, x, y, fn):
    a = getattr(self, f"{k}_into_data")(x).array
    b = getattr(self, f"{k}_into_data")(y).array
    return getattr(self, f"{k}_from_data")(
        TensorData(fn(a, b).astype(a.dtype)), _device_hint(self, x)
    )


def _device_hint(self, x):
    return self.device_of(x)
