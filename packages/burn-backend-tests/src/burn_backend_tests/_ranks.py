"""`run_ranks`: a collective test's ranks, one thread each (ThreadGroup and TCP groups block
until every rank has called, so the ranks must run at the same time)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def run_ranks(n: int, fn: Callable[[int], Any], timeout: float = 60.0) -> list[Any]:
    """`fn(rank)` for ranks 0..n-1 on n threads; their results in rank order. The first error a
    rank raised is re-raised here (after every thread was joined or timed out).

    Example:
        >>> run_ranks(2, lambda r: r * 10)
        [0, 10]
    """
    out: list[Any] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def go(rank: int) -> None:
        try:
            out[rank] = fn(rank)
        except BaseException as err:  # noqa: BLE001 - re-raised by the caller below
            errors[rank] = err

    threads = [threading.Thread(target=go, args=(r,), name=f"rank-{r}") for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    for err in errors:
        if err is not None:
            raise err
    return out
