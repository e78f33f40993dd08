"""Two devices of ONE backend share the per-kind op namespace, so every op must compare devices
themselves (not only the namespace). NdArray has one device; a subclass with two stands in for a
multi-device backend (CUDA, OpenCL)."""

from __future__ import annotations

import pytest

from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError


class TwoCpus(NdArray):
    name = "ndarray-two-devices"

    def device_count(self) -> int:
        return 2


B = TwoCpus()
D0, D1 = B.device(0), B.device(1)


def _pair(shape=(2, 2)):
    return Tensor.ones(shape, D0), Tensor.ones(shape, D1)


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a.sub(b),
        lambda a, b: a == b,
        lambda a, b: a.greater(b),
        lambda a, b: a.matmul(b),
        lambda a, b: Tensor.cat([a, b], 0),
        lambda a, b: a.mask_where(a.greater_elem(0.0), b),
    ],
    ids=["add", "mul", "sub", "eq", "greater", "matmul", "cat", "mask_where"],
)
def test_ops_refuse_tensors_on_two_devices_of_one_backend(op):
    a, b = _pair()
    assert a._o is b._o and a.device is not b.device  # the situation under test
    with pytest.raises(TensorCheckError, match="devices differ|on Cpu"):
        op(a, b)


def test_same_device_still_works_and_to_device_moves():
    a, b = _pair()
    assert (a + b.to_device(D0)).device is D0
    assert (a + b.to_device(D0)).sum().into_scalar() == 8.0
