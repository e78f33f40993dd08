"""The code generator's state (`Gen`) and the per-node view a converter works with (`NodeCtx`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import onnx

from ._errors import OnnxImportError, op_error, unknown_error
from ._literals import FloatLit, _coerce, lit, literal  # noqa: F401 - re-exported
from ._fieldnames import (
    LOCAL_MAX,
    field_path,
    node_field_hint,
    param_key,
    scoped_value_name,
    shorter_value_name,
)
from ._names import RESERVED, identifier, label
from ._style import WIDTH
from ._types import DTYPES, FLOATS, VType, dtype_code, elem_of_np, np_dtype, type_name

INLINE_LIMIT = 64  # constants up to this many elements are written into the code
# Names a field must not take: the generated Module's own attributes and methods.
MODULE_ATTRS = frozenset(
    {"forward", "init", "from_file", "load_file", "load_record", "into_record", "devices",
     "to_device", "to", "fork", "parameters", "named_parameters", "num_params", "visit", "map",
     "no_grad", "train", "eval", "valid", "save_file", "clone", "from_inner",
     "set_require_grad"}
)  # fmt: skip
MAX_CONSTANT = 2**31  # as `_load.MAX_TENSOR_ELEMENTS`: a folded constant cannot be larger


@dataclass
class Field:
    """One field of the generated Module: a layer or a parameter."""

    name: str
    annotation: str
    init_code: str  # an expression using `device`
    record: object  # numpy array or {sub-field: numpy array}
    comment: str = ""


@dataclass
class Gen:
    model: onnx.ModelProto
    opset: int
    types: dict[str, VType] = field(default_factory=dict)
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    vars: dict[str, str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    lines: list[str] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    initializers: set[str] = field(default_factory=set)  # names of the graph's initializers
    field_names: set[str] = field(default_factory=set)
    imports: set[str] = field(default_factory=set)
    reserved: frozenset[str] = RESERVED
    suffix: dict[str, int] = field(default_factory=dict)  # last number `fresh` gave each name
    # DequantizeLinear outputs held as quantized fields (`_qweights.QWeight`); their float
    # value is written only where a converter reads it as float (`NodeCtx.x`)
    qweights: dict = field(default_factory=dict)
    # DequantizeLinear outputs of 8-bit activations (`_qweights.QAct`): a matmul with a
    # quantized weight reads their integers, anything else their float value (written lazily)
    qacts: dict = field(default_factory=dict)
    # Conv outputs whose only reader is a QuantizeLinear: the conv call (`_qweights.qdq_conv`),
    # completed by that node with its scale and zero point (the conv writes the bytes)
    fused_quantize: dict = field(default_factory=dict)
    quantized_fields: bool = True  # False: no quantized fields (a recorder that cannot store them)
    short: dict[str, str] = field(default_factory=dict)  # value -> its short local name
    described: set[str] = field(default_factory=set)  # nodes their variable's name describes
    consumers: dict[str, list] = field(default_factory=dict)  # value -> nodes reading it
    # fused `x * sigmoid(x)` / `x * hard_sigmoid(x)` pairs: Mul output -> (x, gate output),
    # built on first use (`_ops_elementwise._silu_pairs`), each pair's activation ("silu",
    # "hard_swish") and the fused gates' outputs
    silu: dict | None = None
    gate_kinds: dict = field(default_factory=dict)
    silu_sigmoids: set = field(default_factory=set)
    outputs: set[str] = field(default_factory=set)  # the graph's output names
    main_values: set[str] = field(default_factory=set)  # outputs of the main graph's nodes
    # nodes whose work another node's code already did (a MatMul's Linear took the bias of
    # the Add after it): output name -> the value it equals
    absorbed: dict[str, str] = field(default_factory=dict)
    # torch MultiheadAttention subgraphs (`_codegen_mha`): in-projection output -> match, and
    # the outputs of the nodes whose code the match's layer call replaces
    attention: dict = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)

    def fresh(self, base: str) -> str:
        """A new local variable for the model value `base`: an ASCII identifier by `identifier`,
        unique among every name given so far (Python sees identifiers NFKC-normalized, so
        uniqueness is checked on the identifier, never on the model's text)."""
        scoped = scoped_value_name(base)  # an initializer in torch's scoped form
        short = self.short.get(base) or (_tail(scoped).replace(".", "_") if scoped else None)
        name = identifier(short or _tail(shorter_value_name(base)), self.reserved)
        cand, k = name, self.suffix.get(name, 1)
        while cand in self.names:
            k += 1
            cand = f"{name}_{k}"
        self.suffix[name] = k
        self.names.add(cand)
        return cand

    def field_name(self, kind: str, hint: str | None = None) -> str:
        """A unique field name: after the model's module path `hint` when there is one
        (`layer4.0.conv2` -> `layer4_0_conv2`), else the kind numbered (`conv2d3`)."""
        if hint:
            base = identifier(field_path(hint), self.reserved | MODULE_ATTRS)
            cand, k = base, 1
            while cand in self.field_names:
                k += 1
                cand = f"{base}_{k}"
        else:
            cand = ""
            while not cand or cand in self.field_names:
                n = self.counters.get(kind, 0) + 1
                self.counters[kind] = n
                cand = f"{kind}{n}"
        self.field_names.add(cand)
        return cand

    def add_field(
        self, kind: str, annotation: str, init_code: str, record, comment: str, hint=None
    ) -> str:
        name = self.field_name(kind, hint)
        self.fields.append(Field(name, annotation, init_code, record, comment))
        return name

    def deferred(self, name: str) -> bool:
        """Whether `name` is a quantized weight or activation whose float value is not written
        yet (`materialize` writes it where it is first read as float)."""
        return name not in self.vars and (name in self.qweights or name in self.qacts)

    def materialize(self, name: str) -> str:
        """The Python expression of a constant value, written once (inline or as a Param), or
        of a deferred quantized value (its dequantization, written here)."""
        if name in self.vars:
            return self.vars[name]
        if self.deferred(name):
            if name in self.qweights:
                from ._qweights import float_expr

                expr = float_expr(self, self.qweights[name], self.types[name].elem)
            else:
                qa = self.qacts[name]
                self.lines.append(f"# float emulation: {qa.why}")  # our own text, no model text
                expr = qa.float_expr
            var = self.fresh(name)
            self.lines.append(f"{var} = {expr}")
            self.vars[name] = var
            return var
        arr = self.consts[name]
        elem = elem_of_np(arr.dtype)
        if elem is None:
            raise OnnxImportError(f"constant {name!r}: element type {arr.dtype} is not supported")
        if arr.size > MAX_CONSTANT:
            raise OnnxImportError(
                f"constant {name!r}: {arr.size} elements (at most {MAX_CONSTANT} in one tensor)"
            )
        shape = list(arr.shape) or [1]
        var = self.fresh(name)
        # A float initializer (or constant named like a state-dict key) is a weight, saved and
        # trainable whatever its size; constants that nodes compute and integer initializers
        # (shape arguments) are written inline.
        weight = elem in FLOATS and (name in self.initializers or param_key(name) is not None)
        if arr.size <= INLINE_LIMIT and not weight:
            self.lines.append(
                f"{var} = ops.const({literal(arr)}, {shape}, {dtype_code(elem)}, device)"
            )
        else:
            trainable = elem in FLOATS
            fname = self.add_field(
                "constant",
                "Param",
                f"ops.param({shape}, {dtype_code(elem)}, device, trainable={trainable})",
                arr.reshape(shape),
                f"initializer {label(name, WIDTH - 22)}",
                hint=param_key(name) or scoped_value_name(name),
            )
            self.lines.append(f"{var} = self.{fname}.val()")
        self.vars[name] = var
        return var


def _tail(name: str) -> str:
    """A long path-like value name cut to its last `/`- or `.`-separated parts that fit
    `LOCAL_MAX` (`StatefulPartitionedCall/model/conv2d/BiasAdd` -> `conv2d_BiasAdd`)."""
    if len(name) <= LOCAL_MAX or not re.fullmatch(r"[\w/.:-]+", name):
        return name  # short, or no path: `identifier` keeps its start
    parts = [p for p in re.split(r"[/.]", name) if p]
    while len(parts) > 1 and len("_".join(parts)) > LOCAL_MAX:
        parts = parts[1:]
    return "_".join(parts) or name


class NodeCtx:
    """What a converter sees of one node; it writes code through `set`/`emit`."""

    def __init__(self, gen: Gen, node: onnx.NodeProto):
        self.gen, self.node = gen, node
        self.op_type, self.name, self.opset = node.op_type, node.name or node.output[0], gen.opset
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    # -- errors ----------------------------------------------------------------------------------
    def fail(self, why: str):
        raise op_error(self.op_type, self.name, self.opset, why)

    def unknown(self, what: str):
        """Refuse the node because `what` (a type or rank) is unknown, not because of the op."""
        raise unknown_error(self.op_type, self.name, self.opset, what)

    # -- attributes --------------------------------------------------------------------------------
    def attr(self, name: str, default=None):
        """The attribute's value (its type was checked against the op's schema in
        `_attrs.check_attributes`): int, float (a `FloatLit`), str, or lists of them."""
        if name not in self.attrs:
            return default
        try:
            return _coerce(self.attrs[name])
        except UnicodeDecodeError:
            self.fail(f"attribute {name!r} is not UTF-8 text")

    def ints(self, name: str, default, length: int | None = None, minimum: int | None = None):
        """A list-of-ints attribute with `length` values (e.g. one per spatial dim), each at
        least `minimum`; anything else raises naming the attribute."""
        vals = list(self.attr(name, default))
        shown = vals if len(vals) <= 8 else vals[:8] + ["..."]
        if length is not None and len(vals) != length:
            self.fail(
                f"attribute {name!r} has {len(vals)} values; {length} expected "
                f"(input rank {self.rank(0)})"
            )
        if minimum is not None and any(v < minimum for v in vals):
            self.fail(f"attribute {name!r} = {shown}: every value must be >= {minimum}")
        return vals

    def axis(self, name: str, default, rank: int) -> int:
        """An axis attribute checked against `rank` (ONNX: -rank <= axis < rank), normalized."""
        a = self.attr(name, default)
        r = max(rank, 1)
        if not -r <= a < r:
            self.fail(f"attribute {name!r} = {a} is outside [{-r}, {r - 1}] for input rank {rank}")
        return a % r

    # -- inputs ----------------------------------------------------------------------------------
    @property
    def n_in(self) -> int:
        return len(self.node.input)

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and self.node.input[i] != ""

    def const(self, i: int) -> np.ndarray | None:
        return self.gen.consts.get(self.node.input[i]) if self.has(i) else None

    def vt(self, i: int) -> VType:
        name = self.node.input[i]
        if name in self.gen.consts:
            arr = self.gen.consts[name]
            return VType(elem_of_np(arr.dtype) or 0, list(arr.shape))
        vt = self.gen.types.get(name)
        if vt is None:
            self.unknown(f"the type of input {name!r}")
        return vt

    def elem(self, i: int) -> int:
        return self.vt(i).elem

    def rank(self, i: int) -> int:
        """The ONNX rank of input i (raises when unknown)."""
        r = self.vt(i).rank
        if r is None:
            self.unknown(f"the rank of input {self.node.input[i]!r}")
        return r

    def shape(self, i: int) -> list[int | None]:
        self.rank(i)
        return list(self.vt(i).shape)

    def x(self, i: int) -> str:
        """The Python expression for input i (a constant is materialized on first use)."""
        name = self.node.input[i]
        if name in self.gen.vars:
            return self.gen.vars[name]
        if name in self.gen.consts or self.gen.deferred(name):
            return self.gen.materialize(name)
        self.fail(f"input {name!r} has no value")

    def qweight(self, i: int):
        """The `_qweights.QWeight` input i is (a DequantizeLinear of a constant int8), or None."""
        return self.gen.qweights.get(self.node.input[i]) if self.has(i) else None

    def xr(self, i: int, rank: int) -> str:
        """Input i unsqueezed (leading dims) to `rank`: numpy's rank promotion, made explicit."""
        r = max(self.rank(i), 1)
        return self.x(i) if r >= rank else f"{self.x(i)}.unsqueeze({rank})"

    # -- outputs ---------------------------------------------------------------------------------
    @property
    def n_out(self) -> int:
        return len(self.node.output)

    def has_out(self, i: int) -> bool:
        return i < len(self.node.output) and self.node.output[i] != ""

    def out_vt(self, i: int = 0) -> VType:
        vt = self.gen.types.get(self.node.output[i])
        if vt is None:
            self.unknown(f"the type of output {self.node.output[i]!r}")
        return vt

    def out_elem(self, i: int = 0) -> int:
        return self.out_vt(i).elem

    def out_rank(self, i: int = 0) -> int:
        r = self.out_vt(i).rank
        if r is None:
            self.unknown(f"the rank of output {self.node.output[i]!r}")
        return r

    def out(self, i: int = 0) -> str:
        name = self.node.output[i]
        if name not in self.gen.vars:
            self.gen.vars[name] = self.gen.fresh(name)
        return self.gen.vars[name]

    def set(self, i: int, expr: str) -> str:
        """Write `out_i = expr`."""
        var = self.out(i)
        self.emit(f"{var} = {expr}")
        return var

    def alias(self, i: int, in_i: int) -> None:
        """Output i is input `in_i` itself (Identity, Dropout in inference)."""
        src = self.node.input[in_i]
        if src in self.gen.consts and src not in self.gen.vars:
            self.fold(i, self.gen.consts[src])
            return
        if src in self.gen.qweights and src not in self.gen.vars:  # still a quantized weight
            self.gen.qweights[self.node.output[i]] = self.gen.qweights[src]
            return
        self.set(i, self.x(in_i))

    def fold(self, i: int, value: np.ndarray) -> None:
        """Output i is a constant computed at import time (no code is written for it)."""
        name = self.node.output[i]
        self.gen.consts[name] = np.asarray(value)
        elem = elem_of_np(np.asarray(value).dtype)
        self.gen.types[name] = VType(elem or 0, list(np.asarray(value).shape))

    def emit(self, line: str) -> None:
        self.gen.lines.append(line)

    # -- fields ----------------------------------------------------------------------------------
    def add_field(self, kind, annotation, init_code, record, comment="", hint=None) -> str:
        """A layer field of this node, named after the model's module path when it has one
        (`hint`: a path the converter knows better, e.g. from the bias it took)."""
        hint = hint or node_field_hint(self.node, self.gen.initializers)
        # the node's whole name, once, here (a comment line of its own when the declaration
        # and it do not fit 100 columns together)
        comment = comment or f"{self.op_type} {label(self.name, WIDTH - 10 - len(self.op_type))}"
        return self.gen.add_field(kind, annotation, init_code, record, comment, hint=hint)

    def dtype(self, elem: int) -> str:
        if elem not in DTYPES:
            self.fail(f"element type {type_name(elem)} is not supported by burn tensors")
        return dtype_code(elem)

    def np_dtype(self, elem: int):
        return np_dtype(elem)
