"""DFT with inverse=1 and onesided=1 (irfft) against numpy.fft.irfft in float64."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import numpy_helper as nh


@pytest.mark.parametrize(("bins", "length"), [(6, None), (6, 11), (6, 7), (4, 12)])
def test_irfft_matches_numpy(bins, length):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((2, bins, 3, 2)).astype(np.float32)  # axis 1, complex last
    out_len = 2 * (bins - 1) if length is None else length
    inits = [nh.from_array(np.array(length, np.int64), "n")] if length else []
    ins = [("x", T.FLOAT, list(x.shape))]
    m = one_node(
        "DFT",
        ins,
        [("y", T.FLOAT, [2, out_len, 3, 1])],
        opset=17,
        inits=inits,
        axis=1,
        inverse=1,
        onesided=1,
    )
    (y,) = backend.prepare(m).run([x])
    spec = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    want = np.fft.irfft(spec, n=out_len, axis=1)[..., None]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
