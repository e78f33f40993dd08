"""Square float32 matrix products, 64 .. 2048."""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import bf16_inputs, gpu_sizes, inputs, not_implemented, rand


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
    if gpu_sizes(ctx):
        cases += gpu_cases(ctx, quick)
    return cases


F32_BIG, BF16_BIG = "4096x4096", "bf16 8192x8192"


def gpu_cases(ctx: dict, quick: bool) -> list[Case]:
    """float32 4096^2 (TF32 as the run's setting, equal on both sides) and bfloat16 8192^2
    (tensor cores), in TFLOP/s (2 n^3 operations). No numpy side: it would take seconds."""
    n = 64 if quick else 4096
    (a, _, ta), (b, _, tb) = inputs(ctx, rand((n, n), 1), rand((n, n), 2))
    f32 = Case(
        F32_BIG if not quick else f"{n}x{n} gpu",
        {"m": n, "k": n, "n": n, "flops": 2 * n**3, "tf32": ctx.get("tf32", False)},
        {
            "burn": lambda: a @ b,
            "torch": None if ta is None else (lambda: ta @ tb),
        },
    )
    n = 128 if quick else 8192
    burn, ref = bf16_inputs(ctx, rand((n, n), 3), rand((n, n), 4))
    params = {"m": n, "k": n, "n": n, "dtype": "bfloat16", "flops": 2 * n**3}
    name = BF16_BIG if not quick else f"bf16 {n}x{n}"
    if burn is None:
        return [f32, Case(name, params, {"burn": not_implemented(ref)})]
    (a16, b16), (t16a, t16b) = burn, ref
    bf16 = Case(
        name,
        params,
        {
            "burn": lambda: a16 @ b16,
            "torch": None if t16a is None else (lambda: t16a @ t16b),
        },
    )
    return [f32, bf16]


SUITE = Suite(
    "matmul",
    "square float32 matmul [n, n] @ [n, n]",
    build,
    [Target("matmul 1024^2 within 10% of raw numpy", "burn/numpy", 1.10, ["1024x1024"])],
    gpu_targets=[
        Target("matmul fp32 4096^2 >= 90% of torch (same TF32)", "burn/torch", 1 / 0.9, [F32_BIG]),
        Target("bf16 matmul 8192^2 >= 70% of torch", "burn/torch", 1 / 0.7, [BF16_BIG]),
    ],
)
