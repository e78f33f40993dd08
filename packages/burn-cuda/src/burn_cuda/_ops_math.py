"""Elementwise op table on cupy: ufuncs installed directly (one launch, no extra Python work),
plus the few ops that need a cast, a scalar of the tensor's dtype or a float32 detour."""

from __future__ import annotations

import numpy as np


def _float32_detour(cp, fn):
    """fn on float32 for float16 inputs (cupy has no half version of it), cast back."""

    def op(self, x):
        if x.dtype == np.float16:
            return fn(x.astype(np.float32)).astype(np.float16)
        return fn(x)

    return op


def elementwise_ops(cp) -> dict:
    """Full op names (`float_exp`, `int_add`, `bool_not`, ...) -> function or staticmethod."""
    from cupyx.scipy import special

    from ._bool_reduce import reduce_bool, reduce_bool_all

    table: dict = {}
    ufuncs = {
        "add": cp.add,
        "sub": cp.subtract,
        "mul": cp.multiply,
        "remainder": cp.remainder,
        "greater": cp.greater,
        "greater_equal": cp.greater_equal,
        "lower": cp.less,
        "lower_equal": cp.less_equal,
        "equal_elem": cp.equal,
        "greater_elem": cp.greater,
        "greater_equal_elem": cp.greater_equal,
        "lower_elem": cp.less,
        "lower_equal_elem": cp.less_equal,
        "not_equal": cp.not_equal,
        "not_equal_elem": cp.not_equal,
        "abs": cp.abs,
        "neg": cp.negative,
        "add_scalar": cp.add,
        "sub_scalar": cp.subtract,
        "mul_scalar": cp.multiply,
        "remainder_scalar": cp.remainder,
    }
    for prefix in ("float_", "int_"):
        for name, uf in ufuncs.items():
            table[prefix + name] = staticmethod(uf)
    float_ufuncs = {
        "exp": cp.exp,
        "log": cp.log,
        "log1p": cp.log1p,
        "sqrt": cp.sqrt,
        "cos": cp.cos,
        "sin": cp.sin,
        "tan": cp.tan,
        "cosh": cp.cosh,
        "sinh": cp.sinh,
        "tanh": cp.tanh,
        "acos": cp.arccos,
        "acosh": cp.arccosh,
        "asin": cp.arcsin,
        "asinh": cp.arcsinh,
        "atan": cp.arctan,
        "atanh": cp.arctanh,
        "atan2": cp.arctan2,
        "round": cp.rint,  # half to even, as Burn
        "floor": cp.floor,
        "ceil": cp.ceil,
        "trunc": cp.trunc,
        "powf": cp.power,
        "div": cp.divide,
        "is_nan": cp.isnan,
        "is_inf": cp.isinf,
        "hypot": cp.hypot,
        "recip": cp.reciprocal,
    }
    for name, uf in float_ufuncs.items():
        table["float_" + name] = staticmethod(uf)
    table["float_erf"] = _float32_detour(cp, special.erf)

    def float_powf_scalar(self, x, s):
        return cp.power(x, x.dtype.type(s))

    def cast_to(self, x, dtype):
        return x.astype(dtype.np)

    def int_arange_step(self, start, end, step, device, dtype):
        with cp.cuda.Device(device.index if device is not None else 0):
            return cp.arange(start, end, step, dtype=dtype.np)

    def int_powi(self, x, y):
        return cp.power(x, y)

    def int_powi_scalar(self, x, s):
        if s < 0:
            raise ValueError("int_powi_scalar: negative exponents are not defined for Int tensors")
        return cp.power(x, x.dtype.type(s))

    # burn_gpu's max / min kernels over the bool bytes (`_bool_reduce`: cupy's `any` / `all`
    # compiled a kernel per new geometry); cupy's for what they do not take (empty arrays)
    def bool_any(self, x):
        out = reduce_bool_all("max", x)
        return cp.any(x).reshape(1) if out is None else out

    def bool_all(self, x):
        out = reduce_bool_all("min", x)
        return cp.all(x).reshape(1) if out is None else out

    def bool_any_dim(self, x, dim):
        out = reduce_bool("max", x, dim)
        return cp.any(x, axis=dim, keepdims=True) if out is None else out

    def bool_all_dim(self, x, dim):
        out = reduce_bool("min", x, dim)
        return cp.all(x, axis=dim, keepdims=True) if out is None else out

    def bool_argwhere(self, x):
        # Its size depends on the data: this reads the count back (a sync), as torch.nonzero.
        return cp.argwhere(x).astype(self.int_dtype.np).reshape(-1, x.ndim)

    def relu(self, x):
        return cp.maximum(x, x.dtype.type(0))

    table.update(
        float_powf_scalar=float_powf_scalar,
        float_into_int=cast_to,
        int_into_float=cast_to,
        bool_into_int=cast_to,
        bool_into_float=cast_to,
        int_arange_step=int_arange_step,
        int_powi=int_powi,
        int_powi_scalar=int_powi_scalar,
        bool_any=bool_any,
        bool_all=bool_all,
        bool_any_dim=bool_any_dim,
        bool_all_dim=bool_all_dim,
        bool_argwhere=bool_argwhere,
        relu=relu,
        bool_not=staticmethod(cp.logical_not),
        bool_and=staticmethod(cp.logical_and),
        bool_or=staticmethod(cp.logical_or),
        bool_xor=staticmethod(cp.logical_xor),
        bool_not_equal=staticmethod(cp.not_equal),
        bool_equal=staticmethod(cp.equal),
        bitwise_and=staticmethod(cp.bitwise_and),
        bitwise_or=staticmethod(cp.bitwise_or),
        bitwise_xor=staticmethod(cp.bitwise_xor),
        bitwise_not=staticmethod(cp.invert),
        bitwise_left_shift=staticmethod(cp.left_shift),
        bitwise_right_shift=staticmethod(cp.right_shift),
        bitwise_and_scalar=staticmethod(cp.bitwise_and),
        bitwise_or_scalar=staticmethod(cp.bitwise_or),
        bitwise_xor_scalar=staticmethod(cp.bitwise_xor),
        bitwise_left_shift_scalar=staticmethod(cp.left_shift),
        bitwise_right_shift_scalar=staticmethod(cp.right_shift),
    )
    return table
