"""ONNX Scan written out as a Python `for` loop over the scan axis, its body converted inline.

Scan (opset 9+) carries N state values through a body graph once per step of its M scan
inputs and stacks the body's K per-step outputs. The generated code reads:

    state = init
    parts = []
    for t in range(length):
        x_t = ops.scan_slice(x, axis, t, length, reverse)
        <the body's nodes, on state and x_t>
        state = <body state output>
        parts.append(<body scan output>)
    y = ops.scan_stack(parts, axis, reverse, rank)

The body's values are plain variables of the loop (ONNX names are unique across scopes, so
they cannot clash), outer values are read directly, and constants of the body are folded or
materialized as anywhere else. The body's inputs are often untyped (LinearAttention's body
is): their types come from the Scan's inputs, the scan axis removed.
"""

from __future__ import annotations

import onnx

from ._codegen_loop import bind_state_results, forget_block_consts, stack_results
from ._errors import op_error, unknown_error
from ._names import label
from ._types import VType

INDENT = "    "


def _ints(attrs, name, default):
    a = attrs.get(name)
    return list(a.ints) if a is not None else default


def convert_scan(gen, convert, node: onnx.NodeProto) -> None:
    """Write `node` (a Scan) as a loop; `convert(gen, node)` converts one body node."""
    name = node.name or node.output[0]
    attrs = {a.name: a for a in node.attribute}
    body = attrs["body"].g
    m = attrs["num_scan_inputs"].i
    n_state = len(node.input) - m
    k = len(body.output) - n_state
    ranks = []
    for i in node.input[n_state:]:
        vt = gen.types.get(i)
        if vt is None or vt.rank is None:
            raise unknown_error("Scan", name, gen.opset, f"the rank of scan input {i!r}")
        ranks.append(vt.rank)
    in_axes = [a % r for a, r in zip(_ints(attrs, "scan_input_axes", [0] * m), ranks)]
    in_dirs = _ints(attrs, "scan_input_directions", [0] * m)
    out_axes = _ints(attrs, "scan_output_axes", [0] * k)
    out_dirs = _ints(attrs, "scan_output_directions", [0] * k)
    for i in node.input[:n_state]:
        if not i:
            raise op_error("Scan", name, gen.opset, "a state input is missing")

    def var(onnx_name: str) -> str:
        return gen.vars[onnx_name] if onnx_name in gen.vars else gen.materialize(onnx_name)

    gen.lines.append(f"# Scan {label(name)}: a loop over the scan axis, the body inline")
    first = var(node.input[n_state])
    length = gen.fresh(f"{name}_length")
    gen.lines.append(f"{length} = {first}.dims()[{in_axes[0]}]")
    state = [gen.fresh(f"{name}_state{i}") for i in range(n_state)]
    for s, i in zip(state, node.input[:n_state]):
        gen.lines.append(f"{s} = {var(i)}")
    parts = [gen.fresh(f"{name}_parts{j}") for j in range(k)]
    for p in parts:
        gen.lines.append(f"{p} = []")
    step = gen.fresh(f"{name}_t")
    gen.lines.append(f"for {step} in range({length}):")
    start, before = len(gen.lines), set(gen.vars)
    for j, (src, axis, rev) in enumerate(zip(node.input[n_state:], in_axes, in_dirs)):
        inp = body.input[n_state + j]
        v = gen.fresh(inp.name)
        gen.lines.append(f"{v} = ops.scan_slice({var(src)}, {axis}, {step}, {length}, {bool(rev)})")
        gen.vars[inp.name] = v
        outer = gen.types[src]
        shape = None if outer.shape is None else outer.shape[:axis] + outer.shape[axis + 1 :]
        gen.types[inp.name] = VType(outer.elem, shape)
    for inp, s, src in zip(body.input[:n_state], state, node.input[:n_state]):
        gen.vars[inp.name] = s
        gen.types[inp.name] = gen.types.get(src) or VType(0, None)
    for sub in body.node:
        convert(gen, sub)
    for s, out in zip(state, body.output[:n_state]):
        gen.lines.append(f"{s} = {var(out.name)}")
    for p, out in zip(parts, body.output[n_state:]):
        gen.lines.append(f"{p}.append({var(out.name)})")
    gen.lines[start:] = [INDENT + line for line in gen.lines[start:]]
    forget_block_consts(gen, before)
    bind_state_results(gen, state, body.output[:n_state], node.output[:n_state])
    stack_results(
        gen, "Scan", name, parts, body.output[n_state:], node.output[n_state:], out_axes, out_dirs
    )
