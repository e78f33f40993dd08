"""ONNX RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts) as one backend op
per layer (`burn_tensor.module.rnn_sequence`: NdArray loops over the steps in C), and Einsum."""

from __future__ import annotations

import numpy as np
from burn_tensor import Tensor
from burn_tensor.module import rnn_sequence


def rnn(
    kind,
    x,
    w,
    r,
    b=None,
    h0=None,
    c0=None,
    p=None,
    *,
    direction="forward",
    hidden=None,
    activations=None,
    clip=None,
    layout=0,
    linear_before_reset=0,
    input_forget=0,
    seq_lens=None,
):
    """Returns (Y, Y_h, Y_c); Y_c is None except for LSTM.

    `seq_lens` (a run-time sequence_lens) must give every batch entry the whole sequence.
    """
    if layout:
        x = x.swap_dims(0, 1)
    seq = x.dims()[0]
    if seq_lens is not None:
        lens = np.asarray(seq_lens.numpy()).reshape(-1)
        if (lens != seq).any():
            raise ValueError(f"{kind}: sequence_lens {lens.tolist()} shorter than {seq} steps")
    if h0 is not None and layout:
        h0 = h0.swap_dims(0, 1)
    if c0 is not None and layout:
        c0 = c0.swap_dims(0, 1)
    y, yh, yc = rnn_sequence(
        kind, x, w, r, b, h0, c0 if kind == "LSTM" else None, p if kind == "LSTM" else None,
        direction=direction, activations=activations, clip=clip,
        linear_before_reset=linear_before_reset, input_forget=input_forget,
    )  # fmt: skip
    if layout:
        y = y.permute([2, 0, 1, 3])
        yh = yh.swap_dims(0, 1)
        yc = None if yc is None else yc.swap_dims(0, 1)
    return y, yh, yc


def einsum(eq: str, xs, ranks):
    """Einsum by broadcasting every operand over all letters, multiplying, and summing.

    Repeated letters in one operand (diagonals) are taken with a gather first.
    """
    lhs, _, out = eq.partition("->")
    terms = lhs.split(",")
    if not _:
        letters = sorted({c for t in terms for c in t})
        out = "".join(c for c in letters if sum(t.count(c) for t in terms) == 1)
    letters = []
    for t in terms + [out]:
        for c in t:
            if c not in letters:
                letters.append(c)
    sizes = {}
    prod = None
    for t, x, r in zip(terms, xs, ranks):
        if r == 0:
            t = ""
        x, t = _diagonal(x, t)
        for c, d in zip(t, x.dims()):
            sizes[c] = max(sizes.get(c, 1), d)
        perm = sorted(range(len(t)), key=lambda i: letters.index(t[i]))
        if len(t) > 1:
            x = x.permute(perm)
        ts = "".join(t[i] for i in perm)
        shape = [x.dims()[ts.index(c)] if c in ts else 1 for c in letters]
        x = x.reshape(shape) if ts else x.reshape([1] * len(letters))
        prod = x if prod is None else prod * x
    for i in range(len(letters) - 1, -1, -1):
        if letters[i] not in out:
            prod = prod.sum_dim(i)
    keep = [c for c in letters if c in out]
    dims = prod.dims()
    shape = [dims[letters.index(c)] for c in keep]
    y = prod.reshape(shape or [1])
    if len(keep) > 1:
        y = y.permute([keep.index(c) for c in out])
    return y


def _diagonal(x, t):
    while len(set(t)) < len(t):
        c = next(ch for ch in t if t.count(ch) > 1)
        i, j = t.index(c), t.index(c, t.index(c) + 1)
        n = x.dims()[i]
        x = x.swap_dims(j, len(t) - 1) if j != len(t) - 1 else x
        t2 = list(t)
        t2[j], t2[-1] = t2[-1], t2[j]
        # take x[..., k (at i), ..., k (last)] for every k
        x = x.movedim(i, len(t) - 2) if i != len(t) - 2 else x
        t3 = t2[:i] + t2[i + 1 : -1] + [t2[i]] + [t2[-1]]
        x = x * Tensor.eye(n, x.device).cast(x.dtype).reshape([1] * (len(t) - 2) + [n, n])
        x = x.sum_dim(len(t) - 1).squeeze_dim(len(t) - 1)
        t = "".join(t3[:-1])
    return x, t
