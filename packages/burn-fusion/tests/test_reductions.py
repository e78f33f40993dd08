"""Reductions with a fused elementwise prologue: the ops that make a pending input run inside
the reduction kernel, the input is never written, and the plan stays pending for the ops that
use the result. Kernel counts of the issue's examples (softmax, RMS norm, layer norm, mean of a
product) are measured here, values compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import inner_backend, inner_overrides
from burn_fusion import Fusion
from burn_tensor import Tensor, activation

RNG = np.random.default_rng(1)


@pytest.fixture(scope="module")
def device():
    return Fusion(inner_backend()).device()


def launched(device, fn):
    """(result as numpy, fused kernels launched, unfused ops run) of `fn()` read back."""
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    out = fn().numpy()
    after = device.fusion_stats()
    return (
        out,
        after["kernels_launched"] - before["kernels_launched"],
        (
            after["ops_unfused"] - before["ops_unfused"] - 1  # the read itself
        ),
    )


def data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_mean_of_a_product_is_two_kernels(device):
    a, b = data(64, 300), data(64, 300)
    x, y = Tensor.from_data(a, device), Tensor.from_data(b, device)
    got, k, unfused = launched(device, lambda: (x * y).mean())
    assert (k, unfused) == (2, 0)  # partial sums with the product inside, then their sum
    np.testing.assert_allclose(got, [(a * b).mean()], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_sum_and_mean_along_a_dim_are_one_kernel(device, dim):
    a, b = data(5, 6, 7), data(1, 6, 7)
    x, y = Tensor.from_data(a, device), Tensor.from_data(b, device)
    got, k, _ = launched(device, lambda: ((x - y) * 2.0).exp().sum_dim(dim))
    assert k == 1
    ref = np.exp((a - b) * 2.0).sum(dim, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    got, k, _ = launched(device, lambda: (x.transpose() + 1.0).mean_dim(dim))
    assert k == 1
    np.testing.assert_allclose(got, (a.swapaxes(1, 2) + 1.0).mean(dim, keepdims=True), rtol=1e-5)


def test_the_reduced_input_stays_usable(device):
    a = data(8, 9)
    x = Tensor.from_data(a, device)
    e = (x * 0.5).exp()
    s = e.sum_dim(1)
    out = (e / s).numpy()  # e was never written by the reduction: computed here
    np.testing.assert_allclose(
        out, np.exp(a * 0.5) / np.exp(a * 0.5).sum(1, keepdims=True), rtol=1e-5
    )


def test_rms_norm_is_one_row_kernel(device):
    a, g = data(32, 64), data(64)
    x = Tensor.from_data(a, device)
    gamma = Tensor.from_data(g, device).unsqueeze(2)

    def rms_norm():  # burn-nn's RmsNorm.forward
        rms = x.square().mean_dim(1).add_scalar(1e-5).sqrt()
        return x.div(rms).mul(gamma)

    got, k, unfused = launched(device, rms_norm)
    assert (k, unfused) == (1, 0)  # mean of squares, then x / rms * gamma, row by row
    ref = a / np.sqrt((a * a).mean(1, keepdims=True) + 1e-5) * g
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_softmax_is_one_row_kernel(device):
    a = data(16, 100)
    x = Tensor.from_data(a, device)
    e = np.exp(a - a.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)

    def composed():
        ex = x.sub(x.max_dim(1)).exp()
        return ex.div(ex.sum_dim(1))

    got, k, unfused = launched(device, composed)
    # one row kernel: the max, then exp and its sum, then exp / sum over the same row
    assert (k, unfused) == (1, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    # the softmax op: its default fuses the same way, an inner backend's own kernel is one op
    got, k, unfused = launched(device, lambda: activation.softmax(x, 1))
    assert (k, unfused) == ((0, 1) if inner_overrides(device, "softmax") else (2, 0))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_layer_norm_counts(device):
    a = data(16, 48)
    x = Tensor.from_data(a, device)

    def layer_norm():  # burn-nn's LayerNorm.forward without the affine parameters
        var, mean = x.var_mean_bias(1)
        return x.sub(mean).div(var.add_scalar(1e-5).sqrt())

    got, k, unfused = launched(device, layer_norm)
    # one row kernel: the mean, the variance of (x - mean), then the normalisation
    assert (k, unfused) == (1, 0)
    ref = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
