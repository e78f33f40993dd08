"""Recurrent ops (RNN, GRU, LSTM) and Einsum."""

from __future__ import annotations

import string

from ._attrs import einsum_grammar_ok
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
    names = {"RNN": ["b", "_", "h0"], "GRU": ["b", "_", "h0"], "LSTM": ["b", "_", "h0", "c0", "p"]}
    kw = []
    for i, name in enumerate(names[ctx.op_type], start=3):
        if name != "_" and ctx.has(i):
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
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
    ctx.emit(
        f"{outs} = ops.rnn({ctx.op_type!r}, {ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {', '.join(kw)})"
    )


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
