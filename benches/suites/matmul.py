"""Square float32 matrix products, 64 .. 2048."""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import inputs, rand


def build(ctx: dict, quick: bool) -> list[Case]:
    sizes = (8, 16) if quick else (64, 128, 256, 512, 1024, 2048)
    cases = []
    for n in sizes:
        (a, na, ta), (b, nb, tb) = inputs(ctx, rand((n, n), 1), rand((n, n), 2))
        cases.append(
            Case(
                f"{n}x{n}",
                {"m": n, "k": n, "n": n},
                {
                    "burn": lambda a=a, b=b: a @ b,
                    "numpy": lambda na=na, nb=nb: na @ nb,
                    "torch": None if ta is None else (lambda ta=ta, tb=tb: ta @ tb),
                },
            )
        )
    return cases


SUITE = Suite(
    "matmul",
    "square float32 matmul [n, n] @ [n, n]",
    build,
    [Target("matmul 1024^2 within 10% of raw numpy", "burn/numpy", 1.10, ["1024x1024"])],
)
