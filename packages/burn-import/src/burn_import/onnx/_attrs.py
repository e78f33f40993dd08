"""Attribute checks done on every node the converters see, after functions were inlined.

`onnx.checker` checks attribute types only where they are written; a model-local function's
body takes its values from the call site (`ref_attr_name`), so before inlining a STRING can be
passed where the body's op wants an INT. Each node is therefore checked again, against its
op's schema at the model's opset: the type of each attribute, no reference left unresolved,
and no list longer than code can hold (a list attribute becomes a literal in the source).
"""

from __future__ import annotations

import functools
import re

import onnx
from onnx import AttributeProto, defs

from ._errors import op_error

MAX_LIST = 4096  # values of one list attribute (pads, kernel_shape, perm, ...)
# Ops whose list attributes are data rather than geometry: their own larger limits.
LIST_LIMITS = {"TfIdfVectorizer": 1 << 16, "Constant": 1 << 24}
_LISTS = ("floats", "ints", "strings", "tensors", "graphs", "sparse_tensors", "type_protos")


@functools.lru_cache(maxsize=4096)
def _expected_types(op_type: str, opset: int, domain: str) -> dict[str, int] | None:
    """Attribute name -> AttributeProto type for the op's schema at `opset` (None: no schema)."""
    try:
        schema = defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return None
    return {name: int(a.type.value) for name, a in schema.attributes.items()}


def type_name(t: int) -> str:
    try:
        return AttributeProto.AttributeType.Name(t)
    except ValueError:
        return f"type {t}"


def check_attributes(node: onnx.NodeProto, opset: int) -> None:
    """Raise `OnnxImportError` naming op, node and attribute for a badly typed attribute."""
    name = node.name or (node.output[0] if node.output else "")
    domain = "" if node.domain == "ai.onnx" else node.domain
    expected = _expected_types(node.op_type, opset, domain) or {}
    for a in node.attribute:
        if a.ref_attr_name:
            why = f"refers to the function attribute {a.ref_attr_name!r}, which was not given"
            raise op_error(node.op_type, name, opset, f"attribute {a.name!r} {why}")
        want = expected.get(a.name)
        if a.type == AttributeProto.UNDEFINED or (want is not None and a.type != want):
            got = type_name(a.type)
            why = f"has type {got}" + (f"; {type_name(want)} expected" if want else "")
            raise op_error(node.op_type, name, opset, f"attribute {a.name!r} {why}")
    check_list_sizes(node, opset)


def check_list_sizes(node: onnx.NodeProto, opset: int) -> None:
    """Refuse a list attribute longer than `MAX_LIST` (its op's `LIST_LIMITS` entry)."""
    limit = LIST_LIMITS.get(node.op_type, MAX_LIST)
    for a in node.attribute:
        n = sum(len(getattr(a, f)) for f in _LISTS)
        if n > limit:
            name = node.name or (node.output[0] if node.output else "")
            why = f"attribute {a.name!r} has {n} values (at most {limit})"
            raise op_error(node.op_type, name, opset, why)


_TERM = r"[A-Za-z]*(?:\.\.\.)?[A-Za-z]*"
EINSUM = re.compile(rf"{_TERM}(?:,{_TERM})*(?:->{_TERM})?")


def einsum_grammar_ok(equation: str) -> bool:
    """Whether an Einsum equation is letters, commas, one `->` and `...` per term (spaces
    ignored). onnx 1.23's shape inference loops forever on some others (`file__` on a rank-4
    input), so this is checked before it runs."""
    return EINSUM.fullmatch(equation.replace(" ", "")) is not None


def check_model_list_sizes(model: onnx.ModelProto, opset: int) -> None:
    """Checks run before onnx's checker and shape inference, on every node of the model
    (subgraphs and local functions too): `check_list_sizes` (they would copy a giant list
    several times), and the Einsum grammar (onnx's inference can hang on a bad equation)."""
    todo = [model.graph] + [f for f in model.functions]
    while todo:
        g = todo.pop()
        for node in g.node:
            check_list_sizes(node, opset)
            if node.op_type == "Einsum":
                eq = next((a.s for a in node.attribute if a.name == "equation"), b"")
                text = eq.decode("utf-8", "replace")
                if not einsum_grammar_ok(text):
                    name = node.name or (node.output[0] if node.output else "")
                    why = f"attribute 'equation' = {text!r} is not an einsum"
                    raise op_error(node.op_type, name, opset, why)
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    todo.append(a.g)
                todo.extend(a.graphs)


def check_graph_attributes(graph: onnx.GraphProto, opset: int) -> None:
    """`check_attributes` on every default-domain node, subgraphs included."""
    for node in graph.node:
        if node.domain in ("", "ai.onnx"):
            check_attributes(node, opset)
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                check_graph_attributes(a.g, opset)
            for g in a.graphs:
                check_graph_attributes(g, opset)
