"""Reductions (ReduceX, ArgMax/ArgMin) with ONNX's axes/keepdims rules."""

from __future__ import annotations

from ._ops_shape import ints_arg
from ._registry import op
from ._types import FLOATS

REDUCE = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]
FLOAT_ONLY = {"ReduceMean", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}


@op(*REDUCE, attrs=("axes", "keepdims", "noop_with_empty_axes"))
def reduce(ctx):
    if ctx.op_type in FLOAT_ONLY and ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    rank = ctx.rank(0)
    if "axes" in ctx.attrs:
        axes = list(ctx.attr("axes"))
    elif ctx.has(1):
        axes = ints_arg(ctx, 1)
    else:
        axes = []
    keep = ctx.attr("keepdims", 1)
    noop = ctx.attr("noop_with_empty_axes", 0)
    kind = ctx.op_type[len("Reduce") :].lower()
    ctx.set(0, f"ops.reduce({ctx.x(0)}, {kind!r}, {axes}, {bool(keep)}, {rank}, {bool(noop)})")


@op("ArgMax", "ArgMin", attrs=("axis", "keepdims", "select_last_index"))
def argmax(ctx):
    rank = ctx.rank(0)
    axis = ctx.axis("axis", 0, rank)
    keep, last = ctx.attr("keepdims", 1), ctx.attr("select_last_index", 0)
    fn = ctx.op_type.lower()
    ctx.set(0, f"ops.arg_reduce({ctx.x(0)}, {fn!r}, {axis}, {bool(keep)}, {bool(last)})")
