"""Cuda's `dropout` on the CPU stand-in (`cpu_backend.py`, kernels built by g++): one launch of
burn_gpu's `philox_dropout` whose (out, mask) are bit for bit the contract's three-op default
(the bernoulli draw of the same (seed, call), the scale, the multiply) in float32, float64 and
both half types, on contiguous and transposed inputs; an empty input still takes its call, as
a draw does; `nn.Dropout` under Autodiff launches it once forward and one multiply backward."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

pytest.importorskip("ml_dtypes")
pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _bits(cp, a) -> bytes:
    return np.ascontiguousarray(cp.asnumpy(a)).tobytes()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("prob", [0.1, 0.5, 1.0 / 3.0])
def test_one_launch_with_the_defaults_bits(dt, prob):
    from burn_tensor import Backend, Tensor
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend(float_dtype=dt) as (be, fake):
        d = be.device()
        x = Tensor.from_data(np.random.default_rng(0).standard_normal((37, 53)), d).into_primitive()
        for view in (x, be.float_swap_dims(x, 0, 1)):
            be.seed(7, d)
            start = len(fake.launches)
            out, mask = be.dropout(view, prob)
            names = [k.name for k in fake.launches[start:]]
            be.seed(7, d)
            want_out, want_mask = Backend.dropout(be, view, prob)
            assert _bits(fake, out) == _bits(fake, want_out)
            assert _bits(fake, mask) == _bits(fake, want_mask)
            assert out.dtype == x.dtype and out.shape == view.shape
            # the transposed view is copied contiguous first (one copy kernel), then one launch
            assert names[-1] == "philox_dropout" and names.count("philox_dropout") == 1, names
            assert not {"bf16_to_f32", "f32_to_bf16"} & set(names)  # no float32 detour


def test_an_empty_input_takes_its_call_as_a_draw_does():
    from burn_tensor import Distribution, Tensor
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend() as (be, fake):
        d = be.device()
        be.seed(3, d)
        out, mask = be.dropout(Tensor.zeros([0, 4], d).into_primitive(), 0.5)
        assert out.shape == mask.shape == (0, 4)
        after_dropout = Tensor.random([8], Distribution.default(), d).numpy()
        be.seed(3, d)
        Tensor.random([0, 4], Distribution.bernoulli(0.5), d)
        assert np.array_equal(Tensor.random([8], Distribution.default(), d).numpy(), after_dropout)


def test_nn_dropout_is_one_launch_forward_and_one_multiply_backward():
    from burn_autodiff import Autodiff
    from burn_nn import DropoutConfig
    from burn_tensor import Tensor
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend() as (be, fake):
        d = Autodiff(be).device()
        x = Tensor.from_data(np.linspace(-1, 1, 64).reshape(8, 8), d).require_grad()
        d.seed(5)
        start = len(fake.launches)
        y = DropoutConfig(0.25).init().forward(x)
        fwd = [k.name for k in fake.launches[start:]]
        assert fwd == ["philox_dropout"], fwd
        grads = (y * y).sum().backward()
        # d(sum y^2)/dx = 2 y * mask: zero where dropped, 2 x / 0.75^2 where kept
        yv, gv = y.numpy(), x.grad(grads).numpy()
        kept = yv != 0
        xv = np.linspace(-1, 1, 64).reshape(8, 8).astype(np.float32)
        np.testing.assert_allclose(gv[kept], 2 * xv[kept] / 0.75**2, rtol=1e-6)
        assert np.all(gv[~kept] == 0)
