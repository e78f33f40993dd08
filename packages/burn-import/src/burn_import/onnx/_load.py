"""Read an ONNX file defensively: parse, validate, upgrade the opset, infer shapes.

Every failure is an `OnnxImportError` that says what is wrong (truncated bytes, a cycle, a missing
initializer, a declared shape too large to allocate), so a hostile file never hangs or crashes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from ._attrs import check_graph_attributes, check_model_list_sizes
from ._contrib import rewrite_contrib
from ._errors import OnnxImportError
from ._expand import expand_functions, origin
from ._external import inline_external_data
from ._legacy import prelu_channel_slopes, refuse_batched_scan
from ._prefold import prefold
from ._registry import load_all

CONTROL_FLOW = ("If", "Loop", "Scan")  # converted by the code generator itself

# The opset the importer upgrades older models to; its converters are written against it.
TARGET_OPSET = 13
MAX_FILE_BYTES = 2 * 1024**3  # protobuf's own limit for one message
MAX_TENSOR_ELEMENTS = 2**31  # a declared shape beyond this is refused before anything is allocated


def read_model(source) -> onnx.ModelProto:
    """Parse a path, bytes or ModelProto into a ModelProto (no validation yet); a path's
    external tensor data is read from its folder (`_external`)."""
    if isinstance(source, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(source)
        inline_external_data(model, None)
        return model
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        where = "<bytes>"
    else:
        path = Path(os.fspath(source))
        if not path.is_file():
            raise OnnxImportError(f"ONNX file not found: {path}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise OnnxImportError(
                f"{path}: larger than 2 GiB, protobuf's limit for one message (save large "
                "weights as external data: onnx.save(..., save_as_external_data=True))"
            )
        data = path.read_bytes()
        where = str(path)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types  # protobuf raises DecodeError and friends
        raise OnnxImportError(f"not a valid ONNX model: {where}: {err}") from None
    if not model.HasField("graph") or len(data) == 0:
        raise OnnxImportError(f"not a valid ONNX model: {where}: no graph (truncated or not ONNX)")
    # weights saved beside the file (torch's dynamo exporter): only a path has a folder to read
    inline_external_data(model, path.parent if where != "<bytes>" else None)
    return model


def default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    domains = sorted({imp.domain for imp in model.opset_import})
    raise OnnxImportError(
        "not a valid ONNX model: no opset for the default ONNX domain"
        + (f" (it imports only {domains}; only the default domain is supported)" if domains else "")
    )


def check_graph(model: onnx.ModelProto) -> None:
    """Structural checks done before onnx's own checker: names, cycles, initializers, shapes."""
    graph = model.graph
    for init in graph.initializer:
        _check_tensor_proto(init, f"initializer {init.name!r}")
        if init.data_location == TensorProto.EXTERNAL:
            raise OnnxImportError(f"initializer {init.name!r}: external data is not supported")
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        _check_declared_shape(vi)
    known = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    produced: dict[str, int] = {}
    for idx, node in enumerate(graph.node):
        for out in node.output:
            if out and (out in produced or out in known and out != ""):
                raise OnnxImportError(
                    f"value {out!r} is produced twice (node {node.name!r}, {node.op_type})"
                )
            if out:
                produced[out] = idx
    # A node may only read values defined before it once the graph is sorted: find cycles and
    # inputs nobody defines (a missing initializer) in one topological pass.
    order, pending = [], list(range(len(graph.node)))
    ready = set(known)
    while pending:
        rest = []
        for idx in pending:
            node = graph.node[idx]
            if all(i in ready for i in node.input):
                order.append(idx)
                ready.update(node.output)
            else:
                rest.append(idx)
        if len(rest) == len(pending):
            node = graph.node[rest[0]]
            missing = [i for i in node.input if i not in ready]
            if any(m in produced for m in missing):
                raise OnnxImportError(
                    f"the graph has a cycle: node {node.name!r} ({node.op_type}) reads "
                    f"{missing[0]!r}, which depends on the node's own output"
                )
            raise OnnxImportError(
                f"node {node.name!r} ({node.op_type}) reads {missing[0]!r}, which is neither a "
                "graph input, an initializer nor a node output (missing initializer?)"
            )
        pending = rest
    if order != list(range(len(graph.node))):
        sorted_nodes = [graph.node[i] for i in order]
        del graph.node[:]
        graph.node.extend(sorted_nodes)
    for out in graph.output:
        if out.name not in ready:
            raise OnnxImportError(f"graph output {out.name!r} is produced by no node")


def _check_declared_shape(vi) -> None:
    if not vi.type.HasField("tensor_type"):
        return
    dims = [d.dim_value for d in vi.type.tensor_type.shape.dim if d.HasField("dim_value")]
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"value {vi.name!r}: negative dimension in declared shape {dims}")
    if dims and int(np.prod([max(d, 1) for d in dims], dtype=object)) > MAX_TENSOR_ELEMENTS:
        raise OnnxImportError(
            f"value {vi.name!r}: declared shape {dims} has more than {MAX_TENSOR_ELEMENTS} elements"
        )


def _check_tensor_proto(t: TensorProto, what: str) -> None:
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"{what}: negative dimension in shape {dims}")
    n = int(np.prod(dims, dtype=object)) if dims else 1
    if n > MAX_TENSOR_ELEMENTS:
        raise OnnxImportError(f"{what}: declared shape {dims} has more than 2^31 elements")
    if t.data_location == TensorProto.EXTERNAL:
        return
    if t.data_type == TensorProto.UNDEFINED:
        raise OnnxImportError(f"{what}: no data type")
    if t.HasField("raw_data") or t.raw_data:
        try:
            size = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
        except Exception:  # noqa: BLE001 - onnx/protobuf raise many types
            raise OnnxImportError(f"{what}: unknown data type {t.data_type}") from None
        if t.data_type not in (TensorProto.STRING,) and len(t.raw_data) != n * size:
            raise OnnxImportError(
                f"{what}: {len(t.raw_data)} bytes of data for shape {dims} "
                f"({n * size} expected; truncated?)"
            )


def check_domains(model: onnx.ModelProto, default_ops: bool = True) -> None:
    """Every op of the graph (subgraphs included) has a converter; otherwise one error lists
    every unsupported op at once, with a node of each and how many nodes use it.

    `default_ops=False` (before the version converter, which replaces some old ops such as
    Upsample) raises only for other domains' ops, listing the default-domain ones it would
    refuse too when no upgrade is coming."""
    from ._contrib import DOMAIN, REWRITES

    table = load_all()
    missing: dict[tuple[str, str], list[str]] = {}

    def walk(graph: onnx.GraphProto) -> None:
        for n in graph.node:
            default = n.domain in ("", "ai.onnx")
            if not (default and (n.op_type in table or n.op_type in CONTROL_FLOW)):
                missing.setdefault((n.domain, n.op_type, origin(n)), []).append(n.name or n.output[0])
            for a in n.attribute:
                for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                    walk(g)

    walk(model.graph)
    if not default_ops and all(d in ("", "ai.onnx") for d, _, _ in missing):
        return
    if not default_ops and default_opset(model) < TARGET_OPSET:
        missing = {k: v for k, v in missing.items() if k[0] not in ("", "ai.onnx")}
    if not missing:
        return
    parts = []
    for (domain, op_type, expanded), nodes in missing.items():
        where = f"domain {domain!r}, " if domain not in ("", "ai.onnx") else ""
        more = f", {len(nodes)} nodes" if len(nodes) > 1 else ""
        why = ""
        if domain == DOMAIN and op_type not in REWRITES:
            why = ": no rewrite of this onnxruntime contrib op"
        elif domain not in ("", "ai.onnx", DOMAIN):
            why = ": only the default and 'com.microsoft' domains are supported"
        if expanded:
            why += f" (in the ONNX function body of {expanded!r}, which has no converter)"
        parts.append(f"{op_type!r} ({where}node {nodes[0]!r}{more}{why})")
    (_, first, _), nodes = next(iter(missing.items()))
    opset = default_opset(model)
    raise OnnxImportError(
        f"unsupported ONNX op{'s' if len(parts) > 1 else ''} (opset {opset}): " + "; ".join(parts),
        first,
        nodes[0],
        opset,
    )


def to_array(t: TensorProto, what: str) -> np.ndarray:
    """A TensorProto as numpy, with a clear error when its data does not match its shape."""
    _check_tensor_proto(t, what)
    try:
        return numpy_helper.to_array(t)
    except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types
        raise OnnxImportError(f"{what}: cannot read tensor data: {err}") from None


def upgrade(model: onnx.ModelProto) -> onnx.ModelProto:
    """Older opsets are upgraded to `TARGET_OPSET` with `onnx.version_converter`, not refused."""
    opset = default_opset(model)
    if opset >= TARGET_OPSET:
        return model
    from onnx import version_converter

    refuse_batched_scan(model, opset)
    model = prelu_channel_slopes(model, opset)

    try:
        return version_converter.convert_version(model, TARGET_OPSET)
    except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types
        raise OnnxImportError(
            f"cannot upgrade opset {opset} to {TARGET_OPSET} with onnx.version_converter: {err}"
        ) from None


def load_model(source) -> onnx.ModelProto:
    """Parse, check, upgrade and shape-infer an ONNX model (path, bytes or ModelProto).

    Raises:
        OnnxImportError: the file is not a usable ONNX model; the message says why.
    """
    model = read_model(source)
    opset = default_opset(model)
    check_graph(model)
    check_model_list_sizes(model, opset)
    try:
        onnx.checker.check_model(model)
    except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types
        raise OnnxImportError(f"invalid ONNX model: {str(err).splitlines()[0]}") from None
    try:
        expanded = expand_functions(model, load_all())
    except Exception as err:  # noqa: BLE001 - onnx's inliner raises many types
        raise OnnxImportError(f"cannot expand ONNX functions: {str(err).splitlines()[0]}") from None
    if expanded is not model:
        # Inlined bodies take their attributes from the call sites, which the checker above saw
        # only as the function's (untyped) attributes: check every node again.
        check_graph_attributes(expanded.graph, default_opset(expanded))
        try:
            onnx.checker.check_model(expanded)
        except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types
            first = str(err).splitlines()[0]
            raise OnnxImportError(f"invalid ONNX model after inlining functions: {first}") from None
        model = expanded
    model = rewrite_contrib(model, default_opset(model))
    check_domains(model, default_ops=False)
    model = upgrade(model)
    check_domains(model)
    model, _ = prefold(model, default_opset(model))
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as err:  # noqa: BLE001 - onnx/protobuf raise many types
        raise OnnxImportError(f"ONNX shape inference failed: {str(err).splitlines()[0]}") from None
    return model
