"""torch's `nn.MultiheadAttention` (self-attention, no mask) as the legacy exporter writes it,
found in the graph and written as burn_nn's `MultiHeadAttention` field: the layer a person
would have written, `self.attn.forward(MhaInput.self_attn(x)).context`, instead of ~25 nodes of
reshapes, transposes and matmuls.

The exported subgraph (seq-first inside, as torch computes it): in-projection MatMul + Add of
`in_proj_bias` -> Reshape [L, N, 3, E] -> Unsqueeze 0 -> Transpose [3, 1, 2, 0, 4] -> Squeeze 3
-> Gather 0 / 1 / 2 (q, k, v) -> each Reshape [L, N*H, d] -> Transpose [1, 0, 2] -> Reshape
[N, H, L, d]; k Transpose [0, 1, 3, 2]; q and k each scaled by d^-1/4; MatMul -> Softmax ->
MatMul v -> Transpose [2, 0, 1, 3] -> Reshape [L*N, E] -> Gemm (out_proj) -> Reshape [L, N, E],
usually between Transposes [1, 0, 2] (batch_first). Every intermediate value must be read only
inside the pattern (Shape nodes of known shapes aside), else nothing is replaced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ._fold import try_fold


@dataclass
class Attention:
    """One matched subgraph: weights in burn's [in, out] layout and the values around it."""

    source: str  # the batch-first [N, L, E] value (or the seq-first one, see `seq_first_in`)
    seq_first_in: bool
    out: str  # the value the subgraph's code gives
    seq_first_out: bool
    d_model: int
    n_heads: int
    record: dict
    hint: str | None


def find_attention(gen, graph) -> None:
    """Fill `gen.attention` (in-projection MatMul output -> `Attention`) and `gen.skipped`
    (outputs of the nodes its code replaces)."""
    if not any(n.op_type == "Softmax" for n in graph.node):
        return
    scratch = SimpleNamespace(consts=dict(gen.consts), types=dict(gen.types), opset=gen.opset)
    for node in graph.node:  # the values shape arithmetic gives (scales, Reshape targets)
        try:
            try_fold(scratch, node)
        except Exception:  # noqa: BLE001 - a fold that fails here is retried by the converter
            continue
    producers = {o: n for n in graph.node for o in n.output}
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == "MatMul":
            found = _match(node, scratch, gen.consumers, producers, outputs)
            if found is not None:
                att, nodes = found
                gen.attention[node.output[0]] = att
                gen.skipped.update(n.output[0] for n in nodes)


def _match(mm, sc, consumers, producers, outputs):
    const = sc.consts.get

    def shape(v):
        vt = sc.types.get(v)
        return list(vt.shape) if vt is not None and vt.shape is not None else None

    def only(node, op, **attrs):
        """The one node reading `node`'s output (Shape nodes over a known shape aside)."""
        v = node.output[0]
        readers = [r for r in consumers.get(v, []) if r.op_type != "Shape"]
        if v in outputs or len(readers) != 1 or readers[0].op_type != op:
            return None
        if any(r.op_type == "Shape" for r in consumers.get(v, [])):
            s = shape(v)
            if s is None or not all(isinstance(d, int) for d in s):
                return None
        r = readers[0]
        got = {a.name: _attr(a) for a in r.attribute}
        return r if all(got.get(k, None) == val for k, val in attrs.items()) else None

    w = const(mm.input[1])
    if w is None or w.ndim != 2 or w.dtype != np.float32 or w.shape[1] != 3 * w.shape[0]:
        return None
    e = w.shape[0]
    nodes = [mm]
    add = only(mm, "Add")
    if add is None:
        return None
    bias_name = add.input[0] if add.input[1] == mm.output[0] else add.input[1]
    b = const(bias_name)
    if b is None or b.shape != (3 * e,):
        return None
    r2 = only(add, "Reshape")
    un = r2 and only(r2, "Unsqueeze")
    t1 = un and only(un, "Transpose", perm=[3, 1, 2, 0, 4])
    sq = t1 and only(t1, "Squeeze")
    if sq is None or _ints(const(un.input[1])) != [0] or _ints(const(sq.input[1])) != [3]:
        return None
    s2 = shape(r2.output[0])
    if s2 is None or len(s2) != 4 or s2[2:] != [3, e]:
        return None
    nodes += [add, r2, un, t1, sq]
    gathers = consumers.get(sq.output[0], [])
    if sq.output[0] in outputs or len(gathers) != 3 or any(g.op_type != "Gather" for g in gathers):
        return None
    by_index = {}
    for g in gathers:
        idx = const(g.input[1])
        if idx is None or idx.ndim != 0 or {a.name: _attr(a) for a in g.attribute}.get("axis", 0):
            return None
        by_index[int(idx)] = g
    if sorted(by_index) != [0, 1, 2]:
        return None
    heads = []
    for i in range(3):
        g = by_index[i]
        r = only(g, "Reshape")
        t = r and only(r, "Transpose", perm=[1, 0, 2])
        r2_ = t and only(t, "Reshape")
        if r2_ is None:
            return None
        sa, sb = shape(r.output[0]), shape(r2_.output[0])
        if sa is None or sb is None or len(sa) != 3 or len(sb) != 4:
            return None
        nodes += [g, r, t, r2_]
        heads.append((sa, sb, r2_))
    d = heads[0][0][2]
    if not isinstance(d, int) or d <= 0 or e % d or any(h[1][3] != d for h in heads):
        return None
    n_heads = e // d
    rq, rk, rv = (h[2] for h in heads)
    kt = only(rk, "Transpose", perm=[0, 1, 3, 2])
    mq = only(rq, "Mul")
    mk = kt and only(kt, "Mul")
    if mq is None or mk is None:
        return None
    scales = []
    for m, src in ((mq, rq), (mk, kt)):
        other = m.input[1] if m.input[0] == src.output[0] else m.input[0]
        c = const(other)
        if c is None or c.size != 1:
            return None
        scales.append(float(c.reshape(-1)[0]))
    if abs(scales[0] * scales[1] * math.sqrt(d) - 1.0) > 1e-5:
        return None
    mm1 = only(mq, "MatMul")
    if mm1 is None or only(mk, "MatMul") != mm1 or list(mm1.input) != [mq.output[0], mk.output[0]]:
        return None
    sm = only(mm1, "Softmax")
    if sm is None or {a.name: _attr(a) for a in sm.attribute}.get("axis", -1) not in (-1, 3):
        return None
    mm2 = only(sm, "MatMul")
    if mm2 is None or only(rv, "MatMul") != mm2 or list(mm2.input) != [sm.output[0], rv.output[0]]:
        return None
    t6 = only(mm2, "Transpose", perm=[2, 0, 1, 3])
    r9 = t6 and only(t6, "Reshape")
    gemm = r9 and only(r9, "Gemm")
    r10 = gemm and only(gemm, "Reshape")
    if r10 is None:
        return None
    ga = {a.name: _attr(a) for a in gemm.attribute}
    wo = const(gemm.input[1])
    co = const(gemm.input[2]) if len(gemm.input) > 2 else None
    if ga.get("transA", 0) or ga.get("alpha", 1.0) != 1.0 or ga.get("beta", 1.0) != 1.0:
        return None
    if wo is None or wo.shape != (e, e) or co is None or co.shape != (e,):
        return None
    s10 = shape(r10.output[0])
    if s10 is None or len(s10) != 3 or s10[2] != e or shape(r9.output[0]) != [s10[0] * s10[1], e]:
        return None
    nodes += [kt, mq, mk, mm1, sm, mm2, t6, r9, gemm, r10]
    out, seq_first_out = r10.output[0], True
    t7 = only(r10, "Transpose", perm=[1, 0, 2])
    if t7 is not None:
        nodes.append(t7)
        out, seq_first_out = t7.output[0], False
    src, seq_first_in = mm.input[0], True
    t0 = producers.get(src)
    if (
        t0 is not None and t0.op_type == "Transpose"
        and {a.name: _attr(a) for a in t0.attribute}.get("perm") == [1, 0, 2]
        and [r for r in consumers.get(src, [])] == [mm] and src not in outputs
    ):  # fmt: skip
        nodes.append(t0)
        src, seq_first_in = t0.input[0], False
    w_o = wo.T if ga.get("transB", 0) else wo
    record = {
        name: {"weight": w[:, k * e : (k + 1) * e], "bias": b[k * e : (k + 1) * e]}
        for k, name in enumerate(("query", "key", "value"))
    }
    record["output"] = {"weight": w_o, "bias": co}
    key = bias_name if bias_name.endswith("in_proj_bias") and "." in bias_name else None
    hint = key.rsplit(".", 1)[0] if key else None
    att = Attention(src, seq_first_in, out, seq_first_out, e, n_heads, record, hint)
    return att, [n for n in nodes if n is not mm]


def _attr(a):
    import onnx

    v = onnx.helper.get_attribute_value(a)
    return list(v) if isinstance(v, (list, tuple)) else v


def _ints(arr):
    return None if arr is None else [int(v) for v in np.asarray(arr).reshape(-1)]


def write_attention(ctx, att: Attention) -> None:
    """The matched subgraph's code, at its in-projection MatMul."""
    gen = ctx.gen
    init = f"MultiHeadAttentionConfig({att.d_model}, {att.n_heads}, dropout=0.0).init(device)"
    name = ctx.add_field("attention", "MultiHeadAttention", init, att.record, hint=att.hint)
    x = gen.vars[att.source] if att.source in gen.vars else gen.materialize(att.source)
    if att.seq_first_in:
        x = f"{x}.swap_dims(0, 1)"
    expr = f"self.{name}.forward(MhaInput.self_attn({x})).context"
    if att.seq_first_out:
        expr += ".swap_dims(0, 1)"
    ctx.emit("# with the nodes after it: torch's MultiheadAttention, as burn_nn's layer")
    # named after the layer; a graph output keeps its own name
    gen.vars[att.out] = gen.fresh(att.out if att.out in gen.outputs else att.hint or name)
    ctx.emit(f"{gen.vars[att.out]} = {expr}")
