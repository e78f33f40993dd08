"""Gradient rules of layout and indexing ops: they route (or scatter) the gradient back."""

from __future__ import annotations

from ._graph import device_of
from ._rule import RULES, dtype_of, reduce_to, rule, zeros


def _reshape(c, g):
    return c.b.float_reshape(g, c.shape(0)), None


def _swap_dims(c, g):
    return c.b.float_swap_dims(g, c.arg(1), c.arg(2)), None, None


def _permute(c, g):
    axes = list(c.arg(1))
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    return c.b.float_permute(g, tuple(inverse)), None


def _flip(c, g):
    return c.b.float_flip(g, c.arg(1)), None


def _expand(c, g):
    return reduce_to(c.b, g, c.shape(0)), None


def _slice(c, g):
    b = c.b
    return b.float_slice_assign(zeros(b, g, c.shape(0)), c.arg(1), g), None


def _slice_assign(c, g):
    b, sl = c.b, c.arg(1)
    gx = b.float_slice_assign(g, sl, zeros(b, g, c.shape(2))) if c.need(0) else None
    gv = b.float_slice(g, sl) if c.need(2) else None
    return gx, None, gv


def _gather(c, g):
    b, dim = c.b, c.arg(0)
    return None, b.float_scatter(dim, zeros(b, g, c.shape(1)), c.arg(2), g), None


def _scatter(c, g):
    b, dim = c.b, c.arg(0)
    gv = b.float_gather(dim, g, c.arg(2)) if c.need(3) else None
    return None, (g if c.need(1) else None), None, gv


def _select(c, g):
    b, dim = c.b, c.arg(1)
    return b.float_select_assign(zeros(b, g, c.shape(0)), dim, c.arg(2), g), None, None


def _select_assign(c, g):
    b = c.b
    gv = b.float_select(g, c.arg(1), c.arg(2)) if c.need(3) else None
    return (g if c.need(0) else None), None, None, gv


def _full_mask(b, mask, g):
    # The mask may broadcast against the gradient; expand it so any backend can fill with it.
    return mask if tuple(mask.shape) == tuple(g.shape) else b.bool_expand(mask, tuple(g.shape))


def _mask_where(c, g):
    b = c.b
    mask = _full_mask(b, c.arg(1), g)
    gx = reduce_to(b, b.float_mask_fill(g, mask, 0.0), c.shape(0)) if c.need(0) else None
    gy = None
    if c.need(2):
        gy = reduce_to(b, b.float_mask_fill(g, b.bool_not(mask), 0.0), c.shape(2))
    return gx, None, gy


def _mask_fill(c, g):
    b = c.b
    mask = _full_mask(b, c.arg(1), g)
    return reduce_to(b, b.float_mask_fill(g, mask, 0.0), c.shape(0)), None, None


def _cat(c, g):
    b, dim = c.b, c.arg(1)
    parts = c.arg(0)
    needs = c.parents[0] or (None,) * len(parts)
    grads = []
    start = 0
    full = tuple(g.shape)
    for part, need in zip(parts, needs):
        n = part.shape[dim]
        if need is not None:
            sl = tuple(
                slice(start, start + n, 1) if d == dim else slice(0, s, 1)
                for d, s in enumerate(full)
            )
            grads.append(b.float_slice(g, sl))
        else:
            grads.append(None)
        start += n
    return grads, None


def _repeat_dim(c, g):
    # out[.., t*d + i, ..] = x[.., i, ..]: view the gradient as [.., times, d, ..] and sum times.
    b, dim, times = c.b, c.arg(1), c.arg(2)
    shape = c.shape(0)
    g = b.float_reshape(g, shape[:dim] + (times,) + shape[dim:])
    return b.float_reshape(b.float_sum_dim(g, dim), shape), None, None


def _cast(c, g):
    return c.b.float_cast(g, dtype_of(c.arg(0))), None


def _to_device(c, g):
    b = c.b
    return b.float_to_device(g, device_of(b, c.arg(0))), None


RULES["float_reshape"] = rule(_reshape, memory_bound=True)
RULES["float_swap_dims"] = rule(_swap_dims, memory_bound=True)
RULES["float_permute"] = rule(_permute, memory_bound=True)
RULES["float_flip"] = rule(_flip, memory_bound=True)
RULES["float_expand"] = rule(_expand, memory_bound=True)
RULES["float_repeat_dim"] = rule(_repeat_dim, memory_bound=True)
RULES["float_slice"] = rule(_slice, memory_bound=True)
RULES["float_slice_assign"] = rule(_slice_assign, memory_bound=True)
RULES["float_select"] = rule(_select, memory_bound=True)
RULES["float_select_assign"] = rule(_select_assign, memory_bound=True)
RULES["float_gather"] = rule(_gather)
RULES["float_scatter"] = rule(_scatter)
RULES["float_mask_where"] = rule(_mask_where)
RULES["float_mask_fill"] = rule(_mask_fill)
RULES["float_cat"] = rule(_cat)
RULES["float_cast"] = rule(_cast)
# the input is kept: its device is the gradient's destination, which a Meta of a Fusion handle
# (no device of its own until it runs) cannot say
RULES["float_to_device"] = rule(_to_device, keep=(0,))
