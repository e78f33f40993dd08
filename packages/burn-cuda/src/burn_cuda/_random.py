"""Random tensors from a counter-based generator (Philox4x32-10, `_kernel_source.PHILOX`).

Element t of the c-th random call on a device is Philox(counter = (t, c), key = seed): the same
seed gives the same numbers on every run, every GPU, and whatever else ran in between on other
devices. Each call takes two 32-bit words per element and transforms them on the device.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from ._kernels import i64, kernel, launch

_STATE: dict = {}  # Device -> [seed, calls so far]
_LOCK = threading.Lock()


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
    """The Philox key and counter words of the device's next call, as the kernels take them:
    (key low, key high, call low, call high) uint32 arguments."""
    key, call = _next(device)
    return (
        np.uint32(key & 0xFFFFFFFF),
        np.uint32(key >> 32),
        np.uint32(call & 0xFFFFFFFF),
        np.uint32(call >> 32),
    )


def bits(cp, n: int, device) -> object:
    """[n, 2] uint32 words of the device's next call."""
    words = _words(device)  # drawn first: the call counts even if the allocation fails
    out = cp.ndarray((n, 2), np.uint32)
    launch(
        kernel("philox_u32x2"),
        n,
        out,
        i64(n),
        *words,
    )
    return out


def bernoulli(cp, shape, n: int, threshold: int, dtype, device):
    """1 where the device's next call's first word of an element is below `threshold`: the
    same numbers as `bits` + a comparison, in one kernel writing `dtype` directly."""
    from ._dtypes import kernel_dtype

    words = _words(device)
    kd = kernel_dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(dtype)
    out = cp.ndarray(shape, kd)
    launch(
        kernel("philox_bernoulli", kd),
        n,
        out,
        i64(n),
        *words,
        np.uint32(threshold),
    )
    return out if kd == np.dtype(dtype) else out.astype(dtype)


def _unit(cp, words, precise: bool):
    """Uniform [0, 1) from the words: 24 bits as float32, or 53 bits as float64."""
    if not precise:
        return (words[:, 0] >> 8).astype(np.float32) * np.float32(2.0**-24)
    hi = (words[:, 0] >> 5).astype(np.float64)
    lo = (words[:, 1] >> 6).astype(np.float64)
    return (hi * 67108864.0 + lo) * (2.0**-53)


def sample(cp, shape, distribution, dtype: np.dtype, device, within=None):
    """A [shape] array of `dtype` drawn from `distribution` (default / uniform / normal /
    bernoulli), as NdArray's distributions: Int tensors get integers in [ceil(low), ceil(high))
    for uniform and rounded normals. `within`: the narrower float dtype the caller will round a
    float result to (bfloat16 drawn as float32), whose [low, high) bounds uniform draws keep."""
    n = math.prod(shape)
    kind = distribution.kind
    if kind == "bernoulli":
        threshold = min(round(distribution.a * 4294967296.0), 4294967295)
        if distribution.a >= 1.0:
            _next(device)  # the call still counts, as it did when it drew its words
            return cp.ones(shape, dtype)
        return bernoulli(cp, shape, n, threshold, dtype, device)
    words = bits(cp, n, device)
    is_int = dtype.kind in "iu"
    precise = dtype == np.float64 or is_int
    if kind == "normal":
        # Box-Muller on (0, 1] x [0, 1): u1 > 0 keeps the log finite.
        u1 = (words[:, 0].astype(np.float64) + 1.0) * (2.0**-32)
        u2 = words[:, 1].astype(np.float64) * (2.0**-32)
        z = cp.sqrt(-2.0 * cp.log(u1)) * cp.cos((2.0 * math.pi) * u2)
        out = distribution.a + distribution.b * z
        return (cp.rint(out) if is_int else out).astype(dtype).reshape(shape)
    u = _unit(cp, words, precise)
    if is_int:
        lo, hi = math.ceil(distribution.a), math.ceil(distribution.b)
        if hi <= lo:
            raise ValueError(f"int_random: no integer in [{distribution.a}, {distribution.b})")
        return (lo + cp.floor(u * (hi - lo))).astype(dtype).reshape(shape)
    if kind == "uniform":
        a, b = distribution.a, distribution.b
        u = a + (b - a) * u
    # A float32 draw rounded to float16 (or bfloat16 by the caller) can land on `high`: 1.0
    # from U[0, 1) for every draw above 1 - 2^-12 in float16. Clip to the last values of the
    # target dtype inside [low, high) first; rounding keeps them (they are values of it).
    lo, hi = distribution.bounds_in(np.dtype(dtype) if within is None else within)
    return cp.clip(u, lo, hi).astype(dtype).reshape(shape)
