"""Attention ops (ONNX Attention, RotaryEmbedding)."""

from __future__ import annotations

from ._registry import op
from ._types import FLOATS


@op(
    "Attention",
    attrs=(
        "is_causal",
        "kv_num_heads",
        "q_num_heads",
        "qk_matmul_output_mode",
        "scale",
        "softcap",
        "softmax_precision",
        "left_window_size",
        "right_window_size",
    ),
    since=23,
)
def attention(ctx):
    if ctx.elem(0) not in FLOATS:
        ctx.fail("only float inputs are supported")
    args = [ctx.x(i) if ctx.has(i) else "None" for i in range(3)]
    for i in range(3, 7):
        args.append(ctx.x(i) if ctx.has(i) else "None")
    sp = ctx.attr("softmax_precision")
    kw = {
        "scale": ctx.attr("scale"),
        "is_causal": bool(ctx.attr("is_causal", 0)),
        "q_heads": ctx.attr("q_num_heads"),
        "kv_heads": ctx.attr("kv_num_heads"),
        "softcap": ctx.attr("softcap", 0.0),
        "mode": ctx.attr("qk_matmul_output_mode", 0),
        "lw": ctx.attr("left_window_size", -1),
        "rw": ctx.attr("right_window_size", -1),
    }
    kws = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    if sp is not None:
        kws += f", softmax_dtype={ctx.dtype(sp)}"
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(4))
    ctx.emit(f"{outs} = ops.attention({', '.join(args)}, {kws})")


@op("RotaryEmbedding", attrs=("interleaved", "num_heads", "rotary_embedding_dim"), since=23)
def rotary(ctx):
    pos = ctx.x(3) if ctx.has(3) else "None"
    il = bool(ctx.attr("interleaved", 0))
    nh = ctx.attr("num_heads")
    rd = ctx.attr("rotary_embedding_dim", 0)
    ctx.set(0, f"ops.rotary_embedding({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {pos}, {il}, {nh}, {rd})")
