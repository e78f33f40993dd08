"""`all_reduce_flat`: the gradients of a step reduced as one call per dtype give the same sums
as one call per tensor, in their own shapes, on every rank (checked against numpy)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor
from burn_tensor.collective import ThreadGroup
from burn_backend_tests import run_ranks
from burn_train.learner._parallel import all_reduce_flat

SHAPES = [(3, 4), (1,), (2, 3, 5), (7,), (1, 1)]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_mixed_shapes_and_dtypes_sum_like_numpy(n):
    rng = np.random.default_rng(n)
    floats = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(n)]
    ints = [rng.integers(-50, 50, (4, 2)).astype(np.int64) for _ in range(n)]
    backend = NdArray(num_devices=n)
    devices = [backend.device(i) for i in range(n)]
    group = ThreadGroup(devices)
    comms = [group.communicator(r) for r in range(n)]

    def work(r):
        tensors = [Tensor.from_data(a, devices[r]) for a in floats[r]]
        # an int tensor between the floats: its own group, the float order is kept
        tensors.insert(2, Tensor.from_data(ints[r], devices[r], DType.I64))
        out = all_reduce_flat(tensors, comms[r])
        assert [t.dims() for t in out] == [t.dims() for t in tensors]
        assert all(t.device == devices[r] for t in out)
        return [t.numpy() for t in out]

    results = run_ranks(n, work)
    want = [np.sum([f[i].astype(np.float64) for f in floats], 0) for i in range(len(SHAPES))]
    want.insert(2, np.sum(ints, 0))
    for got in results:
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
        assert got[2].dtype == np.int64
    for got in results[1:]:  # every rank gets the same bits
        for a, b in zip(got, results[0], strict=True):
            assert a.tobytes() == b.tobytes()


def test_same_bits_as_one_call_per_tensor():
    from burn_tensor.collective import all_reduce

    rng = np.random.default_rng(7)
    data = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(2)]
    backend = NdArray(num_devices=2)
    devices = [backend.device(0), backend.device(1)]
    group = ThreadGroup(devices)
    comms = [group.communicator(r) for r in range(2)]

    def work(r):
        tensors = [Tensor.from_data(a, devices[r]) for a in data[r]]
        flat = [t.numpy() for t in all_reduce_flat(tensors, comms[r])]
        each = [all_reduce(t, comms[r], "sum").numpy() for t in tensors]
        return flat, each

    for flat, each in run_ranks(2, work):
        for a, b in zip(flat, each, strict=True):
            assert a.tobytes() == b.tobytes()


def test_weight_on_the_flat_tensor_gives_the_bits_of_weighting_each():
    """The rank's weight is applied once to the flattened tensors (one op instead of one per
    gradient); the sums are bitwise those of weighting every tensor before the reduction, with
    the unequal weights of an uneven last batch (5 and 3 of 8 items)."""
    from burn_tensor.collective import all_reduce

    rng = np.random.default_rng(11)
    data = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(2)]
    weights = [5 / 8, 3 / 8]
    backend = NdArray(num_devices=2)
    devices = [backend.device(0), backend.device(1)]
    group = ThreadGroup(devices)
    comms = [group.communicator(r) for r in range(2)]

    def work(r):
        tensors = [Tensor.from_data(a, devices[r]) for a in data[r]]
        flat = [t.numpy() for t in all_reduce_flat(tensors, comms[r], weights[r])]
        each = [all_reduce(t * weights[r], comms[r], "sum").numpy() for t in tensors]
        return flat, each

    for flat, each in run_ranks(2, work):
        for a, b in zip(flat, each, strict=True):
            assert a.tobytes() == b.tobytes()
    want = [data[0][i].astype(np.float64) * 5 / 8 + data[1][i] * 3 / 8 for i in range(len(SHAPES))]
    for a, w in zip(flat, want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-6, atol=1e-6)
