"""Elementwise ops: arithmetic, comparisons, logic, unary math (numpy broadcasting made explicit)."""

from __future__ import annotations

import numpy as np

from ._context import lit
from ._fieldnames import param_key
from ._registry import op
from ._types import FLOATS, INTS, type_name

UNARY = {
    "Abs": "{x}.abs()",
    "Neg": "{x}.neg()",
    "Exp": "{x}.exp()",
    "Log": "{x}.log()",
    "Sqrt": "{x}.sqrt()",
    "Reciprocal": "{x}.recip()",
    "Floor": "{x}.floor()",
    "Ceil": "{x}.ceil()",
    "Round": "{x}.round()",
    "Sign": "{x}.sign()",
    "Sin": "{x}.sin()",
    "Cos": "{x}.cos()",
    "Tan": "{x}.tan()",
    "Asin": "{x}.asin()",
    "Acos": "{x}.acos()",
    "Atan": "{x}.atan()",
    "Sinh": "{x}.sinh()",
    "Cosh": "{x}.cosh()",
    "Asinh": "{x}.asinh()",
    "Acosh": "{x}.acosh()",
    "Atanh": "{x}.atanh()",
    "Tanh": "{x}.tanh()",
    "Erf": "{x}.erf()",
    "Relu": "activation.relu({x})",
    "Sigmoid": "activation.sigmoid({x})",
    "Softsign": "activation.softsign({x})",
    "Mish": "activation.mish({x})",
    "Not": "{x}.bool_not()",
    "IsNaN": "{x}.is_nan()",
    "BitwiseNot": "{x}.bitwise_not()",
    "Softplus": "ops.softplus({x})",
}
FLOAT_ONLY = {
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Floor",
    "Ceil",
    "Round",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Tanh",
    "Erf",
    "Sigmoid",
    "Softsign",
    "Mish",
    "Softplus",
}


def _unary(ctx):
    if ctx.op_type in FLOAT_ONLY and ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    if ctx.op_type == "Sigmoid" and _silu_sigmoid(ctx):
        ctx.emit("# read only by x * sigmoid(x) below: activation.silu there")
        return
    ctx.set(0, UNARY[ctx.op_type].format(x=ctx.x(0)))


def _silu_pairs(gen) -> dict[str, tuple[str, str]]:
    """{Mul output: (x, gate output)} of every `x * sigmoid(x)` and `x * HardSigmoid(x)` with
    HardSwish's alpha 1/6 and beta 1/2 in the main graph whose gate is read by that Mul alone
    (no graph output; graphs with subgraphs are left as they are, since a body may read the
    gate by name). Each such pair is written as one `activation.silu(x)` or
    `activation.hard_swish(x)` (`gen.gate_kinds`): efficientnet's SiLUs are one native pass on
    NdArray where the Mul alone re-read and wrote the whole tensor (~2.7 of ~47 ms), and
    onnxruntime's optimizer writes mobilenet_v3's HardSwish as HardSigmoid and Mul (19 pairs,
    then also fused into their convs). Built once per generation, in one pass over the graph
    (a scan per node was quadratic in the graph's size)."""
    if gen.silu is not None:
        return gen.silu
    import onnx

    g = gen.model.graph
    pairs, kinds = {}, {}
    graphs = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    if not any(a.type in graphs for n in g.node for a in n.attribute):
        outputs = {o.name for o in g.output}
        readers: dict[str, list] = {}
        for n in g.node:
            for name in set(n.input):
                readers.setdefault(name, []).append(n)
        for sig in g.node:
            kind = _gate_kind(sig)
            if kind is None:
                continue
            out, x = sig.output[0], sig.input[0]
            if out in outputs or len(readers.get(out, ())) != 1:
                continue
            m = readers[out][0]
            same = sorted(m.input) == sorted([x, out])
            if m.op_type == "Mul" and m.domain in ("", "ai.onnx") and same:
                pairs[m.output[0]] = (x, out)
                kinds[m.output[0]] = kind
    gen.silu = pairs
    gen.gate_kinds = kinds
    gen.silu_sigmoids = {sig for _, sig in pairs.values()}
    return pairs


def _gate_kind(node) -> str | None:
    """"silu" for a Sigmoid, "hard_swish" for a HardSigmoid with HardSwish's alpha 1/6 and
    beta 1/2 (as float32, how ONNX stores them), else None: the activation `x * gate(x)` is."""
    if node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "Sigmoid":
        return "silu"
    if node.op_type != "HardSigmoid":
        return None
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    alpha, beta = attrs.get("alpha", 0.2), attrs.get("beta", 0.5)
    if set(attrs) - {"alpha", "beta"} or np.float32(alpha) != np.float32(1 / 6) or beta != 0.5:
        return None
    return "hard_swish"


def _silu_sigmoid(ctx) -> bool:
    """Whether this Sigmoid / HardSigmoid is the gate of a fused `x * gate(x)` (`_silu_pairs`:
    silu or hard_swish)."""
    _silu_pairs(ctx.gen)
    return ctx.node.output[0] in ctx.gen.silu_sigmoids


def _silu_input(ctx) -> int | None:
    """Which input of this Mul is the x of a fused `x * gate(x)` (`_silu_pairs`), or None."""
    pair = _silu_pairs(ctx.gen).get(ctx.node.output[0])
    if pair is None:
        return None
    return list(ctx.node.input).index(pair[0])


op(*UNARY)(_unary)


def _broadcast(ctx, n=None, same_type=True):
    n = ctx.n_in if n is None else n
    elems = {ctx.elem(i) for i in range(n)}
    if same_type and len(elems) > 1:
        ctx.fail(
            "inputs of different element types: "
            + ", ".join(type_name(ctx.elem(i)) for i in range(n))
        )
    rank = max(max(ctx.rank(i), 1) for i in range(n))
    return [ctx.xr(i, rank) for i in range(n)]


BINARY = {
    "Add": "{a} + {b}",
    "Sub": "{a} - {b}",
    "Mul": "{a} * {b}",
    "Equal": "{a}.equal({b})",
    "Less": "{a}.lower({b})",
    "Greater": "{a}.greater({b})",
    "LessOrEqual": "{a}.lower_equal({b})",
    "GreaterOrEqual": "{a}.greater_equal({b})",
    "And": "{a}.bool_and({b})",
    "Or": "{a}.bool_or({b})",
    "Xor": "{a}.bool_xor({b})",
    "BitwiseAnd": "{a}.bitwise_and({b})",
    "BitwiseOr": "{a}.bitwise_or({b})",
    "BitwiseXor": "{a}.bitwise_xor({b})",
}


def _scalar(ctx, i: int) -> str | None:
    """Input i as a Python float literal: a one-element float32/float64 constant that is no
    weight (not an initializer, not named like a state-dict key: those stay saved, trainable
    fields) and does not raise the other operand's rank (`x * 0.35355339059327373`, the
    attention scale, instead of a one-element tensor built and broadcast in forward)."""
    name = ctx.node.input[i]
    c = ctx.const(i)
    if c is None or c.size != 1 or name in ctx.gen.vars or ctx.gen.deferred(name):
        return None
    if c.dtype not in (np.float32, np.float64) or ctx.elem(1 - i) != ctx.elem(i):
        return None
    if name in ctx.gen.initializers or param_key(name) is not None:
        return None
    if ctx.rank(i) > max(ctx.rank(1 - i), 1) or (ctx.rank(i) > 0 and ctx.rank(1 - i) == 0):
        return None
    return lit(float(c.reshape(-1)[0]))


SCALAR = {"Add": "{x} + {c}", "Mul": "{x} * {c}", "Sub": "{x} - {c}", "Div": "{x} / {c}"}


def _with_scalar(ctx) -> bool:
    """Write `x <op> literal` when an operand is a plain scalar constant (see `_scalar`)."""
    if ctx.op_type not in SCALAR or ctx.n_in != 2:
        return False
    sides = (1, 0) if ctx.op_type in ("Add", "Mul") else (1,)
    for i in sides:
        c = _scalar(ctx, i)
        if c is not None:
            ctx.set(0, SCALAR[ctx.op_type].format(x=ctx.x(1 - i), c=c))
            return True
    return False


@op(*BINARY)
def binary(ctx):
    if ctx.op_type == "Mul" and (i := _silu_input(ctx)) is not None:
        kind = ctx.gen.gate_kinds[ctx.node.output[0]]
        ctx.set(0, f"activation.{kind}({ctx.x(i)})")
        return
    if _with_scalar(ctx):
        return
    a, b = _broadcast(ctx)
    if ctx.op_type == "Equal" and ctx.elem(0) == 9:
        ctx.set(0, f"{a}.bool_xor({b}).bool_not()")
        return
    ctx.set(0, BINARY[ctx.op_type].format(a=a, b=b))


@op("Div")
def div(ctx):
    if _with_scalar(ctx):
        return
    a, b = _broadcast(ctx)
    ctx.set(0, f"{a}.div({b})")


@op("Mod", attrs=("fmod",))
def mod(ctx):
    a, b = _broadcast(ctx)
    if not ctx.attr("fmod", 0):
        ctx.set(0, f"{a}.remainder({b})")  # the divisor's sign, as numpy's mod
    elif ctx.elem(0) in FLOATS:
        ctx.set(0, f"{a}.fmod({b})")
    else:  # C fmod on integers: the dividend's sign (Burn's int division truncates)
        ctx.set(0, f"{a} - {a}.div({b}) * {b}")


@op("Pow")
def pow_(ctx):
    a, b = _broadcast(ctx, same_type=False)
    if ctx.elem(0) not in FLOATS:  # integer power: computed in f64, truncated like numpy's
        ctx.set(
            0,
            f"ops.cast(ops.cast({a}, DType.F64).powf(ops.cast({b}, DType.F64)), "
            f"{ctx.dtype(ctx.elem(0))})",
        )
        return
    if ctx.elem(1) != ctx.elem(0):
        b = f"ops.cast({b}, {ctx.dtype(ctx.elem(0))})"
    ctx.set(0, f"{a}.powf({b})")


@op("BitShift", attrs=("direction",))
def bitshift(ctx):
    a, b = _broadcast(ctx)
    fn = "bitwise_left_shift" if ctx.attr("direction") == "LEFT" else "bitwise_right_shift"
    ctx.set(0, f"{a}.{fn}({b})")


@op("Max", "Min", "Sum", "Mean")
def variadic(ctx):
    xs = _broadcast(ctx)
    acc = xs[0]
    for x in xs[1:]:
        if ctx.op_type == "Max":
            acc = f"ops.max_pair({acc}, {x})"
        elif ctx.op_type == "Min":
            acc = f"ops.min_pair({acc}, {x})"
        else:
            acc = f"{acc} + {x}"
    if ctx.op_type == "Mean" and len(xs) > 1:
        acc = f"({acc}) / {len(xs)}"
    ctx.set(0, acc)


@op("Where")
def where(ctx):
    ctx.set(0, f"ops.where({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)})")


@op("IsInf", attrs=("detect_negative", "detect_positive"))
def isinf(ctx):
    neg, pos = ctx.attr("detect_negative", 1), ctx.attr("detect_positive", 1)
    ctx.set(0, f"ops.is_inf({ctx.x(0)}, {bool(neg)}, {bool(pos)})")


@op("Identity")
def identity(ctx):
    ctx.alias(0, 0)


@op("Dropout", attrs=("seed", "ratio"))
def dropout(ctx):
    # ONNX's Dropout is the identity unless `training_mode` is true (or a run-time value).
    tm = ctx.const(2) if ctx.has(2) else None
    if not ctx.has(2) or (tm is not None and not bool(tm.reshape(-1)[0])):
        ctx.alias(0, 0)
        if ctx.has_out(1):
            ctx.set(1, f"ops.ones_bool({ctx.x(0)})")
        return
    if ctx.elem(0) not in FLOATS:
        ctx.fail("training mode needs a float input")
    ratio = ctx.x(1) if ctx.has(1) else "None"
    mask = ctx.out(1) if ctx.has_out(1) else "_"
    ctx.emit(f"{ctx.out(0)}, {mask} = ops.dropout({ctx.x(0)}, {ratio}, {ctx.x(2)})")


@op("Cast", attrs=("to", "saturate", "round_mode"))
def cast(ctx):
    to = ctx.attr("to")
    if ctx.elem(0) not in INTS | FLOATS | {9}:
        ctx.fail("input element type is not supported")
    ctx.set(0, f"ops.cast({ctx.x(0)}, {ctx.dtype(to)})")


@op("BitCast", attrs=("to",))
def bitcast(ctx):
    src, to = ctx.elem(0), ctx.attr("to")
    held = ctx.dtype(to)  # refuses the types burn cannot hold
    ctx.dtype(src)
    a, b = ctx.np_dtype(src), ctx.np_dtype(to)
    if a.itemsize != b.itemsize:
        ctx.fail(f"{a.name} and {b.name} differ in width")
    ctx.set(0, f"ops.bitcast({ctx.x(0)}, {a.name!r}, {b.name!r}, {held})")


@op("CastLike", attrs=("saturate", "round_mode"))
def castlike(ctx):
    ctx.set(0, f"ops.cast({ctx.x(0)}, {ctx.dtype(ctx.elem(1))})")


@op("Clip", attrs=("min", "max"))
def clip(ctx):
    x = ctx.x(0)
    lo = ctx.attr("min")
    hi = ctx.attr("max")
    if ctx.has(1):
        c = ctx.const(1)
        lo = float(c.reshape(-1)[0]) if c is not None else f"ops.scalar({ctx.x(1)})"
    if ctx.has(2):
        c = ctx.const(2)
        hi = float(c.reshape(-1)[0]) if c is not None else f"ops.scalar({ctx.x(2)})"
    if ctx.elem(0) in INTS:
        lo = lo if lo is None or isinstance(lo, str) else int(lo)
        hi = hi if hi is None or isinstance(hi, str) else int(hi)
    if lo is not None:
        x = f"{x}.clamp_min({lo})"
    if hi is not None:
        x = f"{x}.clamp_max({hi})"
    ctx.set(0, x)
