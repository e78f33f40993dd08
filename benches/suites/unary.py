"""Elementwise unary float ops on float32 tensors."""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite
from ._common import inputs, op_cases, rand


def build(ctx: dict, quick: bool) -> list[Case]:
    shape = (8, 8) if quick else (1024, 1024)
    (a, na, ta), (p, np_, tp) = inputs(ctx, rand(shape, 1), rand(shape, 2, 0.1, 2.0))
    T = ta is not None
    ops = (
        ("exp", lambda: a.exp(), lambda: np.exp(na), lambda: ta.exp()),
        ("log", lambda: p.log(), lambda: np.log(np_), lambda: tp.log()),
        ("sqrt", lambda: p.sqrt(), lambda: np.sqrt(np_), lambda: tp.sqrt()),
        ("tanh", lambda: a.tanh(), lambda: np.tanh(na), lambda: ta.tanh()),
        ("sin", lambda: a.sin(), lambda: np.sin(na), lambda: ta.sin()),
        ("abs", lambda: a.abs(), lambda: np.abs(na), lambda: ta.abs()),
        ("neg", lambda: a.neg(), lambda: np.negative(na), lambda: ta.neg()),
        ("recip", lambda: p.recip(), lambda: np.reciprocal(np_), lambda: tp.reciprocal()),
        ("erf", lambda: a.erf(), None, lambda: ta.erf()),  # numpy has no erf
    )
    return op_cases(ops, shape, T)


SUITE = Suite("unary", "elementwise unary float ops, float32", build)
