"""Random tensors from burn_gpu's Philox kernel (`burn_gpu.random_program`: one set of semantics
for every runtime -- element i of the c-th call on a device is Philox((i, c), seed), the same
numbers OpenCl draws), rendered in the CUDA dialect; this file keeps each device's
(seed, call) state and launches it.

Inside a captured step's resident ops (`_capture_resident.active()`), a draw takes its call
number as usual but launches `philox_random_at`, which reads the seed and the step's first call
from the tape's device words: a replay writes them anew (`reserve`) and draws what the eager
step would.

Float16 and bfloat16 tensors are drawn as float32 and rounded; uniform draws are first clipped
to the last values of the target type inside [low, high), so rounding cannot reach `high`.

`CudaDropoutOps.dropout` (a mixin of `Cuda`) runs `dropout` in one launch of burn_gpu's
`philox_dropout`: the bernoulli draw of the same call, the scale and the multiply in one pass,
the bits of the contract's three-op default.
"""

from __future__ import annotations

import os
import threading

import numpy as np
from burn_gpu import KINDS, draw, dropout

from . import _platform
from ._capture_resident import active
from ._gpu_runtime import runtime_at

_STATE: dict = {}  # Device -> [seed, calls so far]
_LOCK = threading.Lock()


def seed(value: int, device) -> None:
    """Restart `device`'s stream from `value`."""
    with _LOCK:
        _STATE[device] = [int(value) & (2**64 - 1), 0]


def snapshot() -> dict:
    """Every device's (seed, calls) now (step capture rewinds an aborted recording's draws)."""
    with _LOCK:
        return {d: list(st) for d, st in _STATE.items()}


def restore(snap: dict) -> None:
    """Put back the state of `snapshot()`."""
    with _LOCK:
        _STATE.clear()
        _STATE.update({d: list(st) for d, st in snap.items()})


def _next(device) -> tuple[int, int]:
    """(seed, call number) for the next draw on `device` (seeded from OS entropy at first use)."""
    return reserve(device, 1)


def reserve(device, n: int) -> tuple[int, int]:
    """(seed, first call) of `n` consecutive draws on `device`, taken from its counter as `n`
    calls of `_next` would (a replay of a captured step's draws; seeded from OS entropy at
    first use)."""
    with _LOCK:
        st = _STATE.get(device)
        if st is None:
            st = _STATE[device] = [int.from_bytes(os.urandom(8), "little"), 0]
        call = st[1]
        st[1] += n
        return st[0], call


def _next_call(device):
    """`next_call()` for burn_gpu's `draw` / `dropout` on `device`: (seed, call) from its
    counter, or inside a captured step's resident ops the tape's words and this draw's offset."""
    block = active()
    if block is None:
        return lambda: _next(device)

    def next_call():
        # the counter advances as eagerly; the kernel reads the pair from the block, or takes it
        # as arguments where the block refused it (the recording is not replayed)
        seed, call = _next(device)
        return block.draw(device, seed, call) or (seed, call)

    return next_call


def sample(cp, shape, distribution, dtype: np.dtype, device, within=None):
    """A [shape] array of `dtype` drawn from `distribution` by burn_gpu's `draw` (Int tensors
    get integers in [ceil(low), ceil(high)) for uniform and rounded normals). `within`: the
    narrower float dtype the caller will round a float result to (bfloat16 drawn as float32),
    whose [low, high) bounds uniform draws keep."""
    is_int = dtype.kind in "iu"
    # a half type's normal and bernoulli draws are drawn in it (rounded once as the kernel
    # stores: the bits of a float32 draw and a cast, one launch and allocation less; every
    # dropout mask of a bf16 step); its uniform draws in float32, clipped, then cast
    kd = (
        dtype
        if is_int or dtype.itemsize >= 4 or KINDS[distribution.kind] >= 2
        else np.dtype(np.float32)
    )
    next_call = _next_call(device)
    out = draw(runtime_at(device.index), shape, kd, distribution, next_call)
    if KINDS[distribution.kind] in (0, 1) and not is_int and (kd != dtype or within is not None):
        # a draw just below `high` may round onto it in the narrower type: keep the last
        # values of that type inside [low, high) (rounding keeps them: they are its values)
        lo, hi = distribution.bounds_in(np.dtype(dtype) if within is None else within)
        out = cp.clip(out, lo, hi)
    return out if kd == dtype else out.astype(dtype)


def scale_in(dtype: np.dtype, keep: float) -> float:
    """1 / keep as `mask * (1 / keep)` holds it in a kernel of `dtype`: float64, float32, or a
    half type's rounding (nearest even) of the float32 value."""
    if dtype == np.float64:
        return 1.0 / keep
    s = np.float32(1.0 / keep)
    return float(s if dtype == np.float32 else np.array(s).astype(dtype).astype(np.float32))


class CudaDropoutOps:
    """Mixin of `Cuda`: `dropout` in one launch (see the module docstring)."""

    def dropout(self, x, prob):
        cp = _platform.load_cupy()
        keep = 1.0 - prob
        device = self.device_of(x)
        if not x.flags.c_contiguous:
            x = cp.ascontiguousarray(x)
        args = (runtime_at(device.index), x, keep, scale_in(x.dtype, keep), _next_call(device))
        if cp.cuda.runtime.getDevice() == device.index:  # eager ops: no device context (~us)
            return dropout(*args)
        with cp.cuda.Device(device.index):
            return dropout(*args)
