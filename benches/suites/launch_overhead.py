"""Per-op dispatch cost: ops on 16-element float32 tensors, where the arithmetic is negligible."""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite, Target
from ._common import inputs, rand


def build(ctx: dict, quick: bool) -> list[Case]:
    (a, na, ta), (b, nb, tb), (m, nm, tm), (k, nk, tk) = inputs(
        ctx, rand(16, 1), rand(16, 2), rand((4, 4), 3), rand((4, 4), 4)
    )
    np_sum = np.sum
    has_torch = ta is not None

    def t(fn):
        return fn if has_torch else None

    return [
        Case(
            "add",
            {"shape": [16], "op": "a + b"},
            {"burn": lambda: a + b, "numpy": lambda: na + nb, "torch": t(lambda: ta + tb)},
        ),
        Case(
            "exp",
            {"shape": [16], "op": "a.exp()"},
            {"burn": lambda: a.exp(), "numpy": lambda: np.exp(na), "torch": t(lambda: ta.exp())},
        ),
        Case(
            "sum",
            {"shape": [16], "op": "a.sum()"},
            {"burn": lambda: a.sum(), "numpy": lambda: np_sum(na), "torch": t(lambda: ta.sum())},
        ),
        Case(
            "mul_scalar",
            {"shape": [16], "op": "a * 2.0"},
            {"burn": lambda: a * 2.0, "numpy": lambda: na * 2.0, "torch": t(lambda: ta * 2.0)},
        ),
        Case(
            "sum_dim",
            {"shape": [4, 4], "op": "m.sum_dim(1)"},
            {
                "burn": lambda: m.sum_dim(1),
                "numpy": lambda: nm.sum(axis=1, keepdims=True),
                "torch": t(lambda: tm.sum(1, keepdim=True)),
            },
        ),
        Case(
            "matmul",
            {"shape": [4, 4], "op": "m @ k"},
            {"burn": lambda: m @ k, "numpy": lambda: nm @ nk, "torch": t(lambda: tm @ tk)},
        ),
    ]


SUITE = Suite(
    "launch_overhead",
    "per-op latency on 16-element float32 tensors",
    build,
    [
        Target(
            "per-op latency on 16-element tensors <= 1.5x PyTorch CPU eager",
            "burn/torch",
            1.5,
            ["add", "exp", "sum"],
        )
    ],
    gpu_targets=[
        Target("per-op latency on 16 elements <= 10 us", "burn_us", 10.0, ["add", "exp", "sum"])
    ],
)
