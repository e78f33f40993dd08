"""Batched matmuls split over the pool along every leading dim (attention's [batch, heads, ...]
with a batch smaller than the thread budget), equal to numpy's; partial broadcasts and views
that would need a copy split along the first dim only, as before."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import _parallel

RNG = np.random.default_rng(5)


def _spy(monkeypatch):
    calls = []
    real = _parallel.run_chunks

    def run(fn, chunks):
        calls.append(len(chunks))
        return real(fn, chunks)

    monkeypatch.setattr(_parallel, "run_chunks", run)
    return calls


@pytest.mark.parametrize(
    "xs,ys,parts",
    [
        ((1, 8, 40, 16), (1, 8, 16, 24), 4),  # batch 1 x 8 heads: split over the heads
        ((2, 8, 40, 16), (16, 24), 4),  # a shared right operand
        ((3, 40, 16), (1, 16, 24), 3),  # a size-1 batch broadcast
        ((2, 1, 40, 16), (2, 8, 16, 24), 2),  # a partial broadcast: split along dim 0 only
    ],
)
def test_split_over_flattened_batch(monkeypatch, xs, ys, parts):
    calls = _spy(monkeypatch)
    x, y = RNG.normal(size=xs).astype(np.float32), RNG.normal(size=ys).astype(np.float32)
    out = _parallel.matmul(x, y, 4)
    np.testing.assert_allclose(out, np.matmul(x, y), rtol=1e-6, atol=1e-6)
    assert calls == [parts]


def test_non_viewable_operand_splits_along_dim_0(monkeypatch):
    calls = _spy(monkeypatch)
    x = RNG.normal(size=(8, 2, 40, 16)).astype(np.float32).transpose(1, 0, 2, 3)
    y = RNG.normal(size=(2, 8, 16, 24)).astype(np.float32)
    np.testing.assert_allclose(_parallel.matmul(x, y, 4), np.matmul(x, y), rtol=1e-6, atol=1e-6)
    assert calls == [2]
