"""`rnn_sequence` (a whole ONNX RNN / GRU / LSTM layer) on the native kernel of `_native/rnn.c`.

One ctypes call per layer: the kernel projects every step's input at once, then loops over the
time steps in C (one product of h with R^T and the gate math each), where the contract's default
makes about ten backend calls per step. Float32/float64 operands of one dtype; anything else keeps
the default. One thread whatever the budget (a step depends on the one before; the layers this
serves are small), so results do not depend on the thread count.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, F64

KINDS = {"RNN": 0, "GRU": 1, "LSTM": 2}
ACT_CODES = {"sigmoid": 0, "tanh": 1, "relu": 2}


def declare(lib) -> None:
    """ctypes signature of the kernels (pointers as ints; 0, or 1 when scratch is short)."""
    p, L, i, d = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_double
    for t in ("f32", "f64"):
        fn = getattr(lib, f"rnn_sequence_{t}")
        fn.argtypes = (i, p, p, p, p, p, p, p, p, p, p, L, L, L, L, i, i, p, i, d, i, i)
        fn.restype = i


def install(backend, lib, m: int, ops: dict) -> None:
    """Set `rnn_sequence` in `ops` (the contract's default stays the fallback)."""
    declare(lib)
    prev = backend.rnn_sequence
    kernels = {F32: lib.rnn_sequence_f32, F64: lib.rnn_sequence_f64}
    ops["rnn_sequence"] = _rnn(kernels, prev)


def _contiguous(t):
    return None if t is None else (t if t.flags.c_contiguous else np.ascontiguousarray(t))


def _rnn(kernels, prev):
    get = kernels.get
    codes_of: dict = {}  # activation names -> their int32 codes (kept alive for the call)

    def op(x, w, r, b, h0, c0, p, kind, direction, activations, clip, lbr, input_forget):
        dt = x.dtype
        k = get(dt)
        if k is None or any(t is not None and t.dtype != dt for t in (w, r, b, h0, c0, p)):
            return prev(x, w, r, b, h0, c0, p, kind, direction, activations, clip, lbr, input_forget)
        seq, batch, n_in = x.shape
        dirs, _gh, hs = r.shape
        ptr = _ops._ptr
        args = [_contiguous(t) for t in (x, w, r, b, h0, c0, p)]
        y = np.empty((seq, dirs, batch, hs), dt)
        yh = np.empty((dirs, batch, hs), dt)
        yc = np.empty((dirs, batch, hs), dt) if kind == "LSTM" else None
        codes = codes_of.get(activations)
        if codes is None:
            codes = codes_of[activations] = np.array([ACT_CODES[a] for a in activations], np.int32)
        status = k(
            KINDS[kind], *(None if a is None else ptr(a) for a in args), ptr(y), ptr(yh),
            None if yc is None else ptr(yc), seq, batch, n_in, hs, dirs,
            int(direction == "reverse"), ptr(codes), int(clip is not None),
            0.0 if clip is None else float(clip), int(lbr), int(input_forget),
        )  # fmt: skip
        if status:  # no scratch memory: the default's smaller steps
            return prev(x, w, r, b, h0, c0, p, kind, direction, activations, clip, lbr, input_forget)
        return y, yh, yc

    return op
