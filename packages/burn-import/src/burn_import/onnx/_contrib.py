"""onnxruntime's contrib ops (`com.microsoft`), rewritten into default-domain ONNX nodes before
shape inference, so the importer converts them like any other graph.

Graphs saved by onnxruntime's optimizer (`FusedConv`, `FusedMatMul`, `SkipLayerNormalization`,
`Gelu`, `Attention`, ...) or its quantizer (`QLinearAdd`, `DynamicQuantizeMatMul`,
`MatMulNBits`, ...) use them. Each rewrite follows onnxruntime's contrib-op documentation
(ContribOperators.md); the rewritten graph is what a person would have exported without the
fusion. Rewrites that need an input's rank (a transpose of the last two axes) wait until shape
inference gave it: `rewrite_contrib` alternates inference and rewriting until nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ._errors import op_error

DOMAIN = "com.microsoft"
REWRITES: dict[str, Callable] = {}


def contrib(*names: str):
    """Register `fn(b: Builder) -> bool` as the rewrite of `names` (False: wait for ranks)."""

    def deco(fn):
        for name in names:
            REWRITES[name] = fn
        return fn

    return deco


class NeedRank(Exception):
    """A rewrite needs the rank of a value that inference has not given yet."""


class Builder:
    """Writes the default-domain nodes that replace one contrib node."""

    def __init__(self, node: onnx.NodeProto, opset: int, shapes: dict, consts: dict, names: set):
        self.node, self.opset, self.shapes, self.consts, self._names = node, opset, shapes, consts, names
        self.attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.base = node.name or node.output[0]

    # -- inputs and attributes --------------------------------------------------------------------
    def inp(self, i: int) -> str:
        """Input `i`'s name, '' when absent."""
        return self.node.input[i] if i < len(self.node.input) else ""

    def out(self, i: int) -> str:
        return self.node.output[i] if i < len(self.node.output) else ""

    def attr(self, name: str, default=None):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def rank(self, name: str) -> int:
        if name not in self.shapes:
            raise NeedRank(name)
        return len(self.shapes[name])

    def dim(self, name: str, axis: int) -> int | None:
        """A static size of `name` along `axis` (None when symbolic or unknown)."""
        shape = self.shapes.get(name)
        if shape is None or not -len(shape) <= axis < len(shape):
            return None
        return shape[axis]

    def unsqueeze(self, x: str, axes: list[int], out: str | None = None) -> str:
        if self.opset >= 13:
            return self.add("Unsqueeze", [x, self.const(axes, dtype="int64")], out)
        return self.add("Unsqueeze", [x], out, axes=axes)

    def fail(self, why: str):
        raise op_error(self.node.op_type, self.base, self.opset, f"domain {DOMAIN!r}: {why}")

    def refuse_outputs(self, *idx: int):
        """Optional outputs this rewrite does not produce must be unused."""
        for i in idx:
            if self.out(i):
                self.fail(f"output {i} ({self.out(i)!r}) is not supported")

    def refuse_attrs(self, **allowed):
        for name, ok in allowed.items():
            if name in self.attrs and self.attr(name) not in ok:
                self.fail(f"attribute {name}={self.attr(name)!r} is not supported (only {ok})")

    def const_value(self, name: str) -> np.ndarray | None:
        return self.consts.get(name)

    # -- writing ------------------------------------------------------------------------------------
    def tmp(self, hint: str) -> str:
        i = 0
        while f"{self.base}/{hint}{i or ''}" in self._names:
            i += 1
        name = f"{self.base}/{hint}{i or ''}"
        self._names.add(name)
        return name

    def add(self, op: str, ins: list[str], out: str | None = None, **attrs) -> str:
        """One default-domain node; returns its (first) output name."""
        out = out or self.tmp(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=self.tmp(op), **attrs))
        src = self.shapes.get(ins[0]) if ins else None
        if src is not None and op == "Transpose":
            self.shapes[out] = [src[p] for p in attrs["perm"]]
        return out

    def const(self, value, dtype=np.float32, hint: str = "c") -> str:
        arr = np.asarray(value, dtype=dtype)
        name = self.tmp(hint)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def swap_last(self, x: str) -> str:
        """`x` with its last two axes swapped."""
        r = self.rank(x)
        if r < 2:
            self.fail(f"input {x!r} has rank {r}; a transpose of the last two axes needs 2")
        perm = list(range(r - 2)) + [r - 1, r - 2]
        return self.add("Transpose", [x], perm=perm)

    def activation(self, x: str, kind: str, params: list[float], out: str) -> str:
        """onnxruntime's fused activation names (FusedConv, FusedGemm)."""
        if kind in ("", None):
            return self.add("Identity", [x], out)
        if kind in ("Relu", "Tanh", "Sigmoid"):
            return self.add(kind, [x], out)
        if kind == "LeakyRelu":
            return self.add("LeakyRelu", [x], out, alpha=float(params[0]) if params else 0.01)
        if kind == "HardSigmoid":
            alpha, beta = (list(params) + [0.2, 0.5][len(params):])[:2]
            return self.add("HardSigmoid", [x], out, alpha=float(alpha), beta=float(beta))
        if kind == "Clip":
            lo, hi = (list(params) + [-np.inf, np.inf][len(params):])[:2]
            return self.add("Clip", [x, self.const(lo), self.const(hi)], out)
        self.fail(f"fused activation {kind!r} is not supported")
        return ""

    def layer_norm(self, x: str, gamma: str, beta: str, eps: float, out: str, axis: int = -1) -> str:
        """LayerNormalization over `axis..` (the op itself from opset 17, its formula before)."""
        ins = [x, gamma] + ([beta] if beta else [])
        if self.opset >= 17:
            return self.add("LayerNormalization", ins, out, axis=axis, epsilon=float(eps))
        if axis != -1:
            self.fail(f"axis {axis} before opset 17 (only -1)")
        mean = self.add("ReduceMean", [x], axes=[-1])
        d = self.add("Sub", [x, mean])
        var = self.add("ReduceMean", [self.add("Mul", [d, d])], axes=[-1])
        std = self.add("Sqrt", [self.add("Add", [var, self.const(eps)])])
        y = self.add("Mul", [self.add("Div", [d, std]), gamma], None if beta else out)
        return self.add("Add", [y, beta], out) if beta else y


def _value_shapes(model: onnx.ModelProto) -> dict[str, list[int | None]]:
    """Every value's shape that inference or the file gives (None for a symbolic size)."""
    shapes = {}
    for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        t = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and t.HasField("shape"):
            shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    for t in model.graph.initializer:
        shapes[t.name] = list(t.dims)
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].type == onnx.AttributeProto.TENSOR:
            shapes[n.output[0]] = list(n.attribute[0].t.dims)
    return shapes


class _LazyConsts(dict):
    """Initializers a rewrite may read (scales, zero points, packed weights), read when asked."""

    def __init__(self, protos):
        super().__init__()
        self._protos = protos

    def get(self, name, default=None):
        if name not in self and name in self._protos:
            self[name] = numpy_helper.to_array(self._protos[name])
        return super().get(name, default)


def uses_contrib(model: onnx.ModelProto) -> bool:
    return any(n.domain == DOMAIN for n in model.graph.node)


def rewrite_contrib(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`model` with every `com.microsoft` node that has a rewrite replaced by default-domain
    nodes; the others stay (and are reported with every other unsupported op)."""
    from . import _contrib_attention, _contrib_ops, _contrib_quant  # noqa: F401 - fill REWRITES

    if not uses_contrib(model):
        return model
    model_out = onnx.ModelProto()
    model_out.CopyFrom(model)
    names = {o for n in model.graph.node for o in n.output} | {n.name for n in model.graph.node}
    names |= {t.name for t in model.graph.initializer} | {i.name for i in model.graph.input}
    consts = _LazyConsts({t.name: t for t in model.graph.initializer})
    while True:
        try:
            inferred = onnx.shape_inference.infer_shapes(model_out, strict_mode=False)
        except Exception:  # noqa: BLE001 - inference is a hint here; ranks then stay unknown
            inferred = model_out
        shapes = _value_shapes(inferred)
        new_nodes, changed, waiting = [], False, []
        for node in model_out.graph.node:
            fn = REWRITES.get(node.op_type) if node.domain == DOMAIN else None
            if fn is None:
                new_nodes.append(node)
                continue
            b = Builder(node, opset, shapes, consts, names)
            try:
                fn(b)
            except NeedRank as need:
                waiting.append((node, need.args[0]))
                new_nodes.append(node)
                continue
            new_nodes.extend(b.nodes)
            model_out.graph.initializer.extend(b.inits)
            changed = True
        del model_out.graph.node[:]
        model_out.graph.node.extend(new_nodes)
        if not changed:
            break
    if waiting:
        node, name = waiting[0]
        raise op_error(
            node.op_type, node.name or node.output[0], opset,
            f"domain {DOMAIN!r}: the rank of input {name!r} could not be inferred",
        )  # fmt: skip
    if not uses_contrib(model_out):
        keep = [imp for imp in model_out.opset_import if imp.domain != DOMAIN]
        del model_out.opset_import[:]
        model_out.opset_import.extend(keep)
    return model_out
