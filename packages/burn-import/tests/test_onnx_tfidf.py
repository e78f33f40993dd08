"""TfIdfVectorizer over integer tokens against hand-counted n-grams.

Pool: the unigram (2,) -> column 0, the bigrams (2, 3) -> 1 and (3, 4) -> 2. In [2, 9, 3, 4]
the adjacent bigrams are (2, 9), (9, 3), (3, 4); with one skip also (2, 3) and (9, 4).
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T

POOL = {"ngram_counts": [0, 1], "ngram_indexes": [0, 1, 2], "pool_int64s": [2, 2, 3, 3, 4]}


def _run(x, mode, skip, min_n, weights=None):
    attrs = dict(POOL, mode=mode, max_skip_count=skip, min_gram_length=min_n, max_gram_length=2)
    if weights:
        attrs["weights"] = weights
    out = [3] if x.ndim == 1 else [x.shape[0], 3]
    m = one_node(
        "TfIdfVectorizer", [("x", T.INT64, list(x.shape))], [("y", T.FLOAT, out)], opset=9, **attrs
    )
    return backend.prepare(m).run([x])[0].tolist()


@pytest.mark.parametrize(("skip", "want"), [(0, [1, 0, 1]), (1, [1, 1, 1])])
def test_tf_counts(skip, want):
    assert _run(np.array([2, 9, 3, 4]), "TF", skip, 1) == want


def test_idf_and_tfidf_with_weights_per_row():
    x = np.array([2, 9, 3, 4])
    assert _run(x, "IDF", 0, 1, [0.5, 2.0, 3.0]) == [0.5, 0.0, 3.0]
    batch = np.array([[2, 9, 3, 4], [2, 3, 3, 4]])
    assert _run(batch, "TFIDF", 0, 2, [0.5, 2.0, 3.0]) == [[0.0, 0.0, 3.0], [0.0, 2.0, 3.0]]


def test_unigrams_are_counted_once_whatever_the_skips():
    assert _run(np.array([2, 2, 2]), "TF", 3, 1) == [3, 0, 0]
