"""The gradient-rule table and the helpers rules are written with.

A rule is a backward function `backward(c, g) -> tuple` (one entry per positional argument of the
op, None where no gradient flows) plus what the op must keep for it. `c` is the op's graph node
(see `Node`); everything in a rule is computed with inner-backend ops (`c.b.float_mul`, ...), so the
backward pass itself is never recorded.

Example:
    >>> from burn_autodiff import RULES, rule
    >>> RULES["float_mul"].keep
    (0, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn_tensor import DType

from ._graph import device_of


class Rule:
    """A gradient rule. `keep`: input positions whose values backward reads (others keep only
    shape/dtype); `out`: backward reads the output (True), or only these positions of an op's
    tuple of outputs (a tuple of ints; the node keeps None for the rest); `memory_bound`: cheap to recompute (balanced
    checkpointing recomputes instead of saving); `forward`: for custom ops, how to (re)compute."""

    __slots__ = ("backward", "forward", "keep", "memory_bound", "name", "out")

    def __init__(self, backward, keep=(), out=False, memory_bound=False, forward=None):
        self.name = ""
        self.backward = backward
        self.keep = tuple(keep)
        self.out = tuple(out) if isinstance(out, tuple) else bool(out)
        self.memory_bound = bool(memory_bound)
        self.forward = forward

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, keep={self.keep}, out={self.out}, memory_bound={self.memory_bound})"


def rule(backward: Callable, keep=(), out: bool | tuple = False, memory_bound: bool = False) -> Rule:
    """Build a rule; store it with `RULES["op_name"] = rule(...)`."""
    return Rule(backward, keep, out, memory_bound)


class RuleTable(dict):
    """`RULES[name] = rule(...)` also names the rule (its name is the inner op it recomputes)."""

    def __setitem__(self, name: str, r: Rule) -> None:
        r.name = name
        super().__setitem__(name, r)


RULES: RuleTable = RuleTable()


# -- helpers for rules (all on the inner backend `b`) -------------------------------------------------
def dtype_of(p: Any) -> DType:
    return DType.from_np(p.dtype)


def zeros(b, like: Any, shape=None) -> Any:
    """Zeros with `like`'s dtype (and device when it reports one), shape `shape` or like's."""
    shape = tuple(like.shape) if shape is None else tuple(shape)
    return b.float_zeros(shape, device_of(b, like), dtype_of(like))


def reduce_to(b, g: Any, shape) -> Any:
    """Sum a broadcast gradient back to `shape`: over extra leading dims and size-1 dims (keep rank)."""
    shape = tuple(shape)
    gs = tuple(g.shape)
    if gs == shape:
        return g
    extra = len(gs) - len(shape)
    for d in range(extra):
        g = b.float_sum_dim(g, d)
    for d, s in enumerate(shape):
        if s == 1 and gs[d + extra] != 1:
            g = b.float_sum_dim(g, d + extra)
    if extra:
        g = b.float_reshape(g, shape)
    return g


def transpose(b, x: Any) -> Any:
    n = len(x.shape)
    return b.float_swap_dims(x, n - 2, n - 1)
