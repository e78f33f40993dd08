"""Launch recipes: the plan cache keyed by the op stream, so a recurring plan skips planning.

A flush used to plan every time: dead-code elimination over the nodes, renumbering, each input's
layout class, the `Program`, its hash for the kernel lookup, the output layouts and the launch
ints. All of that is a function of the plan's *structure* -- each node's op, operands, dtypes
and shape, which results are still held, the inputs' layouts (shape, strides, offset, dtype),
which owned inputs were dropped (in-place candidates), the pending reduction's node and dim,
and the vector width -- never of scalar values or buffers. A training step repeats its op
stream, so from its second step on every flush finds its `Recipe` under that key and only
gathers the values: the inputs it reads (by position), the scalars (by node), new output
buffers, then one launch. (On PoCL this took the small transformer step's flush from ~15 us
of Python to ~5.)

A recipe is one of: `ONE` (a single op is needed: the inner backend's own kernel runs it),
`INNER_RED` (a forced reduction of an input: the inner backend's reduction), `EW` (an
elementwise kernel, with its vector variant chosen at launch where every input is aligned) or
`ROWS` (a row kernel).
"""

from __future__ import annotations

from burn_gpu import DTYPE_NAMES, REDUCE_OPS, WIDTHS, Program, Reduction, dtype_name

ONE, INNER_RED, EW, ROWS = range(4)

#: recipes kept per stream (a model with ever-new shapes must not grow the cache forever)
MAX_RECIPES = 4096
#: prefixes kept in a stream's signature tree (`Sig`) before it starts afresh
MAX_SIGS = 16384
#: recipes kept per signature (which results are held, which inputs were dropped, ...)
MAX_PER_SIG = 64


class Sig:
    """One recorded prefix of a plan: the plan cache keyed by the op stream as it is recorded.

    Each recorded op (op, operand refs, result dtype: the operands' dtypes and shapes are in
    their own steps, an input's or an earlier op's, so the op's shape follows) and each new
    input (shape, layout, dtype) steps from the current prefix to its child, made on first
    sight; the prefix a plan ends on stands for its whole structure, which `plan_key` would
    rebuild and hash at the flush (every node, every input's layout). Its `recipes` are keyed
    by the rest of that key
    only: the results held, the owned inputs dropped, the pending reduction, the vector width.
    A step costs one small tuple and one dict lookup; a recurring plan's flush, one lookup.

    Example:
        >>> root = Sig()
        >>> a = root.step(("float_exp", (-1,), "float32"))
        >>> a is root.step(("float_exp", (-1,), "float32"))
        True
    """

    __slots__ = ("next", "recipes", "tree")

    def __init__(self, tree: list | None = None):
        self.next: dict = {}
        self.recipes: dict = {}
        self.tree = [0] if tree is None else tree  # prefixes made in this tree (shared count)

    def step(self, token) -> Sig:
        """The prefix this one followed by `token`, made on first sight."""
        nxt = self.next.get(token)
        if nxt is None:
            nxt = self.next[token] = Sig(self.tree)
            self.tree[0] += 1
        return nxt


class Recipe:
    """What a plan of one structure launches (see the module docstring)."""

    __slots__ = (
        "go",
        "groups",
        "in_place",
        "in_pos",
        "ints",
        "items",
        "kernel",
        "kind",
        "n",
        "one",
        "outputs",
        "picks",
        "prog",
        "vec_go",
        "vec_items",
        "vec_kernel",
        "vec_prog",
    )


def dropped(owners) -> tuple | None:
    """Positions of the owned inputs whose handles were dropped (in-place candidates)."""
    dead = None
    if owners is not None:
        for k, o in enumerate(owners):
            if o is not None and o() is None:
                dead = (k,) if dead is None else (*dead, k)
    return dead


def plan_key(st, nodes, inputs, owners, roots, red) -> tuple:
    """The structural key of launching `roots` of plan `nodes` over `inputs` (see above)."""
    layout = st.rt.layout
    lay = []
    for p in inputs:
        strides, offset = layout(p)
        dt = p.dtype
        lay.append((p.shape, strides, offset, DTYPE_NAMES.get(dt) or dtype_name(dt)))
    return (
        tuple([(nd[0], nd[1], nd[2], nd[3], nd[6]) for nd in nodes]),
        roots,
        tuple(lay),
        dropped(owners),
        red,
        st.vector_width,
    )


def build(st, nodes, inputs, owners, results, red) -> Recipe:
    """Plan `results` [(node, handle)] of `nodes` from scratch (what a cache miss costs)."""
    roots = [j for j, _ in results]
    g = st._gather(nodes, inputs, owners, roots)
    remap = g["remap"]
    rec = Recipe()
    rec.in_place = 0
    rec.kernel = rec.vec_prog = rec.vec_kernel = rec.go = rec.vec_go = None
    rec.vec_items = 0
    rec.groups = None
    # positions in `inputs` of the Program's inputs, in its order
    rec.in_pos = [-r - 1 for r, _ in sorted(g["used"].items(), key=lambda e: e[1])]
    rec.picks = [
        (j, nodes[j][2]) for j in remap if nodes[j][4] and nodes[j][0] not in REDUCE_OPS
    ]
    if len(remap) == 1 and st.inner is not None:
        (rec.one,) = remap
        rec.kind = INNER_RED if red is not None and rec.one in red[0] else ONE
        return rec
    rec.one = -1
    shape = g["shape"]
    n = 1
    for d in shape:
        n *= d
    rec.n = n
    before = st.stats["results_in_place"]
    if red is not None and any(j in remap for j in red[0]):  # it reads a reduction: rows
        js, dim = red
        outputs, ints_out = st._outputs(g, nodes, results, js)
        indexed = bool(g["ints_in"] or ints_out)
        prog = Program(
            tuple(g["in_desc"]), len(shape) if indexed else 0, tuple(g["nodes"]), tuple(outputs)
        )
        rec.kind = ROWS
        rec.prog = Reduction(prog, st.rt.reduce_local)
        rows, red_n, inner = _geometry(shape, dim)
        ints = [rows, red_n, inner, red_n]
        if indexed:
            ints += list(shape) + g["ints_in"] + ints_out
        rec.ints = ints
        rec.n = rows * red_n
        rec.groups = min(rows, st.rt.max_groups)
    else:
        outputs, ints_out = st._outputs(g, nodes, results, ())
        indexed = bool(g["ints_in"] or ints_out)
        prog = Program(
            tuple(g["in_desc"]), len(shape) if indexed else 0, tuple(g["nodes"]), tuple(outputs)
        )
        rec.kind = EW
        rec.prog = prog
        rec.ints = (list(shape) + g["ints_in"] + ints_out) if indexed else []
        rec.items = n
        width = st.vector_width
        if not indexed and width in WIDTHS:
            rec.vec_prog = prog._replace(vec=width)
            rec.vec_items = max(1, (n + width - 1) // width)
    rec.outputs = [k for _, k, _ in outputs]
    rec.in_place = st.stats["results_in_place"] - before
    st.stats["results_in_place"] = before  # counted per launch, in `run`
    return rec


def run(st, rec: Recipe, nodes, inputs, results) -> list:
    """Launch `rec` for this plan's values; returns the results' buffers (handles settled).

    The kernel is looked up (compiled on a miss) on its first launch only, so a plan whose
    vector variant always runs never compiles its scalar one; where the runtime can prepare a
    launch (`prepare`: fixed arguments set once, outputs of known size), that happens then too.
    """
    ins = [inputs[p] for p in rec.in_pos]
    vals = []
    for j, _ in rec.picks:
        vals += nodes[j][4]
    stats = st.stats
    if rec.kind == ROWS:
        vec = False
        prog, go, items = rec.prog, rec.go, None
        st.last_program = prog.prog
        stats["reductions_fused"] += 1
    else:
        vec = rec.vec_prog is not None and st._vector_ok(ins)  # (aligned inputs)
        if vec:
            prog, go, items = rec.vec_prog, rec.vec_go, rec.vec_items
        else:
            prog, go, items = rec.prog, rec.go, rec.items
        st.last_program = prog
    stats["kernels_launched"] += 1
    if go is None:
        go = _first_launch(st, rec, prog, vec, items, nodes, results, len(ins))
    else:
        stats["plan_cache_hits"] += 1
    stats["results_in_place"] += rec.in_place
    if go is not False:
        new = go(ins, vals)
    else:  # no prepared launch on this runtime (or it is switched off): the general one
        scalars = []
        for j, dt in rec.picks:
            for v in nodes[j][4]:
                scalars.append((v, dt))
        empty = st.rt.empty
        new = [empty(t.shape, t.dtype) for (_, t), k in zip(results, rec.outputs) if k < 0]
        kernel = rec.vec_kernel if vec else rec.kernel
        st.launch(kernel, rec.n, rec.ints, new, ins, scalars, groups=rec.groups, items=items)
    m = 0
    out_prims = []
    for (_, t), k in zip(results, rec.outputs):
        if k >= 0:
            prim = ins[k]
        else:
            prim = new[m]
            m += 1
        t.prim = prim
        t.node = None
        t.owned = True
        out_prims.append(prim)
    return out_prims


def _first_launch(st, rec, prog, vec, items, nodes, results, n_ins):
    """The kernel of `prog` (compiled or from the plan cache) kept in `rec`, and its prepared
    launch where the runtime offers one (else False: launch through `st.launch`)."""
    kernel = st.kernel(prog)
    go = False
    if st.prepare is not None:
        outs = [(t.shape, t.dtype) for (_, t), k in zip(results, rec.outputs) if k < 0]
        sdts = [dt for j, dt in rec.picks for _ in nodes[j][4]]
        go = st.prepare(kernel, rec.n, rec.ints, outs, n_ins, sdts, groups=rec.groups, items=items)
    if vec:
        rec.vec_kernel, rec.vec_go = kernel, go
    else:
        rec.kernel, rec.go = kernel, go
    return go


def _geometry(shape: tuple, dim: int) -> tuple[int, int, int]:
    """(rows, elements per row, distance between a row's elements) of reducing `shape` along
    `dim`: row `r` starts at `(r / inner) * red * inner + r % inner`."""
    red, inner, n = shape[dim], 1, 1
    for d in shape[dim + 1 :]:
        inner *= d
    for d in shape:
        n *= d
    return n // red, red, inner
