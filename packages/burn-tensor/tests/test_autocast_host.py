"""The host cost of autocast's own layer (issue 34: the mixed-precision transformer step on Cuda
was host bound, 54 us of Python per launch) and that trimming it changed no value: a linear /
matmul under autocast gives the bits of its explicit decomposition (cast in, op, cast out,
bias added in float32), forward and backward."""

from __future__ import annotations

import cProfile
import pstats

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray

from burn_tensor import DType, Tensor, autocast, module

#: the files of autocast's own layer: the policy, the Tensor methods it calls (cast, dtype)
#: and the dtype helpers; the backend ops' frames are not counted (they are not autocast's)
_LAYER = ("burn_tensor/_autocast.py", "burn_tensor/_tensor.py", "burn_tensor/_dtype.py")


def _inputs(seed=0):
    device = Autodiff(NdArray()).device()
    rng = np.random.default_rng(seed)

    def t(*shape):
        data = rng.standard_normal(shape).astype(np.float32)
        return Tensor.from_data(data, device).require_grad()

    return t(2, 5, 6), t(6, 4), t(4), t(2, 3, 5, 6), t(2, 3, 6, 5)


def _bits(t):
    return t.numpy().tobytes()


@pytest.mark.parametrize("half", [DType.BF16, DType.F16])
def test_autocast_linear_and_matmul_are_their_decomposition_bitwise(half):
    """Forward values and the gradients of x and weight equal those of the casts and ops
    written out by hand (what autocast did before its host path was trimmed, and what
    `linear_half`'s default runs); the bias gradient is those sums in another order."""
    x, w, b, q, k = _inputs()
    with autocast(half):
        y = module.linear(x, w, b)
        s = q @ k
    ref_y = module.linear(x.cast(half), w.cast(half)).cast(DType.F32) + b.reshape([1, 1, 4])
    ref_s = (q.cast(half) @ k.cast(half)).cast(DType.F32)
    assert y.dtype is DType.F32 and s.dtype is DType.F32
    assert _bits(y) == _bits(ref_y) and _bits(s) == _bits(ref_s)
    g = ((y * y).sum() + (s * s).sum()).backward()
    gr = ((ref_y * ref_y).sum() + (ref_s * ref_s).sum()).backward()
    for t in (x, w, q, k):
        assert _bits(t.grad(g)) == _bits(t.grad(gr))
    # the bias gradient sums the output gradient over the flattened rows at once (one
    # `linear_half` node) where the broadcast add summed one dim at a time: float32 sums of
    # the same numbers in another order
    want = (2 * y.numpy().astype(np.float64)).sum((0, 1))
    np.testing.assert_allclose(b.grad(g).numpy(), want, rtol=1e-6, atol=1e-6)


def _layer_calls(fn) -> int:
    """Python calls (cProfile's count) of one `fn()` in autocast's own files (`_LAYER`)."""
    fn()
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    stats = pstats.Stats(pr).stats
    return sum(v[1] for key, v in stats.items() if key[0].endswith(_LAYER))


def test_autocast_layer_python_calls_per_half_op():
    """Autocast's own Python calls per half op (inside an open region, as the step runs them):
    each float argument's dtype read once, casts straight to the backend's cast (no
    `Tensor.cast` re-parsing the dtype), no list/closure per call. Before: 59 for a biased
    linear (10 `dtype` reads, 3 `Tensor.cast`, 3 `DType.from_any`) and 48 for a matmul;
    29 and 22 after."""
    x, w, b, q, k = _inputs()
    with autocast("bf16"):
        linear = _layer_calls(lambda: module.linear(x, w, b))
        matmul = _layer_calls(lambda: q @ k)
    assert linear <= 32, linear
    assert matmul <= 24, matmul
