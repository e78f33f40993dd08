"""Rewrites of onnxruntime's attention ops into MatMul/Softmax graphs: `Attention` (input
projection inside the op) and `MultiHeadAttention` (projected query, key and value).

Masks follow onnxruntime: a raw key mask (1 keeps, 0 masks) or an attention bias is added to
the scores, masked positions getting `mask_filter_value` (-10000 by default); `unidirectional`
adds the same value above the diagonal. Past/present key-value caches, rotary embeddings and the
packed formats are refused by name.
"""

from __future__ import annotations

import math

import numpy as np

from ._contrib import Builder, contrib


def _heads(b: Builder, x: str, n: int, perm: list[int]) -> str:
    """[B, S, n*h] -> transposed [B, n, S, h] (perm [0, 2, 1, 3]) or [B, n, h, S] ([0, 2, 3, 1])."""
    r = b.add("Reshape", [x, b.const([0, 0, n, -1], dtype="int64")])
    return b.add("Transpose", [r], perm=perm)


def _mask_add(b: Builder, mask: str, filt: float) -> str:
    """(1 - mask) * filter as a float bias broadcast over heads: [B, T] -> [B, 1, 1, T],
    [B, S, T] -> [B, 1, S, T]."""
    r = b.rank(mask)
    if r not in (2, 3):
        b.fail(f"a mask of rank {r} (only a raw [batch, keys] or [batch, queries, keys] 0/1 mask)")
    m = b.add("Cast", [mask], to=1)
    add = b.add("Mul", [b.add("Sub", [b.const(1.0), m]), b.const(filt)])
    return b.unsqueeze(add, [1, 2] if r == 2 else [1])


def attend(b: Builder, q: str, k: str, v: str, n: int, head: int, mask: str, bias: str, out: str):
    """softmax(q k^T * scale + masks) v over `n` heads of size `head`; q, k, v are [B, S, D]."""
    filt = float(b.attr("mask_filter_value", -10000.0))
    scale = float(b.attr("scale", 0.0)) or 1.0 / math.sqrt(head)
    qh = _heads(b, q, n, [0, 2, 1, 3])
    kt = _heads(b, k, n, [0, 2, 3, 1])
    vh = _heads(b, v, n, [0, 2, 1, 3])
    s = b.add("Mul", [b.add("MatMul", [qh, kt]), b.const(scale)])
    if mask:
        s = b.add("Add", [s, _mask_add(b, mask, filt)])
    if bias:
        s = b.add("Add", [s, bias])
    if b.attr("unidirectional", 0):
        if b.opset < 14:
            b.fail("unidirectional before opset 14 (Trilu)")
        sq = b.add("Shape", [s])
        last2 = b.add("Slice", [sq, b.const([-2], dtype="int64"), b.const([4], dtype="int64")])
        ones = b.add("ConstantOfShape", [last2], value=_one())
        upper = b.add("Trilu", [ones, b.const(1, dtype="int64")], upper=1)
        s = b.add("Add", [s, b.add("Mul", [upper, b.const(filt)])])
    p = b.add("Softmax", [s], axis=-1)
    ctx = b.add("Transpose", [b.add("MatMul", [p, vh])], perm=[0, 2, 1, 3])
    b.add("Reshape", [ctx, b.const([0, 0, -1], dtype="int64")], out)


def _one():
    from onnx import numpy_helper

    return numpy_helper.from_array(np.array([1.0], np.float32))


def _slice_last(b: Builder, x: str, start: int, end: int) -> str:
    return b.add(
        "Slice",
        [x, b.const([start], dtype="int64"), b.const([end], dtype="int64"), b.const([-1], dtype="int64")],
    )


@contrib("Attention")
def attention(b: Builder) -> None:
    """input [B, S, H_in] @ weights [H_in, Hq + Hk + Hv] (+ bias) split into q, k, v; then
    multi-head attention with `num_heads`; output [B, S, Hv]."""
    b.refuse_outputs(1)
    for i, what in ((4, "past"), (6, "past_sequence_length")):
        if b.inp(i):
            b.fail(f"input {i} ({what}: a key-value cache) is not supported")
    b.refuse_attrs(do_rotary=(0,), past_present_share_buffer=(0,))
    n = int(b.attr("num_heads", 0))
    if n <= 0:
        b.fail("num_heads must be given and positive")
    sizes = list(b.attr("qkv_hidden_sizes", []))
    if not sizes:
        width = b.dim(b.inp(1), -1)
        if width is None or width % 3:
            b.fail("the weights' width is unknown or not 3 equal parts; give qkv_hidden_sizes")
        sizes = [width // 3] * 3
    if len(sizes) != 3 or sizes[0] != sizes[1] or any(s <= 0 or s % n for s in sizes):
        b.fail(
            f"qkv_hidden_sizes {sizes}: positive, query and key sizes equal, each divisible by "
            f"{n} heads"
        )
    qkv = b.add("MatMul", [b.inp(0), b.inp(1)])
    if b.inp(2):
        qkv = b.add("Add", [qkv, b.inp(2)])
    q = _slice_last(b, qkv, 0, sizes[0])
    k = _slice_last(b, qkv, sizes[0], sizes[0] + sizes[1])
    v = _slice_last(b, qkv, sizes[0] + sizes[1], sum(sizes))
    attend(b, q, k, v, n, sizes[0] // n, b.inp(3), b.inp(5), b.out(0))


@contrib("MultiHeadAttention")
def multi_head_attention(b: Builder) -> None:
    """query [B, S, D], key [B, L, D], value [B, L, Dv] (+ bias [D + D + Dv]), `num_heads`."""
    b.refuse_outputs(1, 2, 3)
    for i, what in ((6, "past_key"), (7, "past_value")):
        if b.inp(i):
            b.fail(f"input {i} ({what}: a key-value cache) is not supported")
    n = int(b.attr("num_heads", 0))
    if n <= 0:
        b.fail("num_heads must be given and positive")
    if not b.inp(1) or not b.inp(2):
        b.fail("packed query/key/value (no separate key and value inputs) is not supported")
    for i in range(3):
        if b.rank(b.inp(i)) != 3:
            b.fail(f"input {i} has rank {b.rank(b.inp(i))}; only [batch, sequence, hidden] (3)")
    d = b.dim(b.inp(0), -1)
    bias = b.consts.get(b.inp(3)) if b.inp(3) else None
    if d is None and bias is not None and bias.size % 3 == 0:
        d = bias.size // 3
    if d is None or d % n:
        b.fail(f"the query's hidden size ({d}) is unknown or does not divide by {n} heads")
    q, k, v = b.inp(0), b.inp(1), b.inp(2)
    if b.inp(3):
        dv = b.dim(v, -1) or d
        q = b.add("Add", [q, _slice_last(b, b.inp(3), 0, d)])
        k = b.add("Add", [k, _slice_last(b, b.inp(3), d, 2 * d)])
        v = b.add("Add", [v, _slice_last(b, b.inp(3), 2 * d, 2 * d + dv)])
    attend(b, q, k, v, n, d // n, b.inp(4), b.inp(5), b.out(0))
