"""2-D max pooling forward, float32 NCHW."""

from __future__ import annotations

import numpy as np
from burn_tensor import module as F
from numpy.lib.stride_tricks import sliding_window_view

from .._harness import Case, Suite
from ._common import inputs, rand


def numpy_max_pool2d(x: np.ndarray, k: int, s: int, p: int) -> np.ndarray:
    """Raw-numpy reference: -inf padding, strided sliding windows, max over the window."""
    if p:
        x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    win = sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    return win.max(axis=(4, 5))


def build(ctx: dict, quick: bool) -> list[Case]:
    batch, c, hw = (2, 4, 8) if quick else (32, 64, 32)
    torch = ctx.get("torch")
    ((x, nx, tx),) = inputs(ctx, rand((batch, c, hw, hw), 1))
    pool = None if torch is None else torch.nn.functional.max_pool2d
    cases = []
    for k, s, p in ((2, 2, 0), (3, 1, 1), (3, 2, 1)):
        ft = None
        if torch is not None:
            ft = lambda k=k, s=s, p=p: pool(tx, k, s, p)
        cases.append(
            Case(
                f"k{k} s{s} p{p} {batch}x{c}x{hw}x{hw}",
                {
                    "shape": [batch, c, hw, hw],
                    "kernel": [k, k],
                    "stride": [s, s],
                    "padding": [p, p],
                },
                {
                    "burn": lambda k=k, s=s, p=p: F.max_pool2d(x, [k, k], [s, s], [p, p]),
                    "numpy": lambda k=k, s=s, p=p: numpy_max_pool2d(nx, k, s, p),
                    "torch": ft,
                },
            )
        )
    return cases


SUITE = Suite("max_pool2d", "max_pool2d forward, float32", build)
