"""`burn_tensor.module.rnn_sequence`: a whole ONNX RNN / GRU / LSTM layer as one backend op
(`rnn_sequence`, `_ops_rnn.py` has its shapes and semantics)."""

from __future__ import annotations

from . import _check as check
from ._errors import TensorCheckError
from ._ops_rnn import ACTS, DEFAULT_ACTS, GATES

_DIRECTIONS = ("forward", "reverse", "bidirectional")


def rnn_sequence(
    kind, x, w, r, b=None, h0=None, c0=None, p=None, *, direction="forward", activations=None,
    clip=None, linear_before_reset=0, input_forget=0,
):  # fmt: skip
    """Run every step of an ONNX `kind` ("RNN", "GRU", "LSTM") layer: (y, y_h, y_c).

    Shapes: x [seq, batch, in], w [dirs, G*H, in], r [dirs, G*H, H], b [dirs, 2*G*H],
    h0 / c0 [dirs, batch, H], p [dirs, 3H] -> y [seq, dirs, batch, H], y_h, y_c [dirs, batch, H]
    (y_c None except for LSTM). G: RNN 1, GRU 3, LSTM 4; dirs 2 for "bidirectional".

    Example:
        >>> y, yh, yc = rnn_sequence("LSTM", x, w, r, b)  # doctest: +SKIP
    """
    problems = []
    if kind not in GATES:
        raise TensorCheckError("rnn_sequence", f"kind must be RNN, GRU or LSTM, got {kind!r}")
    if direction not in _DIRECTIONS:
        problems.append(f"direction must be one of {_DIRECTIONS}, got {direction!r}")
    check.float_("rnn_sequence", x)
    dirs = 2 if direction == "bidirectional" else 1
    acts = tuple(a.lower() for a in (activations or DEFAULT_ACTS[kind] * dirs))
    if len(acts) != len(DEFAULT_ACTS[kind]) * dirs or any(a not in ACTS for a in acts):
        problems.append(
            f"activations must be {len(DEFAULT_ACTS[kind]) * dirs} of {ACTS}, got {list(acts)}"
        )
    xs = tuple(x._p.shape)
    g = GATES[kind]
    hs = r._p.shape[-1] if len(r._p.shape) == 3 else None
    if len(xs) != 3:
        problems.append(f"x must be [seq, batch, in], got {list(xs)}")
    elif hs is None:
        problems.append(f"r must be [dirs, G*H, H], got {r.dims()}")
    else:
        seq, batch, n_in = xs
        want = {
            "w": (w, (dirs, g * hs, n_in)), "r": (r, (dirs, g * hs, hs)),
            "b": (b, (dirs, 2 * g * hs)), "h0": (h0, (dirs, batch, hs)),
            "c0": (c0, (dirs, batch, hs)), "p": (p, (dirs, 3 * hs)),
        }  # fmt: skip
        for name, (t, shape) in want.items():
            if t is None:
                continue
            if name in ("c0", "p") and kind != "LSTM":
                problems.append(f"{name} is an LSTM input, given to {kind}")
            elif tuple(t._p.shape) != shape:
                problems.append(f"{name} must be {list(shape)}, got {t.dims()}")
            elif t._p.dtype != x._p.dtype:  # primitives' dtypes: Tensor.dtype builds a DType
                problems.append(f"{name} has dtype {t.dtype}, x has {x.dtype}")
    if problems:
        raise TensorCheckError("rnn_sequence", problems)
    prim = [None if t is None else t._p for t in (b, h0, c0, p)]
    y, yh, yc = x._d.backend.rnn_sequence(
        x._p, w._p, r._p, *prim, kind, direction, acts, None if clip is None else float(clip),
        int(linear_before_reset), int(input_forget),
    )  # fmt: skip
    return x._like(y), x._like(yh), (None if yc is None else x._like(yc))
