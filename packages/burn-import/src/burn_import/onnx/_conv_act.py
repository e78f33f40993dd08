"""A Conv whose only reader is its activation (Relu, HardSwish, HardSigmoid, Sigmoid), or whose
two readers are the halves of a fused `x * sigmoid(x)` or `x * hard_sigmoid(x)`
(`_ops_elementwise._silu_pairs`: silu, hard_swish), is
written as one call, `self.conv.forward(x, activation="relu")` (burn_nn's Conv2d forward with an
activation: the backend's `conv2d_activation`, which NdArray runs as an epilogue of its conv
kernels, where the activation alone re-read and wrote the whole output: mobilenet_v3_small has
41 such pairs, efficientnet_b0 65). The pair's value is named after the activation's output,
which the rest of the code reads."""

from __future__ import annotations

from onnx import helper

from ._names import label
from ._ops_elementwise import _silu_pairs

#: ONNX op -> (burn activation name, its attributes with defaults, in the op's parameter order)
FUSED = {
    "Relu": ("relu", ()),
    "HardSwish": ("hard_swish", ()),
    "HardSigmoid": ("hard_sigmoid", (("alpha", 0.2), ("beta", 0.5))),
    "Sigmoid": ("sigmoid", ()),
}


def fused_activation(ctx) -> str | None:
    """The `activation=` argument for this Conv node when its output's readers are one float
    activation of `FUSED`, or the Sigmoid and Mul of one `x * sigmoid(x)`, in the main graph
    (the output no graph output), with those nodes marked as absorbed (their comment lines
    written here unless the variable's name describes them); else None."""
    out = ctx.node.output[0]
    gen = ctx.gen
    readers = gen.consumers.get(out, [])
    if out in gen.outputs or out not in gen.main_values:
        return None
    if len(readers) == 2:
        return _silu(ctx, out, readers)
    if len(readers) != 1:
        return None
    node = readers[0]
    spec = FUSED.get(node.op_type)
    if spec is None or node.domain not in ("", "ai.onnx") or list(node.input) != [out]:
        return None
    if len(node.output) != 1 or node.output[0] in gen.absorbed:
        return None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if set(attrs) - {name for name, _ in spec[1]}:
        return None  # an attribute the fused call would drop: the node converts itself
    name, params = spec
    values = [float(attrs.get(k, default)) for k, default in params]
    _absorb(ctx, out, node)
    if not values:
        return f'"{name}"'
    return f'("{name}", ' + ", ".join(repr(v) for v in values) + ")"


def _silu(ctx, out, readers) -> str | None:
    """`"silu"` / `"hard_swish"` when the two readers are the gate (Sigmoid, HardSigmoid of
    HardSwish's constants) and the Mul of a fused `x * gate(x)` of this output (the gate is
    then skipped, the Mul absorbed)."""
    gen = ctx.gen
    by_op = {r.op_type: r for r in readers}
    sig, mul = by_op.get("Sigmoid") or by_op.get("HardSigmoid"), by_op.get("Mul")
    if sig is None or mul is None or _silu_pairs(gen).get(mul.output[0]) != (out, sig.output[0]):
        return None
    if mul.output[0] in gen.absorbed:
        return None
    gen.skipped.add(sig.output[0])
    if sig.name not in gen.described:
        ctx.emit(f"# {sig.op_type} {label(sig.name or sig.output[0])}")
    _absorb(ctx, out, mul)
    return f'"{gen.gate_kinds[mul.output[0]]}"'


def _absorb(ctx, out: str, node) -> None:
    """`node`'s code is this Conv's: the pair's value named after its output."""
    gen = ctx.gen
    gen.vars[out] = gen.fresh(node.output[0])
    gen.absorbed[node.output[0]] = out
    if node.name not in gen.described:  # the node's own comment line (`_codegen._convert_node`)
        ctx.emit(f"# {node.op_type} {label(node.name or node.output[0])}")
