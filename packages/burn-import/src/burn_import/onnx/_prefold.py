"""Folding before shape inference: every node of the main graph whose inputs are all constants
(and whose output is small, by `_fold.fold_size`) becomes a `Constant` node holding its value.

Why: ONNX's shape inference does not evaluate `Mod`, `Add` or `Reshape` over constants, so
exported shape arithmetic (torch's legacy exporter writes `Slice(Shape(x), Reshape(Mod(c1, c2)))`
for `dynamic_axes`) leaves the ranks downstream unknown, and an op the importer supports would be
refused for a missing rank. With those subgraphs folded first, inference sees constant starts and
ends and gives every rank. The same size bound as the code generator's folding applies, so a
tiny model asking for a huge constant costs nothing here either.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

from ._fold import FOLD_LIMIT, FOLDABLE, evaluate, fold_size
from ._types import elem_of_np

# Shape and Size need the input's type, which only inference gives; the code generator folds them.
_NEEDS_TYPES = {"Shape", "Size"}


def _small_initializers(graph: onnx.GraphProto) -> dict[str, onnx.TensorProto]:
    """Initializers small enough to fold over (weights stay unread: no copy of a large model)."""
    return {t.name: t for t in graph.initializer if math.prod(t.dims) <= FOLD_LIMIT}


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """The value of a `Constant` node with a tensor attribute that is small enough."""
    if len(node.attribute) != 1 or node.attribute[0].type != onnx.AttributeProto.TENSOR:
        return None
    t = node.attribute[0].t
    if math.prod(t.dims) > FOLD_LIMIT:
        return None
    try:
        return numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - a malformed tensor is reported by the code generator
        return None


def prefold(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto, int]:
    """`model` with its all-constant nodes replaced by `Constant` nodes, and how many were folded.

    Only default-domain nodes of the main graph are folded; subgraphs (If/Loop/Scan bodies) and
    anything `evaluate` refuses are left to the code generator, which folds again at its turn.
    """
    graph = model.graph
    inits = _small_initializers(graph)
    consts: dict[str, np.ndarray] = {}
    new_nodes, folded = [], 0
    for node in graph.node:
        value = None
        if node.domain in ("", "ai.onnx") and node.op_type == "Constant":
            value = _constant_value(node)
            if value is not None and node.output:
                consts[node.output[0]] = value
            new_nodes.append(node)
            continue
        outs = _fold_node(node, consts, inits, opset)
        if outs is None:
            new_nodes.append(node)
            continue
        folded += 1
        for name, val in zip(node.output, outs):
            consts[name] = val
            new_nodes.append(
                onnx.helper.make_node(
                    "Constant", [], [name], name=f"{node.name or name}:folded",
                    value=numpy_helper.from_array(val, name),
                )
            )  # fmt: skip
    if not folded:
        return model, 0
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(new_nodes)
    return out, folded


def _fold_node(node, consts, inits, opset) -> list[np.ndarray] | None:
    """The node's outputs when every input is a known small constant, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in FOLDABLE:
        return None
    if node.op_type in _NEEDS_TYPES or not node.input or not all(node.output):
        return None
    for i in node.input:
        if i and i not in consts:
            if i not in inits:
                return None
            try:
                consts[i] = numpy_helper.to_array(inits[i])
            except Exception:  # noqa: BLE001 - a malformed initializer is reported later
                return None
    ins = [consts[i] if i else None for i in node.input]
    try:
        size = fold_size(node, ins)
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
    if size is None or size > FOLD_LIMIT:
        return None
    outs = evaluate(consts, opset, node)
    if outs is None or len(outs) != len(node.output):
        return None
    if any(v.size > FOLD_LIMIT or elem_of_np(v.dtype) is None for v in outs):
        return None
    return outs
