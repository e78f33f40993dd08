"""Identical filters give identical output channels: conv computes each distinct filter once.

A BLAS sgemm does not give every element of C the same arithmetic. Measured with numpy's
OpenBLAS 0.3.31 (Haswell kernels), `W @ X` with every row of W equal (0.02) and X random:
within each 12-row block of C, 6 rows are one fused multiply-add chain along K and 6 sum the
even and odd k in two accumulators, and the edge block is a third variant, so a [128, 32] @
[32, 729] product has 3 distinct rows (4 on two threads, which split the work differently).
Putting the output channels on the other side of the product (`X^T @ W^T`) still gives 2 to 5
distinct ones. Which rows differ depends on the CPU's kernel, the shape and the thread count.

onnxruntime (MLAS) and oneDNN compute every output element by the same instruction sequence
(output channels in SIMD lanes or broadcast-FMA rows, K in one order), and so does ONNX's
reference evaluator, so there a conv whose filters (with their biases) are equal gives equal
channels bit for bit. A user may rely on that, and a model with constant-initialised weights
does: ONNX's light squeezenet has every weight 0.02, its 1000 logits are equal at ~9.5e9 (where
float32 steps are 1024 apart), and a one-ulp difference turns the exactly uniform softmax into
0 or 0.03125.

Restoring the property by computing each class of bit-identical filters once and copying its
output is exact on every CPU and thread count. Finding the classes costs one sort of the
filters' first values (a few microseconds per conv for trained weights, whose first values
differ), then one of their first `PREFIX` values where first values repeat (quantized weights);
filters are compared in full only when two share that prefix.

A model calls its convs with the same weight arrays on every forward, so `cached_filter_classes`
keeps each (weight, bias) pair's answer while both arrays live (NdArray never writes an array in
place: `from_data` copies, ops return new arrays); mobilenet_v3_small spent ~0.5 ms of a 6 ms
forward recomputing them.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

#: values per filter compared before a full comparison (`filter_classes`)
PREFIX = 8


def filter_classes(
    weight: np.ndarray, bias: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Classes of bit-identical filters (weights and bias), or None when every one differs.

    Args:
        weight: [r, ...] array, one filter per leading index.
        bias: [r] or None; filters with equal weights but different biases differ.

    Returns:
        None (the common case), or `(keep, inverse)` with `keep` the first filter of each
        class, in order, and `inverse` the class of every filter: filter i equals filter
        `keep[inverse[i]]` bit for bit.

    Example:
        >>> w = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]], np.float32)
        >>> keep, inverse = filter_classes(w)
        >>> keep.tolist(), inverse.tolist()
        ([0, 1], [0, 1, 0])
        >>> filter_classes(w, np.array([0.0, 0.0, 1.0], np.float32)) is None
        True
    """
    r = weight.shape[0]
    if r < 2 or weight.size == 0:
        return None
    flat = weight.reshape(r, -1)
    # Bits, not values: -0.0 and 0.0 (or two NaNs) are not merged, so a merged pair is always a
    # pair that the GEMM would have been given identical inputs for.
    first = np.sort(flat[:, 0].view(f"u{flat.itemsize}"))
    if not (first[1:] == first[:-1]).any():
        return None
    # Quantized weights take few distinct values, so first values often repeat: compare a
    # prefix of PREFIX values before sorting whole filters (a full sort of 512 filters of 4,608
    # values cost ~3 ms per conv, every call).
    prefix = np.ascontiguousarray(flat[:, :PREFIX]).view(f"u{flat.itemsize}")
    rows = prefix[np.lexsort(prefix.T[::-1])]
    if not (rows[1:] == rows[:-1]).all(axis=1).any():
        return None
    if bias is not None:
        flat = np.concatenate([flat, bias.reshape(r, 1).astype(flat.dtype, copy=False)], axis=1)
    whole = np.ascontiguousarray(flat).view(np.dtype((np.void, flat.shape[1] * flat.itemsize)))
    _, keep, inverse = np.unique(whole.ravel(), return_index=True, return_inverse=True)
    if keep.size == r:
        return None
    # np.unique orders classes by their bytes; number them by first occurrence instead, so the
    # computed channels keep the filters' order.
    order = np.argsort(keep, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return keep[order], rank[inverse.ravel()]


def _sig(a: np.ndarray | None) -> tuple | None:
    """What could change on the same live array object (its buffer cannot): shape, strides,
    dtype (`__array_interface__` for the buffer's address cost ~1.5 us a call)."""
    if a is None:
        return None
    return (a.shape, a.strides, a.dtype)


class _Cache:
    """`filter_classes` of live (weight, bias) pairs, by identity (weakly: dropped with either)."""

    # reentrant: a weak reference's callback (`_drop`) can run inside `get` on this thread
    lock = threading.RLock()
    entries: dict[tuple[int, int], tuple] = {}

    @classmethod
    def get(cls, weight: np.ndarray, bias: np.ndarray | None):
        key = (id(weight), id(bias))
        hit = cls.entries.get(key)
        if (
            hit is not None
            and hit[0]() is weight
            and (bias is None or hit[1]() is bias)
            and hit[2] == (_sig(weight), _sig(bias))
        ):
            return hit[3]
        classes = filter_classes(weight, bias)
        try:
            drop = lambda _r, key=key: cls._drop(key)  # noqa: E731
            refs = (weakref.ref(weight, drop), None if bias is None else weakref.ref(bias, drop))
        except TypeError:  # not weakly referable: no way to know when it dies, so no cache
            return classes
        with cls.lock:
            cls.entries[key] = (refs[0], refs[1], (_sig(weight), _sig(bias)), classes)
        return classes

    @classmethod
    def _drop(cls, key: tuple[int, int]) -> None:
        with cls.lock:
            cls.entries.pop(key, None)


def cached_filter_classes(
    weight: np.ndarray, bias: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """`filter_classes(weight, bias)`, computed once per live pair of arrays (conv entry points,
    whose weights are a model's parameters; not for temporaries such as a group's slice)."""
    return _Cache.get(weight, bias)
