"""`burn_tensor.module.attention`: the user entry of the `attention` backend op (Burn's
`burn::tensor::module::attention`), with its argument checks."""

from __future__ import annotations

import math
import numbers

from . import _check as check
from ._attention_dropout import seed_words
from ._dtype import Bool, Float
from ._errors import TensorCheckError


def _shape_problems(q, k, v, mask) -> list[str]:
    qs, ks, vs = q._p.shape, k._p.shape, v._p.shape
    problems = []
    for name, s in (("query", qs), ("key", ks), ("value", vs)):
        if len(s) != 4:
            problems.append(f"{name} must be rank 4 [batch, heads, seq, dim], got {list(s)}")
    if problems:
        return problems
    if ks[:2] != qs[:2] or vs[:2] != qs[:2]:
        problems.append(
            f"batch and heads must match: query {list(qs)}, key {list(ks)}, value {list(vs)}"
        )
    if ks[3] != qs[3]:
        problems.append(f"key head_dim {ks[3]} != query head_dim {qs[3]}")
    if vs[2] != ks[2]:
        problems.append(f"value seq_k {vs[2]} != key seq_k {ks[2]}")
    if mask is not None:
        ms = mask._p.shape
        full = (qs[0], qs[1], qs[2], ks[2])
        if len(ms) != 4 or any(m not in (1, f) for m, f in zip(ms, full)):
            problems.append(
                f"mask {list(ms)} must be [batch, heads, seq_q, seq_k] = {list(full)} "
                "(or 1 in any dim, broadcast)"
            )
    return problems


def _fast_args(q, k, v, mask, causal, scale, dropout):
    """The backend op's arguments when the call is the common valid one (no mask, Float q/k/v
    of one dtype on one device, consistent non-empty shapes, a bool `causal`, a float `scale`
    or None, a float `dropout` in [0, 1)), read with attribute lookups alone; None otherwise,
    and `attention`'s checks then name what is wrong (issue 35: the host cost per op)."""
    o, d = q._o, q._d
    qp, kp, vp = q._p, k._p, v._p
    if (
        mask is not None
        or o.kind is not Float
        or k._o is not o
        or v._o is not o
        or k._d is not d
        or v._d is not d
        or type(causal) is not bool
        or type(dropout) is not float
        or not 0.0 <= dropout < 1.0
        or kp.dtype != qp.dtype
        or vp.dtype != qp.dtype
    ):
        return None
    qs, ks, vs = qp.shape, kp.shape, vp.shape
    if len(qs) != 4 or len(ks) != 4 or len(vs) != 4:
        return None
    b, h, sq, e = qs
    if ks[0] != b or ks[1] != h or vs[0] != b or vs[1] != h or ks[3] != e or vs[2] != ks[2]:
        return None
    if 0 in (b, h, sq, e, vs[3]) or ks[2] == 0:
        return None
    if scale is None:
        scale = 1.0 / math.sqrt(e)
    elif type(scale) is not float or not math.isfinite(scale):
        return None
    args = (qp, kp, vp, None, causal, scale)
    if dropout > 0:  # the seed words: a random draw, so a captured step replays it anew
        args += (dropout, seed_words(d))
    return args


def attention(
    query, key, value, mask=None, causal: bool = False, scale: float | None = None, *,
    dropout: float = 0.0,
):
    """Scaled dot-product attention: softmax(query @ keyᵗ * scale) @ value, one backend op.

    Args:
        query: Float [batch, heads, seq_q, head_dim].
        key: Float [batch, heads, seq_k, head_dim].
        value: Float [batch, heads, seq_k, val_dim].
        mask: Bool [batch, heads, seq_q, seq_k] (any dim may be 1: broadcast); True = masked
            out (the score is -inf before the softmax), as Burn.
        causal: leave out key j for query i when j > i + (seq_k - seq_q) (the boundary at the
            bottom-right corner, so queries that continue cached keys see every earlier key).
        scale: multiplies the scores; default 1 / sqrt(head_dim).
        dropout: probability in [0, 1) of dropping each attention weight (keyword only; an
            addition to Burn's signature): out = (softmax(scores) * keep / (1 - dropout)) @ V,
            as torch's SDPA. The keep mask is a hash of (seed, batch, head, row, column) with a
            seed drawn from the device's generator per call (`device.seed(s)` repeats it); the
            backward regenerates it (nothing [seq_q, seq_k] is stored).

    Returns:
        Float [batch, heads, seq_q, val_dim]. A query whose keys are all masked gets zeros.

    Example:
        >>> from burn_tensor import Tensor, module
        >>> q = Tensor.ones([1, 2, 3, 4]); kv = Tensor.ones([1, 2, 5, 4])
        >>> module.attention(q, kv, kv, causal=True).dims()
        [1, 2, 3, 4]
    """
    fast = _fast_args(query, key, value, mask, causal, scale, dropout)
    if fast is not None:
        return query._like(query._d.backend.attention(*fast))
    op = "attention"
    for t in (query, key, value):
        check.float_(op, t)
    problems = _shape_problems(query, key, value, mask)
    for name, t in (("key", key), ("value", value), ("mask", mask)):
        if t is not None and t._d is not query._d:
            problems.append(check.device_mismatch(query, t, ("query", name)))
    if mask is not None and mask._o.kind is not Bool:
        problems.append(f"mask must be a Bool tensor, got {mask._o.kind.value}")
    if not isinstance(causal, bool):
        problems.append(f"causal must be a bool, got {causal!r}")
    if scale is not None and (
        isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale)
    ):
        problems.append(f"scale must be a finite number or None, got {scale!r}")
    if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
        problems.append(f"dropout must be a probability in [0, 1), got {dropout!r}")
    for t in (key, value):
        if not problems and t.dtype is not query.dtype:
            problems.append(f"dtypes differ: query {query.dtype.value}, got {t.dtype.value}")
    if problems:
        raise TensorCheckError(op, problems)
    b, h, sq, d = query._p.shape
    sk, dv = key._p.shape[2], value._p.shape[3]
    if scale is None:
        if d == 0:
            raise TensorCheckError(op, "head_dim is 0: give a scale (1/sqrt(0) is undefined)")
        scale = 1.0 / math.sqrt(d)
    if 0 in (b, h, sq, dv) or sk == 0:
        # Nothing to attend to: every query's keys are "all masked", whose result is 0.
        from ._tensor import Tensor

        return Tensor.zeros([b, h, sq, dv], query._d, Float, query.dtype)
    mp = None if mask is None else mask._p
    backend = query._d.backend
    args = (query._p, key._p, value._p, mp, causal, float(scale))
    if dropout > 0:  # the seed words: a random draw, so a captured step replays it anew
        args += (float(dropout), seed_words(query._d))
    return query._like(backend.attention(*args))
