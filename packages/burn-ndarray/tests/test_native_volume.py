"""The native 3-D kernels (`_native/vol.c`, `_native_volume.py`): taken when native kernels are on,
equal to the float64 loops of `burn_backend_tests.reference.volume`, and bitwise the same for
every thread count. (The conformance suite runs them too, on its `parallel_min=1` backend.)"""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.reference import volume as ref
from burn_ndarray import NdArray, _native
from burn_tensor import ConvOptions, ConvTransposeOptions

pytestmark = pytest.mark.skipif(_native.lib() is None, reason="native kernels unavailable")

RNG = np.random.default_rng(383)
X = RNG.standard_normal((2, 4, 5, 6, 7))
W = RNG.standard_normal((6, 2, 3, 2, 3))
WT = RNG.standard_normal((4, 3, 3, 2, 3))
B = RNG.standard_normal(6)
C = ConvOptions((2, 1, 2), (1, 1, 0), (1, 2, 1), 2)
CT = ConvTransposeOptions((2, 1, 2), (1, 0, 1), (1, 0, 1), (1, 2, 1), 2)


def _runs(threads):
    b = NdArray(float_dtype="float64", num_threads=threads, parallel_min=1)
    # the native closures replace the contract's defaults on the instance
    for name in ("conv3d", "conv_transpose3d", "avg_pool3d", "max_pool3d_with_indices"):
        assert getattr(b, name).__module__ == "burn_ndarray._native_volume", name
    return [
        b.conv3d(X, W, B, C),
        b.conv_transpose3d(X, WT, B, CT),
        b.avg_pool3d(X, (3, 2, 3), (2, 1, 2), (1, 1, 1), False),
        *b.max_pool3d_with_indices(X, (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 2, 1)),
    ]


def test_native_volume_matches_loops_and_threads():
    one, four = _runs(1), _runs(4)
    for a, b in zip(one, four):
        np.testing.assert_array_equal(a, b)
    want = [
        ref.conv3d(X, W, B, C.stride, C.padding, C.dilation, 2),
        ref.conv_transpose3d(X, WT, B, CT.stride, CT.padding, CT.padding_out, CT.dilation, 2),
        ref.avg_pool3d(X, (3, 2, 3), (2, 1, 2), (1, 1, 1), False),
        *ref.max_pool3d_with_indices(X, (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 2, 1)),
    ]
    for got, w in zip(one, want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)
