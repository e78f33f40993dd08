"""NdArray conv internals the conformance suite cannot reach at test-sized shapes: batch chunking.

The im2col and transposed-conv kernels process the batch in chunks of about 16 MB of columns,
reusing one set of buffers; real shapes reach several chunks only at sizes too large for a unit
test, so the chunk size is patched down here. The numbers are checked against the float64
references of the conformance suite (`burn_backend_tests.reference.conv`).
"""

from __future__ import annotations

import pytest
from burn_ndarray import _conv, _conv_transpose
from burn_tensor import module
from burn_tensor.ops import ConvOptions
from burn_backend_tests.reference import conv as ref


@pytest.mark.parametrize("g", [1, 2])
def test_batch_chunks_with_reused_buffers(env, rng, monkeypatch, g):
    """Chunks of 2 images over a batch of 3: buffers are refilled and the last chunk is short."""
    monkeypatch.setattr(_conv, "chunk_size", lambda n, per_image: min(n, 2))
    monkeypatch.setattr(_conv_transpose, "chunk_size", lambda n, per_image: min(n, 2))
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((6, 4 // g, 3, 2))
    b = rng.standard_normal(6)
    s, p, d = (2, 1), (1, 1), (1, 2)
    out = module.conv2d(env.t(x), env.t(w), env.t(b), stride=s, padding=p, dilation=d, groups=g)
    env.close(out, ref.conv2d(x, w, b, s, p, d, g))
    gy = rng.standard_normal(out.shape)
    dw = env.backend.conv2d_weight_backward(env.p(x), env.p(w), env.p(gy), ConvOptions(s, p, d, g))
    env.close(dw, ref.conv2d_w_grad(x, w.shape, gy, s, p, d, g))
    wt = rng.standard_normal((4, 6 // g, 3, 2))
    out_t = module.conv_transpose2d(env.t(x), env.t(wt), env.t(b), stride=s, padding=p, groups=g)
    env.close(out_t, ref.conv_transpose2d(x, wt, b, s, p, (0, 0), (1, 1), g))
