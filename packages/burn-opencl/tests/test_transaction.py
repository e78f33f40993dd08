"""`Transaction` on OpenCl waits once and transfers once: one blocking read for many tensors.

The spy wraps the real `Runtime.read` (the data still moves through it) and counts calls.
"""

from __future__ import annotations

import os

import numpy as np
from burn_opencl import OpenCl
from burn_opencl._runtime import Runtime
from burn_tensor import Tensor, Transaction

DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


def test_transaction_is_one_read(monkeypatch):
    dev = OpenCl(device_type=DEVICE_TYPE).device()
    a = Tensor.from_data(np.arange(12.0).reshape(3, 4), dev).swap_dims(0, 1)  # a view
    b = Tensor.from_data(np.arange(5), dev) * 3
    c = Tensor.from_data(np.array([True, False]), dev)
    dev.sync()
    real = Runtime.read
    calls = []

    def counting(self, buf, out, byte_offset=0):
        calls.append(out.nbytes)
        return real(self, buf, out, byte_offset)

    monkeypatch.setattr(Runtime, "read", counting)
    datas = Transaction().register(a).register(b).register(c).execute()
    assert len(calls) == 1, calls
    assert datas[0].array.tolist() == np.arange(12.0).reshape(3, 4).T.tolist()
    assert datas[1].array.tolist() == [0, 3, 6, 9, 12]
    assert datas[2].array.tolist() == [True, False]
    # the one-by-one reads it replaces: one read each
    calls.clear()
    [t.to_data() for t in (a, b, c)]
    assert len(calls) == 3
