"""Gradient rules of elementwise arithmetic, unary math and matmul.

Binary ops broadcast size-1 dims, so their gradients are summed back to each input's shape.
"""

from __future__ import annotations

import math

from ._rule import RULES, reduce_to, rule, transpose, zeros

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- binary ------------------------------------------------------------------------------------------
def _add(c, g):
    # `c.need(i)` and `reduce_to`'s no-broadcast case inline: a residual add (two per layer of
    # issue 35's transformer step) returns `g` itself to both inputs without a call.
    b, need, args = c.b, c.parents, c.args
    gs = tuple(g.shape)
    gx = gy = None
    if need[0] is not None:
        gx = g if gs == tuple(args[0].shape) else reduce_to(b, g, c.shape(0))
    if need[1] is not None:
        gy = g if gs == tuple(args[1].shape) else reduce_to(b, g, c.shape(1))
    return gx, gy


def _sub(c, g):
    b = c.b
    return (
        reduce_to(b, g, c.shape(0)) if c.need(0) else None,
        reduce_to(b, b.float_neg(g), c.shape(1)) if c.need(1) else None,
    )


def _mul(c, g):
    # As `_add`: `c.need(i)` inline, `reduce_to` only when the product's shape is not the
    # input's (dropout's `x * mask`, three per layer of the step, never broadcasts).
    b, need, args = c.b, c.parents, c.args
    gx = gy = None
    if need[0] is not None:
        gx = b.float_mul(g, c.x(1))
        if tuple(gx.shape) != tuple(args[0].shape):
            gx = reduce_to(b, gx, c.shape(0))
    if need[1] is not None:
        gy = b.float_mul(g, c.x(0))
        if tuple(gy.shape) != tuple(args[1].shape):
            gy = reduce_to(b, gy, c.shape(1))
    return gx, gy


def _div(c, g):
    b = c.b
    y = c.x(1)
    gx = reduce_to(b, b.float_div(g, y), c.shape(0)) if c.need(0) else None
    gy = None
    if c.need(1):
        # d(x/y)/dy = -x / y^2
        gy = b.float_neg(b.float_div(b.float_mul(g, c.x(0)), b.float_mul(y, y)))
        gy = reduce_to(b, gy, c.shape(1))
    return gx, gy


def _remainder(c, g):
    # x - y * floor(x / y): d/dx = 1, d/dy = -floor(x / y) (away from the jumps)
    b = c.b
    gx = reduce_to(b, g, c.shape(0)) if c.need(0) else None
    gy = None
    if c.need(1):
        q = b.float_floor(b.float_div(c.x(0), c.x(1)))
        gy = reduce_to(b, b.float_neg(b.float_mul(g, q)), c.shape(1))
    return gx, gy


def _powf(c, g):
    b = c.b
    x, y = c.x(0), c.x(1)
    gx = gy = None
    if c.need(0):
        # y * x^(y-1)
        d = b.float_mul(y, b.float_powf(x, b.float_sub_scalar(y, 1.0)))
        gx = reduce_to(b, b.float_mul(g, d), c.shape(0))
    if c.need(1):
        # x^y * ln(x); recomputing x^y avoids keeping the output alive
        d = b.float_mul(b.float_powf(x, y), b.float_log(x))
        gy = reduce_to(b, b.float_mul(g, d), c.shape(1))
    return gx, gy


def _atan2(c, g):
    # atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    b = c.b
    x, y = c.x(0), c.x(1)
    denom = b.float_add(b.float_mul(x, x), b.float_mul(y, y))
    gd = b.float_div(g, denom)
    return (
        reduce_to(b, b.float_mul(gd, y), c.shape(0)) if c.need(0) else None,
        reduce_to(b, b.float_neg(b.float_mul(gd, x)), c.shape(1)) if c.need(1) else None,
    )


def _hypot(c, g):
    b = c.b
    gd = b.float_div(g, c.output())
    return (
        reduce_to(b, b.float_mul(gd, c.x(0)), c.shape(0)) if c.need(0) else None,
        reduce_to(b, b.float_mul(gd, c.x(1)), c.shape(1)) if c.need(1) else None,
    )


def _matmul(c, g):
    b = c.b
    x, y = c.x(0), c.x(1)
    gx = reduce_to(b, b.float_matmul(g, transpose(b, y)), c.shape(0)) if c.need(0) else None
    gy = reduce_to(b, b.float_matmul(transpose(b, x), g), c.shape(1)) if c.need(1) else None
    return gx, gy


RULES["float_add"] = rule(_add, memory_bound=True)
RULES["float_sub"] = rule(_sub, memory_bound=True)
RULES["float_mul"] = rule(_mul, keep=(0, 1), memory_bound=True)
RULES["float_div"] = rule(_div, keep=(0, 1), memory_bound=True)
RULES["float_remainder"] = rule(_remainder, keep=(0, 1), memory_bound=True)
RULES["float_powf"] = rule(_powf, keep=(0, 1), memory_bound=True)
RULES["float_atan2"] = rule(_atan2, keep=(0, 1), memory_bound=True)
RULES["float_hypot"] = rule(_hypot, keep=(0, 1), out=True)
RULES["float_matmul"] = rule(_matmul, keep=(0, 1))


# -- with a scalar -------------------------------------------------------------------------------------
def _scalar(fn, keep=()):
    return rule(lambda c, g: (fn(c, g), None), keep=keep, memory_bound=True)


RULES["float_add_scalar"] = _scalar(lambda c, g: g)
RULES["float_sub_scalar"] = _scalar(lambda c, g: g)
RULES["float_remainder_scalar"] = _scalar(lambda c, g: g)
RULES["float_mul_scalar"] = _scalar(lambda c, g: c.b.float_mul_scalar(g, c.arg(1)))
RULES["float_div_scalar"] = _scalar(lambda c, g: c.b.float_div_scalar(g, c.arg(1)))


def _powf_scalar(c, g):
    b, s = c.b, c.arg(1)
    d = b.float_mul_scalar(b.float_powf_scalar(c.x(0), s - 1.0), s)
    return b.float_mul(g, d), None


RULES["float_powf_scalar"] = rule(_powf_scalar, keep=(0,), memory_bound=True)


# -- unary -----------------------------------------------------------------------------------------------
def _unary(fn, keep=(0,), out=False):
    """`fn(b, c, g) -> grad of the input`; `c.x(0)` is the input, `c.output()` the output."""
    return rule(lambda c, g: (fn(c.b, c, g),), keep=keep, out=out, memory_bound=True)


def _inv_sqrt(b, t):
    return b.float_recip(b.float_sqrt(t))


def _zero_grad(b, c, g):
    # Piecewise-constant ops (round, floor, sign, ...): zero gradient, as Burn.
    return zeros(b, g)


_UNARY = {
    "float_neg": (lambda b, c, g: b.float_neg(g), ()),
    "float_exp": (lambda b, c, g: b.float_mul(g, c.output()), "out"),
    "float_log": (lambda b, c, g: b.float_div(g, c.x(0)), (0,)),
    "float_log1p": (lambda b, c, g: b.float_div(g, b.float_add_scalar(c.x(0), 1.0)), (0,)),
    "float_sqrt": (lambda b, c, g: b.float_div(b.float_mul_scalar(g, 0.5), c.output()), "out"),
    "float_recip": (
        lambda b, c, g: b.float_neg(b.float_mul(g, b.float_mul(c.output(), c.output()))),
        "out",
    ),
    "float_sin": (lambda b, c, g: b.float_mul(g, b.float_cos(c.x(0))), (0,)),
    "float_cos": (lambda b, c, g: b.float_neg(b.float_mul(g, b.float_sin(c.x(0)))), (0,)),
    "float_tan": (
        lambda b, c, g: b.float_mul(
            g, b.float_add_scalar(b.float_mul(c.output(), c.output()), 1.0)
        ),
        "out",
    ),
    "float_sinh": (lambda b, c, g: b.float_mul(g, b.float_cosh(c.x(0))), (0,)),
    "float_cosh": (lambda b, c, g: b.float_mul(g, b.float_sinh(c.x(0))), (0,)),
    "float_tanh": (
        lambda b, c, g: b.float_mul(
            g, b.float_add_scalar(b.float_neg(b.float_mul(c.output(), c.output())), 1.0)
        ),
        "out",
    ),
    # 1/sqrt(1-x^2), 1/sqrt(x^2-1), 1/sqrt(x^2+1), 1/(1+x^2), 1/(1-x^2)
    "float_asin": (
        lambda b, c, g: b.float_mul(
            g, _inv_sqrt(b, b.float_add_scalar(b.float_neg(b.float_mul(c.x(0), c.x(0))), 1.0))
        ),
        (0,),
    ),
    "float_acos": (
        lambda b, c, g: b.float_neg(
            b.float_mul(
                g, _inv_sqrt(b, b.float_add_scalar(b.float_neg(b.float_mul(c.x(0), c.x(0))), 1.0))
            )
        ),
        (0,),
    ),
    "float_acosh": (
        lambda b, c, g: b.float_mul(
            g, _inv_sqrt(b, b.float_sub_scalar(b.float_mul(c.x(0), c.x(0)), 1.0))
        ),
        (0,),
    ),
    "float_asinh": (
        lambda b, c, g: b.float_mul(
            g, _inv_sqrt(b, b.float_add_scalar(b.float_mul(c.x(0), c.x(0)), 1.0))
        ),
        (0,),
    ),
    "float_atan": (
        lambda b, c, g: b.float_div(g, b.float_add_scalar(b.float_mul(c.x(0), c.x(0)), 1.0)),
        (0,),
    ),
    "float_atanh": (
        lambda b, c, g: b.float_div(
            g, b.float_add_scalar(b.float_neg(b.float_mul(c.x(0), c.x(0))), 1.0)
        ),
        (0,),
    ),
    # 2/sqrt(pi) * exp(-x^2)
    "float_erf": (
        lambda b, c, g: b.float_mul(
            g,
            b.float_mul_scalar(
                b.float_exp(b.float_neg(b.float_mul(c.x(0), c.x(0)))), _TWO_OVER_SQRT_PI
            ),
        ),
        (0,),
    ),
    "float_abs": (lambda b, c, g: b.float_mul(g, b.float_sign(c.x(0))), (0,)),
    "float_round": (_zero_grad, ()),
    "float_floor": (_zero_grad, ()),
    "float_ceil": (_zero_grad, ()),
    "float_trunc": (_zero_grad, ()),
    "float_sign": (_zero_grad, ()),
}

for _name, (_fn, _keep) in _UNARY.items():
    if _keep == "out":
        RULES[_name] = _unary(_fn, keep=(), out=True)
    else:
        RULES[_name] = _unary(_fn, keep=_keep)
