"""A channel shuffle of a concatenation (ShuffleNet's units, as torch exports
`channel_shuffle(torch.cat([x1, x2], 1), 2)`): Concat of g equal inputs along axis a ->
Reshape splitting a into [g, c] -> Transpose swapping a and a + 1 -> Reshape merging them
again, written as one line a person would write,

    `Tensor.stack([x1, x2], 2).flatten(1, 2)`

output channel i * g + k being input k's channel i, exactly what the four nodes give. Each
intermediate value must be read only by the next node (and be no graph output), every shape
known at import time; anything else stays four nodes.

Why: on NdArray the four nodes were two copies (the concat, and the Reshape of the
transposed view) and four op calls; the stack is one copy and two calls (shufflenet_v2_x0_5
runs 16 of these per forward).
"""

from __future__ import annotations

import math

from onnx import numpy_helper

from ._types import VType


def shuffle_concat(ctx) -> str | None:
    """The expression of the shuffled concatenation when `ctx`'s Concat starts the pattern,
    with the Reshape / Transpose / Reshape after it marked as written; else None."""
    gen, node = ctx.gen, ctx.node
    g = ctx.n_in
    if node.output[0] not in gen.main_values or g < 2 or any(not ctx.has(i) for i in range(g)):
        return None
    dims = [_dims(ctx.vt(i)) for i in range(g)]
    if dims[0] is None or any(d != dims[0] for d in dims):
        return None
    rank = len(dims[0])
    a = ctx.axis("axis", None, rank)
    c = dims[0][a]
    cat = dims[0][:a] + [g * c] + dims[0][a + 1 :]
    split = cat[:a] + [g, c] + cat[a + 1 :]
    r1 = _only(gen, node.output[0], "Reshape")
    if r1 is None or _target(gen, r1, cat) != split:
        return None
    t = _only(gen, r1.output[0], "Transpose")
    perm = list(range(rank + 1))
    perm[a], perm[a + 1] = a + 1, a
    if t is None or _perm(t) != perm:
        return None
    r2 = _only(gen, t.output[0], "Reshape")
    swapped = cat[:a] + [c, g] + cat[a + 1 :]
    if r2 is None or _target(gen, r2, swapped) != cat:
        return None
    gen.skipped.update((r1.output[0], t.output[0]))
    gen.absorbed[r2.output[0]] = node.output[0]
    gen.types[r2.output[0]] = VType(ctx.elem(0), cat)  # known now, whatever ONNX inferred
    xs = ", ".join(ctx.x(i) for i in range(g))
    return f"Tensor.stack([{xs}], {a + 1}).flatten({a}, {a + 1})"


def _dims(vt) -> list[int] | None:
    """Every dim of a value's type, when all are known (rank >= 1)."""
    if vt is None or not vt.shape or any(not isinstance(d, int) or d < 0 for d in vt.shape):
        return None
    return list(vt.shape)


def _only(gen, value: str, op: str):
    """The one node reading `value` when it is an `op` of the default domain and `value` is no
    graph output; else None."""
    readers = gen.consumers.get(value, [])
    if value in gen.outputs or len(readers) != 1:
        return None
    r = readers[0]
    if r.op_type != op or r.domain not in ("", "ai.onnx") or r.input[0] != value:
        return None
    return r


def _perm(node) -> list[int] | None:
    for a in node.attribute:
        if a.name == "perm":
            return list(a.ints)
    return None


def _target(gen, reshape, dims: list[int]) -> list[int] | None:
    """A Reshape's result dims for an input of `dims` (ONNX's 0 and -1 resolved), when its
    shape input is a constant; None otherwise."""
    if any(a.name == "allowzero" and a.i for a in reshape.attribute):
        return None
    shape = _const(gen, reshape.input[1]) if len(reshape.input) > 1 else None
    if shape is None or shape.ndim != 1 or shape.dtype.kind != "i":
        return None
    out = [int(s) for s in shape]
    if any(s == 0 and i >= len(dims) for i, s in enumerate(out)):
        return None
    out = [dims[i] if s == 0 else s for i, s in enumerate(out)]
    if out.count(-1) == 1:
        known = math.prod(s for s in out if s != -1)
        if known <= 0 or math.prod(dims) % known:
            return None
        out[out.index(-1)] = math.prod(dims) // known
    if any(s < 0 for s in out) or math.prod(out) != math.prod(dims):
        return None
    return out


def _const(gen, name: str):
    """The value of `name` when it is an initializer, a folded value or a main-graph Constant
    node's `value` (the exporter writes a Reshape's Constant after the Concat before it)."""
    if name in gen.consts:
        return gen.consts[name]
    for n in gen.model.graph.node:
        if name in n.output:
            attrs = list(n.attribute)
            if n.op_type == "Constant" and len(attrs) == 1 and attrs[0].name == "value":
                return numpy_helper.to_array(attrs[0].t)
            return None
    return None
