"""`Transaction` on Cuda (over the CPU stand-in): one `asnumpy` (one wait, one transfer) for
many tensors of several dtypes, each read back exactly. The spy wraps the fake's real
`asnumpy`; on the GPU the same path runs on cupy through the conformance suite's
`test_transaction` (`uv run pytest packages/burn-cuda/tests/test_conformance.py -k transaction`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from burn_tensor import Tensor, Transaction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_backend import cuda_on_cpu_backend  # noqa: E402


def _counting_reads(fake, transaction):
    """(the transaction's data, the shapes of the fake's `asnumpy` transfers it made)."""
    real = fake.asnumpy
    calls = []

    def counting(x):
        calls.append(x.shape)
        return real(x)

    fake.asnumpy = counting
    try:
        return transaction.execute(), calls
    finally:
        fake.asnumpy = real


def test_transaction_is_one_transfer():
    with cuda_on_cpu_backend() as (backend, fake):
        dev = backend.device()
        a = Tensor.from_data(np.arange(12.0).reshape(3, 4), dev).swap_dims(0, 1)
        b = Tensor.from_data(np.arange(5), dev)
        c = Tensor.from_data(np.array([True, False, True]), dev)
        datas, calls = _counting_reads(fake, Transaction().register(a).register(b).register(c))
        assert len(calls) == 1, calls
        assert datas[0].array.tolist() == np.arange(12.0).reshape(3, 4).T.tolist()
        assert datas[1].array.tolist() == [0, 1, 2, 3, 4]
        assert datas[2].array.tolist() == [True, False, True]


def test_transaction_reads_bfloat16_as_bfloat16():
    """A bfloat16 backend's Transaction hands back bfloat16 data (the exact bits, one transfer):
    the float32 detour around `tr_execute` used to read it as float32 (caught by the GPU run of
    the conformance suite's test_transaction[bf16-i32])."""
    from burn_tensor import DType

    with cuda_on_cpu_backend(float_dtype="bfloat16") as (backend, fake):
        dev = backend.device()
        vals = np.array([[1.0, -2.5, 3.140625], [0.0078125, 256.0, -0.5]], np.float32)
        a = Tensor.from_data(vals, dev).swap_dims(0, 1)
        b = Tensor.from_data(np.arange(4), dev)
        datas, calls = _counting_reads(fake, Transaction().register(a).register(b))
        assert len(calls) == 1, calls
        assert datas[0].dtype is DType.BF16
        assert datas[0].array.astype(np.float32).tolist() == vals.T.tolist()
        assert datas[1].array.tolist() == [0, 1, 2, 3]
