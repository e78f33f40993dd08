"""Random generators, one per device of each backend, so `seed()` makes runs reproducible.

Keyed by `Device` (interned, bound to one backend): seeding `NdArray()` leaves the stream of
`NdArray(float_dtype="float64")` alone, as seeding one CUDA backend would not touch another's.
Autodiff(NdArray()) seeds and draws through its inner device, so it shares NdArray()'s stream.
"""

from __future__ import annotations

import math
import threading

import numpy as np

_GENERATORS: dict = {}  # Device -> np.random.Generator
_LOCK = threading.Lock()


def generator(device) -> np.random.Generator:
    """The generator of `device` (created unseeded, from OS entropy, on first use)."""
    gen = _GENERATORS.get(device)
    if gen is None:
        with _LOCK:
            gen = _GENERATORS.setdefault(device, np.random.default_rng())
    return gen


def seed(value: int, device) -> None:
    """Restart `device`'s stream from `value`."""
    with _LOCK:
        _GENERATORS[device] = np.random.default_rng(value)


def sample(shape, distribution, dtype: np.dtype, device) -> np.ndarray:
    rng = generator(device)
    kind = distribution.kind
    if dtype.kind in "iu":
        if kind == "bernoulli":
            return (rng.random(shape) < distribution.a).astype(dtype)
        if kind == "normal":
            return np.rint(rng.normal(distribution.a, distribution.b, shape)).astype(dtype)
        low, high = distribution.a, distribution.b
        lo, hi = math.ceil(low), math.ceil(high)
        if hi <= lo:
            raise ValueError(f"int_random: no integer in [{low}, {high})")
        return rng.integers(lo, hi, shape).astype(dtype)
    if kind == "bernoulli":
        return (rng.random(shape) < distribution.a).astype(dtype)
    if kind == "normal":
        return rng.normal(distribution.a, distribution.b, shape).astype(dtype)
    if kind == "uniform":
        u = rng.uniform(distribution.a, distribution.b, shape)
    else:
        u = rng.random(shape, dtype=np.float64)
    # The float64 draw rounded to a narrower dtype can land on `high` (1.0 from U[0, 1) in
    # float16): clip to the dtype's last values inside [low, high) first.
    lo, hi = distribution.bounds_in(dtype)
    return np.clip(u, lo, hi, out=u).astype(dtype)


def random_op(self, shape, distribution, device, dtype):
    """NdArray's `float_random` / `int_random`: a draw from the device's own generator."""
    device = self.default_device() if device is None else device
    if distribution.kind == "bernoulli":
        return _bernoulli(generator(device), shape, distribution.a, dtype.np)
    return sample(shape, distribution, dtype.np, device)


def _bernoulli(rng: np.random.Generator, shape, p: float, dtype: np.dtype) -> np.ndarray:
    """1 with probability p (to 2^-32), else 0: raw 32-bit draws against an integer threshold.

    Half the generator work of `rng.random(shape) < p` (two draws per 64-bit output, no float
    conversion): dropout masks are sampled every training step.
    """
    n = math.prod(shape)
    threshold = min(round(p * 4294967296.0), 4294967295)
    if p >= 1.0 or n == 0:
        return np.full(shape, 1 if p >= 1.0 else 0, dtype)
    u = rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    return np.less(u, np.uint32(threshold)).astype(dtype).reshape(shape)
