"""Attention on Cuda: burn_gpu's flash kernels (`attention_program`, the text OpenCl runs)
launched over cupy arrays through the driver launcher, through `FlashAttentionOps`.

float32, float64 and bfloat16 storage (bf16 natively: 16-bit loads widened to float32, float32
accumulation, rounded stores; not the float32 detour of `_bf16.py`). Q, K, V, O and the
gradient are read through their strides (a [b, s, h, d] projection viewed as [b, h, s, d] is
not copied) unless the head dim is strided; the mask through its broadcast strides. Dropout on
the weights runs inside the kernels (the seed words read from device memory, so a captured
graph reads the words each replay's random draw wrote).
"""

from __future__ import annotations

import numpy as np
from burn_gpu import (
    FlashAttentionOps,
    attention_backward_kernels,
    attention_drop_args,
    attention_forward_kernel,
    attention_groups,
    attention_scale2,
    attention_view_args,
    mask_args,
)

from . import _capture_blas, _platform
from ._kernels import kernel, launch_grid

_DTYPES = frozenset(("float32", "float64", "bfloat16"))


def _view(a):
    """(array, its 4 kernel arguments): `a`, or a contiguous copy when its head dim is strided."""
    strides = [s // a.itemsize for s in a.strides]
    args = attention_view_args(a.shape, strides)
    if args is None:
        cp = _platform.load_cupy()
        if a.dtype.name == "bfloat16":  # copied as its 16-bit patterns (cupy's own dtypes)
            a = cp.ascontiguousarray(a.view(np.uint16)).view(a.dtype)
        else:
            a = cp.ascontiguousarray(a)
        args = attention_view_args(a.shape, [s // a.itemsize for s in a.strides])
    return a, [np.int64(v) for v in args]


def _empty(shape, dtype):
    cp = _platform.load_cupy()
    if dtype.name == "bfloat16":  # allocated as its 16-bit patterns (cupy's own dtypes)
        return cp.ndarray(shape, np.uint16).view(dtype)
    return cp.ndarray(shape, dtype)


_NO_MASK: dict = {}


def _no_mask(device_id):
    """A one-byte array standing for the absent mask (the kernels never read it)."""
    m = _NO_MASK.get(device_id)
    if m is None:
        m = _platform.load_cupy().zeros(1, np.uint8)
        if not _capture_blas.active():  # a recording's memory dies with its tape: not cached
            _NO_MASK[device_id] = m
    return m


class CudaAttentionOps(FlashAttentionOps):
    """Mixin of `Cuda`: `attention` and its backward as the flash kernels."""

    def _attention_dtypes(self, query):
        return _DTYPES

    @staticmethod
    def _attention_common(query, key, value, mask, causal, scale, dropout, seed):
        dt = query.dtype
        b, h, sq, d = query.shape
        sk, dv = key.shape[2], value.shape[3]
        acc = np.float64 if dt == np.float64 else np.float32
        if mask is None:
            marr, margs = _no_mask(query.device.id), mask_args(None, None)
        else:
            marr = mask
            margs = mask_args(mask.shape, [s // mask.itemsize for s in mask.strides])
        thr, rp = attention_drop_args(dropout)
        if thr:  # the seed words as int32 (the kernels' type), still in device memory
            sarr = seed if seed.dtype == np.int32 else seed.astype(np.int32)
        else:
            sarr = _no_mask(query.device.id)  # never read: the kernels skip the hash
        flags = (np.int32(causal), np.int32(mask is not None))
        head = (np.int32(h), np.int32(sq), np.int32(sk), *flags)
        return {
            "dt": dt, "acc": acc, "dims": (b, h, sq, sk, d, dv), "mask": marr,
            "margs": [np.int64(v) for v in margs], "head": head, "s2": acc(attention_scale2(scale)),
            "drop": (sarr, np.uint32(thr), acc(rp)),
            "kernel": lambda name: kernel(name, dt, d=d, dv=dv),
        }  # fmt: skip

    def _attention_fwd(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = _view(query), _view(key), _view(value)
        b, h, sq, sk, d, dv = c["dims"]
        out = _empty((b, h, sq, dv), c["dt"])
        lse = _empty((b, h, sq), np.dtype(c["acc"]))
        args = (out, lse, q, k, v, c["mask"], *c["head"], c["s2"], *qa, *ka, *va, *c["margs"])
        args += c["drop"]
        name, items = attention_forward_kernel(c["dt"].name, d, dv)
        launch_grid(c["kernel"](name), attention_groups(b * h, sq), items, *args)
        return out, lse

    def _attention_bwd(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        cp = _platform.load_cupy()
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = _view(query), _view(key), _view(value)
        (o, oa), (g, ga) = _view(out), _view(output_grad)
        lse = cp.ascontiguousarray(lse)
        b, h, sq, sk, d, dv = c["dims"]
        dt, acc = c["dt"], np.dtype(c["acc"])
        dq, dk = _empty((b, h, sq, d), dt), _empty((b, h, sk, d), dt)
        dvv = _empty((b, h, sk, dv), dt)
        delta = _empty((b, h, sq), acc)
        common = (*c["head"], c["s2"], c["acc"](scale))
        qside = (dq, delta, q, k, v, o, g, lse, c["mask"], *common, *qa, *ka, *va, *oa, *ga)
        kside = (dk, dvv, q, k, v, g, lse, delta, c["mask"], *common, *qa, *ka, *va, *ga)
        for name, side, rows, items in attention_backward_kernels(dt.name, d, dv):
            groups = attention_groups(b * h, sq if side == "q" else sk, rows)
            args = qside if side == "q" else kside
            launch_grid(c["kernel"](name), groups, items, *args, *c["margs"], *c["drop"])
        return dq, dk, dvv
