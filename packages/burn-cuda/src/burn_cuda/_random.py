"""Random tensors from burn_gpu's Philox kernel (`burn_gpu.random_program`: one set of semantics
for every runtime -- element i of the c-th call on a device is Philox((i, c), seed), the same
numbers OpenCl draws), rendered in the CUDA dialect; this file keeps each device's
(seed, call) state and launches it.

Float16 and bfloat16 tensors are drawn as float32 and rounded; uniform draws are first clipped
to the last values of the target type inside [low, high), so rounding cannot reach `high`.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np
from burn_gpu import KINDS

from ._kernels import kernel, launch

_STATE: dict = {}  # Device -> [seed, calls so far]
_LOCK = threading.Lock()
#: element indices of one call are 32-bit (the kernel's `n` is an int)
MAX_ELEMENTS = 2**31 - 1


def seed(value: int, device) -> None:
    """Restart `device`'s stream from `value`."""
    with _LOCK:
        _STATE[device] = [int(value) & (2**64 - 1), 0]


def _next(device) -> tuple[int, int]:
    """(seed, call number) for the next draw on `device` (seeded from OS entropy at first use)."""
    with _LOCK:
        st = _STATE.get(device)
        if st is None:
            st = _STATE[device] = [int.from_bytes(os.urandom(8), "little"), 0]
        call = st[1]
        st[1] += 1
        return st[0], call


def _words(device) -> tuple:
    """The Philox key and counter words of the device's next call, as the kernel takes them:
    (key low, key high, call low, call high) uint32 arguments."""
    key, call = _next(device)
    u32 = np.uint32
    return (u32(key & 0xFFFFFFFF), u32(key >> 32), u32(call & 0xFFFFFFFF), u32(call >> 32))


def sample(cp, shape, distribution, dtype: np.dtype, device, within=None):
    """A [shape] array of `dtype` drawn from `distribution` (default / uniform / normal /
    bernoulli): Int tensors get integers in [ceil(low), ceil(high)) for uniform and rounded
    normals. `within`: the narrower float dtype the caller will round a float result to
    (bfloat16 drawn as float32), whose [low, high) bounds uniform draws keep."""
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise ValueError(
            f"random: {n} elements in one call; at most {MAX_ELEMENTS} (draw in parts)"
        )
    kind = KINDS[distribution.kind]
    a, b = distribution.a, distribution.b
    is_int = dtype.kind in "iu"
    if is_int and kind in (0, 1):
        a, b = math.ceil(a), math.ceil(b)
        if b <= a:
            raise ValueError(f"int_random: no integer in [{distribution.a}, {distribution.b})")
    kd = dtype if is_int or dtype.itemsize >= 4 else np.dtype(np.float32)
    words = _words(device)  # drawn first: the call counts even if the allocation fails
    out = cp.ndarray(shape, kd)
    F = np.float32 if kd == np.float32 else np.float64  # the kernel's F (`random_program`)
    launch(kernel("philox_random", kd), n, out, np.int32(n), *words, np.int32(kind), F(a), F(b))
    if kind in (0, 1) and not is_int and (kd != dtype or within is not None):
        # a draw just below `high` may round onto it in the narrower type: keep the last
        # values of that type inside [low, high) (rounding keeps them: they are its values)
        lo, hi = distribution.bounds_in(np.dtype(dtype) if within is None else within)
        out = cp.clip(out, lo, hi)
    return out if kd == dtype else out.astype(dtype)
