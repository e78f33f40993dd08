"""Semantics of old opsets that `onnx.version_converter` does not carry over to new ones.

PRelu before opset 7 takes one slope per channel (axis 1): "if slope is of size 1, the value is
shared across different channels". Opset 7 made the slope numpy-broadcast against X from the
right, and the converter leaves the node as it is, so a [C] slope of a [N, C, L] input would be
read as the last axis. Before the conversion, such a slope is reshaped to [C, 1, ..., 1]
(PyTorch's exported PReLU with num_parameters=C, for one, relies on this).

Scan before opset 9 has a batch axis in front of the scan axis and a sequence_lens input; the
converter only drops the (empty) sequence_lens, so the batch axis would be scanned over. Such
a Scan is refused with a clear error instead.
"""

from __future__ import annotations

import onnx
from onnx import helper, numpy_helper

from ._errors import op_error

PRELU_BROADCAST_SINCE = 7
SCAN_WITHOUT_BATCH_SINCE = 9


def refuse_batched_scan(model: onnx.ModelProto, opset: int) -> None:
    """Raise OnnxImportError for a Scan of opset 8 (batch-axis semantics)."""
    if opset >= SCAN_WITHOUT_BATCH_SINCE:
        return
    for node in model.graph.node:
        if node.op_type == "Scan" and node.domain in ("", "ai.onnx"):
            raise op_error(
                "Scan",
                node.name or node.output[0],
                opset,
                "opset-8 Scan (a batch axis before the scan axis) is not supported: "
                "onnx.version_converter does not carry its batch semantics to opset 9",
            )


def prelu_channel_slopes(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`model` (not modified) with every per-channel PRelu slope shaped [C, 1, ..., 1].

    Only slopes held as initializers are reshaped; a run-time slope keeps its shape.
    """
    if opset >= PRELU_BROADCAST_SINCE:
        return model
    prelus = [n for n in model.graph.node if n.op_type == "PRelu" and n.domain in ("", "ai.onnx")]
    inits = {t.name: t for t in model.graph.initializer}
    todo = [n for n in prelus if n.input[1] in inits and len(inits[n.input[1]].dims) == 1]
    todo = [n for n in todo if inits[n.input[1]].dims[0] > 1]
    if not todo:
        return model
    ranks = _ranks(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = [n for n in out.graph.node if n.op_type == "PRelu" and n.domain in ("", "ai.onnx")]
    for node in nodes:
        slope, rank = node.input[1], ranks.get(node.input[0])
        if slope not in inits or len(inits[slope].dims) != 1 or inits[slope].dims[0] <= 1:
            continue
        if rank is None or rank < 3:  # [N, C]: the right-aligned slope already meets axis 1
            continue
        arr = numpy_helper.to_array(inits[slope]).reshape([-1] + [1] * (rank - 2))
        name = f"{slope}__per_channel_{rank}"
        if name not in {t.name for t in out.graph.initializer}:
            init = numpy_helper.from_array(arr, name)
            out.graph.initializer.append(init)
            if out.ir_version < 4:  # there, every initializer is also a graph input
                out.graph.input.append(
                    helper.make_tensor_value_info(name, init.data_type, list(arr.shape))
                )
        node.input[1] = name
    return out


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - onnx raises many types; the declared ranks then
        inferred = model
    g = inferred.graph
    return {
        v.name: len(v.type.tensor_type.shape.dim)
        for v in list(g.input) + list(g.value_info) + list(g.output)
        if v.type.tensor_type.HasField("shape")
    }
