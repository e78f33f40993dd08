"""Reductions over all elements and along one dim, float32."""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite
from ._common import inputs, op_cases, rand


def build(ctx: dict, quick: bool) -> list[Case]:
    shape = (8, 8) if quick else (1024, 1024)
    ((a, na, ta),) = inputs(ctx, rand(shape, 1))
    T = ta is not None
    ops = (
        ("sum", lambda: a.sum(), lambda: np.sum(na), lambda: ta.sum()),
        ("mean", lambda: a.mean(), lambda: np.mean(na), lambda: ta.mean()),
        ("max", lambda: a.max(), lambda: np.max(na), lambda: ta.max()),
        (
            "sum_dim 0",
            lambda: a.sum_dim(0),
            lambda: na.sum(0, keepdims=True),
            lambda: ta.sum(0, keepdim=True),
        ),
        (
            "sum_dim 1",
            lambda: a.sum_dim(1),
            lambda: na.sum(1, keepdims=True),
            lambda: ta.sum(1, keepdim=True),
        ),
        (
            "mean_dim 1",
            lambda: a.mean_dim(1),
            lambda: na.mean(1, keepdims=True),
            lambda: ta.mean(1, keepdim=True),
        ),
        (
            "max_dim 1",
            lambda: a.max_dim(1),
            lambda: na.max(1, keepdims=True),
            lambda: ta.amax(1, keepdim=True),
        ),
        (
            "argmax 1",
            lambda: a.argmax(1),
            lambda: na.argmax(1, keepdims=True),
            lambda: ta.argmax(1, keepdim=True),
        ),
    )
    return op_cases(ops, shape, T)


SUITE = Suite("reduce", "reductions, float32", build)
