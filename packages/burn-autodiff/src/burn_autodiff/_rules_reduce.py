"""Gradient rules of reductions, cumulative ops, arg-based selections, sorting and clamping."""

from __future__ import annotations

import math

from burn_tensor import DType

from ._graph import device_of
from ._rule import RULES, reduce_to, rule, zeros


def _sum(c, g):
    b, shape = c.b, c.shape(0)
    return (b.float_expand(b.float_reshape(g, (1,) * len(shape)), shape),)


def _mean(c, g):
    b, shape = c.b, c.shape(0)
    g = b.float_div_scalar(g, float(max(1, math.prod(shape))))
    return (b.float_expand(b.float_reshape(g, (1,) * len(shape)), shape),)


def _sum_dim(c, g):
    return c.b.float_expand(g, c.shape(0)), None


def _mean_dim(c, g):
    b, shape = c.b, c.shape(0)
    return b.float_expand(b.float_div_scalar(g, float(max(1, shape[c.arg(1)]))), shape), None


def _exclusive_prod(b, x, dim):
    """prod of all other elements along `dim`, without dividing (exact when x has zeros)."""
    shape = tuple(x.shape)
    n = shape[dim]

    def sl(a, lo, hi):
        return b.float_slice(
            a, tuple(slice(lo, hi, 1) if d == dim else slice(0, s, 1) for d, s in enumerate(shape))
        )

    one = b.float_ones(
        shape[:dim] + (1,) + shape[dim + 1 :], device_of(b, x), DType.from_np(x.dtype)
    )
    left = b.float_cat([one, sl(b.float_cumprod(x, dim), 0, n - 1)], dim)
    rev = b.float_flip(b.float_cumprod(b.float_flip(x, (dim,)), dim), (dim,))
    right = b.float_cat([sl(rev, 1, n), one], dim)
    return b.float_mul(left, right)


def _prod(c, g):
    b, x = c.b, c.x(0)
    shape = tuple(x.shape)
    flat = b.float_reshape(x, (math.prod(shape),))
    others = b.float_reshape(_exclusive_prod(b, flat, 0), shape)
    return (b.float_mul(b.float_expand(b.float_reshape(g, (1,) * len(shape)), shape), others),)


def _prod_dim(c, g):
    b, x, dim = c.b, c.x(0), c.arg(1)
    others = _exclusive_prod(b, x, dim)
    return b.float_mul(b.float_expand(g, tuple(x.shape)), others), None


def _reverse_cumsum(b, g, dim):
    return b.float_flip(b.float_cumsum(b.float_flip(g, (dim,)), dim), (dim,))


def _cumsum(c, g):
    return _reverse_cumsum(c.b, g, c.arg(1)), None


def _cumprod(c, g):
    # d out_j / d x_i = out_j / x_i for j >= i (Burn's formula; needs x without zeros)
    b, dim = c.b, c.arg(1)
    return b.float_div(_reverse_cumsum(b, b.float_mul(g, c.output()), dim), c.x(0)), None


def _cum_extreme(c, g):
    # Each output position takes its value from the latest position where the running extreme
    # was reached: index = cummax(where(x == out, arange, 0)); scatter the gradient there.
    b, dim = c.b, c.arg(1)
    x, out = c.x(0), c.output()
    shape = tuple(x.shape)
    dev = device_of(b, x)
    n = shape[dim]
    ar = b.int_arange(0, n, dev, b.int_dtype)
    ar = b.int_expand(
        b.int_reshape(ar, tuple(n if d == dim else 1 for d in range(len(shape)))), shape
    )
    pos = b.int_mask_where(b.int_zeros(shape, dev, b.int_dtype), b.float_equal(x, out), ar)
    idx = b.int_cummax(pos, dim)
    return b.float_scatter(dim, zeros(b, g, shape), idx, g), None


def _arg_route(arg_op):
    def backward(c, g):
        b, dim, x = c.b, c.arg(1), c.x(0)
        idx = getattr(b, arg_op)(x, dim)
        return b.float_scatter(dim, zeros(b, g, tuple(x.shape)), idx, g), None

    return backward


def _with_indices(c, g):
    b, dim = c.b, c.arg(1)
    idx = c.outputs()[1]
    return b.float_scatter(dim, zeros(b, g, c.shape(0)), idx, g), None


def _sort_with_indices(c, g):
    b, dim = c.b, c.arg(1)
    idx = c.outputs()[1]
    return (b.float_scatter(dim, zeros(b, g, c.shape(0)), idx, g),) + (None,) * (len(c.args) - 1)


def _clamp(c, g):
    b, x = c.b, c.x(0)
    outside = b.bool_or(b.float_lower_elem(x, c.arg(1)), b.float_greater_elem(x, c.arg(2)))
    return b.float_mask_fill(g, outside, 0.0), None, None


def _clamp_min(c, g):
    b = c.b
    return b.float_mask_fill(g, b.float_lower_elem(c.x(0), c.arg(1)), 0.0), None


def _clamp_max(c, g):
    b = c.b
    return b.float_mask_fill(g, b.float_greater_elem(c.x(0), c.arg(1)), 0.0), None


RULES["float_sum"] = rule(_sum)
RULES["float_mean"] = rule(_mean)
RULES["float_sum_dim"] = rule(_sum_dim)
RULES["float_mean_dim"] = rule(_mean_dim)
RULES["float_prod"] = rule(_prod, keep=(0,))
RULES["float_prod_dim"] = rule(_prod_dim, keep=(0,))
RULES["float_cumsum"] = rule(_cumsum)
RULES["float_cumprod"] = rule(_cumprod, keep=(0,), out=True)
RULES["float_cummax"] = rule(_cum_extreme, keep=(0,), out=True)
RULES["float_cummin"] = rule(_cum_extreme, keep=(0,), out=True)
RULES["float_max_dim"] = rule(_arg_route("float_argmax"), keep=(0,))
RULES["float_min_dim"] = rule(_arg_route("float_argmin"), keep=(0,))
RULES["float_max_dim_with_indices"] = rule(_with_indices, out=True)
RULES["float_min_dim_with_indices"] = rule(_with_indices, out=True)
RULES["float_sort_with_indices"] = rule(_sort_with_indices, out=True)
RULES["float_clamp"] = rule(_clamp, keep=(0,))
RULES["float_clamp_min"] = rule(_clamp_min, keep=(0,))
RULES["float_clamp_max"] = rule(_clamp_max, keep=(0,))
# `reduce_to` is re-exported for rules written elsewhere (custom ops).
__all__ = ["reduce_to"]
