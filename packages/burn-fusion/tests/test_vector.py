"""Vector kernels: a plan whose operands are all contiguous with its shape (and aligned) runs the
4-elements-per-item variant (16-byte accesses), with a scalar tail for `n % 4`; anything read
through strides, or a misaligned base pointer, runs the scalar kernel. Values against numpy."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from _fusion_testlib import inner_backend
from burn_fusion import Fusion
from burn_tensor import Tensor

RNG = np.random.default_rng(3)


@pytest.fixture(scope="module")
def device():
    return Fusion(inner_backend()).device()


def _stream(device):
    return device.backend.stream(device.index)


def _gelu(x):
    return x * 0.5 * ((x / math.sqrt(2.0)).erf() + 1.0)


def _gelu_ref(a):
    erf = np.vectorize(math.erf)
    return a * 0.5 * (1.0 + erf(a / math.sqrt(2.0)))


@pytest.mark.parametrize("width", [4, 8])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 9, 1027, 4096 + 3])
def test_contiguous_chain_runs_the_vector_kernel_with_its_tail(device, n, width, monkeypatch):
    a = RNG.standard_normal(n).astype(np.float32)
    x = Tensor.from_data(a, device)
    monkeypatch.setattr(_stream(device), "vector_width", width)
    got = _gelu(x).numpy()
    assert _stream(device).last_program.vec == width
    np.testing.assert_allclose(got, _gelu_ref(a.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_every_width_and_mixed_dtypes():
    """f64 (two 16-byte halves per item), i64, a bool result and a cast, in one plan."""
    device = Fusion(inner_backend("f64-i64")).device()
    a = RNG.standard_normal((7, 13))
    i = RNG.integers(-50, 50, (7, 13))
    x, k = Tensor.from_data(a, device), Tensor.from_data(i, device)
    y = (x * 2.0).exp() - 1.0
    j = (k * 3 + 1).abs()
    m = y.greater_elem(0.5)
    f = j.float() + y
    got = [t.numpy() for t in (y, j, m, f)]
    prog = _stream(device).last_program
    assert prog.vec == 4 and prog.rank == 0
    y_ref = np.exp(a * 2.0) - 1.0
    j_ref = np.abs(i * 3 + 1)
    np.testing.assert_allclose(got[0], y_ref, rtol=1e-12)
    np.testing.assert_array_equal(got[1], j_ref)
    np.testing.assert_array_equal(got[2], y_ref > 0.5)
    np.testing.assert_allclose(got[3], j_ref + y_ref, rtol=1e-12)


def test_strided_or_broadcast_reads_run_the_scalar_kernel(device):
    a = RNG.standard_normal((33, 17)).astype(np.float32)
    b = RNG.standard_normal((1, 17)).astype(np.float32)
    x, y = Tensor.from_data(a, device), Tensor.from_data(b, device)
    got = ((x + y) * 2.0).exp().numpy()
    assert _stream(device).last_program.vec == 0
    np.testing.assert_allclose(got, np.exp((a + b) * 2.0), rtol=1e-5)
    got = (x.transpose() * 2.0).exp().numpy()
    assert _stream(device).last_program.vec == 0
    np.testing.assert_allclose(got, np.exp(a.T * 2.0), rtol=1e-5)


def test_a_misaligned_input_or_vectors_off_run_the_scalar_kernel(device, monkeypatch):
    a = RNG.standard_normal(4099).astype(np.float32)
    x = Tensor.from_data(a, device)
    stream = _stream(device)
    monkeypatch.setattr(stream.rt, "aligned", lambda prim: False)
    got = _gelu(x).numpy()
    assert stream.last_program.vec == 0
    np.testing.assert_allclose(got, _gelu_ref(a.astype(np.float64)), rtol=1e-5, atol=1e-6)
    monkeypatch.undo()
    monkeypatch.setattr(stream, "vector_width", 0)
    got = _gelu(x).numpy()
    assert stream.last_program.vec == 0
    np.testing.assert_allclose(got, _gelu_ref(a.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_the_width_setting_is_checked(monkeypatch):
    from burn_fusion import Stream

    monkeypatch.setenv("BURN_FUSION_VECTOR", "3")
    with pytest.raises(ValueError, match="BURN_FUSION_VECTOR must be 0, 4 or 8"):
        Stream(_stream(Fusion(inner_backend()).device()).rt)


def test_vector_result_written_in_place(device):
    a = RNG.standard_normal(1001).astype(np.float32)
    x = Tensor.from_data(a, device)
    y = (x * 2.0).exp() + 1.0  # a kernel's own buffer, never read by an inner op
    device.sync()
    before = device.fusion_stats()["results_in_place"]
    z = (y * 3.0).sqrt().neg()  # y is dropped next: its buffer takes z
    del y
    gc.collect()
    got = z.numpy()
    assert device.fusion_stats()["results_in_place"] == before + 1
    assert _stream(device).last_program.vec == 4
    np.testing.assert_allclose(got, -np.sqrt((np.exp(a * 2.0) + 1.0) * 3.0), rtol=1e-5)
