"""Metric items of every rank, gathered to rank 0 in a multi-process run.

Burn's outputs (`ClassificationOutput`, `RegressionOutput`, ...) are dataclasses of tensors and
numbers. Each field is sent as an array through the group's TCP side (shapes first, then the
arrays padded to the largest shape, since every rank's batch share can differ by an item);
rank 0 rebuilds one item per rank with `dataclasses.replace` on its own. Items of another kind
cannot be rebuilt this way: each rank then keeps its own (rank 0's metrics are its share's).

Nothing is pickled: only dtypes, shapes and array bytes cross processes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

MAX_RANK = 8


def _fields(item: Any) -> list[tuple[str, Any]] | None:
    from burn_tensor import Tensor

    if item is None or not dataclasses.is_dataclass(item) or isinstance(item, type):
        return None
    out = []
    for f in dataclasses.fields(item):
        v = getattr(item, f.name)
        if not isinstance(v, Tensor | int | float):
            return None
        out.append((f.name, v))
    return out


def _array(v: Any) -> np.ndarray:
    from burn_tensor import Tensor

    if isinstance(v, Tensor):
        return np.asarray(v.to_data().numpy())
    return np.asarray(v, np.float64)


def gather_items(comm: Any, item: Any) -> list[Any] | None:
    """Every rank's item on rank 0, in rank order (None where a rank had none); other ranks
    get `[item]`. Returns None when the items are not dataclasses of tensors and numbers."""
    store = getattr(comm, "store", comm)
    fields = _fields(item)
    n = len(fields) if fields is not None else -1
    counts = store.all_gather_arrays(np.array([n], np.int64))
    known = {int(c[0]) for c in counts if c[0] >= 0}
    if any(c[0] == -1 and item is not None for c in counts) or len(known) > 1:
        return None  # not gatherable on some rank: everyone keeps its own
    if not known:
        return [item]
    width = known.pop()
    gathered: list[list[np.ndarray | None]] = [[None] * width for _ in range(comm.world_size)]
    for i in range(width):
        a = _array(fields[i][1]) if fields is not None else None
        meta = np.full(MAX_RANK + 2, -1, np.int64)
        if a is not None:
            if a.ndim > MAX_RANK:
                raise ValueError(f"metric item field {fields[i][0]!r} has rank {a.ndim}")
            meta[0], meta[1] = a.ndim, a.dtype.num
            meta[2 : 2 + a.ndim] = a.shape
        metas = store.all_gather_arrays(meta)
        present = [m for m in metas if m[0] >= 0]
        ndim = int(present[0][0])
        dtype = next(
            np.dtype(t) for t in np.sctypeDict.values() if np.dtype(t).num == present[0][1]
        )
        big = tuple(int(max(m[2 + d] for m in present)) for d in range(ndim))
        padded = np.zeros(big, dtype)
        if a is not None:
            padded[tuple(slice(0, s) for s in a.shape)] = a
        parts = store.all_gather_arrays(padded)
        for r, (m, p) in enumerate(zip(metas, parts)):
            if m[0] >= 0:
                gathered[r][i] = p[tuple(slice(0, int(m[2 + d])) for d in range(ndim))]
    if comm.rank != 0:
        return [item]
    return [_rebuild(item, fields, arrays) for arrays in gathered]


def _rebuild(own: Any, fields: list[tuple[str, Any]] | None, arrays: list) -> Any:
    from burn_tensor import Tensor

    if own is None or fields is None or any(a is None for a in arrays):
        return None
    values = {}
    for (name, v), a in zip(fields, arrays):
        if isinstance(v, Tensor):
            values[name] = Tensor.from_data(np.array(a), v.device, v.dtype)
        else:
            values[name] = type(v)(a.reshape(()).item()) if a.size == 1 else v
    return dataclasses.replace(own, **values)
