"""Matrix products, the determinant and softmax-like ops."""

from __future__ import annotations

import re

from ._codegen_mha import write_attention
from ._fieldnames import node_field_hint, param_key
from ._names import label
from ._ops_elementwise import _silu_sigmoid
from ._qweights import linear_layout, qdq_matmul
from ._registry import op
from ._types import FLOATS


@op("MatMul")
def matmul(ctx):
    att = ctx.gen.attention.get(ctx.node.output[0])
    if att is not None:  # torch's MultiheadAttention starts here (`_codegen_mha`)
        write_attention(ctx, att)
        return
    ra, rb = ctx.rank(0), ctx.rank(1)
    w = ctx.const(1)
    if w is not None and rb == 2 and ra >= 2 and ctx.elem(1) == 1:
        add, bias = _bias_add(ctx, w.shape[1])
        init = f"LinearConfig({w.shape[0]}, {w.shape[1]}, bias={bias is not None}).init(device)"
        # the bias's state-dict key names the layer best (`...self_attn.in_proj_bias`)
        key = param_key(_other(add, ctx.node.output[0])) if add is not None else None
        hint = re.sub(r"[._]bias$", "", key) if key and re.search(r"[._]bias$", key) else None
        name = ctx.add_field("linear", "Linear", init, {"weight": w, "bias": bias}, hint=hint)
        if add is not None:  # named after the layer (a graph output keeps its own name)
            out = ctx.node.output[0]
            own = add.output[0] in ctx.gen.outputs
            base = add.output[0] if own else hint or node_field_hint(ctx.node, ctx.gen.initializers)
            ctx.gen.vars[out] = ctx.gen.fresh(base or add.output[0])
            ctx.gen.absorbed[add.output[0]] = out
            ctx.emit(f"# and Add {label(add.name or add.output[0])}: the Linear's bias")
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    qw = ctx.qweight(1)
    qa = ctx.gen.qacts.get(ctx.node.input[0])
    if qa is not None and qw is not None and rb == 2 and ra >= 2 and qdq_matmul(ctx, qa, qw, False, False):
        return
    if qw is not None and rb == 2 and ra >= 2 and (lay := linear_layout(qw, False)) is not None:
        _quantized_linear(ctx, qw, lay, False)
        return
    a_dims, b_dims = ctx.shape(0), ctx.shape(1)
    if ra == rb >= 2 and a_dims[:-2] == b_dims[:-2] and all(isinstance(d, int) for d in a_dims[:-2]):
        # same batch dims: burn's own matmul, no broadcasting to spell out
        ctx.set(0, f"{ctx.x(0)}.matmul({ctx.x(1)})")
        return
    ctx.set(0, f"ops.matmul({ctx.x(0)}, {ctx.x(1)}, {ra}, {rb})")


def _other(add, value: str) -> str:
    """The input of a two-input `add` that is not `value`."""
    return add.input[1] if add.input[0] == value else add.input[0]


def _bias_add(ctx, n: int):
    """(the Add node, its bias) when the MatMul's only reader adds a constant float vector of
    its `n` columns (how torch's legacy exporter writes a Linear of a 3-D input), so the
    Linear takes the bias as a person writes it; else (None, None)."""
    out = ctx.node.output[0]
    readers = ctx.gen.consumers.get(out, [])
    if len(readers) != 1 or out in ctx.gen.outputs:
        return None, None
    add = readers[0]
    if add.op_type != "Add" or add.domain not in ("", "ai.onnx") or len(add.input) != 2:
        return None, None
    other = _other(add, out)
    bias = ctx.gen.consts.get(other)
    if other == out or bias is None or bias.dtype != ctx.const(1).dtype:
        return None, None
    if bias.shape != (n,):
        return None, None
    return add, bias


def _quantized_linear(ctx, qw, lay, bias: bool) -> None:
    """A Linear whose weight is the quantized int8 weight (`_qweights.linear_layout`): its
    forward is the backend's `q_linear`; per-column scales multiply the output, then the bias."""
    data, ch = lay
    k, n = data.shape
    c = ctx.const(2) if bias else None
    rec = {"weight": data, "bias": c if ch is None else None}
    init = f"LinearConfig({k}, {n}, bias={bias and ch is None}).init(device)"
    name = ctx.add_field("linear", "Linear", init, rec)
    expr = f"self.{name}.forward({ctx.x(0)})"
    if ch is not None:
        r = ctx.out_rank(0)
        expr += f".mul({ctx.gen.materialize(qw.scale_name)}.unsqueeze({r}))"
        if bias:
            expr += f".add({ctx.x(2)}.unsqueeze({r}))"
    ctx.set(0, expr)


@op("Gemm", attrs=("alpha", "beta", "transA", "transB"))
def gemm(ctx):
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    ta, tb = ctx.attr("transA", 0), ctx.attr("transB", 0)
    w = ctx.const(1)
    qw = ctx.qweight(1) if w is None else None
    wshape = None if w is None and qw is None else (w if w is not None else qw.q).shape
    c = ctx.const(2) if ctx.has(2) else None
    linear_bias = (
        c is not None
        and c.ndim == 1
        and wshape is not None
        and len(wshape) == 2
        and c.shape[0] == (wshape[0] if tb else wshape[1])
    )
    fits = (
        alpha == 1.0 and beta == 1.0 and not ta and ctx.elem(1) == 1 and (not ctx.has(2) or linear_bias)
    )
    if w is not None and fits:
        weight = w.T if tb else w
        rec = {"weight": weight, "bias": c if ctx.has(2) else None}
        init = f"LinearConfig({weight.shape[0]}, {weight.shape[1]}, bias={ctx.has(2)}).init(device)"
        name = ctx.add_field("linear", "Linear", init, rec)
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    qa = ctx.gen.qacts.get(ctx.node.input[0])
    if qa is not None and qw is not None and fits and qdq_matmul(ctx, qa, qw, bool(tb), ctx.has(2)):
        return
    if qw is not None and fits and (lay := linear_layout(qw, bool(tb))) is not None:
        _quantized_linear(ctx, qw, lay, ctx.has(2))
        return
    cc = ctx.xr(2, 2) if ctx.has(2) else "None"
    ctx.set(0, f"ops.gemm({ctx.x(0)}, {ctx.x(1)}, {cc}, {alpha!r}, {beta!r}, {ta}, {tb})")


@op("Softmax", "LogSoftmax", "Hardmax", attrs=("axis",))
def softmax(ctx):
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    axis = ctx.axis("axis", -1, ctx.rank(0))
    fn = {
        "Softmax": "activation.softmax",
        "LogSoftmax": "activation.log_softmax",
        "Hardmax": "ops.hardmax",
    }[ctx.op_type]
    ctx.set(0, f"{fn}({ctx.x(0)}, {axis})")


ACT = {
    "Elu": ("ops.elu({x}, {alpha!r})", {"alpha": 1.0}),
    "Celu": ("ops.celu({x}, {alpha!r})", {"alpha": 1.0}),
    "Selu": (
        "ops.selu({x}, {alpha!r}, {gamma!r})",
        {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875},
    ),
    "LeakyRelu": ("activation.leaky_relu({x}, {alpha!r})", {"alpha": 0.01}),
    # the backend's hard_sigmoid op (one native pass on NdArray) and burn's hard_swish
    # (x * hard_sigmoid(x, 1/6, 1/2), ONNX's HardSwish), not a chain of scalar ops
    "HardSigmoid": (
        "activation.hard_sigmoid({x}, alpha={alpha!r}, beta={beta!r})",
        {"alpha": 0.2, "beta": 0.5},
    ),
    "HardSwish": ("activation.hard_swish({x})", {}),
    "ThresholdedRelu": ("ops.thresholded_relu({x}, {alpha!r})", {"alpha": 1.0}),
    "Shrink": ("ops.shrink({x}, {bias!r}, {lambd!r})", {"bias": 0.0, "lambd": 0.5}),
    "Gelu": ("ops.gelu({x}, {approximate!r})", {"approximate": "none"}),
    "Swish": ("{x} * activation.sigmoid({x} * {alpha!r})", {"alpha": 1.0}),
}


def _act(ctx):
    code, defaults = ACT[ctx.op_type]
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    if ctx.op_type == "HardSigmoid" and _silu_sigmoid(ctx):
        ctx.emit("# read only by x * hard_sigmoid(x) below: activation.hard_swish there")
        return
    vals = {k: ctx.attr(k, v) for k, v in defaults.items()}
    if vals.get("approximate", "none") not in ("none", "tanh"):
        ctx.fail(f"attribute 'approximate' = {vals['approximate']!r}: 'none' or 'tanh' expected")
    ctx.set(0, code.format(x=ctx.x(0), **vals))


for _name, (_code, _defaults) in ACT.items():
    op(_name, attrs=tuple(_defaults))(_act)


@op("PRelu")
def prelu(ctx):
    rank = max(ctx.rank(0), ctx.rank(1), 1)
    x, s = ctx.xr(0, rank), ctx.xr(1, rank)
    ctx.set(0, f"ops.where({x}.lower_elem(0), {x} * {s}, {x})")


@op("CumSum", "CumProd", attrs=("exclusive", "reverse"))
def cumsum(ctx):
    c = ctx.const(1)
    axis = (
        int(c.reshape(-1)[0]) % ctx.rank(0)
        if c is not None
        else (f"int(ops.scalar({ctx.x(1)})) % {ctx.rank(0)}")
    )
    ex, rev = ctx.attr("exclusive", 0), ctx.attr("reverse", 0)
    fn = "cumsum" if ctx.op_type == "CumSum" else "cumprod"
    ctx.set(0, f"ops.{fn}({ctx.x(0)}, {axis}, {bool(ex)}, {bool(rev)})")


@op("Trilu", attrs=("upper",))
def trilu(ctx):
    k = int(ctx.const(1).reshape(-1)[0]) if ctx.has(1) and ctx.const(1) is not None else None
    if ctx.has(1) and k is None:
        k = f"int(ops.scalar({ctx.x(1)}))"
    k = 0 if k is None else k
    ctx.set(0, f"ops.trilu({ctx.x(0)}, {k}, {bool(ctx.attr('upper', 1))})")


@op("Det")
def det(ctx):
    ctx.set(0, f"ops.det({ctx.x(0)})")
