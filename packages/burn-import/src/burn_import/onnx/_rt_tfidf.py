"""ONNX TfIdfVectorizer over integer tokens, computed on the host (counting n-grams).

The pool lists the n-grams to count: `ngram_counts[n-1]` is where the n-grams of length n
start in `pool_int64s` (each takes n consecutive values) and the j-th n-gram of the pool is
counted in output column `ngram_indexes[j]`. In each row, an n-gram starts at every position
and takes every d-th token, for d = 1 .. max_skip_count + 1; unigrams are counted once (d does
not change them). TF gives the counts, IDF the weight (1 without weights) where the count is
non-zero, TFIDF the count times the weight.
"""

from __future__ import annotations

import itertools

import numpy as np
from burn_tensor import DType, Tensor


def ngram_table(pool, counts, indexes) -> dict[tuple[int, ...], int]:
    """n-gram (tuple of tokens) -> output column.

    Example:
        >>> ngram_table([7, 8, 1, 2, 3, 4], [0, 2], [5, 4, 0, 1])
        {(7,): 5, (8,): 4, (1, 2): 0, (3, 4): 1}
    """
    table: dict[tuple[int, ...], int] = {}
    j = 0
    bounds = list(counts) + [len(pool)]
    for n, (lo, hi) in enumerate(itertools.pairwise(bounds), start=1):
        for s in range(lo, hi, n):
            table[tuple(int(v) for v in pool[s : s + n])] = int(indexes[j])
            j += 1
    return table


def tfidf(x: Tensor, table, min_n: int, max_n: int, max_skip: int, mode: str, weights, size):
    """Shapes: x [c] or [b, c] ints -> [size] or [b, size] float32."""
    tokens = np.asarray(x.numpy())
    rows = tokens.reshape(1, -1) if tokens.ndim < 2 else tokens
    freq = np.zeros((rows.shape[0], size), np.int64)
    for r, row in enumerate(rows):
        row = [int(v) for v in row]
        c = len(row)
        for d in range(1, max_skip + 2):
            for n in range(max(min_n, 1 if d == 1 else 2), max_n + 1):
                for i in range(c - d * (n - 1)):
                    col = table.get(tuple(row[i + d * t] for t in range(n)))
                    if col is not None:
                        freq[r, col] += 1
    w = np.ones(size) if not weights else np.asarray(weights, np.float64)
    if mode == "TF":
        y = freq.astype(np.float64)
    elif mode == "IDF":
        y = np.where(freq > 0, w, 0.0)
    else:  # TFIDF
        y = freq * w
    y = y.astype(np.float32)
    return Tensor.from_data(y if tokens.ndim == 2 else y[0], x.device, DType.F32)
