"""The steps of a Fusion fuzz graph and the graph runner.

A step is what a user writes between two looks at their tensors: a fused chain of elementwise
ops, a chain whose input the user drops (or keeps, or keeps a clone of) so the flush may write
the result into the input's buffer, a reduction with its prologue and epilogue, a layout op
(reshape, permute, slice, expand, cat, ...) whose view the next ops read through strides, an
index op (gather, select, scatter, slice_assign, select_assign), a clone, a user-level read, a
drop. After every step every value the user still holds is compared with the reference
(`Graph.observe`).
"""

from __future__ import annotations

import numpy as np
from _fuzz_graph import Graph, Val
from _fuzz_ops import NONZERO, SMALL, elementwise, ensure, retyping_op, shape_keeping_float_op
from burn_tensor import Tensor, activation

_DIMS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32]


def _base_shape(rng) -> tuple:
    rank = int(rng.choice([1, 2, 3, 4], p=[0.15, 0.35, 0.35, 0.15]))
    while True:
        shape = tuple(int(d) for d in rng.choice(_DIMS, rank))
        n = int(np.prod(shape))
        if 2 <= n <= 1024:
            return shape


def _shape_with_numel(rng, n: int, rank: int) -> tuple:
    """A random shape of `rank` dims holding `n` elements."""
    factors, p, m = [], 2, n
    while m > 1:
        while m % p == 0:
            factors.append(p)
            m //= p
        p += 1
    dims = [1] * rank
    for f in factors:
        dims[rng.integers(rank)] *= f
    return tuple(dims)


def _dim(rng, shape, wide: bool = True) -> int:
    """A dim of `shape`, preferring one longer than 1."""
    wide_dims = [d for d, n in enumerate(shape) if n > 1]
    if wide and wide_dims and rng.random() < 0.85:
        return int(rng.choice(wide_dims))
    return int(rng.integers(len(shape)))


def _float(g: Graph) -> Val:
    v = g.pick("f")
    return v if v is not None else g.fresh("f", g.base)


# -- elementwise chains --------------------------------------------------------------------------
def step_chain(g: Graph) -> None:
    """2..6 elementwise ops from a held value (now and then 70: past the plan's op and input
    limits, so it flushes mid-chain); some intermediates kept; the start sometimes dropped
    before the flush."""
    rng = g.rng
    start = g.pick() or g.fresh("f", g.base)
    cur = start
    length = 70 if rng.random() < 0.05 else int(rng.integers(2, 7))
    for _ in range(length):
        nxt = elementwise(g, cur)
        if nxt is None:
            break
        if rng.random() < 0.2:
            g.keep(nxt)
        cur = nxt
    g.keep(cur)
    if cur is not start and rng.random() < 0.35:
        g.drop(start)


def step_inplace(g: Graph) -> None:
    """`z = (y + 1.0).sqrt()` and the like over a value `y` whose buffer a fused kernel made and
    no inner op has seen: `y` dropped (the result may go into its buffer), kept, or kept
    only through a clone (both must stay intact)."""
    rng = g.rng
    y = g.pick("f", g.owned)
    if y is None:  # make one for a later step: a fused chain's result, kept
        x = _float(g)
        v = shape_keeping_float_op(g, x)
        g.keep(shape_keeping_float_op(g, v) if v is not None else None)
        return
    z = y
    for _ in range(int(rng.integers(2, 5))):
        nxt = shape_keeping_float_op(g, z)
        if nxt is None:
            break
        z = nxt
    if z is y:
        return
    if rng.random() < 0.25:  # the chain ends in another dtype: y's buffer does not fit it
        z = retyping_op(g, z) or z
    g.keep(z)
    mode = rng.choice(["drop", "keep", "clone"])
    if mode == "clone":
        g.keep(g.emit("{0}.clone()", lambda t: t.clone(), [y], exact="keep"))
    if mode != "keep":
        g.drop(y)
    g.stats[f"inplace_{mode}"] += 1


# -- reductions ----------------------------------------------------------------------------------
def _prologue(g: Graph, x: Val) -> Val:
    for _ in range(int(g.rng.integers(0, 3))):
        v = shape_keeping_float_op(g, x)
        if v is None:
            break
        x = v
    return x


def _row_gap_ok(v: Val, dim: int) -> bool:
    """argmax/argmin of an inexact value: each row's best beats the runner-up by a margin."""
    if v.exact or v.shape[dim] == 1:
        return True
    s = np.sort(v.a, axis=dim)
    top = np.take(s, [-1, -2], axis=dim)
    bot = np.take(s, [0, 1], axis=dim)
    m = v.margin()
    gap_top = np.take(top, 0, axis=dim) - np.take(top, 1, axis=dim)
    gap_bot = np.take(bot, 1, axis=dim) - np.take(bot, 0, axis=dim)
    return bool(np.all(gap_top > m) and np.all(gap_bot > m))


def step_reduce(g: Graph) -> None:
    rng = g.rng
    p = _prologue(g, _float(g))
    d = _dim(rng, p.shape)
    which = rng.choice(["dim", "dim", "dim", "all", "arg", "softmax"])
    if which == "all":
        name = rng.choice(["sum", "mean"])
        g.keep(g.emit(f"{{0}}.{name}()", lambda t: getattr(t, name)(), [p]))
        return
    if which == "arg":
        name = rng.choice(["argmax", "argmin"])
        if _row_gap_ok(p, d):
            g.keep(g.emit(f"{{0}}.{name}({d})", lambda t: getattr(t, name)(d), [p]))
        return
    if which == "softmax":
        name = rng.choice(["softmax", "log_softmax"])
        fn = getattr(activation, name)
        g.keep(g.emit(f"{name}({{0}}, {d})", lambda t: fn(t, d), [p]))
        return
    name = rng.choice(["sum_dim", "mean_dim", "max_dim", "min_dim"])
    m = g.emit(f"{{0}}.{name}({d})", lambda t: getattr(t, name)(d), [p], exact="keep")
    if m is None:
        return
    if rng.random() < 0.3:
        g.keep(m)
    if rng.random() < 0.3:  # the reduced value alone
        g.keep(m)
        return
    # epilogue: the reduced [.., 1, ..] value against the row it came from (softmax, norms)
    op = rng.choice(["sub", "div", "mul"])
    if op == "div":
        m = ensure(g, m, NONZERO)
        if m is None:
            return
    e = g.emit(f"{{0}}.{op}({{1}})", lambda a, b: getattr(a, op)(b), [p, m])
    if e is None:
        return
    if rng.random() < 0.5:
        e2 = ensure(g, e, SMALL)
        e = g.emit("{0}.exp()", lambda t: t.exp(), [e2]) if e2 is not None else None
        if e is None:
            return
    if rng.random() < 0.5:  # a second reduction of the epilogue: the pending one runs first
        name2 = rng.choice(["sum_dim", "mean_dim", "max_dim"])
        s = g.emit(f"{{0}}.{name2}({d})", lambda t: getattr(t, name2)(d), [e])
        if s is not None and s.a.min() >= 0.25:
            e = g.emit("({0} / {1})", lambda a, b: a / b, [e, s]) or e
    g.keep(e)


# -- layout --------------------------------------------------------------------------------------
LAYOUT_OPS = [
    "reshape",
    "permute",
    "swap_dims",
    "slice",
    "narrow",
    "flip",
    "expand",
    "repeat_dim",
    "unsqueeze",
    "squeeze",
    "cat",
]


def _layout_op(g: Graph, x: Val) -> Val | None:
    rng = g.rng
    shape, rank = x.shape, len(x.shape)
    which = rng.choice(LAYOUT_OPS)
    if which == "reshape":
        r = int(np.clip(rank + rng.choice([0, 0, -1, 1]), 1, 4))
        new = list(_shape_with_numel(rng, x.a.size, r))
        return g.emit(f"{{0}}.reshape({new})", lambda t: t.reshape(new), [x], exact="keep")
    if which == "permute" and rank >= 2:
        perm = [int(a) for a in rng.permutation(rank)]
        return g.emit(f"{{0}}.permute({perm})", lambda t: t.permute(perm), [x], exact="keep")
    if which == "swap_dims" and rank >= 2:
        a, b = (int(v) for v in rng.choice(rank, 2, replace=False))
        return g.emit(f"{{0}}.swap_dims({a}, {b})", lambda t: t.swap_dims(a, b), [x], "keep")
    if which == "slice":
        items = []
        for n in shape:
            lo = int(rng.integers(0, n))
            hi = int(rng.integers(lo + 1, n + 1))
            step = int(rng.choice([1, 1, 2, -1]))
            items.append(slice(None) if rng.random() < 0.3 else slice(lo, hi, step))
        txt = ", ".join(":" if s.start is None else f"{s.start}:{s.stop}:{s.step}" for s in items)
        return g.emit(f"{{0}}.slice[{txt}]", lambda t: t.slice(*items), [x], exact="keep")
    if which == "narrow":
        d = _dim(rng, shape)
        start = int(rng.integers(0, shape[d]))
        length = int(rng.integers(1, shape[d] - start + 1))
        return g.emit(
            f"{{0}}.narrow({d}, {start}, {length})",
            lambda t: t.narrow(d, start, length),
            [x],
            exact="keep",
        )
    if which == "flip":
        axes = [d for d in range(rank) if rng.random() < 0.5] or [0]
        return g.emit(f"{{0}}.flip({axes})", lambda t: t.flip(axes), [x], exact="keep")
    if which == "expand":
        new = [int(rng.integers(2, 6)) if n == 1 else n for n in shape]
        if rank < 4 and rng.random() < 0.3:
            new = [int(rng.integers(2, 4)), *new]
        return g.emit(f"{{0}}.expand({new})", lambda t: t.expand(new), [x], exact="keep")
    if which == "repeat_dim":
        d, k = _dim(rng, shape, wide=False), int(rng.integers(2, 4))
        return g.emit(f"{{0}}.repeat_dim({d}, {k})", lambda t: t.repeat_dim(d, k), [x], "keep")
    if which == "unsqueeze" and rank < 4:
        d = int(rng.integers(rank + 1))
        return g.emit(f"{{0}}.unsqueeze_dim({d})", lambda t: t.unsqueeze_dim(d), [x], "keep")
    if which == "squeeze" and rank > 1 and 1 in shape:
        d = shape.index(1)
        return g.emit(f"{{0}}.squeeze_dim({d})", lambda t: t.squeeze_dim(d), [x], "keep")
    if which == "cat":
        d = int(rng.integers(rank))
        other = list(shape)
        other[d] = int(rng.integers(1, 5))
        y = g.pick(x.kind, lambda v: _cat_fits(v.shape, shape, d))
        y = y if y is not None and rng.random() < 0.5 else g.fresh(x.kind, tuple(other))
        return g.emit(
            f"Tensor.cat([{{0}}, {{1}}], {d})", lambda a, b: Tensor.cat([a, b], d), [x, y], "keep"
        )
    return None


def _cat_fits(a: tuple, b: tuple, d: int) -> bool:
    return len(a) == len(b) and all(p == q for k, (p, q) in enumerate(zip(a, b)) if k != d)


def step_layout(g: Graph) -> None:
    """1-2 layout ops (views where the inner backend makes views), then maybe elementwise ops
    that read the view through its strides."""
    rng = g.rng
    x = g.pick() or g.fresh("f", g.base)
    v = x
    for _ in range(int(rng.integers(1, 3))):
        for _ in range(4):
            w = _layout_op(g, v)
            if w is not None:
                v = w
                break
    if v is x:
        return
    if rng.random() < 0.7:
        g.keep(v)
    if rng.random() < 0.8:  # two ops at least: a lone op would run on the inner backend
        for _ in range(int(rng.integers(2, 5))):
            w = elementwise(g, v)
            if w is None:
                break
            v = w
        g.keep(v)


# -- index ops -----------------------------------------------------------------------------------
def _indices(g: Graph, shape: tuple, n: int) -> Val:
    """Int indices in [0, n) of `shape`: host data, or (pending) ops over an int value."""
    rng = g.rng
    if rng.random() < 0.3:
        v = g.fresh("i", shape)
        hi = n - 1
        w = g.emit(f"{{0}}.abs().clamp(0, {hi})", lambda t: t.abs().clamp(0, hi), [v])
        if w is not None:
            return w
    name = g._name()
    data = rng.integers(0, n, shape)
    g.log.append(f"{name} = input({list(shape)}, indices < {n})")
    f = Tensor.from_data(data.astype(g.dev.backend.int_dtype.np), g.dev)
    r = Tensor.from_data(data.astype(np.int64), g.ref)
    return Val(name, f, r, "i", True, 0.0)


def _values(g: Graph, kind: str, shape: tuple) -> Val:
    """Values to write: a fresh input, sometimes through a pending op."""
    v = g.fresh(kind, shape)
    if kind == "f" and g.rng.random() < 0.5:
        w = elementwise(g, v, kind_of_result="f")
        if w is not None and w.shape == shape:
            return w
    return v


def step_index(g: Graph) -> None:
    rng = g.rng
    x = g.pick() or g.fresh("f", g.base)
    shape, rank = x.shape, len(x.shape)
    d = _dim(rng, shape)
    n = shape[d]
    which = rng.choice(["gather", "select", "slice_assign", "scatter", "select_assign"])
    if x.kind == "b" and which in ("scatter", "select_assign"):
        which = "gather"
    if which == "gather":
        ishape = tuple(int(rng.integers(1, n + 3)) if k == d else s for k, s in enumerate(shape))
        i = _indices(g, ishape, n)
        v = g.emit(f"{{0}}.gather({d}, {{1}})", lambda t, j: t.gather(d, j), [x, i], "keep")
    elif which == "select":
        i = _indices(g, (int(rng.integers(1, n + 3)),), n)
        v = g.emit(f"{{0}}.select({d}, {{1}})", lambda t, j: t.select(d, j), [x, i], "keep")
    elif which == "slice_assign":
        items, out = [], []
        for s in shape:
            lo = int(rng.integers(0, s))
            hi = int(rng.integers(lo + 1, s + 1))
            items.append(slice(lo, hi))
            out.append(hi - lo)
        vals = _values(g, x.kind, tuple(out))
        txt = ", ".join(f"{s.start}:{s.stop}" for s in items)
        v = g.emit(
            f"{{0}}.slice_assign([{txt}], {{1}})", lambda t, w: t.slice_assign(items, w), [x, vals]
        )
    elif which == "scatter":
        ishape = tuple(int(rng.integers(1, n + 2)) if k == d else s for k, s in enumerate(shape))
        i = _indices(g, ishape, n)
        vals = _values(g, x.kind, ishape)
        v = g.emit(
            f"{{0}}.scatter({d}, {{1}}, {{2}})", lambda t, j, w: t.scatter(d, j, w), [x, i, vals]
        )
    else:
        k = int(rng.integers(1, n + 2))
        i = _indices(g, (k,), n)
        vals = _values(g, x.kind, tuple(k if q == d else s for q, s in enumerate(shape)))
        v = g.emit(
            f"{{0}}.select_assign({d}, {{1}}, {{2}})",
            lambda t, j, w: t.select_assign(d, j, w),
            [x, i, vals],
        )
    g.keep(v)
    if v is not None and rng.random() < 0.5:  # read the result in a fused chain
        g.keep(elementwise(g, v))


# -- the user's own moves ------------------------------------------------------------------------
def step_clone(g: Graph) -> None:
    v = g.pick()
    if v is not None:
        g.keep(g.emit("{0}.clone()", lambda t: t.clone(), [v], exact="keep"))
        if g.rng.random() < 0.5:
            g.drop(v)


def step_read(g: Graph) -> None:
    """A user-level read (marks the handle escaped: its buffer is never reused)."""
    v = g.pick()
    if v is not None:
        g.log.append(f"{v.name}.numpy()")
        g.compare(v, v.f.numpy(), "user read")


def step_drop(g: Graph) -> None:
    if len(g.held) > 2:
        g.drop(g.pick())


def step_fresh(g: Graph) -> None:
    kind = g.rng.choice(["f", "f", "i", "b"])
    shape = tuple(1 if g.rng.random() < 0.3 else d for d in g.base)
    g.keep(g.fresh(kind, shape))


#: step kind -> (cards in the deck, step); a graph deals its steps from shuffled decks, so
#: every 13 consecutive steps run every kind (a short CI graph covers them all)
STEPS = {
    "chain": (2, step_chain),
    "inplace": (2, step_inplace),
    "reduce": (2, step_reduce),
    "layout": (2, step_layout),
    "index": (1, step_index),
    "clone": (1, step_clone),
    "read": (1, step_read),
    "drop": (1, step_drop),
    "fresh": (1, step_fresh),
}
DECK = [kind for kind, (n, _) in STEPS.items() for _ in range(n)]


def run_graph(dev, ref, seed, index: int, steps: int, float_dtype) -> Graph:
    """Graph `index` of `seed`: `steps` random steps, every held value compared after each.
    Raises `GraphFailure` (with the step log) at the first disagreement."""
    rng = np.random.default_rng([seed, index])
    g = Graph(rng, dev, ref, float_dtype, log_prefix=f"graph {index} of seed {seed}, ")
    g.base = _base_shape(rng)
    g.log.append(f"# base shape {list(g.base)}, {float_dtype.name}")
    g.keep(g.fresh("f", g.base))
    g.keep(g.fresh("f", tuple(1 if rng.random() < 0.4 else d for d in g.base)))
    if rng.random() < 0.5:
        g.keep(g.fresh(str(rng.choice(["i", "b"])), g.base))
    deck: list = []
    try:
        for k in range(steps):
            g.step = k
            if not deck:
                deck = [DECK[i] for i in rng.permutation(len(DECK))]
            kind = deck.pop()
            g.log.append(f"# step {k}: {kind}")
            STEPS[kind][1](g)
            g.stats[f"step_{kind}"] += 1
            g.observe()
    finally:
        g.held.clear()
        dev.sync()
    return g

