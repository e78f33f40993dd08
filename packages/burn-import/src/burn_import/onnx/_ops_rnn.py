"""Recurrent ops (RNN, GRU, LSTM) and Einsum."""

from __future__ import annotations

import string

from ._attrs import einsum_grammar_ok
from ._names import label
from ._registry import op

RNN_ATTRS = (
    "activation_alpha",
    "activation_beta",
    "activations",
    "clip",
    "direction",
    "hidden_size",
    "layout",
    "linear_before_reset",
    "input_forget",
)


@op("RNN", "GRU", "LSTM", attrs=RNN_ATTRS)
def rnn(ctx):
    if "activation_alpha" in ctx.attrs or "activation_beta" in ctx.attrs:
        ctx.fail("activation_alpha/activation_beta are not supported")
    acts = ctx.attr("activations")
    if acts is not None:
        acts = [a.decode() if isinstance(a, bytes) else a for a in acts]
        if any(a.lower() not in ("sigmoid", "tanh", "relu") for a in acts):
            ctx.fail(f"activations {acts}")
    lens_arg = []
    if ctx.has(4):
        lens = ctx.const(4)
        seq = ctx.shape(0)[1 if ctx.attr("layout", 0) else 0]
        if lens is not None and seq is not None and (lens != seq).any():
            ctx.fail("sequence_lens shorter than the sequence is not supported")
        if lens is None or seq is None:  # known only at run time: checked there
            lens_arg = [f"seq_lens={ctx.x(4)}"]
    if _as_module(ctx, acts, lens_arg):
        return
    names = {"RNN": ["b", "_", "h0"], "GRU": ["b", "_", "h0"], "LSTM": ["b", "_", "h0", "c0", "p"]}
    kw = []
    for i, name in enumerate(names[ctx.op_type], start=3):
        if name != "_" and ctx.has(i) and not (name in ("h0", "c0") and _zero(ctx, i)):
            kw.append(f"{name}={ctx.x(i)}")
    opts = {
        "direction": ctx.attr("direction", "forward"),
        "activations": acts,
        "clip": ctx.attr("clip"),
        "layout": ctx.attr("layout", 0),
        "linear_before_reset": ctx.attr("linear_before_reset", 0),
        "input_forget": ctx.attr("input_forget", 0),
    }
    kw += [f"{k}={v!r}" for k, v in opts.items()] + lens_arg
    outs = ", ".join(ctx.out(i) if _read(ctx, i) else "_" for i in range(3))
    ctx.emit(
        f"{outs} = ops.rnn({ctx.op_type!r}, {ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {', '.join(kw)})"
    )


DEFAULT_ACTS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"]}


def _read(ctx, i: int) -> bool:
    """Output i exists and something reads it (torch lists Y_h and Y_c even when unused)."""
    if not ctx.has_out(i):
        return False
    name = ctx.node.output[i]
    gen = ctx.gen
    if ctx.node.output[i] not in gen.main_values:
        return True  # a node of a subgraph body: `consumers` maps the main graph only
    return name in gen.outputs or bool(gen.consumers.get(name))


def _zero(ctx, i: int) -> bool:
    """Input i is a constant of zeros: an initial state the helpers default to (it is not
    written into the model, and a zero state of the export's batch size fits any batch)."""
    c = ctx.const(i)
    return c is not None and not c.any()


def _as_module(ctx, acts, lens_arg) -> bool:
    """An LSTM or GRU that computes what burn_nn's `Lstm`/`BiLstm`/`Gru` compute (constant
    weights, default activations, no clip, no peepholes) becomes such a field, the layer a
    person would have written: `y, y_h, y_c = ops.lstm(x, self.rnn)`. Returns False when it
    does not match (the caller writes the generic `ops.rnn` call)."""
    kind = ctx.op_type
    if kind not in DEFAULT_ACTS or ctx.attr("clip") is not None or ctx.elem(0) != 1:
        return False
    w, r = ctx.const(1), ctx.const(2)
    b = ctx.const(3) if ctx.has(3) else None
    if w is None or r is None or (ctx.has(3) and b is None) or w.ndim != 3 or r.ndim != 3:
        return False
    if kind == "LSTM" and ctx.has(7) and not _zero(ctx, 7):  # peepholes
        return False
    dirs, gh, d_in = w.shape
    direction = ctx.attr("direction", "forward")
    g = 4 if kind == "LSTM" else 3
    h = gh // g
    if gh != g * h or r.shape != (dirs, gh, h) or dirs != (2 if direction == "bidirectional" else 1):
        return False
    if b is not None and b.shape != (dirs, 2 * gh):
        return False
    if acts is not None and [a.lower() for a in acts] != DEFAULT_ACTS[kind] * dirs:
        return False
    from ._rt_rnn_layers import GRU_GATES, LSTM_GATES

    gates = LSTM_GATES if kind == "LSTM" else GRU_GATES
    bias = b is not None

    def record(d):
        rec = {}
        for k, gate in enumerate(gates):
            rows = slice(k * h, (k + 1) * h)
            rec[gate] = {
                "input_transform": {"weight": w[d, rows].T, "bias": b[d, rows] if bias else None},
                "hidden_transform": {
                    "weight": r[d, rows].T,
                    "bias": b[d, gh + k * h : gh + (k + 1) * h] if bias else None,
                },
            }
        return rec

    layout = ctx.attr("layout", 0)
    # burn's defaults left out: batch_first=True is ONNX layout 1, the usual export is 0
    common = f"{d_in}, {h}, bias={bias}" + ("" if layout else ", batch_first=False")
    if kind == "LSTM":
        forget = bool(ctx.attr("input_forget", 0))
        if direction == "bidirectional":
            extra = ", input_forget=True" if forget else ""
            init = f"BiLstmConfig({common}{extra}).init(device)"
            rec = {"forward_lstm": record(0), "reverse_lstm": record(1)}
            name = ctx.add_field("lstm", "BiLstm", init, rec)
        else:
            rev = direction == "reverse"
            extra = ", reverse=True" * rev + ", input_forget=True" * forget
            init = f"LstmConfig({common}{extra}).init(device)"
            name = ctx.add_field("lstm", "Lstm", init, record(0))
        layers = f"self.{name}"
    else:
        reset_after = bool(ctx.attr("linear_before_reset", 0))
        extra = "" if reset_after else ", reset_after=False"  # torch's GRU resets after
        init = f"GruConfig({common}{extra}).init(device)"
        name = ctx.add_field("gru", "Gru", init, record(0))
        layers = f"self.{name}"
        if direction == "bidirectional":
            rev = ctx.gen.add_field(
                "gru", "Gru", init, record(1), f"{ctx.op_type} {label(ctx.name)}: reverse",
                hint=f"{name}.reverse",
            )  # fmt: skip
            layers = f"(self.{name}, self.{rev})"
        elif direction == "reverse":
            layers += ", reverse=True"
    states = ["h0", "c0"] if kind == "LSTM" else ["h0"]
    kw = [f"{s}={ctx.x(5 + i)}" for i, s in enumerate(states) if ctx.has(5 + i) and not _zero(ctx, 5 + i)]
    kw += [f"layout={layout}"] * bool(layout) + lens_arg
    outs = ", ".join(ctx.out(i) if _read(ctx, i) else "_" for i in range(3))
    fn = kind.lower()
    ctx.emit(f"{outs} = ops.{fn}({', '.join([ctx.x(0), layers] + kw)})")
    return True


def expand_ellipsis(eq: str, ranks: list[int]) -> str:
    """An einsum equation with `...` replaced by letters of its own, from the operands' ranks.

    The broadcast dims align from the right (as numpy's), so an operand with fewer of them takes
    the last letters; an implicit output lists them first, then the letters used once, sorted.

    Example:
        >>> expand_ellipsis("...ii->...i", [4])
        'ABii->ABi'
        >>> expand_ellipsis("i...,...->", [2, 0])
        'iA,->'
    """
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    free = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in eq]
    widths = [r - len(t.replace("...", "")) for t, r in zip(terms, ranks)]
    e = max((w for t, w in zip(terms, widths) if "..." in t), default=0)
    fresh = "".join(free[:e])
    terms = [t.replace("...", fresh[e - w :]) if "..." in t else t for t, w in zip(terms, widths)]
    if arrow:
        out = out.replace("...", fresh)
    else:
        once = sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1)
        out = fresh + "".join(once)
    return ",".join(terms) + "->" + out


@op("Einsum", attrs=("equation",))
def einsum(ctx):
    eq = ctx.attr("equation").replace(" ", "")
    ranks = [ctx.rank(i) for i in range(ctx.n_in)]
    if not einsum_grammar_ok(eq) or len(eq.partition("->")[0].split(",")) != ctx.n_in:
        ctx.fail(f"attribute 'equation' = {eq!r} is not an einsum of {ctx.n_in} operands")
    if "..." in eq:
        eq = expand_ellipsis(eq, ranks)
    lhs, arrow, out = eq.partition("->")
    for term, rank in zip(lhs.split(","), ranks):
        if len(term) != rank:
            ctx.fail(f"equation term {term!r} has {len(term)} letters for an input of rank {rank}")
    if arrow and (len(set(out)) != len(out) or not set(out) <= set(lhs)):
        ctx.fail(f"equation output {out!r}: letters must be distinct and appear in the inputs")
    xs = ", ".join(ctx.x(i) for i in range(ctx.n_in))
    ctx.set(0, f"ops.einsum({eq!r}, [{xs}], {ranks})")


@op("SwiGLU", attrs=("alpha",))
def swiglu(ctx):
    a = ctx.attr("alpha", 1.0)
    x = ctx.x(0)
    ctx.set(0, f"{x} * activation.sigmoid({x} * {a!r}) * {ctx.x(1)}")
