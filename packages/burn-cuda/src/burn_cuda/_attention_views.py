"""The attention kernels' views of their arrays (`_attention.py`): the strides a kernel reads an
input through, the contiguous copy where it cannot, and the layout each output is written in.
"""

from __future__ import annotations

import os

import numpy as np
from burn_gpu import attention_view_args

from . import _platform


def view(a):
    """(array, its 4 kernel arguments): `a`, or a contiguous copy when its head dim is strided."""
    strides = [s // a.itemsize for s in a.strides]
    args = attention_view_args(a.shape, strides)
    if args is None:
        a = contiguous(a)
        args = attention_view_args(a.shape, [s // a.itemsize for s in a.strides])
    return a, [np.int64(v) for v in args]


def contiguous(a):
    """A contiguous copy of `a` (bfloat16 copied as its 16-bit patterns: cupy's own dtypes)."""
    cp = _platform.load_cupy()
    if a.dtype.name == "bfloat16":
        return cp.ascontiguousarray(a.view(np.uint16)).view(a.dtype)
    return cp.ascontiguousarray(a)


def mma_view(a):
    """(array, its 4 kernel arguments) for the tensor-core kernels, which read 16 bytes at a
    time: `a` when its buffer is 16-byte aligned and every stride it steps is a multiple of 16
    bytes, else a contiguous copy."""
    strides = [s // a.itemsize for s in a.strides]
    steps = [s for n, s in zip(a.shape[:3], strides[:3]) if n > 1]  # a dim of 1 is never stepped
    if strides[3] != 1 or a.data.ptr % 16 or any(s % (16 // a.itemsize) for s in steps):
        a = contiguous(a)
        strides = [s // a.itemsize for s in a.strides]
    return a, [np.int64(v) for v in attention_view_args(a.shape, strides)]


def split_out(a) -> bool:
    """Whether the tensor-core kernels write the output (gradient) of input `a` [b, h, s, d] in
    `a`'s layout: `a` is the head-split view of a contiguous [b, s, h, d] array (MHA's
    `x.reshape([b, s, h, d]).swap_dims(1, 2)`) and not itself contiguous. The output is then
    allocated [b, s, h, d] and viewed [b, h, s, d], so the caller's merge `swap_dims(1, 2)
    .reshape([b, s, h * d])` is a view, not a copy kernel (torch's SDPA keeps the query's layout
    too). `BURN_CUDA_ATTENTION_SPLIT_OUT=0` keeps every output contiguous (an A/B switch)."""
    if os.environ.get("BURN_CUDA_ATTENTION_SPLIT_OUT") == "0":
        return False
    b, h, s, d = a.shape
    want = (s * h * d, d, h * d, 1)  # [b, s, h, d] contiguous, seen as [b, h, s, d]
    got = [st // a.itemsize for st in a.strides]
    split = all(n == 1 or g == w for n, g, w in zip(a.shape, got, want))
    # a dim of 1 is never stepped; where h or s is 1 both layouts are the same memory
    return split and h > 1 and s > 1


def out_args(a) -> list:
    """The (batch, head, row) element strides of output `a` for the kernels."""
    return [np.int64(st // a.itemsize) for st in a.strides[:3]]
