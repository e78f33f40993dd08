"""Seeds and random generators for the shuffling transforms."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def make_rng(seed_or_rng: Any) -> np.random.Generator:
    """A numpy Generator from a seed (int), an existing Generator, or None (OS entropy).

    Passing a Generator shares its state, as Burn's `&mut StdRng` does; passing an int makes the
    result reproducible across runs and platforms (numpy's PCG64 is platform independent).
    """
    if isinstance(seed_or_rng, np.random.Generator):
        return seed_or_rng
    if seed_or_rng is None:
        return np.random.default_rng()
    if isinstance(seed_or_rng, bool):
        raise TypeError("seed must be an int or a numpy Generator, got bool")
    try:
        seed = operator.index(seed_or_rng)
    except TypeError:
        raise TypeError(
            f"seed must be an int or a numpy Generator, got {type(seed_or_rng).__name__}"
        ) from None
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.default_rng(seed)
