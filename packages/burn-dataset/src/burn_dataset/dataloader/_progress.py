"""`Progress`: how far an iterator is through its epoch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """Items processed so far out of the total for this epoch (Burn's `Progress`).

    Example:
        >>> p = Progress(items_processed=64, items_total=256)
        >>> p.items_processed, p.items_total
        (64, 256)
    """

    items_processed: int
    items_total: int
