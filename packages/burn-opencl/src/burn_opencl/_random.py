"""Random tensors: burn_gpu's `draw` (the Philox kernel and launch Cuda runs too: element i of
the c-th call of a device is Philox((i, c), seed)); this file keeps each device's (seed, call)
state, on its `Runtime` (shared by every `OpenCl` configuration using that device)."""

from __future__ import annotations

import math
import os

from burn_gpu import draw

from ._array import ClArray
from ._gpu_runtime import eager


def seed_runtime(rt, seed: int) -> None:
    rt.rng = [seed & 0xFFFFFFFFFFFFFFFF, 0]


def _next(rt) -> tuple[int, int]:
    if getattr(rt, "rng", None) is None:
        seed_runtime(rt, int.from_bytes(os.urandom(8), "little"))
    seed, count = rt.rng
    rt.rng[1] = count + 1
    return seed, count


def random_op(self, shape, distribution, device, dtype):
    rt = self._rt(device)
    if math.prod(shape) == 0:  # an empty draw does not count as a call
        return ClArray.empty(rt, tuple(shape), dtype.np)
    return draw(eager(rt), shape, dtype.np, distribution, lambda: _next(rt))
