"""Generic wrapping of the op table: one closure factory for tracked ops, one for pass-through ops.

No op is written by hand: `tracked(rule, ...)` turns any inner op plus its gradient rule into an
Autodiff op, `passthrough(...)` forwards an op that records nothing. Both unwrap autodiff float
primitives (also inside lists, for `cat`) and map Autodiff devices to inner devices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn_tensor import Device

from ._graph import Node, _ids
from ._rule import Rule
from ._tensor import AutodiffTensor, Meta, is_float_primitive, meta, wrap

ADT = AutodiffTensor
_new = object.__new__


def wrap_out(out: Any) -> Any:
    """Wrap float outputs as untracked autodiff primitives; int/bool/data pass unchanged."""
    if type(out) is tuple:
        return tuple(wrap_out(o) for o in out)
    # Most outputs are float arrays: test the dtype's kind inline before the general check.
    dt = getattr(out, "dtype", None)
    if dt is not None and (getattr(dt, "kind", None) == "f" or is_float_primitive(out)):
        return wrap(out, None)
    return out


def _meta(a: Any) -> Any:
    return [meta(e) for e in a] if type(a) is list else meta(a)


def record(inner, r: Rule, balanced: bool, parents: list, ia: list, fl: list, out: Any) -> Any:
    """Attach a node for rule `r` to the op's output and decide what the node keeps.

    parents: per argument position, the input's node (a tuple for list arguments) or None.
    ia: the inner arguments (reused as the node's saved arguments). fl: float argument positions.
    """
    recompute = False
    if (
        balanced
        and r.memory_bound
        and all(
            parents[i] is not None and (type(parents[i]) is not tuple or all(parents[i]))
            for i in fl
        )
    ):
        # Balanced checkpointing: keep only metadata; backward recomputes from the parents.
        for i in fl:
            ia[i] = _meta(ia[i])
        recompute = True
        saved_out = None
    else:
        keep = r.keep
        for i in fl:
            if i not in keep:
                a = ia[i]
                if type(a) is list:
                    ia[i] = [meta(e) for e in a]
                else:  # `meta(a)` inline: once per unkept input of every recorded op
                    m = ia[i] = _new(Meta)
                    m.shape = a.shape
                    m.dtype = a.dtype
                    m.device = getattr(a, "device", None)
        # Under balanced checkpointing every non-recomputable node keeps its output, so
        # recomputation of a child always stops here.
        ro = r.out  # False, True, or the positions of the outputs kept (dropout's mask)
        saved_out = out if (ro or balanced) else None
        if ro and ro is not True and not balanced:  # no call for the usual False / True
            saved_out = tuple(o if i in ro else None for i, o in enumerate(out))
    # `new_node(...)` and `wrap(out, node)`, inline: this runs once per recorded op, and two
    # calls are a third of Autodiff's own cost per op (cProfile of the transformer step)
    node = _new(Node)
    node.id = next(_ids)
    node.parents = tuple(parents)
    node.rule = r
    node.args = ia
    node.out = saved_out
    node.recompute = recompute
    node.b = inner
    node.leaf = False
    if type(out) is tuple:
        return (wrap(out[0], node),) + tuple(wrap_out(o) for o in out[1:])
    t = _new(ADT)
    t.p = out
    t.node = node
    t.shape = out.shape
    t.dtype = out.dtype
    return t


def tracked(r: Rule, inner_fn: Callable, inner, balanced: bool) -> Callable:
    """An Autodiff op recording a node for `r` whenever a float input is tracked."""

    def op(*args):
        ia = list(args)
        parents = None
        fl = []
        for i, a in enumerate(args):
            t = type(a)
            if t is ADT:
                ia[i] = a.p
                fl.append(i)
                n = a.node
                if n is not None:
                    if parents is None:
                        parents = [None] * len(args)
                    parents[i] = n
            elif t is list:
                if a and type(a[0]) is ADT:
                    ia[i] = [e.p for e in a]
                    fl.append(i)
                    nodes = tuple(e.node for e in a)
                    if any(n is not None for n in nodes):
                        if parents is None:
                            parents = [None] * len(args)
                        parents[i] = nodes
            elif t is Device:
                ia[i] = a.inner()
        out = inner_fn(*ia)
        if parents is None:
            return wrap_out(out)
        return record(inner, r, balanced, parents, ia, fl, out)

    op.__name__ = r.name
    return op


def passthrough(name: str, inner_fn: Callable) -> Callable:
    """An Autodiff op that records nothing (int/bool ops, comparisons, creation, arg-reductions)."""

    def op(*args):
        ia = args
        for i, a in enumerate(args):
            t = type(a)
            if t is ADT or t is Device or (t is list and a and type(a[0]) is ADT):
                if ia is args:
                    ia = list(args)
                ia[i] = a.p if t is ADT else a.inner() if t is Device else [e.p for e in a]
        return wrap_out(inner_fn(*ia))

    op.__name__ = name
    return op
