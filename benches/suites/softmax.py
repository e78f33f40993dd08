"""Softmax along the last dim, float32."""

from __future__ import annotations

import numpy as np
from burn_tensor import activation

from .._harness import Case, Suite
from ._common import inputs, rand, shape_name


def numpy_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def build(ctx: dict, quick: bool) -> list[Case]:
    shapes = ((4, 8), (2, 4, 8)) if quick else ((64, 1000), (1024, 1024), (32, 8, 128, 128))
    torch = ctx.get("torch")
    cases = []
    for shape in shapes:
        ((x, nx, tx),) = inputs(ctx, rand(shape, 1, -4.0, 4.0))
        ft = None
        if torch is not None:
            ft = lambda tx=tx: torch.softmax(tx, -1)
        cases.append(
            Case(
                f"{shape_name(shape)} dim -1",
                {"shape": list(shape), "dim": -1},
                {
                    "burn": lambda x=x: activation.softmax(x, -1),
                    "numpy": lambda nx=nx: numpy_softmax(nx, -1),
                    "torch": ft,
                },
            )
        )
    return cases


SUITE = Suite("softmax", "softmax along the last dim, float32", build)
