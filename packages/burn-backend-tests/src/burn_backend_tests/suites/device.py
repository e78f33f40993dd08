"""Conformance: moving tensors between the devices of the backend, and the require-grad flag.

A backend with one device still gets its `*_to_device` ops checked: the Tensor API returns the tensor
itself for a move to its own device, so the op is called on the primitive as well (a move must copy
values exactly and keep kind, dtype and shape).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int, Tensor

from .._ctx import LAYOUTS, sample

_KINDS = {Float: "float", Int: "int", Bool: "bool"}


def _values(kind):
    x = sample((3, 4), "int", seed=5)
    return x > 0 if kind is Bool else x


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int, Bool], ids=["float", "int", "bool"])
def test_to_device_every_device(burn, kind, layout):
    t, ref = burn.view_input(_values(kind), kind, layout)
    backend = burn.backend
    for index in range(backend.device_count()):
        dev = backend.device(index)
        moved = t.to_device(dev)
        assert moved.device is dev and moved.kind is kind and moved.dtype is t.dtype
        np.testing.assert_array_equal(moved.to_data().array, ref.astype(t.dtype.np))
        back = moved.to_device(burn.device)
        burn.assert_result(back, ref, kind)
    # The op itself, on the primitive, to the tensor's own device.
    op = getattr(backend, f"{_KINDS[kind]}_to_device")
    moved = Tensor.from_primitive(op(t.into_primitive(), burn.device), kind, burn.device)
    burn.assert_result(moved, ref, kind)


def test_require_grad_flag(burn):
    x = sample((2, 3), "any", seed=6)
    t = burn.float(x)
    g = t.require_grad()
    burn.assert_close(g, burn.ref(x))
    assert g.is_require_grad() is bool(burn.backend.is_autodiff)
    off = g.set_require_grad(False)
    assert off.is_require_grad() is False
    burn.assert_close(off, burn.ref(x))
    # Int and Bool tensors never require grad.
    assert burn.int([1, 2]).is_require_grad() is False
