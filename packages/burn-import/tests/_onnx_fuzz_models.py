"""Hostile ONNX models for the code-generation fuzz (`test_onnx_codegen_fuzz.py`).

`hostile(rng, canary)` draws a string from pieces that would run code if pasted into Python
source (line breaks of every kind, quote runs, backslashes, braces, expression tails), each
carrying a payload that touches the model's own canary file, mixed with legitimate odd names
(NFKC look-alikes, keywords, builtins, the generated module's own names). `build(rng, i,
canary)` returns one `Case`: a model from one of six templates with such text in every value
name, node name, doc string, producer and graph name, and in attributes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import AttributeProto
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ODD_NAMES = [
    "x", "\uff58", "a\u00b2", "a2", "\ufb01", "fi", "__debug__", "\uff3f\uff3fdebug\uff3f\uff3f",
    "ops", "activation", "default_device", "pathlib", "RECORD", "Module", "Param", "Conv2d",
    "np", "F", "Tensor", "DType", "Model", "self", "device", "cls", "nan", "inf", "None",
    "class", "match", "type", "_", "print", "__import__", "__builtins__", "__file__", "1",
    "\u00e9", "e\u0301", "a b", "a.b:0", "conv1/Relu:0", "#", "\x00", "\t", "", "x" * 300,
    "\u0394", "\u4e2d\u6587", "C:\\Users\\me", "%s{}", "\u202e",
]  # fmt: skip
F2_PRODUCER = 'p"""\nclass _Q(r\'\'\''
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"]


def payload(canary: str) -> str:
    return f"__import__('pathlib').Path({canary!r}).touch()"


def hostile(rng: random.Random, canary: str) -> str:
    """One hostile or odd string."""
    p = payload(canary)
    nl = rng.choice(BREAKS)
    forms = [
        f"a\n        pass\n{p}\nclass _Z:\n def _f(self):\n  if 1: #",  # review F1, as is
        f"a{nl}        pass{nl}{p}{nl}class _Z:{nl} def _f(self):{nl}  if 1: #",
        f"{p} or 3",  # review F3: an expression where a number is expected
        p,
        f"a{nl}{p}{nl}#",
        f"a{nl}        {p}{nl}        #",
        f"a{nl}    pass{nl}{p}{nl}class _Z:{nl} def _f(self):{nl}  if 1: #",
        f"c''',{p}):#",
        f'c""",{p}):#',
        f'"""{nl}{p}{nl}"""',
        f"'''{nl}{p}{nl}'''",
        f"x\\{nl}{p}",
        f"{{{p}}}",
        f"x) or {p} or (x",
        f"3) + ({p}) + (3",
        f"x; {p}",
        f"\\N{{{nl}{p}",
        f"p\"\"\"{nl}class _Q(r'''",
    ]
    if rng.random() < 0.45:
        return rng.choice(forms)
    return "".join(rng.choice(ODD_NAMES) for _ in range(rng.randint(1, 3)))


@dataclass
class Case:
    """A model, the inputs to run it on, and the expected outputs: `want` when the template
    computes them by hand, else ONNX's reference evaluator's when `compare`."""

    kind: str
    model: onnx.ModelProto
    feeds: dict = field(default_factory=dict)
    compare: bool = True
    opset: int = 17
    want: list | None = None


class Names:
    """Distinct ONNX names (SSA needs them distinct; their identifiers may collide)."""

    def __init__(self, rng, canary):
        self.rng, self.canary, self.used = rng, canary, set()

    def __call__(self) -> str:
        name = hostile(self.rng, self.canary)
        while not name or name in self.used:
            name += self.rng.choice(["'", "ｘ", "_", "\n", "1"])
        self.used.add(name)
        return name


def _finish(rng, canary, nodes, inputs, outputs, inits=(), opset=17, functions=(), domains=()):
    for n in nodes:
        n.name = hostile(rng, canary) if rng.random() < 0.8 else ""
        n.doc_string = hostile(rng, canary)
    g = h.make_graph(nodes, hostile(rng, canary), inputs, outputs, initializer=list(inits))
    g.doc_string = hostile(rng, canary)
    imports = [h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains]
    m = h.make_model(
        g,
        opset_imports=imports,
        producer_name=hostile(rng, canary),
        producer_version=hostile(rng, canary),
        doc_string=hostile(rng, canary),
        functions=list(functions),
    )
    m.ir_version = 8 if opset < 21 else 10
    onnx.helper.set_model_props(m, {hostile(rng, canary): hostile(rng, canary)})
    return m


def chain(rng, canary) -> Case:
    """Relu -> Add (inline constant) -> Mul (a Param field) -> Sigmoid -> Neg. One time in
    three, the producer and the Param's name are the two halves of review F2's docstring
    escape."""
    nm = Names(rng, canary)
    docstring_escape = rng.random() < 1 / 3
    if docstring_escape:
        nm.used.add(f"c''',{payload(canary)}):#")
    x, a, b, c, s, y, w1, w2 = (nm() for _ in range(8))
    if docstring_escape:
        w2 = f"c''',{payload(canary)}):#"
    nodes = [
        h.make_node("Relu", [x], [a]),
        h.make_node("Add", [a, w1], [b]),
        h.make_node("Mul", [b, w2], [c]),
        h.make_node("Sigmoid", [c], [s]),
        h.make_node("Neg", [s], [y]),
    ]
    gen = np.random.default_rng(rng.randrange(1 << 30))
    inits = [
        nh.from_array(gen.standard_normal(25).astype(np.float32), w1),
        nh.from_array(gen.standard_normal((4, 25)).astype(np.float32), w2),
    ]
    m = _finish(
        rng, canary, nodes, [h.make_tensor_value_info(x, T.FLOAT, [4, 25])],
        [h.make_tensor_value_info(y, T.FLOAT, [4, 25])], inits,
    )  # fmt: skip
    if docstring_escape:
        m.producer_name = F2_PRODUCER
    return Case("chain", m, {x: gen.standard_normal((4, 25)).astype(np.float32)})


def convnet(rng, canary) -> Case:
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Flatten -> Gemm: burn_nn layer fields."""
    nm = Names(rng, canary)
    x, c, bn, r, p, f, y = (nm() for _ in range(7))
    wn = [nm() for _ in range(8)]
    gen = np.random.default_rng(rng.randrange(1 << 30))
    arrays = [
        gen.standard_normal((3, 2, 3, 3)), gen.standard_normal(3), gen.random(3) + 0.5,
        gen.standard_normal(3), gen.standard_normal(3), gen.random(3) + 0.5,
        gen.standard_normal((4, 12)), gen.standard_normal(4),
    ]  # fmt: skip
    inits = [nh.from_array(a.astype(np.float32), n) for a, n in zip(arrays, wn)]
    nodes = [
        h.make_node("Conv", [x, wn[0], wn[1]], [c], pads=[1, 1, 1, 1]),
        h.make_node("BatchNormalization", [c, wn[2], wn[3], wn[4], wn[5]], [bn]),
        h.make_node("Relu", [bn], [r]),
        h.make_node("MaxPool", [r], [p], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Flatten", [p], [f]),
        h.make_node("Gemm", [f, wn[6], wn[7]], [y], transB=1),
    ]
    m = _finish(
        rng, canary, nodes, [h.make_tensor_value_info(x, T.FLOAT, [1, 2, 5, 5])],
        [h.make_tensor_value_info(y, T.FLOAT, [1, 4])], inits,
    )  # fmt: skip
    return Case("convnet", m, {x: gen.standard_normal((1, 2, 5, 5)).astype(np.float32)})


def control(rng, canary) -> Case:
    """A run-time If whose branches and a Loop body use hostile names."""
    nm = Names(rng, canary)
    x, cond, ifo, t1, e1, y = (nm() for _ in range(6))
    it, lc, st, st2, lco, one, trip = (nm() for _ in range(7))
    then_g = h.make_graph(
        [h.make_node("Relu", [x], [t1], name=hostile(rng, canary))], hostile(rng, canary), [],
        [h.make_tensor_value_info(t1, T.FLOAT, [3])],
    )  # fmt: skip
    else_g = h.make_graph(
        [h.make_node("Neg", [x], [e1], name=hostile(rng, canary))], hostile(rng, canary), [],
        [h.make_tensor_value_info(e1, T.FLOAT, [3])],
    )  # fmt: skip
    body = h.make_graph(
        [
            h.make_node("Add", [st, one], [st2], name=hostile(rng, canary)),
            h.make_node("Identity", [lc], [lco], name=hostile(rng, canary)),
        ],
        hostile(rng, canary),
        [
            h.make_tensor_value_info(it, T.INT64, []),
            h.make_tensor_value_info(lc, T.BOOL, []),
            h.make_tensor_value_info(st, T.FLOAT, [3]),
        ],
        [h.make_tensor_value_info(lco, T.BOOL, []), h.make_tensor_value_info(st2, T.FLOAT, [3])],
    )
    nodes = [
        h.make_node("If", [cond], [ifo], then_branch=then_g, else_branch=else_g),
        h.make_node("Loop", [trip, "", ifo], [y], body=body),
    ]
    n = rng.randint(0, 3)
    inits = [nh.from_array(np.ones(3, np.float32), one), nh.from_array(np.array(n, np.int64), trip)]
    m = _finish(
        rng, canary, nodes,
        [h.make_tensor_value_info(x, T.FLOAT, [3]), h.make_tensor_value_info(cond, T.BOOL, [])],
        [h.make_tensor_value_info(y, T.FLOAT, [3])], inits,
    )  # fmt: skip
    xv, c = np.array([-1.0, 0.5, 2.0], np.float32), rng.random() < 0.5
    # by hand: onnx 1.23's reference evaluator runs this Loop (M given, no condition) 0 times
    want = [((np.maximum(xv, 0) if c else -xv) + n).astype(np.float32)]
    return Case("control", m, {x: xv, cond: np.array(c)}, want=want)


# A model-local function's body op, the attribute it reads from the call site, and a value of
# the right type; the fuzz passes values of other types too.
FUNCTION_OPS = [
    ("LRN", "size", AttributeProto.INT, 3, [1, 3, 4, 4]),
    ("Flatten", "axis", AttributeProto.INT, 1, [1, 3, 4, 4]),
    ("LeakyRelu", "alpha", AttributeProto.FLOAT, 0.1, [1, 3, 4, 4]),
    ("Transpose", "perm", AttributeProto.INTS, [0, 2, 1, 3], [1, 3, 4, 4]),
    ("DepthToSpace", "blocksize", AttributeProto.INT, 1, [1, 3, 4, 4]),
    ("Softmax", "axis", AttributeProto.INT, 1, [1, 3, 4, 4]),
    ("Elu", "alpha", AttributeProto.FLOAT, 1.0, [1, 3, 4, 4]),
]


def local_function(rng, canary) -> Case:
    """A model-local function whose body op takes its attribute from the call site; the call
    passes it as a random type (a hostile STRING most often)."""
    op, attr, typ, good, shape = rng.choice(FUNCTION_OPS)
    nm = Names(rng, canary)
    a, b, x, y = (nm() for _ in range(4))
    body = h.make_node(op, [a], [b], name=hostile(rng, canary))
    body.attribute.append(AttributeProto(name=attr, ref_attr_name="s", type=typ))
    fn = h.make_function("local", "F", [a], [b], [body], [h.make_opsetid("", 17)], ["s"])
    call = h.make_node("F", [x], [y], domain="local")
    value = rng.choice([hostile(rng, canary), 2.5, [1, 2], 7, [0.5], good])
    call.attribute.append(h.make_attribute("s", value))
    m = _finish(
        rng, canary, [call], [h.make_tensor_value_info(x, T.FLOAT, shape)],
        [h.make_tensor_value_info(y, T.FLOAT, None)], functions=[fn], domains=["local"],
    )  # fmt: skip
    gen = np.random.default_rng(rng.randrange(1 << 30))
    feeds = {x: gen.standard_normal(shape).astype(np.float32)}
    return Case("function", _with_rank(m, len(shape)), feeds, compare=False)


def _with_rank(m: onnx.ModelProto, rank: int) -> onnx.ModelProto:
    """Give the graph output a shape of unknown dims (onnx.checker needs a shape)."""
    out = m.graph.output[0].type.tensor_type
    del out.shape.dim[:]
    for _ in range(rank):
        out.shape.dim.add()
    return m


NUMBERS = [0, 1, -1, 2, 5, -5, 1 << 40, -(1 << 62)]
FLOATS = [0.0, -0.0, 0.5, float("nan"), float("inf"), float("-inf"), 1e308, 5e-324]


def attributes(rng, canary) -> Case:
    """One node with hostile attribute values: strings where the op expects an enum, numbers
    out of range, lists of the wrong length (or very long), non-finite floats."""
    nm = Names(rng, canary)
    x, y = nm(), nm()
    shape = [1, 2, 4, 4]
    pick = rng.randrange(9)
    if pick == 0:
        node = h.make_node("Pad", [x, nm()], [y], mode=hostile(rng, canary))
    elif pick == 1:
        node = h.make_node("AveragePool", [x], [y], kernel_shape=[2, 2],
                           auto_pad=rng.choice(["NOTSET", "VALID", hostile(rng, canary)]),
                           pads=[rng.choice([0, 1]) for _ in range(rng.choice([4, 4, 6, 3]))])
    elif pick == 2:
        node = h.make_node("LeakyRelu", [x], [y], alpha=rng.choice(FLOATS))
    elif pick == 3:
        node = h.make_node("Concat", [x, x], [y], axis=rng.choice(NUMBERS))
    elif pick == 4:
        perm = list(range(4))
        rng.shuffle(perm)
        if rng.random() < 0.5:
            perm[rng.randrange(4)] = rng.choice(NUMBERS)
        node = h.make_node("Transpose", [x], [y], perm=perm)
    elif pick == 5:
        node = h.make_node("MaxPool", [x], [y], kernel_shape=[1, 1],
                           pads=[0] * rng.choice([4, 5000, 70000]))
    elif pick == 6:
        node = h.make_node("Gelu", [x], [y], approximate=hostile(rng, canary))
    elif pick == 7:
        node = h.make_node("Einsum", [x], [y], equation=hostile(rng, canary))
    else:
        node = h.make_node("Softmax", [x], [y], axis=rng.choice(NUMBERS))
    inits = []
    if pick == 0:
        pads = np.array([rng.choice([0, 1]) for _ in range(8)], np.int64)
        inits = [nh.from_array(pads, node.input[1])]
    m = _finish(
        rng, canary, [node], [h.make_tensor_value_info(x, T.FLOAT, shape)],
        [h.make_tensor_value_info(y, T.FLOAT, [None] * 4)], inits, opset=20,
    )  # fmt: skip
    gen = np.random.default_rng(rng.randrange(1 << 30))
    return Case("attributes", m, {x: gen.standard_normal(shape).astype(np.float32)}, False, 20)


TEMPLATES = [chain, convnet, control, local_function, attributes]


def build(rng: random.Random, canary: str) -> Case:
    return rng.choice(TEMPLATES)(rng, canary)


def file_stem(rng: random.Random, canary: str) -> str:
    """A hostile file name (no `/` or NUL, at most 120 UTF-8 bytes)."""
    stem = hostile(rng, canary).replace("/", "_").replace("\x00", "_")
    while len(stem.encode()) > 120:
        stem = stem[: len(stem) // 2]
    return stem if stem not in ("", ".", "..") else "m"
