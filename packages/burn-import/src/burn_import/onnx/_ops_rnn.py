"""Recurrent ops (RNN, GRU, LSTM) and Einsum."""

from __future__ import annotations

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
    if ctx.has(4):
        lens = ctx.const(4)
        seq = ctx.shape(0)[1 if ctx.attr("layout", 0) else 0]
        if lens is None or seq is None or (lens != seq).any():
            ctx.fail("sequence_lens shorter than the sequence is not supported")
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
    kw += [f"{k}={v!r}" for k, v in opts.items()]
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
    ctx.emit(
        f"{outs} = ops.rnn({ctx.op_type!r}, {ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {', '.join(kw)})"
    )


@op("Einsum", attrs=("equation",))
def einsum(ctx):
    eq = ctx.attr("equation").replace(" ", "")
    if "..." in eq:
        ctx.fail("ellipsis in the equation is not supported")
    ranks = [ctx.rank(i) for i in range(ctx.n_in)]
    xs = ", ".join(ctx.x(i) for i in range(ctx.n_in))
    ctx.set(0, f"ops.einsum({eq!r}, [{xs}], {ranks})")


@op("SwiGLU", attrs=("alpha",))
def swiglu(ctx):
    a = ctx.attr("alpha", 1.0)
    x = ctx.x(0)
    ctx.set(0, f"{x} * activation.sigmoid({x} * {a!r}) * {ctx.x(1)}")
