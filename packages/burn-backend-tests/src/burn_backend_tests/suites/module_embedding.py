"""Conformance: `embedding` (row lookup) and `embedding_backward` (rows of the grad added back).

Repeated indices must accumulate their gradients (Burn's select_assign adds), rows never looked
up get zero; references are explicit loops over the index tensor.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Int, module

from .._ctx import sample
from .._prim import prim, wrap

# (id, vocab, d_model, indices): repeats within a row and across rows, unused rows
CASES = [
    ("repeats", 5, 3, [[0, 4, 4], [2, 0, 1]]),
    ("thrice", 6, 4, [[3, 3, 5, 3], [1, 5, 0, 2], [3, 1, 1, 4]]),
    ("single", 4, 2, [[2]]),
    ("unused_rows", 7, 3, [[6, 6], [6, 0]]),
]


def _case(cid):
    return next(c[1:] for c in CASES if c[0] == cid)


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "flipped", "strided"])
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_embedding(burn, cid, layout):
    vocab, d, idx = _case(cid)
    w, wr = burn.view_input(sample((vocab, d), "any", vocab), layout=layout)
    i, ir = burn.view_input(np.array(idx), Int, layout)
    burn.assert_close(module.embedding(w, i), wr[ir])


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_embedding_backward_accumulates_repeated_indices(burn, cid):
    vocab, d, idx = _case(cid)
    idx = np.array(idx)
    w = burn.ref(sample((vocab, d), "any", vocab))
    g = burn.ref(sample(idx.shape + (d,), "any", d))
    expected = np.zeros((vocab, d))
    for pos in np.ndindex(*idx.shape):
        expected[idx[pos]] += g[pos]
    dw = burn.backend.embedding_backward(prim(burn, w), prim(burn, g), prim(burn, idx, Int))
    burn.assert_close(wrap(burn, dw), expected, burn.loose)


def test_embedding_empty_batch(burn):
    w = burn.float(sample((4, 3), "any", 16))
    i = burn.int(np.zeros((0, 5), np.int64))
    out = module.embedding(w, i)
    burn.assert_close(out, np.zeros((0, 5, 3)))
    dw = burn.backend.embedding_backward(
        w.into_primitive(), out.into_primitive(), i.into_primitive()
    )
    burn.assert_close(wrap(burn, dw), np.zeros((4, 3)))
