"""Tests written for mutants of Fusion's stream that the suite let survive (tools/mutation)."""

from __future__ import annotations

import numpy as np
from _fusion_testlib import inner_backend
from burn_fusion import Fusion
from burn_tensor import Tensor


def test_a_chain_on_one_input_reads_one_buffer():
    # node references (r >= 0, r = 0 included) are not inputs: a kernel computing
    # ((x * 2) + 1).exp() takes x alone, not x plus a stray copy of the last input
    device = Fusion(inner_backend()).device()
    x = np.linspace(-1.0, 1.0, 64).astype(np.float32)
    out = ((Tensor.from_data(x, device) * 2.0) + 1.0).exp().numpy()
    prog = device.backend.stream(device.index).last_program
    assert len(prog.inputs) == 1 and len(prog.nodes) == 3
    np.testing.assert_allclose(out, np.exp(x.astype(np.float64) * 2 + 1), rtol=1e-6)


def _device():
    return Fusion(inner_backend()).device()


def _stats(device):
    return device.fusion_stats()


def _owned(device, a):
    """A fused kernel's result (two ops): a buffer Fusion owns, reusable once dropped."""
    t = (Tensor.from_data(a, device) * 1.0) + 0.0
    device.sync()
    return t


def test_dead_ops_are_left_out_of_the_kernel():
    # node 0 (x * 2) feeds the result, node 2 (x.exp()) is dropped before the flush: the kernel
    # runs the two live ops only, whichever input the live ones read
    device = _device()
    x = Tensor.from_data(np.arange(8, dtype=np.float32), device)
    device.sync()
    t1 = x * 2.0
    out = t1 + 1.0
    dead = x.exp()
    del t1, dead
    np.testing.assert_array_equal(out.numpy(), np.arange(8) * 2.0 + 1.0)
    assert len(device.backend.stream(device.index).last_program.nodes) == 2


def test_a_bool_result_is_never_written_into_a_float_buffer():
    # the dropped float input may take a float result in place, not a comparison's bool one
    device = _device()
    a = np.linspace(-1.0, 1.0, 32).astype(np.float32)
    y = _owned(device, a)
    z = (y + 0.25) > 0.5
    del y
    got = z.numpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, a + 0.25 > 0.5)


def test_one_result_takes_one_dropped_buffer():
    device = _device()
    a, b = np.arange(16, dtype=np.float32), np.ones(16, np.float32)
    x, y = _owned(device, a), _owned(device, b)
    before = _stats(device)["results_in_place"]
    out = (x + y) * 2.0
    del x, y
    np.testing.assert_array_equal(out.numpy(), (a + b) * 2.0)
    assert _stats(device)["results_in_place"] - before == 1
