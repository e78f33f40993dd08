"""A Conv whose only reader is its activation (Relu, HardSwish, HardSigmoid) is written as one
call, `self.conv.forward(x, activation="relu")` (burn_nn's Conv2d forward with an activation:
the backend's `conv2d_activation`, which NdArray runs as an epilogue of its conv kernels, where
the activation alone re-read and wrote the whole output: mobilenet_v3_small has 41 such pairs).
The pair's value is named after the activation's output, which the rest of the code reads."""

from __future__ import annotations

from onnx import helper

from ._names import label

#: ONNX op -> (burn activation name, its attributes with defaults, in the op's parameter order)
FUSED = {
    "Relu": ("relu", ()),
    "HardSwish": ("hard_swish", ()),
    "HardSigmoid": ("hard_sigmoid", (("alpha", 0.2), ("beta", 0.5))),
}


def fused_activation(ctx) -> str | None:
    """The `activation=` argument for this Conv node when its output's only reader is a float
    activation of `FUSED` in the main graph (not a graph output), with that node marked as
    absorbed (its comment line written here unless the variable's name describes it); else
    None."""
    out = ctx.node.output[0]
    gen = ctx.gen
    readers = gen.consumers.get(out, [])
    if len(readers) != 1 or out in gen.outputs or out not in gen.main_values:
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
    gen.vars[out] = gen.fresh(node.output[0])
    gen.absorbed[node.output[0]] = out
    if node.name not in gen.described:  # the node's own comment line (`_codegen._convert_node`)
        ctx.emit(f"# {node.op_type} {label(node.name or node.output[0])}")
    if not values:
        return f'"{name}"'
    return f'("{name}", ' + ", ".join(repr(v) for v in values) + ")"
