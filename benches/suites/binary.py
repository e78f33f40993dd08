"""Elementwise binary ops on float32 tensors, same shape and broadcast."""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite, Target
from ._common import gpu_sizes, inputs, rand, shape_name


def build(ctx: dict, quick: bool) -> list[Case]:
    shape = (8, 8) if quick else (1024, 1024)
    row = (1, shape[1])
    (a, na, ta), (b, nb, tb), (r, nr, tr) = inputs(
        ctx, rand(shape, 1), rand(shape, 2, 0.5, 2.0), rand(row, 3, 0.5, 2.0)
    )
    T = ta is not None
    sn = shape_name(shape)
    cases = []
    for op, fb, fn, ft in (
        ("add", lambda: a + b, lambda: na + nb, lambda: ta + tb),
        ("sub", lambda: a - b, lambda: na - nb, lambda: ta - tb),
        ("mul", lambda: a * b, lambda: na * nb, lambda: ta * tb),
        ("div", lambda: a / b, lambda: na / nb, lambda: ta / tb),
        ("add_broadcast", lambda: a + r, lambda: na + nr, lambda: ta + tr),
        ("mul_scalar", lambda: a * 1.5, lambda: na * np.float32(1.5), lambda: ta * 1.5),
        ("powf", lambda: b.powf(a), lambda: np.power(nb, na), lambda: tb.pow(ta)),
    ):
        other = (
            list(row) if op == "add_broadcast" else "scalar" if op == "mul_scalar" else list(shape)
        )
        cases.append(
            Case(
                f"{op} {sn}",
                {"op": op, "shape": list(shape), "other": other},
                {"burn": fb, "numpy": fn, "torch": ft if T else None},
            )
        )
    if gpu_sizes(ctx):
        cases.append(big_add(ctx, quick))
    return cases


BIG_ADD = "add 2^26"


def big_add(ctx: dict, quick: bool) -> Case:
    """a + b on 2^26 float32 elements (256 MiB each): memory bandwidth, reported in GB/s
    (3 x 4 bytes moved per element: two reads, one write)."""
    n = 2**12 if quick else 2**26
    (a, na, ta), (b, nb, tb) = inputs(ctx, rand(n, 1), rand(n, 2))
    return Case(
        BIG_ADD,
        {"op": "add", "shape": [n], "bytes": 3 * 4 * n},
        {
            "burn": lambda: a + b,
            "numpy": lambda: na + nb,
            "torch": None if ta is None else (lambda: ta + tb),
        },
    )


SUITE = Suite(
    "binary",
    "elementwise binary ops, float32",
    build,
    gpu_targets=[
        Target("add on 2^26 float32 >= 80% of torch's bandwidth", "burn/torch", 1.25, [BIG_ADD])
    ],
)
