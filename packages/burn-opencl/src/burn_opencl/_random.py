"""Random tensors: burn_gpu's Philox kernel (`burn_gpu.random_program`, one set of semantics
for every runtime: element i of the c-th call of a device is Philox((i, c), seed)), rendered in
the OpenCL dialect; this file keeps the device's (seed, call) state and launches it."""

from __future__ import annotations

import os

import numpy as np
from burn_gpu import KINDS, random_program

from ._array import ClArray


def seed_runtime(rt, seed: int) -> None:
    rt.rng = [seed & 0xFFFFFFFFFFFFFFFF, 0]


def _kernel(rt, dt):
    dt = np.dtype(dt)
    f64 = dt == np.float64 or (dt.kind in "iu" and rt.fp64)

    def render():
        return random_program(dt.name, "opencl", f64)

    k = rt.kernel(("random", dt.str), "philox_random", render)
    return k, (np.float64 if f64 else np.float32)


def random_op(self, shape, distribution, device, dtype):
    import math

    rt = self._rt(device)
    dt = dtype.np
    out = ClArray.empty(rt, tuple(shape), dt)
    n = out.size
    if not n:
        return out
    if getattr(rt, "rng", None) is None:
        seed_runtime(rt, int.from_bytes(os.urandom(8), "little"))
    seed, count = rt.rng
    rt.rng[1] = count + 1
    kind = KINDS[distribution.kind]
    a, b = distribution.a, distribution.b
    if dt.kind in "iu" and kind in (0, 1):
        lo, hi = math.ceil(a), math.ceil(b)
        if hi <= lo:
            raise ValueError(f"int_random: no integer in [{a}, {b})")
        a, b = lo, hi
    k, fty = _kernel(rt, dt)
    u32 = np.uint32
    args = [out.buf, np.int32(n), u32(seed & 0xFFFFFFFF), u32(seed >> 32)]
    args += [u32(count & 0xFFFFFFFF), u32(count >> 32), np.int32(kind), fty(a), fty(b)]
    wg = rt.wg_flat if n >= rt.wg_flat else rt.wg
    rt.launch(k, ((n + wg - 1) // wg * wg,), (wg,), args)
    return out
