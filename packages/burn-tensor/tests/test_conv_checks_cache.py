"""conv2d's shape checks run once per (shapes, options) signature; kinds and devices, and any
new signature, are still checked at every call with their clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray

from burn_tensor import Tensor, TensorCheckError, _module_conv_checks, module


def test_conv2d_shape_checks_once_per_signature(monkeypatch):
    calls = []
    real = _module_conv_checks._conv_out

    def counted(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(_module_conv_checks, "_conv_out", counted)
    monkeypatch.setattr(_module_conv_checks, "_CONV2D_SHAPES_OK", {})
    dev = NdArray().device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((1, 2, 7, 6)).astype(np.float32), dev)
    w = Tensor.from_data(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), dev)
    b = Tensor.from_data(rng.standard_normal(3).astype(np.float32), dev)
    first = module.conv2d(x, w, b, padding=1).to_data().numpy()
    again = module.conv2d(x, w, b, padding=1).to_data().numpy()
    assert calls == ["conv2d"]  # the second call's shapes were already checked
    np.testing.assert_array_equal(first, again)
    # a cached signature still rejects an Int weight / input (kinds are per call)
    wi = w.int()
    with pytest.raises(TensorCheckError, match="Float"):
        module.conv2d(x, wi, b, padding=1)
    with pytest.raises(TensorCheckError, match="Float"):
        module.conv2d(x.int(), w, b, padding=1)
    # new signatures get their own checks and errors
    with pytest.raises(TensorCheckError, match="bias must be"):
        module.conv2d(x, w, b.slice([slice(0, 2)]), padding=1)
    with pytest.raises(TensorCheckError, match="does not fit"):
        module.conv2d(x, w, b, padding=0, stride=(8, 1), dilation=4)
