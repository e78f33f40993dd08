"""Attention on Cuda: burn_gpu's flash kernels (`attention_program`, the text OpenCl runs)
launched over cupy arrays through the driver launcher, through `FlashAttentionOps`.

float32, float64 and bfloat16 storage (bf16 natively: 16-bit loads widened to float32, float32
accumulation, rounded stores; not the float32 detour of `_bf16.py`). Q, K, V, O and the
gradient are read through their strides (a [b, s, h, d] projection viewed as [b, h, s, d] is
not copied) unless the head dim is strided; the mask through its broadcast strides. The
tensor-core kernels write O, dQ, dK and dV in the layout of such a head-split input
(`split_out`), so MHA's head merge after them is a view, not a copy; burn_gpu's SIMT kernels
write them contiguous. Dropout on
the weights runs inside the kernels (the seed words read from device memory, so a captured
graph reads the words each replay's random draw wrote).

On a compute-capability-9.0 GPU, bfloat16/float16 calls at head dim 64 without mask or
dropout run Hopper's warpgroup-MMA kernels: the forward `_attention_wgmma.py`
(`BURN_CUDA_ATTENTION_WGMMA=0` keeps mma.sync), the one-pass backward `_attention_wgmma_bwd.py`
(`BURN_CUDA_ATTENTION_WGMMA_BWD=0` keeps the mma.sync kernels below).

bfloat16 and float16 calls at head dim == value dim in (32, 64, 128) run the tensor-core
kernels (`_attention_pipe.py`, `_attention_pipe_bwd.py`: ldmatrix and cp.async; with
`BURN_CUDA_ATTENTION_PIPE=0` the session-17 text of `_attention_mma.py`, `_attention_mma_bwd.py`;
`BURN_CUDA_ATTENTION_MMA=0` turns them off), masks and dropout included: the forward at those dims, the backward at 32 and 64 (at 128
burn_gpu's backward kernels read the mma forward's statistic, the same one they save;
the one-pass backward of `_attention_fused_bwd.py` with `BURN_CUDA_ATTENTION_FUSED_BWD=1`); float32
at head dims 32 and 64 runs the 3xTF32 kernels of `_attention_tf32.py` (its backward the
one-pass fused kernels by default, `BURN_CUDA_ATTENTION_FUSED_BWD=0` the two passes). float16 runs only on the mma kernels (burn_gpu's take no float16): a
float16 call they do not take is the decomposition, and at head dim 128 its forward keeps no
statistic, so the backward is the decomposition too.
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
    mask_args,
)

from . import _capture_blas, _platform
from ._attention_fused_bwd import fused_bwd_enabled
from ._attention_plan import BACKWARD, FORWARD, RECORDING, empty, key_of, record, run
from ._attention_mma import ROWS as MMA_ROWS
from ._attention_mma import THREADS as MMA_THREADS
from ._attention_mma import forward_tiles, mma_backward_takes, mma_groups, mma_takes
from ._attention_tf32 import tf32_takes
from ._attention_views import mma_view, out_args, split_out, view
from ._attention_wgmma import ROWS as WGMMA_ROWS
from ._attention_wgmma import THREADS as WGMMA_THREADS
from ._attention_wgmma import wgmma_kernel, wgmma_takes
from ._attention_wgmma_bwd import KEYS as WGMMA_BWD_KEYS
from ._attention_wgmma_bwd import THREADS as WGMMA_BWD_THREADS
from ._attention_wgmma_bwd import wgmma_bwd_kernel, wgmma_bwd_takes
from ._kernels import kernel, launch_grid
from ._mma_pipe import pipe_enabled
from ._wgmma import Sm90aKernel

_DTYPES = frozenset(("float32", "float64", "bfloat16"))


_CC: dict = {}


def _cc(device_id: int) -> int:
    """GPU `device_id`'s compute capability as an int (90: sm_90), asked once per device."""
    cc = _CC.get(device_id)
    if cc is None:
        cc = _CC[device_id] = int(_platform.load_cupy().cuda.Device(device_id).compute_capability)
    return cc


def _tensor_cores(device_id: int) -> bool:
    """Whether GPU `device_id` runs the tensor-core kernels: `mma.sync` on bf16/f16 and tf32 and
    `cvt.rn.bf16x2` need compute capability 8.0 (Ampere) or later; older GPUs keep burn_gpu's
    kernels."""
    return _cc(device_id) >= 80


def _mma_tail(query, key, value, mask, causal, scale, dropout, seed) -> tuple:
    """The tensor-core kernels' trailing arguments: the mask (a byte per element, broadcast
    strides), has_mask, its 5 strides, the dropout seed words, threshold and 1 / (1 - p)."""
    c = CudaAttentionOps._attention_common(query, key, value, mask, causal, scale, dropout, seed)
    return (c["mask"], np.int32(mask is not None), *c["margs"], *c["drop"])


def _mma_forward(query, key, value, mask, causal, scale, dropout=0.0, seed=None):
    """(out, lse) of an eligible call (`mma_takes`, `tf32_takes`) by the tensor-core forward."""
    b, h, sq, d = query.shape
    sk = key.shape[2]
    tail = _mma_tail(query, key, value, mask, causal, scale, dropout, seed)
    (q, qa), (k, ka), (v, va) = mma_view(query), mma_view(key), mma_view(value)
    out = _empty((b, h, sq, d), query.dtype, split_out(query))  # the query's layout
    lse = _empty((b, h, sq), np.dtype(np.float32))
    args = (out, lse, q, k, v, np.int32(h), np.int32(sq), np.int32(sk), np.int32(causal))
    args += (np.float32(attention_scale2(scale)), *qa, *ka, *va, *out_args(out), *tail)
    extras = mask is not None or bool(dropout)  # else the variant without that code
    name = query.dtype.name  # (read once: ~1.5 us each)
    if name == "float32":
        k_ = kernel("attn_fwd_tf32", query.dtype, d=d, dv=d, extras=extras, pipe=pipe_enabled())
        rows = MMA_ROWS
    elif wgmma_takes(name, d, d, _cc(query.device.id), extras):
        # Hopper
        k_ = wgmma_kernel(name, d)
        _launch(k_, mma_groups(b * h, sq, WGMMA_ROWS), WGMMA_THREADS, *args)
        return out, lse
    else:
        tiles = forward_tiles(d)
        k_ = kernel("attn_fwd_mma", query.dtype, d=d, dv=d, extras=extras, tiles=tiles,
                    pipe=pipe_enabled())  # fmt: skip
        rows = MMA_ROWS * tiles
    _launch(k_, mma_groups(b * h, sq, rows), MMA_THREADS, *args)
    return out, lse


def _mma_backward(query, key, value, out, lse, mask, grad, causal, scale, dropout=0.0, seed=None):
    """(dq, dk, dv) of an eligible call (`mma_backward_takes`, `tf32_takes`) from the forward's
    output and saved statistic: the dQ pass (which writes Delta), then the dK/dV pass; where
    `fused_bwd_enabled` (float32 by default) the fused backward (`_attention_fused_bwd.py`:
    Delta and a zeroed float32 dQ accumulator, the one pass per key block, then dQ rounded,
    16-bit only)."""
    b, h, sq, d = query.shape
    sk = key.shape[2]
    tail = _mma_tail(query, key, value, mask, causal, scale, dropout, seed)
    views = [mma_view(a) for a in (query, key, value, out, grad)]
    (q, qa), (k, ka), (v, va), (o, oa), (g, ga) = views
    lse = _platform.load_cupy().ascontiguousarray(lse)
    dt = query.dtype
    dq = _empty((b, h, sq, d), dt, split_out(query))  # each gradient in its input's layout
    dk = _empty((b, h, sk, d), dt, split_out(key))
    dv = _empty((b, h, sk, d), dt, split_out(value))
    delta = _empty((b, h, sq), np.dtype(np.float32))
    common = (np.int32(h), np.int32(sq), np.int32(sk), np.int32(causal))
    common += (np.float32(attention_scale2(scale)), np.float32(scale))
    f32 = dt.name == "float32"  # (one `dtype.name` read: ~1.5 us each)
    kind = "tf32" if f32 else "mma"
    extras = mask is not None or bool(dropout)  # else the variants without that code
    if not f32 and wgmma_bwd_takes(dt.name, d, d, _cc(query.device.id), extras):
        return _wgmma_backward(dt.name, dq, dk, dv, delta, lse, views, common, tail)
    if fused_bwd_enabled(f32):  # the pipe form whatever BURN_CUDA_ATTENTION_PIPE says
        # float32 adds into dQ itself, no rounding launch
        acc = dq if f32 else _empty((b, h, sq, d), np.dtype(np.float32))
        qrows, opt = mma_groups(b * h, sq), {"extras": False, "pipe": True}
        _launch(kernel(f"attn_bwd_prep_{kind}", dt, d=d, dv=d, **opt), qrows, MMA_THREADS,
                acc, delta, o, g, np.int32(h), np.int32(sq), *oa, *ga, *out_args(acc))  # fmt: skip
        k_f = kernel(f"attn_bwd_fused_{kind}", dt, d=d, dv=d, extras=extras, pipe=True)
        _launch(k_f, mma_groups(b * h, sk), MMA_THREADS, acc, dk, dv, q, k, v, g, lse, delta,
                *common, *qa, *ka, *va, *ga, *out_args(acc), *out_args(dk), *out_args(dv),
                *tail)  # fmt: skip
        if not f32:
            k_c = kernel("attn_bwd_dqcvt_mma", dt, d=d, dv=d, **opt)
            _launch(k_c, qrows, MMA_THREADS, dq, acc, np.int32(h), np.int32(sq),
                    *out_args(dq), *out_args(acc))  # fmt: skip
        return dq, dk, dv
    opt = {"extras": extras, "pipe": pipe_enabled()}
    k_dq = kernel(f"attn_bwd_dq_{kind}", dt, d=d, dv=d, **opt)
    _launch(k_dq, mma_groups(b * h, sq), MMA_THREADS, dq, delta, q, k, v, o, g, lse,
                *common, *qa, *ka, *va, *oa, *ga, *out_args(dq), *tail)  # fmt: skip
    k_kv = kernel(f"attn_bwd_dkv_{kind}", dt, d=d, dv=d, **opt)
    _launch(k_kv, mma_groups(b * h, sk), MMA_THREADS, dk, dv, q, k, v, g, lse, delta,
                *common, *qa, *ka, *va, *ga, *out_args(dk), *out_args(dv), *tail)  # fmt: skip
    return dq, dk, dv


def _wgmma_backward(dt: str, dq, dk, dv, delta, lse, views, common, tail) -> tuple:
    """(dq, dk, dv) of dtype name `dt` by Hopper's kernels (`_attention_wgmma_bwd.py`): Delta
    with the float32 dQ accumulator's whole 64-row tiles zeroed, the pass per 64 keys (its dQ
    added a tile at a time), then dQ rounded into its strides."""
    (q, qa), (k, ka), (v, va), (o, oa), (g, ga) = views
    b, h, sq, d = q.shape
    sk = k.shape[2]
    tiles = -(-sq // WGMMA_BWD_KEYS)  # query tiles of a (batch, head), as long as a key block
    rows = b * h * tiles
    acc = _empty((b, h, tiles * WGMMA_BWD_KEYS, d), np.dtype(np.float32))
    _launch(wgmma_bwd_kernel(dt, d, "attn_bwd_prep_wgmma"), rows, WGMMA_BWD_THREADS, acc, delta,
            o, g, np.int32(h), np.int32(sq), *oa, *ga, *out_args(acc))  # fmt: skip
    _launch(wgmma_bwd_kernel(dt, d), mma_groups(b * h, sk, WGMMA_BWD_KEYS), WGMMA_BWD_THREADS,
            acc, dk, dv, q, k, v, g, lse, delta, *common, *qa, *ka, *va, *ga, *out_args(acc),
            *out_args(dk), *out_args(dv), *tail)  # fmt: skip
    _launch(wgmma_bwd_kernel(dt, d, "attn_bwd_dqcvt_wgmma"), rows, WGMMA_BWD_THREADS, dq, acc,
            np.int32(h), np.int32(sq), common[-1], *out_args(dq), *out_args(acc))  # fmt: skip
    return dq, dk, dv


def _launch(k, grid: int, threads: int, *args) -> None:
    """`launch_grid`, which a plan being recorded also sees (every launch of this module)."""
    rec = RECORDING[0]
    if rec is not None:
        rec.launches.append((k, grid, threads, args))
    launch_grid(k, grid, threads, *args, smem=k.smem if k.__class__ is Sm90aKernel else 0)


def _empty(shape, dtype, split: bool = False):
    """`_attention_plan.empty` (`split`: [b, s, h, d] memory seen as `shape` [b, h, s, d]),
    which a plan being recorded also sees, with its layout."""
    a = empty(shape, dtype, split)
    rec = RECORDING[0]
    if rec is not None:
        rec.allocs.append((a, split))
    return a


_NO_MASK: dict = {}


def _no_mask(device_id):
    """A one-byte array standing for the absent mask (the kernels never read it)."""
    m = _NO_MASK.get(device_id)
    if m is None:
        m = _platform.load_cupy().zeros(1, np.uint8)
        if not _capture_blas.active():  # a recording's memory dies with its tape: not cached
            _NO_MASK[device_id] = m
    rec = RECORDING[0]
    if rec is not None and _NO_MASK.get(device_id) is m:  # a plan may keep its address
        rec.consts.append(m)
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

    # float16: burn_gpu's flash kernels take no float16, so only the mma kernels run it (the
    # calls they do not take go to the decomposition, FlashAttentionOps' path for float16)
    # Every entry first asks `_attention_plan` for the call's plan (the launches of an earlier
    # call of the same dtypes, shapes, strides and flags, replayed), else runs the general path
    # (`_general_*`), which records one at a key's second call. `attention` is the forward
    # without its statistic: the same launches (float16 and the decomposition included).
    def attention(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        return self.attention_with_lse(query, key, value, mask, causal, scale, dropout, seed)[0]

    def attention_with_lse(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        def general():
            return self._general_with_lse(query, key, value, mask, causal, scale, dropout, seed)

        inputs = (query, key, value, seed, mask)
        k = key_of(FORWARD, inputs, (causal, scale, dropout))
        r = run(k, inputs)
        return r if r is not None else record(k, inputs, (0, 1, 2), general)

    def _general_with_lse(self, query, key, value, mask, causal, scale, dropout, seed):
        if self._mma_float16(query, key, value):
            out, lse = _mma_forward(query, key, value, mask, causal, scale, dropout, seed)
            keep = mma_backward_takes(query.dtype, query.shape[3], value.shape[3])
            return out, lse if keep else None  # None: the backward is the decomposition
        return super().attention_with_lse(query, key, value, mask, causal, scale, dropout, seed)

    def attention_backward(
        self, query, key, value, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        if self._mma_float16(query, key, value, output_grad, backward=True):
            drop = (dropout, seed)
            out, lse = _mma_forward(query, key, value, mask, causal, scale, *drop)
            return _mma_backward(
                query, key, value, out, lse, mask, output_grad, causal, scale, *drop
            )
        return super().attention_backward(
            query, key, value, mask, output_grad, causal, scale, dropout, seed
        )

    def attention_lse_backward(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        drop = (dropout, seed)

        def general():
            return self._general_lse_backward(
                query, key, value, out, lse, mask, output_grad, causal, scale, *drop
            )

        if lse is None:
            return general()
        inputs = (query, key, value, out, output_grad, lse, seed, mask)
        k = key_of(BACKWARD, inputs, (causal, scale, dropout))
        r = run(k, inputs)
        return r if r is not None else record(k, inputs, (0, 1, 2, 3, 4), general)

    def _general_lse_backward(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout, seed
    ):
        if lse is not None and self._mma_float16(query, key, value, output_grad, backward=True):
            return _mma_backward(
                query, key, value, out, lse, mask, output_grad, causal, scale, dropout, seed
            )
        return super().attention_lse_backward(
            query, key, value, out, lse, mask, output_grad, causal, scale, dropout, seed
        )

    @staticmethod
    def _mma_float16(query, key, value, grad=None, backward=False) -> bool:
        """A float16 call the tensor-core kernels take (forward; `backward`: and backward)."""
        arrays = (query, key, value) if grad is None else (query, key, value, grad)
        if query.dtype.name != "float16" or any(a.dtype != query.dtype for a in arrays):
            return False
        b, h, sq, d = query.shape
        sk, dv = key.shape[2], value.shape[3]
        if not (b * h * -(-max(sq, sk) // 64) < 2**31 and min(b, h, sq, sk) > 0):
            return False
        takes = (mma_backward_takes if backward else mma_takes)(query.dtype, d, dv)
        return takes and _tensor_cores(query.device.id)

    def _attention_fwd(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        d, dv = query.shape[3], value.shape[3]
        takes = mma_takes(query.dtype, d, dv) or tf32_takes(query.dtype, d, dv)
        if takes and _tensor_cores(query.device.id):
            return _mma_forward(query, key, value, mask, causal, scale, dropout, seed)
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = view(query), view(key), view(value)
        b, h, sq, sk, d, dv = c["dims"]
        out = _empty((b, h, sq, dv), c["dt"])
        lse = _empty((b, h, sq), np.dtype(c["acc"]))
        args = (out, lse, q, k, v, c["mask"], *c["head"], c["s2"], *qa, *ka, *va, *c["margs"])
        args += c["drop"]
        name, items = attention_forward_kernel(c["dt"].name, d, dv)
        _launch(c["kernel"](name), attention_groups(b * h, sq), items, *args)
        return out, lse

    def _attention_bwd(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        d, dv = query.shape[3], value.shape[3]
        takes = mma_backward_takes(query.dtype, d, dv) or tf32_takes(query.dtype, d, dv)
        if takes and _tensor_cores(query.device.id):
            drop = (dropout, seed)
            return _mma_backward(
                query, key, value, out, lse, mask, output_grad, causal, scale, *drop
            )
        cp = _platform.load_cupy()
        c = self._attention_common(query, key, value, mask, causal, scale, dropout, seed)
        (q, qa), (k, ka), (v, va) = view(query), view(key), view(value)
        (o, oa), (g, ga) = view(out), view(output_grad)
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
            _launch(c["kernel"](name), groups, items, *args, *c["margs"], *c["drop"])
        return dq, dk, dvv
