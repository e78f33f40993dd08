"""Per-device random generators so `seed()` makes runs reproducible."""

from __future__ import annotations

import math

import numpy as np

_GENERATORS: dict[int, np.random.Generator] = {}


def generator(index: int = 0) -> np.random.Generator:
    gen = _GENERATORS.get(index)
    if gen is None:
        gen = _GENERATORS[index] = np.random.default_rng()
    return gen


def seed(value: int, index: int = 0) -> None:
    _GENERATORS[index] = np.random.default_rng(value)


def sample(shape, distribution, dtype: np.dtype, index: int = 0) -> np.ndarray:
    rng = generator(index)
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
        return rng.uniform(distribution.a, distribution.b, shape).astype(dtype)
    return rng.random(shape, dtype=np.float64).astype(dtype)
