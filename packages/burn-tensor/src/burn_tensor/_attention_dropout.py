"""Dropout on the attention weights: the keep mask as a pure function of
(seed, batch, head, query row, key column).

Every implementation (this numpy reference, the default decomposition, burn_gpu's flash kernels
in both dialects) computes the same 32-bit counter hash, so a forward and its backward
regenerate the mask instead of storing it, and the order in which tiles visit the scores does
not matter. With `mix` the "lowbias32" integer finalizer (xor-shift / multiply rounds, all
arithmetic mod 2^32), `s0, s1` the two seed words and `bh = batch * heads + head`:

    bhkey  = mix(mix(bh ^ s0) + s1)
    rowkey = mix(bhkey ^ i)                       (query row i)
    u      = mix(rowkey + j * 0x9E3779B9)         (key column j)
    keep   = u >= threshold(p)                    (threshold = floor(p * 2^32))

so P(keep) = 1 - threshold / 2^32 (1 - p up to 2^-32). The kept weights are scaled by
1 / (1 - p): out = (softmax(scores) * keep / (1 - p)) @ V, as torch's SDPA dropout.

The seed is a [2] Int tensor on the query's device drawn from the device's generator
(`draw_seed`): each call differs, `device.seed(s)` repeats, and a captured step replays the draw
(a random op) while its kernels read the words from device memory.
"""

from __future__ import annotations

import functools

import numpy as np

#: seed words are drawn in [0, SEED_RANGE) (exact in every backend's int and float draws)
SEED_RANGE = 1 << 24
#: the multipliers and shifts of `mix` (C. Wellons' lowbias32) and the column multiplier
M1, M2, GOLDEN = 0x7FEB352D, 0x846CA68B, 0x9E3779B9


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(M1)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(M2)
    return x ^ (x >> np.uint32(16))


def threshold(p: float) -> int:
    """The uint32 a hash must reach to keep its weight: floor(p * 2^32) (p in [0, 1))."""
    return min(int(p * 4294967296.0), 4294967295)


def keep_mask(seed_words, p: float, b: int, h: int, sq: int, sk: int) -> np.ndarray:
    """Bool [b, h, sq, sk]: True where the weight (batch, head, i, j) is kept."""
    with np.errstate(over="ignore"):
        s0, s1 = (np.uint32(int(w) & 0xFFFFFFFF) for w in np.asarray(seed_words).reshape(-1)[:2])
        bh = np.arange(b * h, dtype=np.uint32).reshape(b, h, 1, 1)
        bhkey = _mix(_mix(bh ^ s0) + s1)
        rowkey = _mix(bhkey ^ np.arange(sq, dtype=np.uint32).reshape(1, 1, sq, 1))
        cols = np.arange(sk, dtype=np.uint32).reshape(1, 1, 1, sk) * np.uint32(GOLDEN)
        u = _mix(rowkey + cols)
    return u >= np.uint32(threshold(p))


@functools.lru_cache(maxsize=1)
def _seed_distribution():
    """U[0, SEED_RANGE), built once: every attention call with dropout draws from it."""
    from ._distribution import Distribution

    return Distribution.uniform(0, SEED_RANGE)


def draw_seed(device):
    """A [2] Int tensor of seed words in [0, SEED_RANGE) drawn from `device`'s generator."""
    from ._dtype import Int
    from ._tensor import Tensor

    return Tensor._make(seed_words(device), Int, device)


def seed_words(device):
    """`draw_seed(device)`'s primitive: the backend's `int_random` called straight away (the op
    and arguments `Tensor.random` would pass), without the Tensor layer's shape, kind and dtype
    resolution, which `module.attention`'s hot path does not need."""
    b = device.backend
    return b.int_random((2,), _seed_distribution(), device, b.int_dtype)
