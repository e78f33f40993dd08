"""Burn's `custom_gelu` bench: GELU written from primitives, x * 0.5 * (1 + erf(x / sqrt 2)),
float32, on 2^16 .. 2^26 elements.

Unfused, that is five elementwise kernels, each reading and writing the whole tensor; under
`--backend fusion-opencl|fusion-cuda` it is one generated kernel. Rows:
- `gelu 2^k`: burn on the selected backend beside torch eager (the same five primitives).
- `gelu 2^26 unfused`: burn on the backend Fusion wraps (only with a fusion backend) beside
  torch eager; the `burn/unfused` target compares the fused row with it (>= 3x faster).
- `gelu 2^26 vs copy`: burn's GELU beside torch copying the same tensor (`clone`): GELU moves
  the same bytes as a copy, so burn/torch <= 1.25 is >= 80% of the copy bandwidth torch reaches.
"""

from __future__ import annotations

import math

from burn_tensor import Tensor

from .._harness import Case, Suite, Target
from ._common import rand

SQRT2 = math.sqrt(2.0)
BIG = "gelu 2^26"


def gelu(x):
    """Works on burn and torch tensors alike (both spell erf as a method)."""
    return x * 0.5 * ((x / SQRT2).erf() + 1.0)


def _run(flush, device, y):
    flush(device)
    return y


def build(ctx: dict, quick: bool) -> list[Case]:
    torch = ctx.get("torch")
    device = ctx["device"]
    # A fusion stream would otherwise merge the timed loop's calls into one plan and skip the
    # results no one reads: run each call's kernel (enqueue it, as a consumer of the result
    # would), without waiting for it.
    flush = getattr(device.backend, "flush", None) or (lambda device: None)
    exps = (10, 12) if quick else (16, 18, 20, 22, 24, 26)
    big = f"gelu 2^{exps[-1]}"
    cases = []
    for k in exps:
        a = rand((1 << k,), k, -4.0, 4.0)
        x = Tensor.from_data(a, device)
        tx = None if torch is None else torch.from_numpy(a).to(ctx.get("torch_device", "cpu"))
        impls = {
            "burn": lambda x=x: _run(flush, device, gelu(x)),
            "torch": None if tx is None else (lambda tx=tx: gelu(tx)),
        }
        name = f"gelu 2^{k}"
        if name == big and device.backend.inner is not None and not device.backend.is_autodiff:
            inner = device.backend.inner.device(device.index)
            xi = Tensor.from_data(a, inner)
            impls["unfused"] = lambda xi=xi: gelu(xi)
            cases.append(
                Case(
                    f"{name} unfused",
                    {"n": 1 << k},
                    {"burn": impls["unfused"], "torch": impls["torch"]},
                )
            )
        cases.append(Case(name, {"n": 1 << k}, impls))
        if name == big:
            cases.append(
                Case(
                    f"{name} vs copy",
                    {"n": 1 << k},
                    {
                        "burn": impls["burn"],
                        "torch": None if tx is None else (lambda tx=tx: tx.clone()),
                    },
                )
            )
    for c in cases:
        c.impls.setdefault("numpy", None)
    return cases


SUITE = Suite(
    "custom_gelu",
    "GELU from primitives x*0.5*(1+erf(x/sqrt2)), float32, 2^16..2^26 elements",
    build,
    [
        Target("fused GELU >= 3x faster than unfused", "burn/unfused", 1 / 3, [BIG]),
        Target("GELU >= 80% of torch's copy bandwidth", "burn/torch", 1.25, [f"{BIG} vs copy"]),
    ],
)
