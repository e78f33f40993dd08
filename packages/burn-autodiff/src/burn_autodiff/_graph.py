"""Graph nodes, the `Gradients` container and the backward pass.

Memory model: a tensor holds its node, a node holds its parents. There are no back edges, so Python's
reference counting frees a graph as soon as no tensor reaches it (no `zero_grad`, no global tape).
A backward pass also clears every node it walked through (saved inputs, outputs, parent links), so
the memory of a training step is released even while the loss tensor is still alive -- as in Burn,
where the graph is consumed by `backward()`.
"""

from __future__ import annotations

import gc
import itertools
from typing import Any

from burn_tensor import Backend, Device, DType

from ._check import bad_count, bad_grad, consumed_graph
from ._ready import current as current_watch
from ._tensor import AutodiffTensor, Meta

_ids = itertools.count(1)


class Node:
    """One recorded op (or a leaf that requires grad).

    It doubles as the context object handed to a gradient rule: `c.b` (inner backend), `c.x(i)`
    (input i, retrieved or recomputed under checkpointing), `c.shape(i)`, `c.arg(i)`, `c.need(i)`
    (does input i require a gradient), `c.output()` / `c.outputs()`.
    """

    __slots__ = ("__weakref__", "args", "b", "id", "leaf", "out", "parents", "recompute", "rule")

    def x(self, i: int) -> Any:
        a = self.args[i]
        t = type(a)
        if t is Meta:
            return self.parents[i].output()
        if t is list:
            pars = self.parents[i]
            return [pars[j].output() if type(e) is Meta else e for j, e in enumerate(a)]
        return a

    def shape(self, i: int) -> tuple:
        return tuple(self.args[i].shape)

    def arg(self, i: int) -> Any:
        return self.args[i]

    def need(self, i: int) -> bool:
        return self.parents[i] is not None

    def outputs(self) -> Any:
        """The op's raw output (a tuple for `*_with_indices` ops), recomputed if not saved."""
        o = self.out
        if o is None and self.recompute:
            rule = self.rule
            fn = rule.forward or getattr(self.b, rule.name)
            o = fn(*[self.x(i) for i in range(len(self.args))])
            self.out = o  # cached until this node's own backward step clears it
        return o

    def output(self) -> Any:
        o = self.outputs()
        return o[0] if type(o) is tuple else o

    def clear(self) -> None:
        self.parents = ()
        self.rule = None
        self.args = None
        self.out = None
        self.recompute = False

    def __repr__(self) -> str:
        what = "leaf" if self.leaf else (self.rule.name if self.rule else "consumed")
        return f"Node({self.id}, {what})"


def new_node(b, rule, parents, args, out, recompute=False) -> Node:
    n = object.__new__(Node)
    n.id = next(_ids)
    n.parents = parents
    n.rule = rule
    n.args = args
    n.out = out
    n.recompute = recompute
    n.b = b
    n.leaf = False
    return n


def new_leaf(b, keep: Any = None) -> Node:
    """A leaf; `keep` is its primitive when checkpointing needs to read leaves back."""
    # `new_node(b, None, (), None, keep)` inline: every parameter of every optimizer step
    # becomes a new leaf
    n = object.__new__(Node)
    n.id = next(_ids)
    n.parents = ()
    n.rule = None
    n.args = None
    n.out = keep
    n.recompute = False
    n.b = b
    n.leaf = True
    return n


class Gradients:
    """The result of `backward()`: leaf gradients keyed by node, as inner-backend primitives.

    Nothing is stored on tensors; read with `x.grad(grads)`, pop with `x.grad_remove(grads)`,
    overwrite with `x.grad_replace(grads, g)`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff
        >>> from burn_tensor import Tensor
        >>> x = Tensor.from_data([1.0, 2.0], Autodiff(NdArray()).device()).require_grad()
        >>> grads = (x * x).sum().backward()
        >>> x.grad(grads).tolist(), len(grads)
        ([2.0, 4.0], 1)
    """

    __slots__ = ("_g",)

    def __init__(self) -> None:
        self._g: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._g)

    def is_empty(self) -> bool:
        return not self._g

    def get(self, node: Node | None) -> Any:
        return None if node is None else self._g.get(node.id)

    def remove(self, node: Node | None) -> Any:
        return None if node is None else self._g.pop(node.id, None)

    def register(self, node: Node, grad: Any) -> None:
        self._g[node.id] = grad

    def __repr__(self) -> str:
        return f"Gradients({len(self._g)} tensor(s))"


_DEVICE_OF: dict[int, Any] = {}


def device_of(b, p: Any) -> Device:
    """The device primitive `p` of inner backend `b` lives on (`b.device_of`): a gradient's
    zeros on a second GPU are made on that GPU."""
    d = getattr(p, "device", None)
    if isinstance(d, Device):
        return d
    # Backends are interned (never freed), so id() is a stable key; it skips hashing the backend.
    f = _DEVICE_OF.get(id(b))
    if f is None:
        if type(b).device_of is Backend.device_of:  # one answer: the default device, cached
            default = b.default_device()
            f = _DEVICE_OF[id(b)] = lambda _p: default
        else:
            f = _DEVICE_OF[id(b)] = b.device_of
    return f(p)


def topo_order(root: Node) -> list[Node]:
    """Nodes reachable from `root`, parents before children (iterative DFS: no recursion limit).

    Nodes hash by identity (no __eq__/__hash__), so sets and dicts key on them directly.
    """
    order: list[Node] = []
    seen: set[Node] = set()
    add_seen = seen.add
    push = order.append
    stack = [(root, False)]
    pop = stack.pop
    append = stack.append
    while stack:
        n, done = pop()
        if done:
            push(n)
            continue
        if n in seen:
            continue
        add_seen(n)
        append((n, True))
        for p in n.parents:
            if p is None:
                continue
            if type(p) is tuple:
                for q in p:
                    if q is not None and q not in seen:
                        append((q, False))
            elif p not in seen:
                append((p, False))
    return order


def run_backward(root: AutodiffTensor, seed: Any = None) -> Gradients:
    """Reverse-mode pass from `root`, seeded with `seed` (an inner primitive of root's shape and
    dtype, checked by the caller) or with ones (so a non-scalar root is implicitly summed)."""
    grads = Gradients()
    node = root.node
    if node is None:
        return grads
    b = node.b
    if seed is None:
        seed = b.float_ones(tuple(root.shape), device_of(b, root.p), DType.from_np(root.dtype))
    pending: dict[Node, Any] = {node: seed}
    pending_pop = pending.pop
    pending_get = pending.get
    leaf_grads = grads._g
    add = b.float_add
    order = topo_order(node)
    watch = current_watch()  # grad_ready(): told of each watched leaf once its gradient is final
    # With a watch, each watched leaf is reported as soon as its last consumer has run, not
    # when the walk reaches the leaf itself: a weight's node sits after the whole earlier
    # network in this order, which would report every gradient at the end of the pass.
    uses = _leaf_uses(order, watch.where) if watch is not None else None
    # A node an earlier backward() cleared has no rule left: walking through it would silently
    # give no gradient to anything behind it. Checked before any node is cleared, so a refused
    # pass leaves the graph as it was.
    for n in order:
        if n.rule is None and not n.leaf:
            consumed_graph(n is node)
    for n in reversed(order):
        g = pending_pop(n, None)
        if n.leaf:
            if g is not None:
                prev = leaf_grads.get(n.id)
                leaf_grads[n.id] = g = g if prev is None else add(prev, g)
                if watch is not None:
                    watch.fire(n.id, g)
            continue
        if g is not None and n.rule is not None:
            gs = n.rule.backward(n, g)
            # The one check every rule's output passes (custom ops too): each gradient must have
            # its input's shape and dtype, or it would broadcast in the accumulation below (or
            # fail in an optimizer) far from the rule at fault. Two comparisons, no allocation.
            parents = n.parents
            args = n.args
            if len(gs) != len(parents):
                bad_count(n, gs)
            for i, par in enumerate(parents):
                pg = gs[i]
                if par is None or pg is None:
                    continue
                a = args[i]
                if type(par) is tuple:
                    for j, q in enumerate(par):
                        qg = pg[j]
                        if q is not None and qg is not None:
                            e = a[j]
                            if qg.shape != e.shape or qg.dtype != e.dtype:
                                bad_grad(n, f"{i}[{j}]", e, qg)
                            prev = pending_get(q)
                            pending[q] = qg if prev is None else add(prev, qg)
                else:
                    if pg.shape != a.shape or pg.dtype != a.dtype:
                        bad_grad(n, str(i), a, pg)
                    prev = pending_get(par)
                    pending[par] = pg if prev is None else add(prev, pg)
        if uses:
            _report_ready(n, uses, pending, leaf_grads, watch)
        # Free saved state as soon as the step ran: peak memory falls during the pass.
        # (`n.clear()` inline: one call less per node of every backward pass)
        n.parents = ()
        n.rule = None
        n.args = None
        n.out = None
        n.recompute = False
    return grads


def live_nodes(leaves: bool = True) -> int:
    """How many graph nodes are alive in this process (for leak tests; scans the GC heap).

    `leaves=False` counts only op nodes (recorded by tracked ops), not the leaves that
    `require_grad()` tensors (parameters) carry for as long as they live.
    """
    if leaves:
        return sum(1 for o in gc.get_objects() if type(o) is Node)
    return sum(1 for o in gc.get_objects() if type(o) is Node and not o.leaf)


def graph_stats(p: Any) -> dict:
    """Nodes and saved inner primitives reachable from an autodiff primitive (or Tensor).

    Used to compare checkpointing strategies: `saved` counts distinct float arrays the graph keeps.
    """
    p = getattr(p, "_p", p)
    node = getattr(p, "node", None)
    if node is None:
        return {"nodes": 0, "saved": 0, "saved_bytes": 0}
    seen: dict[int, Any] = {}

    def keep(x):
        if x is None or type(x) is Meta:
            return
        if type(x) in (list, tuple):
            for e in x:
                keep(e)
            return
        if getattr(x, "dtype", None) is not None and getattr(x.dtype, "kind", "") == "f":
            seen[id(x)] = x

    nodes = topo_order(node)
    for n in nodes:
        if not n.leaf:
            keep(n.args)
            keep(n.out)
    nbytes = sum(int(getattr(x, "nbytes", 0)) for x in seen.values())
    return {"nodes": len(nodes), "saved": len(seen), "saved_bytes": nbytes}


def _leaf_parents(n: Node):
    for p in n.parents:
        if type(p) is tuple:
            yield from (q for q in p if q is not None and q.leaf)
        elif p is not None and p.leaf:
            yield p


def _leaf_uses(order: list[Node], watched: dict[int, int]) -> dict[Node, int]:
    """How many times each watched leaf is an input of a node of the pass."""
    uses: dict[Node, int] = {}
    for n in order:
        for p in _leaf_parents(n):
            if p.id in watched:
                uses[p] = uses.get(p, 0) + 1
    return uses


def _report_ready(n: Node, uses: dict, pending: dict, leaf_grads: dict, watch) -> None:
    """After node `n` ran: a watched leaf whose every consumer has now run has its final
    gradient; it is stored and reported now (the walk then finds nothing pending for it)."""
    for p in _leaf_parents(n):
        left = uses.get(p)
        if left is None:
            continue
        if left > 1:
            uses[p] = left - 1
            continue
        del uses[p]
        g = pending.pop(p, None)
        if g is not None:
            leaf_grads[p.id] = g
            watch.fire(p.id, g)
