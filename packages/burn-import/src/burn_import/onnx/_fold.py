"""Constant folding: a node whose inputs are all constants is computed at import time with
ONNX's reference op, as long as its output is small.

The size of each output is known before anything is computed: from the input shapes, and for
the ops that make large tensors out of small ones (ConstantOfShape, Expand, Range, Tile, a
broadcasting binary op, Gather) from their constant shape, count or index inputs. A fold
whose output would exceed `FOLD_LIMIT` elements is left to run time; so a 125-byte model
asking for `Expand([1.0], [32768, 16384])` costs the importer nothing.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ._types import VType, elem_of_np

# Ops whose result is computed at import time when every input is a constant: shape arithmetic
# (Shape -> Gather -> Concat -> Reshape chains of exported models), never the model's tensors.
ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Equal", "Where", "Less", "Greater", "Mod", "Max", "Min"}
SAME_SIZE = {
    "Identity", "Cast", "CastLike", "Neg", "Not", "Abs", "Floor", "Ceil", "Sqrt", "Flatten",
    "Transpose", "Reshape", "Unsqueeze", "Squeeze", "Slice", "ReduceProd",
}  # fmt: skip
GENERATORS = {"Range", "ConstantOfShape", "Expand", "Tile", "Gather", "Concat"}
FOLDABLE = ELEMENTWISE | SAME_SIZE | GENERATORS | {"Constant", "Shape", "Size"}
FOLD_LIMIT = 1 << 20  # elements of one folded output


def set_const(gen, name: str, val: np.ndarray) -> None:
    gen.consts[name] = val
    gen.types[name] = VType(elem_of_np(val.dtype) or 0, list(val.shape))


def _ints(arr: np.ndarray) -> list[int]:
    return [int(v) for v in arr.reshape(-1)]


def _broadcast(shapes: list[list[int]]) -> list[int] | None:
    """numpy's broadcast of `shapes` (None when they do not broadcast)."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return out


def fold_size(node: onnx.NodeProto, ins: list[np.ndarray | None]) -> int | None:
    """Elements of the node's output computed from its constant inputs without running it;
    None when it cannot be bounded (the node is then not folded)."""
    op = node.op_type
    if op in ("Shape", "Size"):
        return 8
    if op == "Constant":
        a = node.attribute[0] if node.attribute else None
        if a is None or a.type != onnx.AttributeProto.TENSOR:
            return len(a.ints) + len(a.floats) + 1 if a is not None else None
        return math.prod(a.t.dims)
    arrays = [a for a in ins if a is not None]
    if not arrays:
        return None
    if op in SAME_SIZE:
        return arrays[0].size
    if op in ELEMENTWISE:
        shape = _broadcast([list(a.shape) for a in arrays])
        return None if shape is None else math.prod(shape)
    if op == "Concat":
        return sum(a.size for a in arrays)
    if op == "ConstantOfShape":
        dims = _ints(ins[0])
        return None if any(d < 0 for d in dims) else math.prod(dims)
    if op in ("Expand", "Tile") and len(ins) == 2 and ins[1] is not None:
        dims, src = _ints(ins[1]), list(ins[0].shape)
        if any(d < 0 for d in dims):
            return None
        if op == "Tile":
            return math.prod(d * r for d, r in zip(src, dims)) if len(dims) == len(src) else None
        shape = _broadcast([src, dims])
        return None if shape is None else math.prod(shape)
    if op == "Range" and len(arrays) == 3 and all(a.size == 1 for a in arrays):
        start, limit, delta = (float(a.reshape(-1)[0]) for a in arrays)
        if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
            return None
        return max(math.ceil((limit - start) / delta), 0)
    if op == "Gather" and len(arrays) == 2:
        data, idx = arrays
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        if data.ndim == 0 or not -data.ndim <= axis < data.ndim:
            return None
        return idx.size * (data.size // max(data.shape[axis], 1))
    return None


def try_fold(gen, node: onnx.NodeProto) -> bool:
    """Fold `node` if every input is a constant and its output is small; True when folded."""
    if node.op_type == "Shape":
        vt = gen.types.get(node.input[0])
        src = gen.consts.get(node.input[0])
        shape = list(src.shape) if src is not None else (vt.shape if vt is not None else None)
        if shape is None or not all(isinstance(d, int) for d in shape):
            return False
        attrs = {a.name: a.i for a in node.attribute}
        r = len(shape)
        start, end = attrs.get("start", 0), attrs.get("end", r)
        start, end = (max(0, min(r, s + r if s < 0 else s)) for s in (start, end))
        set_const(gen, node.output[0], np.array(shape[start:end], dtype=np.int64))
        return True
    if node.op_type == "Size":
        vt = gen.types.get(node.input[0])
        if vt is None or not vt.static:
            return False
        set_const(gen, node.output[0], np.array(int(np.prod(vt.shape)), dtype=np.int64))
        return True
    if node.op_type not in FOLDABLE or any(i and i not in gen.consts for i in node.input):
        return False
    if node.op_type != "Constant" and not node.input:
        return False
    if any(gen.consts[i].size > FOLD_LIMIT for i in node.input if i):
        return False
    ins = [gen.consts[i] if i else None for i in node.input]
    try:
        size = fold_size(node, ins)
    except (ValueError, TypeError, OverflowError, IndexError):
        size = None
    if size is None or size > FOLD_LIMIT:
        return False
    outs = evaluate(gen.consts, gen.opset, node)
    if outs is None:
        return False
    for val in outs:
        if val.size > FOLD_LIMIT or elem_of_np(val.dtype) is None:
            return False
    for name, val in zip(node.output, outs):
        set_const(gen, name, val)
    return True


def evaluate(consts: dict, opset: int, node: onnx.NodeProto) -> list[np.ndarray] | None:
    """The node's outputs by ONNX's reference op over `consts` (None if it refuses the inputs)."""
    from onnx.reference import ReferenceEvaluator

    helper = onnx.helper
    try:
        feeds = {i: consts[i] for i in node.input if i}
        graph = helper.make_graph(
            [node],
            "fold",
            [
                helper.make_tensor_value_info(i, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                for i, a in feeds.items()
            ],
            [helper.make_tensor_value_info(o, 0, None) for o in node.output],
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return [np.asarray(v) for v in ReferenceEvaluator(m).run(None, feeds)]
    except Exception:  # noqa: BLE001 - onnx/protobuf raise many types; then it runs at run time
        return None
