"""Input construction shared by the suites: the same float32 data for burn, numpy and torch."""

from __future__ import annotations

import os

import numpy as np
from burn_tensor import Tensor

from .._harness import Case


def rand(shape, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(np.float32)


def inputs(ctx: dict, *arrays: np.ndarray):
    """For each numpy array: (burn tensor, numpy array, torch tensor or None), all with equal data.

    Where the burn tensor's data is a numpy array (NdArray), numpy and CPU torch read that same
    buffer (`torch.from_numpy` shares it; no suite writes its inputs): on the GPU machine's
    16-core VM one buffer of a process could read 2-3x slower than another for every library
    (torch's own abs/neg went from ~20 to 46-61 us reading NdArray's buffer), so separate copies
    compared memory placement as much as kernels (benches/README.md, "Shared inputs").
    `BENCH_SHARED_INPUTS=0` gives each library its own copy, as before.
    """
    torch = ctx.get("torch")
    dev = ctx["device"]
    shared = os.environ.get("BENCH_SHARED_INPUTS", "1") != "0"
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        b = Tensor.from_data(a, dev)
        prim = b.into_primitive()
        if not (shared and type(prim) is np.ndarray and prim.flags.c_contiguous):
            prim = None
        t = None
        if torch is not None:
            src = a.copy() if prim is None else prim
            t = torch.from_numpy(src).to(ctx.get("torch_device", "cpu"))
        out.append((b, a.copy() if prim is None else prim, t))
    return out


def shape_name(shape) -> str:
    return "x".join(str(d) for d in shape)


def op_cases(ops, shape, has_torch: bool) -> list:
    """One `Case` "<op> <shape>" per `(op, burn, numpy, torch)` of `ops` (None: no such
    implementation); the torch callable only when torch is there."""
    sn = shape_name(shape)
    return [
        Case(
            f"{op} {sn}",
            {"op": op, "shape": list(shape)},
            {"burn": fb, "numpy": fn, "torch": ft if has_torch else None},
        )
        for op, fb, fn, ft in ops
    ]


def gpu_sizes(ctx: dict) -> bool:
    """Whether the run adds the GPU-sized cases (`--sizes gpu`, the default on a GPU backend)."""
    return ctx.get("sizes") == "gpu"


def half_inputs(ctx: dict, dtype: str, *arrays: np.ndarray):
    """(burn tensors, torch tensors or None) in `dtype` ("bfloat16" or "float16"), or (None,
    reason) where the burn backend has no such type (the case then reports 'not implemented'
    with the reason)."""
    torch = ctx.get("torch")
    burn, ref = [], []
    try:
        for b, _, t in inputs(ctx, *arrays):
            burn.append(b.cast(dtype))
            ref.append(None if t is None else t.to(getattr(torch, dtype)))
    except (TypeError, ValueError, NotImplementedError, ImportError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return burn, ref


def not_implemented(reason: str):
    """A burn callable that reports the case as not implemented on this backend."""

    def run():
        raise NotImplementedError(reason)

    return run
