"""Data-parallel batches: each global batch's items split into contiguous shares, one per rank.

The global batch of step k is the same items a one-device loader would give (same order, same
shuffle); rank r gets the r-th share (sizes differ by at most one), batched on its own device.
Each share comes with its item count and the global batch's, so gradients can be weighted to
equal the one-device gradient of the whole batch.

Example:
    >>> shares(5, 2), shares(1, 3)
    ([(0, 3), (3, 5)], [(0, 1), (1, 1), (1, 1)])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple


class Shard(NamedTuple):
    """One rank's part of a global batch: its batch (None when it got no items), how many items
    it holds and how many the global batch holds."""

    batch: Any
    items: int
    total: int


def shares(n: int, world: int) -> list[tuple[int, int]]:
    """`world` contiguous ranges covering [0, n); the first n % world hold one item more."""
    q, r = divmod(n, world)
    out, a = [], 0
    for i in range(world):
        b = a + q + (i < r)
        out.append((a, b))
        a = b
    return out


def all_shards(batch_fn: Callable, devices: Sequence[Any]) -> Callable:
    """A batch function giving every rank's Shard of each global batch (one process)."""

    def build(items: list, _device: Any) -> list[Shard]:
        out = []
        for (a, b), device in zip(shares(len(items), len(devices)), devices):
            part = items[a:b]
            out.append(Shard(batch_fn(part, device) if part else None, b - a, len(items)))
        return out

    return build


def rank_shard(batch_fn: Callable, rank: int, world: int) -> Callable:
    """A batch function giving rank `rank`'s Shard of each global batch (one process per rank)."""

    def build(items: list, device: Any) -> Shard:
        a, b = shares(len(items), world)[rank]
        part = items[a:b]
        return Shard(batch_fn(part, device) if part else None, b - a, len(items))

    return build
