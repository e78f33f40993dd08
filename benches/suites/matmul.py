"""Square float32 matrix products, 64 .. 2048."""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import gpu_sizes, half_inputs, inputs, not_implemented, rand


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


F32_BIG, BF16_BIG, F16_BIG = "4096x4096", "bf16 8192x8192", "f16 4096x4096"


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
    return [f32, half_case(ctx, "bfloat16", 128 if quick else 8192, BF16_BIG, quick),
            half_case(ctx, "float16", 128 if quick else 4096, F16_BIG, quick)]  # fmt: skip


def half_case(ctx: dict, dtype: str, n: int, name: str, quick: bool) -> Case:
    """[n, n] @ [n, n] in `dtype` beside torch's, in TFLOP/s (tensor cores on both sides)."""
    burn, ref = half_inputs(ctx, dtype, rand((n, n), 3), rand((n, n), 4))
    params = {"m": n, "k": n, "n": n, "dtype": dtype, "flops": 2 * n**3}
    name = name if not quick else f"{dtype} {n}x{n}"
    if burn is None:
        return Case(name, params, {"burn": not_implemented(ref)})
    (a, b), (ta, tb) = burn, ref
    return Case(name, params, {"burn": lambda: a @ b,
                               "torch": None if ta is None else (lambda: ta @ tb)})  # fmt: skip


SUITE = Suite(
    "matmul",
    "square float32 matmul [n, n] @ [n, n]",
    build,
    [Target("matmul 1024^2 within 10% of raw numpy", "burn/numpy", 1.10, ["1024x1024"])],
    gpu_targets=[
        Target("matmul fp32 4096^2 >= 90% of torch (same TF32)", "burn/torch", 1 / 0.9, [F32_BIG]),
        Target("bf16 matmul 8192^2 >= 70% of torch", "burn/torch", 1 / 0.7, [BF16_BIG]),
        # issue 34's OpenCl target (Cuda's cuBLAS path meets it by far)
        Target("f16 matmul 4096^2 >= 50% of torch", "burn/torch", 1 / 0.5, [F16_BIG]),
    ],
)
