"""Ops without a converter that ONNX defines as functions are replaced by their function bodies.

Many ONNX ops (CausalConvWithState, ai.onnx.preview's FlexAttention, ...) are specified as a
function: a subgraph of other ops, fixed or built from the node's attributes and input types (a
context-dependent function). That body *is* the op's definition, so a node whose op has no
converter here but has such a body is expanded into it, and the body's ops are converted as
usual (onnxruntime does the same for function ops it has no kernel for). Model-local functions
are inlined on the way, since the inliner that does the renaming inlines every local function.

The body comes from the op's schema (`onnx.defs`) for the newest function version not above
the model's opset for the op's domain; schema defaults are written onto the node first, so the
body sees the attribute values the op would have used. Expansion repeats for ops in a body
that are functions themselves (a few rounds at most).
"""

from __future__ import annotations

import onnx
from onnx import FunctionProto, TypeProto, defs, helper, inliner

PRIVATE = "burn_import.expanded"  # domain of the temporary local functions
MAX_ROUNDS = 4
ORIGIN = "expanded by burn_import from "  # doc string of the nodes of a body, then the op


def origin(node: onnx.NodeProto) -> str | None:
    """The op a node was expanded from (None for a node of the model itself)."""
    d = node.doc_string
    return d[len(ORIGIN) :] if d.startswith(ORIGIN) else None


def expand_functions(model: onnx.ModelProto, converters: dict) -> onnx.ModelProto:
    """`model` with every expandable op lacking a converter replaced by its function body.

    Args:
        model: a model that passed the checks of `_load` (it is not modified).
        converters: op type -> converter of the default domain (`_registry.load_all()`).

    Returns:
        `model` itself when nothing needs expanding, else an inlined copy.
    """
    for _ in range(MAX_ROUNDS):
        opsets = {_domain(o.domain): int(o.version) for o in model.opset_import}
        todo = [
            i
            for i, node in enumerate(model.graph.node)
            if not (_domain(node.domain) == "" and node.op_type in converters)
            and _schema(node, opsets) is not None
        ]
        if not todo and not model.functions:
            return model  # the common case: no whole-model pass at all
        types = _input_types(model) if todo else {}
        bodies = {}
        for i in todo:
            node = model.graph.node[i]
            call = onnx.NodeProto()
            call.CopyFrom(node)
            fp = _function_of(call, opsets, types)
            if fp is not None:
                bodies[i] = (call, fp)
        if not bodies and not model.functions:
            return model
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        for i, (call, fp) in bodies.items():
            op = origin(call) or call.op_type  # a body inside a body: the op the model used
            for n in fp.node:  # the inliner keeps doc strings (not metadata): errors name `op`
                n.doc_string = ORIGIN + op
                n.name = n.name or "expanded_" + op
            fp.domain, fp.name = PRIVATE, f"{call.op_type}_{i}"
            call.domain, call.op_type = PRIVATE, fp.name
            copy.graph.node[i].CopyFrom(call)
            copy.functions.append(fp)
        copy.opset_import.append(helper.make_opsetid(PRIVATE, 1))
        model = inliner.inline_local_functions(copy, convert_version=True)
        keep = [o for o in model.opset_import if o.domain != PRIVATE]
        del model.opset_import[:]
        model.opset_import.extend(keep)
        if not bodies:
            return model
    return model


def _domain(d: str) -> str:
    return "" if d == "ai.onnx" else d


def _schema(node, opsets):
    """The node's schema if ONNX defines the op as a function at the model's opset, else None."""
    version = opsets.get(_domain(node.domain))
    if version is None:
        return None
    try:
        schema = defs.get_schema(node.op_type, version, _domain(node.domain))
    except defs.SchemaError:
        return None
    versions = schema.function_opset_versions + schema.context_dependent_function_opset_versions
    return schema if any(v <= version for v in versions) else None


def _function_of(node, opsets, types) -> FunctionProto | None:
    """The node's function body, or None (no schema, not a function, or input types unknown).
    The op's attribute defaults are written onto `node` (a copy)."""
    schema = _schema(node, opsets)
    if schema is None:
        return None
    version = opsets[_domain(node.domain)]
    plain = [v for v in schema.function_opset_versions if v <= version]
    ctx = [v for v in schema.context_dependent_function_opset_versions if v <= version]
    given = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        if name not in given and attr.default_value.type:  # the op's default, not the body's
            node.attribute.append(attr.default_value)
    fp = FunctionProto()
    if plain:
        fp.ParseFromString(schema.get_function_with_opset_version(max(plain)))
        return fp
    ins = [types.get(i) if i else TypeProto() for i in node.input]
    if any(t is None for t in ins):
        return None
    built = schema.get_context_dependent_function_with_opset_version(
        max(ctx), node.SerializeToString(), [t.SerializeToString() for t in ins]
    )
    if not built:
        return None
    fp.ParseFromString(built)
    return fp


def _input_types(model: onnx.ModelProto) -> dict[str, TypeProto]:
    """Types of the graph's values as far as ONNX's shape inference knows them."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - onnx raises many types; declared types are enough then
        inferred = model
    g = inferred.graph
    types = {v.name: v.type for v in list(g.input) + list(g.value_info) + list(g.output)}
    for init in g.initializer:
        types.setdefault(init.name, helper.make_tensor_type_proto(init.data_type, init.dims))
    return types
