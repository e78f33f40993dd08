"""ONNX Loop written out as a Python `while` loop, its body converted inline (as Scan's), and
an If on a run-time condition as a Python if/else.

Loop runs its body while the iteration count is below the trip count M (if given) and the
condition is true (if given), carrying N values and collecting K per-iteration outputs,
concatenated along a new first axis. The generated code reads:

    trip, go = ops.loop_limits(M, cond)
    state = init
    parts = []
    i = 0
    while (trip is None or i < trip) and go:
        it, c = ops.loop_counter(i, go, device)
        <the body's nodes, on it, c and state>
        go = ops.truth(<body condition>)
        state = <body carried output>
        parts.append(<body scan output>)
        i += 1
    y = ops.scan_stack(parts, 0, False, rank)

The body's inputs take their types from the Loop's inputs (int64 and bool scalars for the
counter and the condition), since function bodies leave them untyped.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto

from ._errors import op_error, unknown_error
from ._load import to_array
from ._names import label
from ._types import VType, vtype_of

INDENT = "    "


def bind_state_results(gen, state, body_outs, results) -> None:
    """A Loop/Scan's final state values: result name -> the loop's state variable."""
    for s, out, res in zip(state, body_outs, results):
        if res:
            gen.vars[res] = s
            gen.types[res] = gen.types.get(out.name) or VType(0, None)


def stack_results(gen, op, name, parts, body_outs, results, axes, reverses) -> None:
    """A Loop/Scan's per-iteration outputs: each list of parts stacked along its axis (in
    reverse order where asked) into its result."""
    for p, out, res, axis, rev in zip(parts, body_outs, results, axes, reverses):
        if not res:
            continue
        vt = gen.types.get(out.name)
        if vt is None or vt.rank is None:
            raise unknown_error(op, name, gen.opset, f"the rank of body output {out.name!r}")
        axis %= vt.rank + 1
        v = gen.fresh(res)
        gen.lines.append(f"{v} = ops.scan_stack({p}, {axis}, {bool(rev)}, {vt.rank})")
        gen.vars[res] = v
        shape = None if vt.shape is None else vt.shape[:axis] + [None] + vt.shape[axis:]
        gen.types[res] = VType(vt.elem, shape)


def forget_block_consts(gen, before: set[str]) -> None:
    """Constants first materialized inside a loop body or branch are assigned only there: a
    later use outside (or in the other branch) must write them again, not read a variable that
    a skipped block never set."""
    for name in set(gen.vars) - before:
        if name in gen.consts:
            del gen.vars[name]


def convert_loop(gen, convert, node: onnx.NodeProto) -> None:
    """Write `node` (a Loop) as a while loop; `convert(gen, node)` converts one body node."""
    name = node.name or node.output[0]
    body = next(a.g for a in node.attribute if a.name == "body")
    init = list(node.input[2:])
    n = len(init)
    k = len(body.output) - 1 - n

    def var(onnx_name: str) -> str:
        return gen.vars[onnx_name] if onnx_name in gen.vars else gen.materialize(onnx_name)

    gen.lines.append(f"# Loop {label(name)}: a while loop, the body inline")
    trip, go, i = (gen.fresh(f"{name}_{s}") for s in ("trip", "go", "i"))
    m = var(node.input[0]) if node.input[0] else "None"
    c = var(node.input[1]) if len(node.input) > 1 and node.input[1] else "None"
    gen.lines.append(f"{trip}, {go} = ops.loop_limits({m}, {c})")
    state = [gen.fresh(f"{name}_state{j}") for j in range(n)]
    for s, src in zip(state, init):
        if not src:
            raise op_error("Loop", name, gen.opset, "a loop-carried input is missing")
        gen.lines.append(f"{s} = {var(src)}")
    parts = [gen.fresh(f"{name}_parts{j}") for j in range(k)]
    for p in parts:
        gen.lines.append(f"{p} = []")
    gen.lines.append(f"{i} = 0")
    gen.lines.append(f"while ({trip} is None or {i} < {trip}) and {go}:")
    start, before = len(gen.lines), set(gen.vars)
    it_in, cond_in = body.input[0].name, body.input[1].name
    it_v, cond_v = gen.fresh(it_in), gen.fresh(cond_in)
    gen.lines.append(f"{it_v}, {cond_v} = ops.loop_counter({i}, {go}, device)")
    gen.vars[it_in], gen.types[it_in] = it_v, VType(TensorProto.INT64, [])
    gen.vars[cond_in], gen.types[cond_in] = cond_v, VType(TensorProto.BOOL, [])
    for inp, s, src in zip(body.input[2:], state, init):
        gen.vars[inp.name] = s
        gen.types[inp.name] = gen.types.get(src) or VType(0, None)
    for sub in body.node:
        convert(gen, sub)
    gen.lines.append(f"{go} = ops.truth({var(body.output[0].name)})")
    for s, out in zip(state, body.output[1 : 1 + n]):
        gen.lines.append(f"{s} = {var(out.name)}")
    for p, out in zip(parts, body.output[1 + n :]):
        gen.lines.append(f"{p}.append({var(out.name)})")
    gen.lines.append(f"{i} += 1")
    gen.lines[start:] = [INDENT + line for line in gen.lines[start:]]
    forget_block_consts(gen, before)
    bind_state_results(gen, state, body.output[1 : 1 + n], node.output[:n])
    k = len(parts)
    stack_results(gen, "Loop", name, parts, body.output[1 + n :], node.output[n:], [0] * k, [0] * k)


def convert_if(gen, convert, node: onnx.NodeProto) -> None:
    """`If` on a run-time condition: both branches converted inline under a Python if/else,
    each assigning the node's outputs (whose types are the then-branch's)."""
    name = node.name or node.output[0]
    branches = {a.name: a.g for a in node.attribute}
    outs = [gen.fresh(o) if o else "_" for o in node.output]
    cond = gen.vars.get(node.input[0])
    if cond is None:
        raise op_error("If", name, gen.opset, f"condition {node.input[0]!r} has no value")
    gen.lines.append(f"# If {label(name)}: a run-time condition")
    for key, head in (("then_branch", f"if ops.truth({cond}):"), ("else_branch", "else:")):
        branch = branches[key]
        gen.lines.append(head)
        start, before = len(gen.lines), set(gen.vars)
        for init in branch.initializer:
            gen.consts[init.name] = to_array(init, f"initializer {init.name!r}")
        for vi in list(branch.value_info) + list(branch.output):
            vt = vtype_of(vi.type)
            if vt is not None and vt.elem and vi.name not in gen.types:
                gen.types[vi.name] = vt
        for sub in branch.node:
            convert(gen, sub)
        for v, out in zip(outs, branch.output):
            src = out.name
            expr = gen.vars[src] if src in gen.vars else gen.materialize(src)
            gen.lines.append(f"{v} = {expr}")
        if len(gen.lines) == start:
            gen.lines.append("pass")
        gen.lines[start:] = [INDENT + line for line in gen.lines[start:]]
        forget_block_consts(gen, before)
    then = branches["then_branch"]
    for v, res, out in zip(outs, node.output, then.output):
        if res:
            gen.vars[res] = v
            gen.types[res] = gen.types.get(out.name) or VType(0, None)
