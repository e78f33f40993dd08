"""numpy float64 references of the eager elementwise kernels (`burn_gpu.KERNELS`): kernel name
-> f(a, b, c, s0, s1, i) over float64 (bools as bools), what the kernel must compute."""

from __future__ import annotations

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _where(m, x, y):
    return np.where(m.astype(bool), x, y)


def _common() -> dict:
    cmp = {
        "equal": np.equal,
        "not_equal": np.not_equal,
        "greater": np.greater,
        "greater_equal": np.greater_equal,
        "lower": np.less,
        "lower_equal": np.less_equal,
    }
    ref = {
        "copy": lambda a, b, c, s0, s1, i: a,
        "fill": lambda a, b, c, s0, s1, i: np.full(i.shape, s0),
        "arange": lambda a, b, c, s0, s1, i: s0 + i * s1,
        "mask_where": lambda a, b, c, s0, s1, i: _where(b, c, a),
        "mask_fill": lambda a, b, c, s0, s1, i: _where(b, s0, a),
        "neg": lambda a, b, c, s0, s1, i: -a,
        "clamp": lambda a, b, c, s0, s1, i: np.minimum(np.maximum(a, s0), s1),
        "clamp_min": lambda a, b, c, s0, s1, i: np.maximum(a, s0),
        "clamp_max": lambda a, b, c, s0, s1, i: np.minimum(a, s0),
        "add": lambda a, b, c, s0, s1, i: a + b,
        "sub": lambda a, b, c, s0, s1, i: a - b,
        "mul": lambda a, b, c, s0, s1, i: a * b,
    }
    for name, f in cmp.items():
        ref[name] = lambda a, b, c, s0, s1, i, f=f: f(a, b)
        ref[name + "_elem"] = lambda a, b, c, s0, s1, i, f=f: f(a, s0)
    for name in ("add", "sub", "mul"):
        ref[name + "_scalar"] = lambda a, b, c, s0, s1, i, f=ref[name]: f(a, s0, c, s0, s1, i)
    return ref


def _with_scalar(ref: dict, names) -> None:
    for name in names:
        ref[name + "_scalar"] = lambda a, b, c, s0, s1, i, f=ref[name]: f(a, s0, c, s0, s1, i)


def float_refs() -> dict:
    ref = _common()
    fns = {"erf": _erf, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan}
    fns.update({"asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh})
    for name in ("exp", "log", "log1p", "sqrt", "cos", "sin", "tan", "cosh", "sinh", "tanh"):
        fns[name] = getattr(np, name)
    fns.update({"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc})
    for name, f in fns.items():
        ref[name] = lambda a, b, c, s0, s1, i, f=f: f(a)
    ref.update(
        {
            "div": lambda a, b, c, s0, s1, i: a / b,
            "remainder": lambda a, b, c, s0, s1, i: np.remainder(a, b),
            "powf": lambda a, b, c, s0, s1, i: np.power(a, b),
            "atan2": lambda a, b, c, s0, s1, i: np.arctan2(a, b),
            "hypot": lambda a, b, c, s0, s1, i: np.hypot(a, b),
            "recip": lambda a, b, c, s0, s1, i: 1.0 / a,
            "round": lambda a, b, c, s0, s1, i: np.rint(a),
            "abs": lambda a, b, c, s0, s1, i: np.abs(a),
            "sign": lambda a, b, c, s0, s1, i: np.sign(a),
            "square": lambda a, b, c, s0, s1, i: a * a,
            "is_nan": lambda a, b, c, s0, s1, i: np.isnan(a),
            "is_inf": lambda a, b, c, s0, s1, i: np.isinf(a),
            "relu": lambda a, b, c, s0, s1, i: np.maximum(a, 0.0),
            "relu_backward": lambda a, b, c, s0, s1, i: np.where(a <= 0, 0.0, b),
            "sigmoid": lambda a, b, c, s0, s1, i: _sigmoid(a),
            "gelu": lambda a, b, c, s0, s1, i: 0.5 * a * (1.0 + _erf(a / math.sqrt(2.0))),
            "gelu_backward": lambda a, b, c, s0, s1, i: b * (
                0.5 * (1.0 + _erf(a / math.sqrt(2.0)))
                + a * np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
            ),
        }
    )
    _with_scalar(ref, ("div", "remainder", "powf"))
    return ref


def _int_div(a, b):  # C's truncating division; by 0 gives 0
    out = []
    for x, y in zip(a.flat, b.flat):
        x, y = int(x), int(y)
        out.append(0 if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1))
    return np.array(out)


def _int_rem(a, b):
    return np.array([0 if y == 0 else int(x) % int(y) for x, y in zip(a.flat, b.flat)])


def _int_pow(a, b):
    out = []
    for x, y in zip(a.flat, b.flat):
        x, y = int(x), int(y)
        out.append(x**y if y >= 0 else (1 if x == 1 else (-1) ** y if x == -1 else 0))
    return np.array(out)


def _shift(left: bool, bits: int):
    def f(a, b, c, s0, s1, i):
        out = []
        for x, y in zip(a.flat, b.flat):
            x, y = int(x), int(y)
            if not 0 <= y < bits:
                out.append(0 if left or x >= 0 else -1)
            else:  # wrap to the type's width
                v = (x << y) & ((1 << bits) - 1) if left else x >> y
                out.append(v - (1 << bits) if left and v >= 1 << (bits - 1) else v)
        return np.array(out).reshape(a.shape)

    return f


def int_refs(bits: int) -> dict:
    ref = _common()
    ref.update(
        {
            "abs": lambda a, b, c, s0, s1, i: np.abs(a),
            "square": lambda a, b, c, s0, s1, i: a * a,
            "sign": lambda a, b, c, s0, s1, i: np.sign(a),
            "bitwise_not": lambda a, b, c, s0, s1, i: ~a.astype(np.int64),
            "div": lambda a, b, c, s0, s1, i: _int_div(a, b).reshape(a.shape),
            "remainder": lambda a, b, c, s0, s1, i: _int_rem(a, b).reshape(a.shape),
            "powi": lambda a, b, c, s0, s1, i: _int_pow(a, b).reshape(a.shape),
            "bitwise_and": lambda a, b, c, s0, s1, i: a.astype(np.int64) & b.astype(np.int64),
            "bitwise_or": lambda a, b, c, s0, s1, i: a.astype(np.int64) | b.astype(np.int64),
            "bitwise_xor": lambda a, b, c, s0, s1, i: a.astype(np.int64) ^ b.astype(np.int64),
            "bitwise_left_shift": _shift(True, bits),
            "bitwise_right_shift": _shift(False, bits),
        }
    )
    names = ["div", "remainder", "powi"] + [n for n in ref if n.startswith("bitwise_")]
    for name in names:
        if name != "bitwise_not":
            ref[name + "_scalar"] = lambda a, b, c, s0, s1, i, f=ref[name]: f(
                a, np.full(a.shape, s0), c, s0, s1, i
            )
    return ref


def bool_refs() -> dict:
    ref = {
        k: v
        for k, v in _common().items()
        if k.split("_elem")[0] in ("copy", "fill", "mask_where", "mask_fill", "equal", "not_equal")
    }
    ref.update(
        {
            "not": lambda a, b, c, s0, s1, i: ~a.astype(bool),
            "and": lambda a, b, c, s0, s1, i: a.astype(bool) & b.astype(bool),
            "or": lambda a, b, c, s0, s1, i: a.astype(bool) | b.astype(bool),
            "xor": lambda a, b, c, s0, s1, i: a.astype(bool) ^ b.astype(bool),
        }
    )
    return ref
