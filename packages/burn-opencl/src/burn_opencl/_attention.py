"""Attention on OpenCl: burn_gpu's flash kernels (`attention_program`, the text Cuda runs) over
ClArrays, through `FlashAttentionOps`. Q, K, V and the gradient are read through their strides
(a [b, s, h, d] projection viewed as [b, h, s, d] is not copied) unless the head dim is strided;
the mask through its broadcast strides. float32, and float64 where the device has cl_khr_fp64.
Dropout on the weights runs inside the kernels (the seed words read from device memory)."""

from __future__ import annotations

import numpy as np
from burn_gpu import (
    FlashAttentionOps,
    attention_backward_kernels,
    attention_drop_args,
    attention_forward_kernel,
    attention_groups,
    attention_kernels,
    attention_program,
    attention_scale2,
    attention_view_args,
    mask_args,
)

from . import _ew
from ._array import ClArray


def _view(a):
    """(array, its 4 kernel arguments): `a`, or a contiguous copy when its head dim is strided."""
    args = attention_view_args(a.shape, a.strides, a.offset)
    if args is None:
        a = _ew.contiguous(a)
        args = attention_view_args(a.shape, a.strides, a.offset)
    return a, [np.int64(v) for v in args]


class OpenClAttentionOps(FlashAttentionOps):
    """Mixin of `OpenCl`: `attention` and its backward as the flash kernels."""

    def _attention_dtypes(self, query):
        return {dt.name for dt in query.rt.floats}

    def _attention_common(self, query, key, value, mask, causal, scale, dropout, seed):
        rt, dt = query.rt, query.dtype
        b, h, sq, d = query.shape
        sk, dv = key.shape[2], value.shape[3]
        acc = np.float64 if dt == np.float64 else np.float32
        if mask is None:
            mbuf, margs = _dummy(rt).buf, mask_args(None, None)
        else:
            mbuf = mask.buf
            margs = mask_args(mask.shape, mask.strides, mask.offset)
        thr, rp = attention_drop_args(dropout)
        if thr:  # the seed words as int32 (the kernels' type), still in device memory
            words = seed if seed.dtype == np.int32 else _ew.cast(seed, np.int32)
        else:
            words = _dummy(rt)  # never read: the kernels skip the hash
        drop = [words.buf, np.uint32(thr), acc(rp)]
        flags = [np.int32(causal), np.int32(mask is not None)]
        head = [np.int32(h), np.int32(sq), np.int32(sk), *flags]
        names = attention_kernels(dt.name, d, dv)  # only what runs: a smaller build
        render = lambda: attention_program(dt.name, d, dv, "opencl", names)
        return {
            "rt": rt, "dt": dt, "acc": acc, "dims": (b, h, sq, sk, d, dv), "mbuf": mbuf,
            "margs": [np.int64(v) for v in margs], "head": head, "s2": acc(attention_scale2(scale)),
            "drop": drop, "words": words,  # a cast's array lives until the launches are queued
            "kernel": lambda name: rt.kernel(("attention", dt.str, d, dv), name, render),
        }  # fmt: skip

    def _attention_fwd(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = _view(query), _view(key), _view(value)
        b, h, sq, sk, d, dv = c["dims"]
        rt = c["rt"]
        out = ClArray.empty(rt, (b, h, sq, dv), c["dt"])
        lse = ClArray.empty(rt, (b, h, sq), c["acc"])
        args = [out.buf, lse.buf, q.buf, k.buf, v.buf, c["mbuf"], *c["head"], c["s2"]]
        args += qa + ka + va + c["margs"] + c["drop"]
        name, items = attention_forward_kernel(c["dt"].name, d, dv)
        rt.launch(c["kernel"](name), (attention_groups(b * h, sq) * items,), (items,), args)
        return out, lse

    def _attention_bwd(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = _view(query), _view(key), _view(value)
        (o, oa), (g, ga) = _view(out), _view(output_grad)
        lse = _ew.contiguous(lse)
        b, h, sq, sk, d, dv = c["dims"]
        rt, dt, acc = c["rt"], c["dt"], c["acc"]
        dq = ClArray.empty(rt, (b, h, sq, d), dt)
        dk = ClArray.empty(rt, (b, h, sk, d), dt)
        dvv = ClArray.empty(rt, (b, h, sk, dv), dt)
        delta = ClArray.empty(rt, (b, h, sq), acc)
        common = [*c["head"], c["s2"], acc(scale)]
        qside = [dq.buf, delta.buf, q.buf, k.buf, v.buf, o.buf, g.buf, lse.buf, c["mbuf"], *common]
        qside += qa + ka + va + oa + ga + c["margs"] + c["drop"]
        kside = [dk.buf, dvv.buf, q.buf, k.buf, v.buf, g.buf, lse.buf, delta.buf, c["mbuf"]]
        kside += common + qa + ka + va + ga + c["margs"] + c["drop"]
        for name, side, rows, items in attention_backward_kernels(dt.name, d, dv):
            groups = attention_groups(b * h, sq if side == "q" else sk, rows)
            args = qside if side == "q" else kside
            rt.launch(c["kernel"](name), (groups * items,), (items,), args)
        return dq, dk, dvv


_DUMMY: dict = {}


def _dummy(rt):
    """A one-byte buffer standing for the absent mask (the kernels never read it)."""
    d = _DUMMY.get(id(rt))
    if d is None or d.rt is not rt:
        d = _DUMMY[id(rt)] = ClArray.from_numpy(rt, np.zeros(1, np.uint8))
    return d
