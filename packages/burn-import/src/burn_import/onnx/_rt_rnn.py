"""ONNX RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts), unrolled in Python."""

from __future__ import annotations

import numpy as np
from burn_tensor import Tensor, activation

_ACT = {
    "sigmoid": activation.sigmoid,
    "tanh": lambda t: t.tanh(),
    "relu": activation.relu,
}
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT = {"RNN": ["tanh"], "GRU": ["sigmoid", "tanh"], "LSTM": ["sigmoid", "tanh", "tanh"]}


def _split(t: Tensor, n: int, dim: int):
    size = t.dims()[dim] // n
    return [t.narrow(dim, i * size, size) for i in range(n)]


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
    seq, batch, _ = x.dims()
    if seq_lens is not None:
        lens = np.asarray(seq_lens.numpy()).reshape(-1)
        if (lens != seq).any():
            raise ValueError(f"{kind}: sequence_lens {lens.tolist()} shorter than {seq} steps")
    dirs = 2 if direction == "bidirectional" else 1
    hsize = r.dims()[-1]
    g = _GATES[kind]
    acts = [a.lower() for a in (activations or _DEFAULT[kind] * dirs)]
    if h0 is not None and layout:
        h0 = h0.swap_dims(0, 1)
    if c0 is not None and layout:
        c0 = c0.swap_dims(0, 1)
    ys, hs, cs = [], [], []
    for d in range(dirs):
        wd, rd = w.select(0, _idx(d, x)).squeeze_dim(0), r.select(0, _idx(d, x)).squeeze_dim(0)
        if b is not None:
            bd = b.narrow(0, d, 1).squeeze_dim(0)
            wb, rb = bd.narrow(0, 0, g * hsize), bd.narrow(0, g * hsize, g * hsize)
        else:
            wb = rb = Tensor.zeros([g * hsize], x.device, dtype=x.dtype)
        h = (
            h0.narrow(0, d, 1).squeeze_dim(0)
            if h0 is not None
            else Tensor.zeros([batch, hsize], x.device, dtype=x.dtype)
        )
        c = (
            c0.narrow(0, d, 1).squeeze_dim(0)
            if c0 is not None
            else Tensor.zeros([batch, hsize], x.device, dtype=x.dtype)
        )
        pd = p.narrow(0, d, 1).squeeze_dim(0) if p is not None else None
        f = [_ACT[a] for a in acts[d * len(_DEFAULT[kind]) : (d + 1) * len(_DEFAULT[kind])]]
        reverse = direction == "reverse" or d == 1
        steps = range(seq - 1, -1, -1) if reverse else range(seq)
        out = [None] * seq
        xw = x.matmul(wd.transpose().unsqueeze(3)) + wb.unsqueeze(3)  # [seq, batch, g*H]
        for t in steps:
            xt = xw.narrow(0, t, 1).squeeze_dim(0)
            if kind == "RNN":
                h = f[0](_clip(xt + h.matmul(rd.transpose()) + rb.unsqueeze(2), clip))
            elif kind == "GRU":
                xz, xr, xh = _split(xt, 3, 1)
                rz, rr, rh = _split(rd, 3, 0)
                bz, br, bh = _split(rb, 3, 0)
                z = f[0](_clip(xz + h.matmul(rz.transpose()) + bz.unsqueeze(2), clip))
                rr_ = f[0](_clip(xr + h.matmul(rr.transpose()) + br.unsqueeze(2), clip))
                if linear_before_reset:
                    hh = xh + rr_ * (h.matmul(rh.transpose()) + bh.unsqueeze(2))
                else:
                    hh = xh + (rr_ * h).matmul(rh.transpose()) + bh.unsqueeze(2)
                hh = f[1](_clip(hh, clip))
                h = (1.0 - z) * hh + z * h
            else:
                gates = xt + h.matmul(rd.transpose()) + rb.unsqueeze(2)
                gi, go, gf, gc = _split(gates, 4, 1)
                if pd is not None:
                    pi, po, pf = _split(pd, 3, 0)
                    gi = gi + pi.unsqueeze(2) * c
                    gf = gf + pf.unsqueeze(2) * c
                i = f[0](_clip(gi, clip))
                fg = f[0](_clip(gf, clip))
                if input_forget:
                    fg = 1.0 - i
                cc = f[1](_clip(gc, clip))
                c = fg * c + i * cc
                if pd is not None:
                    go = go + po.unsqueeze(2) * c
                o = f[0](_clip(go, clip))
                h = o * f[2](c)
            out[t] = h
        ys.append(Tensor.stack(out, 0))  # [seq, batch, H]
        hs.append(h)
        cs.append(c)
    y = Tensor.stack(ys, 1)  # [seq, dirs, batch, H]
    yh, yc = Tensor.stack(hs, 0), Tensor.stack(cs, 0)
    if layout:
        y = y.permute([2, 0, 1, 3])
        yh, yc = yh.swap_dims(0, 1), yc.swap_dims(0, 1)
    return y, yh, (yc if kind == "LSTM" else None)


def _idx(d, x):
    from burn_tensor import DType

    return Tensor.from_data([d], x.device, DType.I64)


def _clip(t, clip):
    return t if clip is None else t.clamp(-clip, clip)


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
