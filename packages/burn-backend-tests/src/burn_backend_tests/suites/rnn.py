"""Conformance: `rnn_sequence` (a whole ONNX RNN / GRU / LSTM layer, through
`burn_tensor.module.rnn_sequence`) against a float64 numpy reference that spells out ONNX's
formulas step by step: forward, reverse and bidirectional; every activation; clip;
linear_before_reset (GRU); input_forget and peepholes (LSTM); given and zero initial states;
batch 1 and 3; hidden sizes that are and are not multiples of a vector; strided inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import DType, TensorCheckError, Tolerance, module

from .._ctx import sample

_G = {"RNN": 1, "GRU": 3, "LSTM": 4}
_ACT = {
    "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": np.tanh,
    "relu": lambda v: np.maximum(v, 0.0),
}
_DEF = {"RNN": ["tanh"], "GRU": ["sigmoid", "tanh"], "LSTM": ["sigmoid", "tanh", "tanh"]}


def random_layer(kind, seq, batch, n_in, hs, direction, peep=False, seed=0, w_scale=None):
    """Seeded float32 inputs of one layer, {"x", "w", "r", "b", "h0", "c0", "p"} (c0 for LSTM,
    p with peepholes, else None): x [seq, batch, n_in], W [dirs, g * hs, n_in] and R
    [dirs, g * hs, hs] scaled by `w_scale` (default 1 / sqrt(hs): pre-activations of order 1
    at every hidden size), biases and states of scale 0.5. For backends' kernel tests."""
    rng = np.random.default_rng(seed)
    dirs, g = 2 if direction == "bidirectional" else 1, _G[kind]
    ws = 1 / np.sqrt(hs) if w_scale is None else w_scale
    a = {
        "x": rng.standard_normal((seq, batch, n_in)),
        "w": rng.standard_normal((dirs, g * hs, n_in)) * ws,
        "r": rng.standard_normal((dirs, g * hs, hs)) / np.sqrt(hs),
        "b": rng.standard_normal((dirs, 2 * g * hs)) * 0.5,
        "h0": rng.standard_normal((dirs, batch, hs)) * 0.5,
        "c0": rng.standard_normal((dirs, batch, hs)) * 0.5 if kind == "LSTM" else None,
        "p": rng.standard_normal((dirs, 3 * hs)) * 0.5 if peep else None,
    }
    return {k: None if v is None else v.astype(np.float32) for k, v in a.items()}


def reference(kind, x, w, r, b, h0, c0, p, direction, acts, clip, lbr, input_forget):
    """ONNX's RNN / GRU / LSTM equations in float64, one step at a time."""
    seq, batch, _ = x.shape
    dirs, _gh, hs = r.shape
    acts = acts or _DEF[kind] * dirs
    per = len(_DEF[kind])
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip, clip))
    y = np.zeros((seq, dirs, batch, hs))
    yh, yc = np.zeros((dirs, batch, hs)), np.zeros((dirs, batch, hs))
    for d in range(dirs):
        f = [_ACT[a] for a in acts[d * per : (d + 1) * per]]
        g = _G[kind]
        wb, rb = (b[d, : g * hs], b[d, g * hs :]) if b is not None else (0 * w[d, :, 0], 0 * w[d, :, 0])
        h = h0[d].copy() if h0 is not None else np.zeros((batch, hs))
        c = c0[d].copy() if c0 is not None else np.zeros((batch, hs))
        steps = range(seq - 1, -1, -1) if direction == "reverse" or d == 1 else range(seq)
        for t in steps:
            xt = x[t]
            if kind == "RNN":
                h = f[0](cl(xt @ w[d].T + h @ r[d].T + wb + rb))
            elif kind == "GRU":
                W, R = np.split(w[d], 3), np.split(r[d], 3)
                Wb, Rb = np.split(wb, 3), np.split(rb, 3)
                z = f[0](cl(xt @ W[0].T + h @ R[0].T + Wb[0] + Rb[0]))
                rr = f[0](cl(xt @ W[1].T + h @ R[1].T + Wb[1] + Rb[1]))
                if lbr:
                    hh = f[1](cl(xt @ W[2].T + rr * (h @ R[2].T + Rb[2]) + Wb[2]))
                else:
                    hh = f[1](cl(xt @ W[2].T + (rr * h) @ R[2].T + Rb[2] + Wb[2]))
                h = (1 - z) * hh + z * h
            else:
                W, R = np.split(w[d], 4), np.split(r[d], 4)
                Wb, Rb = np.split(wb, 4), np.split(rb, 4)
                P = np.split(p[d], 3) if p is not None else [0.0, 0.0, 0.0]
                pre = [xt @ W[k].T + h @ R[k].T + Wb[k] + Rb[k] for k in range(4)]
                i = f[0](cl(pre[0] + P[0] * c))
                fg = 1 - i if input_forget else f[0](cl(pre[2] + P[2] * c))
                c = fg * c + i * f[1](cl(pre[3]))
                o = f[0](cl(pre[1] + P[1] * c))
                h = o * f[2](c)
            y[t, d] = h
        yh[d], yc[d] = h, c
    return y, yh, yc


# (id, kind, seq, batch, in, hidden, direction, activations, clip, lbr, input_forget, given)
# given: which of b, h0, c0, p are passed
CASES = [
    ("rnn_fwd", "RNN", 5, 2, 3, 4, "forward", None, None, 0, 0, "b h0"),
    ("rnn_rev_relu", "RNN", 4, 1, 3, 5, "reverse", ["relu"], None, 0, 0, "b"),
    ("gru_bi", "GRU", 6, 3, 4, 5, "bidirectional", None, None, 0, 0, "b h0"),
    ("gru_lbr_clip", "GRU", 5, 2, 3, 4, "forward", None, 0.5, 1, 0, "b"),
    ("gru_no_bias", "GRU", 4, 1, 3, 20, "reverse", ["tanh", "relu"], None, 0, 0, ""),
    ("gru_wide_lbr", "GRU", 3, 1, 5, 48, "bidirectional", None, None, 1, 0, "b"),
    ("lstm_fwd", "LSTM", 6, 2, 3, 4, "forward", None, None, 0, 0, "b h0 c0"),
    ("lstm_peep_clip", "LSTM", 5, 3, 4, 5, "bidirectional", None, 0.7, 0, 0, "b h0 c0 p"),
    ("lstm_input_forget", "LSTM", 4, 1, 3, 6, "reverse", ["relu", "tanh", "sigmoid"], None, 0, 1, "b p"),
    ("lstm_wide", "LSTM", 7, 1, 9, 64, "forward", None, None, 0, 0, "b"),
    ("lstm_one_step", "LSTM", 1, 2, 3, 3, "forward", None, None, 0, 0, ""),
    ("lstm_no_steps", "LSTM", 0, 2, 3, 4, "forward", None, None, 0, 0, "b h0 c0"),
]


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_rnn_sequence(burn, cid):
    kind, seq, batch, n_in, hs, direction, acts, clip, lbr, inf, given = next(
        c[1:] for c in CASES if c[0] == cid
    )
    dirs = 2 if direction == "bidirectional" else 1
    g = _G[kind]
    if acts is not None:
        acts = acts * dirs
    shapes = {
        "x": (seq, batch, n_in), "w": (dirs, g * hs, n_in), "r": (dirs, g * hs, hs),
        "b": (dirs, 2 * g * hs), "h0": (dirs, batch, hs), "c0": (dirs, batch, hs), "p": (dirs, 3 * hs),
    }  # fmt: skip
    names = ["x", "w", "r"] + [n for n in ("b", "h0", "c0", "p") if n in given.split()]
    ts, vals = {}, {}
    for k, name in enumerate(names):
        layout = "strided" if name in ("x", "r") else "contiguous"
        ts[name], vals[name] = burn.view_input(sample(shapes[name], "unit", 40 + k), layout=layout)
    get = lambda d, n: d.get(n)  # noqa: E731
    y, yh, yc = module.rnn_sequence(
        kind, ts["x"], ts["w"], ts["r"], *(get(ts, n) for n in ("b", "h0", "c0", "p")),
        direction=direction, activations=acts, clip=clip, linear_before_reset=lbr,
        input_forget=inf,
    )  # fmt: skip
    want = reference(
        kind, vals["x"], vals["w"], vals["r"], *(get(vals, n) for n in ("b", "h0", "c0", "p")),
        direction, acts, clip, lbr, inf,
    )  # fmt: skip
    # half dtypes round every step's state: errors compound over the steps
    rel, ab = {DType.F16: (3e-2, 1e-2), DType.BF16: (6e-2, 3e-2)}.get(burn.fdt, (1e-4, 1e-5))
    tol = Tolerance.rel_abs(rel, ab)
    burn.assert_close(y, want[0], tol)
    burn.assert_close(yh, want[1], tol)
    if kind == "LSTM":
        burn.assert_close(yc, want[2], tol)
    else:
        assert yc is None


def test_rnn_sequence_checks(burn):
    x = burn.float(sample((3, 1, 2), "unit", 1))
    w = burn.float(sample((1, 4, 2), "unit", 2))
    r = burn.float(sample((1, 4, 4), "unit", 3))
    with pytest.raises(TensorCheckError, match="r must be"):
        module.rnn_sequence("GRU", x, w, r)  # GRU wants [1, 12, 4]
    with pytest.raises(TensorCheckError, match="kind must be"):
        module.rnn_sequence("LSTMX", x, w, r)
    with pytest.raises(TensorCheckError, match="activations"):
        module.rnn_sequence("RNN", x, w, r, activations=["softplus"])
