"""Scatters with ONNX's `mul`, `max` and `min` reductions (ScatterElements, ScatterND).

Burn's scatters add. A product, maximum or minimum at the targets is built from a gather, the
elementwise op and an assignment, which is exact only if no target appears twice in one
assignment. So the updates are applied in rounds: round k holds the k-th update of every
target, and each target's updates are combined in their order in the index tensor, as ONNX's
reference applies them one after another. The rounds are as many as the most repeated target
(usually 1). The indices are read on the host (as for GatherND/ScatterND), the values stay on
the device.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor

REDUCTIONS = ("none", "add", "mul", "max", "min")


def rounds(targets: np.ndarray) -> list[np.ndarray]:
    """Positions of the updates, grouped so that no group names one target twice.

    Example:
        >>> [r.tolist() for r in rounds(np.array([4, 1, 4, 4, 2]))]
        [[0, 1, 4], [2], [3]]
    """
    if targets.size == 0:
        return []
    order = np.argsort(targets, kind="stable")
    t = targets[order]
    starts = np.r_[0, np.flatnonzero(t[1:] != t[:-1]) + 1]
    sizes = np.diff(np.r_[starts, t.size])
    occurrence = np.empty(t.size, np.int64)
    occurrence[order] = np.arange(t.size) - np.repeat(starts, sizes)
    return [np.flatnonzero(occurrence == k) for k in range(int(occurrence.max()) + 1)]


def _ids(a: np.ndarray, device) -> Tensor:
    return Tensor.from_data(np.ascontiguousarray(a, dtype=np.int64), device, DType.I64)


def assign_rows(src: Tensor, targets: np.ndarray, values: Tensor) -> Tensor:
    """src with rows `targets` (distinct, host ints) replaced by `values` (rows in that order)."""
    n = src.dims()[0]
    hit = np.zeros(n, bool)
    hit[targets] = True
    mask = Tensor.from_data(hit.reshape([n] + [1] * (src.rank() - 1)), src.device)
    cleared = src.mask_fill(mask.expand(src.dims()), 0)
    return cleared.select_add(0, _ids(targets, src.device), values)


def scatter_rows(src: Tensor, targets: np.ndarray, updates: Tensor, reduction: str) -> Tensor:
    """ONNX scatter over the rows of `src` [n, ...]: update row i goes to row `targets[i]`.

    Args:
        src: [n, ...] tensor.
        targets: [m] host int array, values in [0, n).
        updates: [m, ...] tensor of src's kind.
        reduction: one of `REDUCTIONS`.
    """
    dev = src.device
    if reduction == "add":
        return src.select_add(0, _ids(targets, dev), updates)
    if reduction == "none":  # with repeated targets ONNX leaves the result undefined
        return assign_rows(src, *_last_of_each(targets, updates))
    for pos in rounds(targets):
        t = targets[pos]
        cur = src.select(0, _ids(t, dev))
        upd = updates.select(0, _ids(pos, dev))
        if reduction == "mul":
            new = cur * upd
        elif reduction == "max":
            new = cur.max_pair(upd)
        elif reduction == "min":
            new = cur.min_pair(upd)
        else:
            raise ValueError(f"scatter reduction {reduction!r} is not one of {REDUCTIONS}")
        src = assign_rows(src, t, new)
    return src


def _last_of_each(targets: np.ndarray, updates: Tensor):
    """The last update of each target (what sequential assignment leaves)."""
    last = {int(t): i for i, t in enumerate(targets)}
    pos = np.fromiter(last.values(), np.int64, len(last))
    return targets[pos], updates.select(0, _ids(pos, updates.device))


def element_targets(shape, idx: np.ndarray, axis: int) -> np.ndarray:
    """ScatterElements' targets as flat indices of x: idx's own coordinates, with idx's value
    on `axis` (negative values wrapped).

    Example:
        >>> element_targets((2, 3), np.array([[2], [-1]]), 1).tolist()
        [2, 5]
    """
    idx = np.where(idx < 0, idx + shape[axis], idx)
    coords = list(np.indices(idx.shape, sparse=False))
    coords[axis] = idx
    return np.ravel_multi_index(tuple(coords), shape).reshape(-1)


def tensor_scatter(cache: Tensor, update: Tensor, write_indices, mode: str, axis: int) -> Tensor:
    """ONNX TensorScatter (a KV-cache write): batch b's update goes to positions
    `write_indices[b] + i` along `axis` (modulo the cache length in "circular" mode).

    Shapes: cache [B, ..., max_len, ...], update [B, ..., len, ...], write_indices [B] or None
    (zeros) -> cache's shape.
    """
    from ._rt_index import scatter_elements

    shape = cache.dims()
    rank = len(shape)
    axis %= rank
    b, seq, cap = shape[0], update.dims()[axis], shape[axis]
    w = np.zeros(b, np.int64) if write_indices is None else np.asarray(write_indices.numpy())
    pos = w.reshape(b, 1).astype(np.int64) + np.arange(seq, dtype=np.int64)
    if mode == "circular":
        pos %= cap
    elif pos.size and (pos.min() < 0 or pos.max() >= cap):
        raise ValueError(f"TensorScatter: writes at {pos.min()}..{pos.max()} outside [0, {cap})")
    view = [b] + [1] * (axis - 1) + [seq] + [1] * (rank - axis - 1)
    idx = np.broadcast_to(pos.reshape(view), update.dims())
    return scatter_elements(cache, _ids(idx, cache.device), update, axis, "none")
