"""`filter_classes`: classes of bit-identical conv filters, and its cheap rejection paths."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray._filter_classes import PREFIX, filter_classes


def test_equal_filters_are_found_and_numbered_by_first_occurrence():
    w = np.array([[3.0, 1.0], [1.0, 2.0], [3.0, 1.0], [1.0, 2.0], [5.0, 5.0]], np.float32)
    keep, inverse = filter_classes(w)
    assert keep.tolist() == [0, 1, 4]
    assert inverse.tolist() == [0, 1, 0, 1, 2]


def test_filters_equal_over_the_prefix_but_not_after_it_are_distinct():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, PREFIX + 3)).astype(np.float32)
    w[3, :PREFIX] = w[1, :PREFIX]  # same prefix, different tail
    assert filter_classes(w) is None
    w[3] = w[1]
    keep, inverse = filter_classes(w)
    assert keep.tolist() == [0, 1, 2, 4, 5]
    assert inverse.tolist() == [0, 1, 2, 1, 3, 4]


def test_the_bias_separates_equal_weights():
    w = np.ones((3, 4), np.float32)
    assert filter_classes(w, np.array([0.0, 1.0, 2.0], np.float32)) is None
    keep, inverse = filter_classes(w, np.array([1.0, 0.0, 1.0], np.float32))
    assert (keep.tolist(), inverse.tolist()) == ([0, 1], [0, 1, 0])


def test_quantized_weights_with_repeated_first_values_are_rejected_cheaply(monkeypatch):
    """int8-quantized filters share first values (256 levels, 512 filters) but not prefixes:
    they are rejected without the full sort of whole filters (np.unique over [512, 4608]
    values: 2.2 ms per resnet18 conv on every call, measured; the prefix check 0.09 ms)."""
    import burn_ndarray._filter_classes as fc

    rng = np.random.default_rng(1)
    q = rng.integers(-127, 128, (512, 512, 3, 3)).astype(np.float32) * np.float32(0.01)
    flat0 = np.sort(q.reshape(512, -1)[:, 0])
    assert (flat0[1:] == flat0[:-1]).any()  # the first values do repeat
    calls = []
    real = np.unique
    monkeypatch.setattr(fc.np, "unique", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert filter_classes(q) is None
    assert calls == []
    q[7] = q[300]
    keep, inverse = filter_classes(q)
    assert calls == [1] and keep.size == 511 and inverse[300] == inverse[7] == 7


def _counting(monkeypatch):
    """Count the computations of `filter_classes` behind the conv entry points' cache."""
    import burn_ndarray._filter_classes as fc

    calls = []
    real = fc.filter_classes

    def counted(weight, bias=None):
        calls.append(weight.shape)
        return real(weight, bias)

    monkeypatch.setattr(fc, "filter_classes", counted)
    return calls


@pytest.mark.parametrize("native", [True, False])
def test_conv_computes_the_classes_once_per_live_weight(monkeypatch, native):
    """A model calls each conv with the same parameter arrays every forward: the classes are
    computed on the first call only (~12 us each, 41 convs per mobilenet_v3_small forward),
    a new bias array (equal weights, other biases) is computed anew and stays exact, and the
    entry goes with the weight."""
    import gc

    import burn_ndarray._filter_classes as fc
    from burn_ndarray import NdArray
    from burn_tensor.ops import ConvOptions

    calls = _counting(monkeypatch)
    b = NdArray(num_threads=1, parallel_min=1 if native else 1 << 40)
    opt = ConvOptions((1, 1), (0, 0), (1, 1), 1)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 8, 5, 5)).astype(np.float32)
    w = np.full((6, 8, 1, 1), 0.5, np.float32)
    bias = np.zeros(6, np.float32)
    first = b.conv2d(x, w, bias, opt)
    for _ in range(3):
        np.testing.assert_array_equal(b.conv2d(x, w, bias, opt), first)
    assert len([c for c in calls if c == w.shape]) == 1
    other = np.arange(6, dtype=np.float32)  # the same weights, every bias different
    got = b.conv2d(x, w, other, opt)
    want = x.astype(np.float64).sum(axis=1)[:, None] * 0.5 + other[None, :, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len([c for c in calls if c == w.shape]) == 2
    before = len(fc._Cache.entries)
    del w
    gc.collect()
    assert len(fc._Cache.entries) < before
