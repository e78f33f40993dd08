"""The elementwise vocabulary of the Fusion fuzzer: unary, scalar and tensor binary ops,
comparisons, mask_where / mask_fill and casts over float, int and bool values.

`elementwise(g, x)` records one random op that applies to value `x` (a partner operand, when
the op takes one, is a held value or a fresh input that broadcasts with `x`). An op with a
restricted domain first *conditions* its operand with ops of its own (`log` of
`x.abs() + 0.5`, `acos` of `x.clamp(-0.875, 0.875)`): those are more ops of the same fused
chain, like the `(y + 1.0).sqrt()` of real code. An op with a jump (comparisons, floor, round,
casts to int, sign) applies only where the reference is exact or far from the jump (`Val.margin`).
"""

from __future__ import annotations

import numpy as np
from _fuzz_graph import SCALARS, Val, merged
from burn_tensor import DType, activation

_I = {DType.I32: DType.I64, DType.I64: DType.I32}

# -- domains: (does the reference fit, conditioning text, conditioning fn, keeps exactness) ------
POSITIVE = (lambda a: a.min() >= 0.25, "({0}.abs() + 0.5)", lambda t: t.abs() + 0.5, False)
NONZERO = (lambda a: np.abs(a).min() >= 0.25, "({0}.abs() + 0.5)", lambda t: t.abs() + 0.5, False)
DIVISOR = (lambda a: np.abs(a).min() >= 0.5, "({0}.abs() + 0.5)", lambda t: t.abs() + 0.5, False)
SMALL = (lambda a: np.abs(a).max() <= 4, "{0}.clamp(-4.0, 4.0)", lambda t: t.clamp(-4.0, 4.0), True)
UNIT = (
    lambda a: np.abs(a).max() <= 0.875,
    "{0}.clamp(-0.875, 0.875)",
    lambda t: t.clamp(-0.875, 0.875),
    True,
)
TAN = (
    lambda a: np.abs(a).max() <= 1.25,
    "{0}.clamp(-1.25, 1.25)",
    lambda t: t.clamp(-1.25, 1.25),
    True,
)
ABOVE1 = (lambda a: a.min() >= 1.125, "({0}.abs() + 1.125)", lambda t: t.abs() + 1.125, False)
EXPONENT = (
    lambda a: np.abs(a).max() <= 2, "{0}.clamp(-2.0, 2.0)", lambda t: t.clamp(-2.0, 2.0), True
)
#: sqrt: `y + 1.0` when that is enough (the issue's chain), else `|y| + 0.25`
SQRT = (lambda a: a.min() >= 0.25, "({0} + 1.0)", lambda t: t + 1.0, False)


def ensure(g, x: Val | None, domain) -> Val | None:
    """`x`, or `x` conditioned into `domain` by a few more recorded ops (None if impossible)."""
    if x is None:
        return None
    fits, text, fn, exact = domain
    if fits(x.a):
        return x
    if domain is SQRT and x.a.min() < -0.75:
        text, fn = "({0}.abs() + 0.25)", lambda t: t.abs() + 0.25
    y = g.emit(text, fn, [x], exact="keep" if exact else False)
    return y if y is not None and fits(y.a) else None


# -- jumps ---------------------------------------------------------------------------------------
def _far(a: np.ndarray, points, margin: float) -> bool:
    """Every element of `a` is more than `margin` away from the nearest of `points(a)`."""
    return margin == 0.0 or bool(np.all(np.abs(a - points(a)) > margin))


def _nearest_int(a):
    return np.round(a)


def _nearest_half(a):
    return np.floor(a) + 0.5


def _zero(a):
    return 0.0


def _far_apart(x: Val, y: Val) -> bool:
    if x.exact and y.exact:
        return True
    return bool(np.all(np.abs(x.a - y.a) > x.margin() + y.margin()))


# -- float -----------------------------------------------------------------------------------------
#: (name, fn, keeps exactness, domain or None)
FLOAT_UNARY = [
    ("neg", lambda t: -t, True, None),
    ("abs", lambda t: t.abs(), True, None),
    ("square", lambda t: t.square(), False, SMALL),
    ("exp", lambda t: t.exp(), False, SMALL),
    ("log", lambda t: t.log(), False, POSITIVE),
    ("log1p", lambda t: t.log1p(), False, POSITIVE),
    ("sqrt", lambda t: t.sqrt(), False, SQRT),
    ("recip", lambda t: t.recip(), False, NONZERO),
    ("cos", lambda t: t.cos(), False, None),
    ("sin", lambda t: t.sin(), False, None),
    ("tan", lambda t: t.tan(), False, TAN),
    ("cosh", lambda t: t.cosh(), False, SMALL),
    ("sinh", lambda t: t.sinh(), False, SMALL),
    ("tanh", lambda t: t.tanh(), False, None),
    ("acos", lambda t: t.acos(), False, UNIT),
    ("asin", lambda t: t.asin(), False, UNIT),
    ("atanh", lambda t: t.atanh(), False, UNIT),
    ("acosh", lambda t: t.acosh(), False, ABOVE1),
    ("asinh", lambda t: t.asinh(), False, None),
    ("atan", lambda t: t.atan(), False, None),
    ("erf", lambda t: t.erf(), False, None),
    ("sigmoid", activation.sigmoid, False, None),
    ("gelu", activation.gelu, False, None),
    ("relu", activation.relu, True, None),
    ("leaky_relu", activation.leaky_relu, False, None),
    ("silu", activation.silu, False, SMALL),
    ("hard_sigmoid", activation.hard_sigmoid, False, None),
]
#: unary ops with a jump: (name, fn, the jump points)
FLOAT_JUMPY = [
    ("floor", lambda t: t.floor(), _nearest_int),
    ("ceil", lambda t: t.ceil(), _nearest_int),
    ("trunc", lambda t: t.trunc(), _nearest_int),
    ("round", lambda t: t.round(), _nearest_half),
    ("sign", lambda t: t.sign(), _zero),
]
#: (name, text, fn(t, s), keeps exactness for a power-of-two scalar)
FLOAT_SCALAR = [
    ("add_scalar", "({0} + {s})", lambda t, s: t + s, False),
    ("sub_scalar", "({0} - {s})", lambda t, s: t - s, False),
    ("mul_scalar", "({0} * {s})", lambda t, s: t * s, True),
    ("div_scalar", "({0} / {s})", lambda t, s: t / s, True),
]
#: tensor binary ops: (name, fn, domain of the first operand, of the second, keeps exactness)
FLOAT_BINARY = [
    ("add", lambda a, b: a + b, None, None, False),
    ("sub", lambda a, b: a - b, None, None, False),
    ("mul", lambda a, b: a * b, SMALL, SMALL, False),
    ("div", lambda a, b: a / b, None, NONZERO, False),
    ("powf", lambda a, b: a.powf(b), POSITIVE, EXPONENT, False),
    ("hypot", lambda a, b: a.hypot(b), None, None, False),
    ("max_pair", lambda a, b: a.max_pair(b), None, None, True),
    ("min_pair", lambda a, b: a.min_pair(b), None, None, True),
]
_CMP = ["greater", "greater_equal", "lower", "lower_equal"]


def _scalar(g) -> float:
    return float(g.rng.choice(SCALARS))


def _float_unary(g, x):
    name, fn, exact, domain = FLOAT_UNARY[g.rng.integers(len(FLOAT_UNARY))]
    if domain is not None:
        x = ensure(g, x, domain)
    if x is None:
        return None
    return g.emit(f"{{0}}.{name}()", fn, [x], exact="keep" if exact else False)


def _float_jumpy(g, x):
    name, fn, points = FLOAT_JUMPY[g.rng.integers(len(FLOAT_JUMPY))]
    if not _far(x.a, points, x.margin()):
        return None
    return g.emit(f"{{0}}.{name}()", fn, [x], exact=True)


def _float_scalar(g, x):
    name, text, fn, exact = FLOAT_SCALAR[g.rng.integers(len(FLOAT_SCALAR))]
    s = _scalar(g)
    power_of_two = abs(s) in (0.25, 0.5, 1.0, 2.0)
    return g.emit(
        text.replace("{s}", repr(s)),
        lambda t: fn(t, s),
        [x],
        exact="keep" if exact and power_of_two else False,
    )


def _float_clamp(g, x):
    lo, hi = sorted(g.rng.choice(SCALARS, 2, replace=False))
    lo, hi = float(lo), float(hi)
    which = g.rng.integers(3)
    if which == 0:
        return g.emit(f"{{0}}.clamp({lo}, {hi})", lambda t: t.clamp(lo, hi), [x], exact="keep")
    if which == 1:
        return g.emit(f"{{0}}.clamp_min({lo})", lambda t: t.clamp_min(lo), [x], exact="keep")
    return g.emit(f"{{0}}.clamp_max({hi})", lambda t: t.clamp_max(hi), [x], exact="keep")


def _float_remainder(g, x):
    if g.rng.random() < 0.5:
        s = float(g.rng.choice([1.5, 2.0, -1.25, 0.75]))
        if not x.exact and not _far(x.a / s, _nearest_int, x.margin() / abs(s)):
            return None
        return g.emit(f"{{0}}.remainder({s})", lambda t: t.remainder(s), [x], exact=False)
    y = ensure(g, g.partner("f", x.shape), DIVISOR)
    if y is None:
        return None
    q = x.a / y.a
    if not (x.exact and y.exact) and not np.all(
        np.abs(q - np.round(q)) * np.abs(y.a) > x.margin() + y.margin() * (np.abs(q) + 1)
    ):
        return None
    return g.emit("{0}.remainder({1})", lambda a, b: a.remainder(b), [x, y])


def _float_binary(g, x):
    name, fn, da, db, exact = FLOAT_BINARY[g.rng.integers(len(FLOAT_BINARY))]
    y = g.partner("f", x.shape)
    if g.rng.random() < 0.3 and da is None and db is None:
        x, y = y, x  # the held value as the second operand
    x = ensure(g, x, da) if da is not None else x
    y = ensure(g, y, db) if db is not None else y
    if x is None or y is None:
        return None
    return g.emit(f"{{0}}.{name}({{1}})", fn, [x, y], exact="keep" if exact else False)


def _float_atan2(g, x):
    y = g.partner("f", x.shape)
    a, b = np.broadcast_arrays(x.a, y.a)
    m = max(x.margin() + y.margin(), 1e-30)
    if not (np.all(np.abs(a[b < 0]) > m) and np.all(np.hypot(a, b) > m)):
        return None  # atan2 jumps by 2 pi on the negative x axis
    return g.emit("{0}.atan2({1})", lambda p, q: p.atan2(q), [x, y])


def _float_compare(g, x):
    """A comparison of `x` with a partner or a scalar (a bool value)."""
    rng = g.rng
    if rng.random() < 0.5:
        s = _scalar(g)
        name = rng.choice([*_CMP, "equal", "not_equal"])
        if name in ("equal", "not_equal"):
            if not x.exact:
                return None
        elif not _far(x.a, lambda a: s, x.margin()):
            return None
        return g.emit(
            f"{{0}}.{name}_elem({s})", lambda t: getattr(t, f"{name}_elem")(s), [x], exact=True
        )
    y = g.partner("f", x.shape)
    name = rng.choice([*_CMP, "equal", "not_equal"])
    if name in ("equal", "not_equal"):
        if not (x.exact and y.exact):
            return None
    elif not _far_apart(x, y):
        return None
    return g.emit(f"{{0}}.{name}({{1}})", lambda a, b: getattr(a, name)(b), [x, y], exact=True)


def _mask(g, shape) -> Val:
    return g.partner("b", shape)


def _mask_ops(g, x):
    """mask_where / mask_fill on a value of any kind (its kind is kept)."""
    m = _mask(g, x.shape)
    if g.rng.random() < 0.5:
        y = g.partner(x.kind, merged(x.shape, m.shape))
        return g.emit(
            "{0}.mask_where({1}, {2})", lambda a, b, c: a.mask_where(b, c), [x, m, y], "keep"
        )
    s = {"f": _scalar(g), "i": int(g.rng.integers(-4, 5)), "b": bool(g.rng.random() < 0.5)}[x.kind]
    return g.emit(f"{{0}}.mask_fill({{1}}, {s!r})", lambda a, b: a.mask_fill(b, s), [x, m], "keep")


def _float_cast(g, x):
    which = g.rng.integers(3)
    if which == 0:
        if not _far(x.a, _nearest_int, x.margin()):
            return None
        return g.emit("{0}.int()", lambda t: t.int(), [x], exact=True)
    if which == 1:
        if not _far(x.a, _zero, x.margin()):
            return None
        return g.emit("{0}.bool()", lambda t: t.bool(), [x], exact=True)
    dt = g.other_float if x.f.dtype == g.float_dtype else g.float_dtype
    if dt is None:
        return None
    return g.emit(f"{{0}}.cast({dt.name})", lambda t: t.cast(dt), [x], exact="keep")


FLOAT_OPS = [
    (6, _float_unary),
    (2, _float_jumpy),
    (4, _float_scalar),
    (1, _float_clamp),
    (1, _float_remainder),
    (4, _float_binary),
    (1, _float_atan2),
    (2, _float_compare),
    (2, _mask_ops),
    (1, _float_cast),
]


# -- int -------------------------------------------------------------------------------------------
def _int_arith(g, x):
    rng = g.rng
    name = rng.choice(["add", "sub", "mul"])
    sym = {"add": "+", "sub": "-", "mul": "*"}[name]
    if rng.random() < 0.5:
        s = int(rng.integers(-3, 4))
        return g.emit(f"({{0}} {sym} {s})", lambda t: getattr(t, name)(s), [x], exact=True)
    y = g.partner("i", x.shape)
    return g.emit(f"({{0}} {sym} {{1}})", lambda a, b: getattr(a, name)(b), [x, y], exact=True)


def _int_unary(g, x):
    rng = g.rng
    which = rng.integers(6)
    if which == 0:
        return g.emit("(-{0})", lambda t: -t, [x], exact=True)
    if which == 1:
        return g.emit("{0}.abs()", lambda t: t.abs(), [x], exact=True)
    if which == 2:
        return g.emit("{0}.sign()", lambda t: t.sign(), [x], exact=True)
    if which == 3:
        lo, hi = sorted(int(v) for v in rng.choice(np.arange(-5, 6), 2, replace=False))
        return g.emit(f"{{0}}.clamp({lo}, {hi})", lambda t: t.clamp(lo, hi), [x], exact="keep")
    if which == 4:  # integer division runs unfused (the Tensor layer checks for zero)
        s = int(rng.integers(1, 4))
        return g.emit(f"({{0}} / {s})", lambda t: t / s, [x], exact=True)
    dt = _I.get(x.f.dtype)
    return g.emit(f"{{0}}.cast({dt.name})", lambda t: t.cast(dt), [x], exact=True)


def _int_compare(g, x):
    rng = g.rng
    name = rng.choice([*_CMP, "equal", "not_equal"])
    if rng.random() < 0.5:
        s = int(rng.integers(-3, 4))
        return g.emit(
            f"{{0}}.{name}_elem({s})", lambda t: getattr(t, f"{name}_elem")(s), [x], exact=True
        )
    y = g.partner("i", x.shape)
    return g.emit(f"{{0}}.{name}({{1}})", lambda a, b: getattr(a, name)(b), [x, y], exact=True)


def _int_cast(g, x):
    if g.rng.random() < 0.6:
        return g.emit("{0}.float()", lambda t: t.float(), [x], exact=True)
    return g.emit("{0}.bool()", lambda t: t.bool(), [x], exact=True)


INT_OPS = [(4, _int_arith), (3, _int_unary), (2, _int_compare), (2, _int_cast), (2, _mask_ops)]


# -- bool ------------------------------------------------------------------------------------------
def _bool_logic(g, x):
    rng = g.rng
    if rng.random() < 0.3:
        return g.emit("{0}.bool_not()", lambda t: t.bool_not(), [x], exact=True)
    name = rng.choice(["bool_and", "bool_or", "bool_xor", "equal", "not_equal"])
    y = g.partner("b", x.shape)
    return g.emit(f"{{0}}.{name}({{1}})", lambda a, b: getattr(a, name)(b), [x, y], exact=True)


def _bool_cast(g, x):
    if g.rng.random() < 0.5:
        return g.emit("{0}.float()", lambda t: t.float(), [x], exact=True)
    return g.emit("{0}.int()", lambda t: t.int(), [x], exact=True)


BOOL_OPS = [(3, _bool_logic), (2, _bool_cast), (1, _mask_ops)]
_BY_KIND = {"f": FLOAT_OPS, "i": INT_OPS, "b": BOOL_OPS}


def elementwise(g, x: Val, kind_of_result: str | None = None, tries: int = 8) -> Val | None:
    """One random elementwise op over `x` (None when no op fits after `tries` attempts).
    `kind_of_result`: only results of that kind ("f" keeps a float chain float)."""
    table = _BY_KIND[x.kind]
    weights = np.array([w for w, _ in table], dtype=float)
    weights /= weights.sum()
    for _ in range(tries):
        fn = table[g.rng.choice(len(table), p=weights)][1]
        v = fn(g, x)
        if v is not None and (kind_of_result is None or v.kind == kind_of_result):
            return v
    return None


def shape_keeping_float_op(g, x: Val) -> Val | None:
    """A float op whose result has `x`'s shape and dtype (what the buffer reuse can write into
    `x`'s buffer): unary, scalar, or binary with a partner that broadcasts to `x`."""
    for _ in range(8):
        which = g.rng.integers(3)
        if which == 0:
            v = _float_unary(g, x)
        elif which == 1:
            v = _float_scalar(g, x)
        else:
            y = g.partner("f", x.shape, grow=False)
            v = g.emit("({0} + {1})", lambda a, b: a + b, [x, y])
        if v is not None and v.shape == x.shape and v.f.dtype == x.f.dtype:
            return v
    return None


def retyping_op(g, x: Val) -> Val | None:
    """A comparison or a cast of float `x`: a result of `x`'s shape and another dtype (which
    must never be written into a float buffer)."""
    for _ in range(4):
        v = _float_compare(g, x) if g.rng.random() < 0.5 else _float_cast(g, x)
        if v is not None and v.shape == x.shape:
            return v
    return None
