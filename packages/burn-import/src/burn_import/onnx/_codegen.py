"""Turn a loaded ONNX model into Python source: a `Module` subclass plus the weights it needs."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import onnx

from ._attrs import check_attributes
from ._codegen_loop import convert_if, convert_loop
from ._codegen_mha import find_attention
from ._codegen_scan import convert_scan
from ._context import Gen, NodeCtx
from ._errors import OnnxImportError, op_error
from ._expand import origin
from ._fieldnames import local_names
from ._fold import set_const, try_fold
from ._load import default_opset, to_array
from ._names import MAX_TEXT, RESERVED, check_class_name, label, safe_text
from ._registry import load_all
from ._style import WIDTH, with_keywords, without_config_defaults, wrap
from ._types import DTYPES, VType, elem_of_np, type_name, vtype_of
from ._verify import IMPORTS, verify_source


@dataclass
class Generated:
    source: str
    record: dict
    inputs: list[tuple[str, VType]]
    outputs: list[tuple[str, VType | None]]
    class_name: str
    ops_used: list[str]
    types: dict


def generate(
    model: onnx.ModelProto,
    class_name: str = "Model",
    source_name: str = "model.onnx",
    record_file: str | None = "model",
    recorder: str = "NamedMpkFileRecorder",
    precision: str = "FullPrecisionSettings",
) -> Generated:
    """Generate the module source for a model already passed through `load_model`."""
    table = load_all()
    check_class_name(class_name)
    gen = Gen(model, default_opset(model), reserved=RESERVED | {class_name})
    # Burn's binary format stores no quantized tensors: for it, int8 weights stay plain fields
    gen.quantized_fields = recorder != "BinFileRecorder"
    graph = model.graph
    gen.short = local_names(graph.node, gen.described)
    gen.outputs = {o.name for o in graph.output}
    gen.main_values = {o for n in graph.node for o in n.output}  # (names are unique: SSA)
    for node in graph.node:
        # a value read inside a node's subgraphs (If/Loop/Scan bodies) is read by that node
        for i in list(node.input) + sorted(_subgraph_reads(node)):
            gen.consumers.setdefault(i, []).append(node)
    for init in graph.initializer:
        gen.consts[init.name] = to_array(init, f"initializer {init.name!r}")
        gen.initializers.add(init.name)
    for vi in list(graph.value_info) + list(graph.output) + list(graph.input):
        vt = vtype_of(vi.type)
        if vt is not None:
            gen.types[vi.name] = vt
    inputs: list[tuple[str, VType]] = []
    for vi in graph.input:
        if vi.name in gen.consts:
            continue
        vt = gen.types.get(vi.name)
        if vt is None:
            raise OnnxImportError(f"graph input {vi.name!r}: only tensor inputs are supported")
        if vt.elem not in DTYPES:
            raise OnnxImportError(
                f"graph input {vi.name!r}: element type {type_name(vt.elem)} is not supported"
            )
        gen.vars[vi.name] = gen.fresh(vi.name)
        inputs.append((vi.name, vt))
    find_attention(gen, graph)
    used: list[str] = []
    for node in graph.node:
        _convert(gen, table, node, used)
    outputs: list[tuple[str, VType | None]] = []
    ret = []
    for vi in graph.output:
        if vi.name not in gen.vars and vi.name in gen.consts:
            gen.lines.append(f"# graph output {label(vi.name)} is a constant")
            gen.materialize(vi.name)
        elif gen.deferred(vi.name):  # a quantized value returned as float
            gen.materialize(vi.name)
        ret.append(gen.vars[vi.name])
        outputs.append((vi.name, gen.types.get(vi.name)))
    source = _assemble(
        gen, class_name, source_name, inputs, outputs, ret, record_file, recorder, precision
    )
    verify_source(source, class_name)
    record = {f.name: f.record for f in gen.fields}
    types = {k: v for k, v in gen.types.items()}
    types.update(
        {
            k: VType(elem_of_np(a.dtype) or 0, list(a.shape))
            for k, a in gen.consts.items()
            if k in gen.vars
        }
    )
    return Generated(source, record, inputs, outputs, class_name, used, types)


def _subgraph_reads(node: onnx.NodeProto) -> set[str]:
    """Every name read inside `node`'s subgraphs, at any depth (inputs of their nodes and
    their outputs)."""
    out: set[str] = set()
    for a in node.attribute:
        graphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
        for g in graphs:
            out.update(o.name for o in g.output)
            for sub in g.node:
                out.update(sub.input)
                out |= _subgraph_reads(sub)
    return out


LOOPS = {"Scan": convert_scan, "Loop": convert_loop}  # control flow written as Python loops
RAW_ERRORS = (ArithmeticError, LookupError, ValueError, TypeError, AttributeError, RecursionError)


def _convert(gen: Gen, table, node: onnx.NodeProto, used: list[str]) -> None:
    """Write one node's code (or fold it, or inline the taken branch of a constant `If`)."""
    try:
        try:
            _convert_node(gen, table, node, used)
        except OnnxImportError:
            raise
        except RAW_ERRORS as err:
            # A converter meeting input it did not foresee: still the node's typed error.
            name = node.name or (node.output[0] if node.output else "")
            why = f"cannot convert: {type(err).__name__}: {err}"
            raise op_error(node.op_type, name, gen.opset, why) from err
    except OnnxImportError as err:
        op = origin(node)
        if op is None or err.op_type is None:
            raise
        raise OnnxImportError(
            f"{err} (in the ONNX function body of {op!r}, which has no converter)",
            err.op_type,
            err.node,
            err.opset,
        ) from None


def _convert_node(gen: Gen, table, node: onnx.NodeProto, used: list[str]) -> None:
    if node.domain in ("", "ai.onnx"):
        check_attributes(node, gen.opset)
    if node.output and node.output[0] in gen.skipped:  # part of a layer written before
        return
    if node.output and node.output[0] in gen.absorbed:  # its code was written (and said) before
        gen.vars[node.output[0]] = gen.vars[gen.absorbed.pop(node.output[0])]
        return
    if node.op_type == "If" and node.domain in ("", "ai.onnx"):
        _inline_if(gen, table, node, used)
        return
    if node.op_type in LOOPS and node.domain in ("", "ai.onnx"):
        if node.op_type not in used:
            used.append(node.op_type)
        LOOPS[node.op_type](gen, lambda g, sub: _convert(g, table, sub, used), node)
        return
    if node.domain not in ("", "ai.onnx"):
        raise op_error(node.op_type, node.name, gen.opset, f"domain {node.domain!r}")
    spec = table.get(node.op_type)
    name = node.name or node.output[0]
    if spec is None:
        raise op_error(node.op_type, name, gen.opset, "no converter for this op")
    if not spec.since <= gen.opset <= spec.until:
        raise op_error(
            node.op_type,
            name,
            gen.opset,
            f"converter supports opsets {spec.since}..{spec.until}",
        )
    for a in node.attribute:
        if a.name not in spec.attrs:
            raise op_error(node.op_type, name, gen.opset, f"attribute {a.name!r} is not supported")
    if node.op_type not in used:
        used.append(node.op_type)
    if try_fold(gen, node):
        return
    if any(o and (gen.types.get(o) is None or gen.types[o].shape is None) for o in node.output):
        _infer_node(gen, node)
    elif _static_in(gen, node) and not all(_static(gen.types.get(o)) for o in node.output if o):
        # Dims the whole-model inference left symbolic although every input's are known now
        # (a Slice whose bounds came from shape arithmetic folded since, as torch's `chunk`
        # exports, and every node after it): converters write plainer code for known dims
        _infer_node(gen, node)
    ctx = NodeCtx(gen, node)
    start = len(gen.lines)
    spec.fn(ctx)
    # One short comment per node: its op and name (model text only through `label`), so a
    # reader finds the graph's node; the variables say the rest.
    # The node's whole name as far as the line allows (the variable has a short one): 100
    # columns less the method's indent, a loop body's and the comment's own characters; left
    # out where the one line written is named after the node's whole module path
    # (`layer1_0_relu = activation.relu(layer1_0_conv1)`): the name says it already.
    if node.name not in gen.described or len(gen.lines) - start != 1:
        limit = max(MAX_TEXT, WIDTH - 16 - len(node.op_type) - 5)
        gen.lines.insert(start, f"# {node.op_type} {label(name, limit)}")
    for out in node.output:
        if out and out not in gen.consts:
            vt = gen.types.get(out)
            if vt is not None and vt.elem not in DTYPES:
                raise op_error(
                    node.op_type,
                    name,
                    gen.opset,
                    f"output element type {type_name(vt.elem)} is not supported",
                )


def _inline_if(gen: Gen, table, node: onnx.NodeProto, used: list[str]) -> None:
    """`If` whose condition is known at import time (shape checks of expanded functions): the
    taken branch's nodes are converted in place; a run-time condition gives a Python if/else
    (`_codegen_loop.convert_if`)."""
    name = node.name or node.output[0]
    cond = gen.consts.get(node.input[0])
    if cond is None:
        convert_if(gen, lambda g, sub: _convert(g, table, sub, used), node)
        return
    if np.asarray(cond).size != 1:
        why = f"the condition is a constant of shape {list(np.shape(cond))}; one value expected"
        raise op_error("If", name, gen.opset, why)
    attrs = {a.name: a.g for a in node.attribute}
    branch = attrs["then_branch" if bool(np.asarray(cond).reshape(-1)[0]) else "else_branch"]
    gen.lines.append(f"# If {label(name)}: condition known at import time, branch inlined")
    for init in branch.initializer:
        gen.consts[init.name] = to_array(init, f"initializer {init.name!r}")
    for vi in list(branch.value_info) + list(branch.output):
        vt = vtype_of(vi.type)
        if vt is not None and vi.name not in gen.types:
            gen.types[vi.name] = vt
    for sub in branch.node:
        _convert(gen, table, sub, used)
    for out, src in zip(node.output, branch.output):
        if src.name in gen.consts and src.name not in gen.vars:
            set_const(gen, out, gen.consts[src.name])
        else:
            gen.vars[out] = gen.materialize(src.name) if gen.deferred(src.name) else gen.vars[src.name]
            if src.name in gen.types:
                gen.types[out] = gen.types[src.name]


def _infer_node(gen: Gen, node: onnx.NodeProto) -> None:
    """Types of a node's outputs that the whole-model inference left unknown (function bodies
    expanded into the graph lose them), inferred from the types the importer knows now."""
    helper = onnx.helper
    inputs, inits = [], []
    for i in node.input:
        if not i:
            continue
        if i in gen.consts:
            inits.append(onnx.numpy_helper.from_array(gen.consts[i], i))
            continue
        vt = gen.types.get(i)
        if vt is None:
            return
        inputs.append(helper.make_tensor_value_info(i, vt.elem, vt.shape))
    graph = helper.make_graph(
        [node],
        "infer",
        inputs,
        [helper.make_tensor_value_info(o, 0, None) for o in node.output if o],
        initializer=inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", gen.opset)])
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - onnx/protobuf raise many types
        return
    for vi in list(m.graph.value_info) + list(m.graph.output):
        vt = vtype_of(vi.type)
        old = gen.types.get(vi.name)
        if vt is not None and vt.elem and (old is None or old.shape is None or _static(vt)):
            gen.types[vi.name] = vt


def _static(vt) -> bool:
    """Whether a type's every dim is a known number."""
    return vt is not None and vt.shape is not None and all(isinstance(d, int) for d in vt.shape)


def _static_in(gen: Gen, node: onnx.NodeProto) -> bool:
    """Whether every input of `node` is a constant or of known dims (and it has no subgraph)."""
    graphs = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    if any(a.type in graphs for a in node.attribute):
        return False
    return all(not i or i in gen.consts or _static(gen.types.get(i)) for i in node.input)


#: burn_nn names generated code may use (imported only when it does): the names the
#: verifier allows (`_verify.IMPORTS`), Param first
NN_NAMES = ("Param",) + tuple(sorted(IMPORTS["burn_nn"] - {"Module", "Param"}))


def _imports(gen: Gen) -> list[str]:
    """Only the names the generated code uses, so the header reads as what the model needs."""
    body = "\n".join(gen.lines + [f"{f.init_code}\n{f.annotation}" for f in gen.fields])
    tensor = ["DType", "Tensor", "activation", "default_device"]
    tensor = [n for n in tensor if n in ("Tensor", "default_device") or f"{n}." in body]
    lines = [f"from burn_tensor import {', '.join(tensor)}"]
    if "F." in body:
        lines.append("from burn_tensor import module as F")
    nn = ["Module"] + [n for n in NN_NAMES if re.search(rf"\b{n}\b", body)]
    line = f"from burn_nn import {', '.join(nn)}"
    if len(line) > WIDTH:
        line = "from burn_nn import (\n" + "".join(f"    {n},\n" for n in nn) + ")"
    lines.append(line)
    return lines


def _assemble(gen, class_name, source_name, inputs, outputs, ret, record_file, recorder, precision):
    # The docstring holds no model text but `safe_text`'s, and the variables' names.
    producer = safe_text(gen.model.producer_name or "unknown producer")
    doc_in = ", ".join(f"{gen.vars[n]} {type_name(vt.elem)}{vt.shape}" for n, vt in inputs)
    doc_out = ", ".join(
        f"{v} {type_name(vt.elem) if vt else '?'}{vt.shape if vt else ''}"
        for v, (_, vt) in zip(ret, outputs)
    )
    out = [
        (
            f'"""{class_name}: generated by burn_import from {safe_text(source_name)} '
            f"({producer}, ONNX opset {gen.opset})."
        ),
        "",
        "Ordinary burn-py code: edit, train (under Autodiff) or run it on any backend.",
        f"Inputs: {doc_in or 'none'}.",
        f"Outputs: {doc_out}.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import pathlib",
        "",
        *_imports(gen),
        f"from burn_record import {recorder}, {precision}",
        "",
    ]
    if "ops." in "\n".join(gen.lines) + "".join(f.init_code for f in gen.fields):
        out += ["from burn_import.onnx import ops", ""]  # only when the code calls a helper
    if record_file:
        out += [f"RECORD = pathlib.Path(__file__).with_name({record_file!r})", ""]
    else:
        out += ["RECORD = None", ""]
    out += ["", f"class {class_name}(Module):"]
    for f in gen.fields:
        decl = f"    {f.name}: {f.annotation}  # {f.comment}"  # comment: label()s only
        out += [f"    # {f.comment}", f"    {f.name}: {f.annotation}"] if len(decl) > WIDTH else [decl]
    if gen.fields:
        out.append("")
    out += [
        "    @classmethod",
        f"    def init(cls, device=None) -> {class_name}:",
        '        """The model with fresh weights (load a record to get the ONNX ones)."""',
        "        device = device or default_device()",
    ]
    if gen.fields:
        out.append("        return cls(")
        for f in gen.fields:
            out += wrap(f"            {f.name}={without_config_defaults(f.init_code)},")
        out.append("        )")
    else:
        out.append("        return cls()")
    out += [
        "",
        "    @classmethod",
        f"    def from_file(cls, path=RECORD, device=None) -> {class_name}:",
        '        """The model with the weights of the record written by ModelGen."""',
        "        device = device or default_device()",
        f"        recorder = {recorder}({precision})",
        "        return cls.init(device).load_file(path, recorder, device)",
        "",
    ]
    args = ", ".join(f"{gen.vars[n]}: Tensor" for n, _ in inputs)
    out.append(f"    def forward(self{', ' if args else ''}{args}):")
    if not any(re.search(r"\bdevice\b", line) for line in gen.lines):
        pass  # no constant is created in forward: the inputs carry the device
    elif inputs:
        out.append(f"        device = {gen.vars[inputs[0][0]]}.device")
    elif gen.fields:
        out.append("        device = self.devices()[0]")
    else:
        out.append("        device = default_device()")
    for line in gen.lines:
        out += wrap("        " + with_keywords(line))
    out.append(f"        return {', '.join(ret)}")
    return "\n".join(out) + "\n"
