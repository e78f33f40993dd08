"""Input construction shared by the suites: the same float32 data for burn, numpy and torch."""

from __future__ import annotations

import numpy as np
from burn_tensor import Tensor


def rand(shape, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(np.float32)


def inputs(ctx: dict, *arrays: np.ndarray):
    """For each numpy array: (burn tensor, numpy array, torch tensor or None), all with equal data."""
    torch = ctx.get("torch")
    dev = ctx["device"]
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        out.append(
            (
                Tensor.from_data(a, dev),
                a.copy(),
                None
                if torch is None
                else torch.from_numpy(a.copy()).to(ctx.get("torch_device", "cpu")),
            )
        )
    return out


def shape_name(shape) -> str:
    return "x".join(str(d) for d in shape)


def gpu_sizes(ctx: dict) -> bool:
    """Whether the run adds the GPU-sized cases (`--sizes gpu`, the default on a GPU backend)."""
    return ctx.get("sizes") == "gpu"


def bf16_inputs(ctx: dict, *arrays: np.ndarray):
    """(burn tensors, torch tensors or None) in bfloat16, or (None, reason) where the burn
    backend has no bfloat16 (the case then reports 'not implemented' with the reason)."""
    torch = ctx.get("torch")
    burn, ref = [], []
    try:
        for b, _, t in inputs(ctx, *arrays):
            burn.append(b.cast("bfloat16"))
            ref.append(None if t is None else t.to(torch.bfloat16))
    except (TypeError, ValueError, NotImplementedError, ImportError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return burn, ref


def not_implemented(reason: str):
    """A burn callable that reports the case as not implemented on this backend."""

    def run():
        raise NotImplementedError(reason)

    return run
