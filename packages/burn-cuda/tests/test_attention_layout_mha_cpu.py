"""burn-nn's `MultiHeadAttention` on the CPU stand-in (`cpu_backend.py`): with the tensor-core
attention writing its output and dQ/dK/dV in the layout of the head-split projections
(`_attention_views.split_out`), a forward + backward copies no array; with the contiguous outputs of
before (`BURN_CUDA_ATTENTION_SPLIT_OUT=0`) it copies four, the head merges of out, dq, dk and
dv (`swap_dims(1, 2).reshape([b, s, h * d])`: on the GPU a `cupy_copy` kernel each, 24 per
H200 transformer step of 6 layers). The same bits either way."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
import fake_cupy
from burn_autodiff import Autodiff
from burn_cuda import _kernel_source
from burn_nn import MhaInput, MultiHeadAttentionConfig
from burn_tensor import Tensor
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy

pytestmark = [
    pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed"),
    pytest.mark.usefixtures("two_pass_backward"),  # the kernels these tests were written for
]
B_, S, D_MODEL, HEADS = 2, 40, 64, 2  # head dim 32: the tensor-core kernels in every dtype


@contextlib.contextmanager
def _copying(fake: FakeCupy):
    """Yields the list of copies the stand-in makes inside, as (what, shape from, shape to): a
    reshape whose result is not a view of its input (cupy launches a copy kernel for it) and an
    `ascontiguousarray` that is not the array itself."""
    copies = []
    reshape, contiguous = fake_cupy.FakeArray.reshape, fake.ascontiguousarray

    def watched_reshape(self, *shape, **kw):
        out = reshape(self, *shape, **kw)
        if not np.shares_memory(np.asarray(self), np.asarray(out)):
            copies.append(("reshape", self.shape, out.shape))
        return out

    def watched_contiguous(a, *args, **kw):
        out = contiguous(a, *args, **kw)
        if not np.shares_memory(np.asarray(a), np.asarray(out)):
            copies.append(("ascontiguousarray", a.shape, out.shape))
        return out

    fake_cupy.FakeArray.reshape = watched_reshape
    fake.ascontiguousarray = watched_contiguous  # this fake only (`__getattr__` is numpy's)
    try:
        yield copies
    finally:
        fake_cupy.FakeArray.reshape = reshape


def _step(dtype: str):
    """One MHA self-attention forward + backward (dropout 0.1, training): (its copies, the
    attention kernels launched, the context and the input's gradient as float64)."""
    rng = np.random.default_rng(9)
    x_np, g_np = (rng.standard_normal((B_, S, D_MODEL)).astype(np.float32) for _ in range(2))
    fake = FakeCupy()
    with cuda_on_cpu_backend(fake, float_dtype=dtype) as (B, cp):
        dev = Autodiff(B).device()
        dev.seed(1)
        mha = MultiHeadAttentionConfig(D_MODEL, HEADS).init(dev)
        x, g = (Tensor.from_data(a, dev).cast(dtype) for a in (x_np, g_np))
        x = x.require_grad()
        with _copying(fake) as copies:
            ctx = mha.forward(MhaInput.self_attn(x)).context
            grads = (ctx * g).sum().backward()  # a dense upstream gradient, as a loss gives
        got = [t.cast("float32").into_data().array.astype(np.float64) for t in (ctx, x.grad(grads))]
        names = [x.name for x in cp.launches if x.name in _kernel_source.SIZED]
    return copies, names, got


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_mha_forward_and_backward_copy_no_attention_output_or_gradient(monkeypatch, dtype):
    monkeypatch.setenv("BURN_CUDA_ATTENTION_SPLIT_OUT", "0")
    before, names, want = _step(dtype)
    monkeypatch.delenv("BURN_CUDA_ATTENTION_SPLIT_OUT")
    after, names_after, got = _step(dtype)
    kind = "tf32" if dtype == "float32" else "mma"
    assert names == names_after == [f"attn_{n}_{kind}" for n in ("fwd", "bwd_dq", "bwd_dkv")]
    merge = ("reshape", (B_, S, HEADS, D_MODEL // HEADS), (B_, S, D_MODEL))
    assert before == [merge] * 4  # out, then dq, dk, dv: each merge copied
    assert after == []
    for name, a, w in zip(("context", "x.grad"), got, want):
        np.testing.assert_array_equal(a, w, err_msg=name)
