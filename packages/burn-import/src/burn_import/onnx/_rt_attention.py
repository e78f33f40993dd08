"""ONNX Attention (opset 23+): scaled dot-product attention with masks, caches and GQA.

Masks that depend only on shapes (causal, sliding window) are built on the host; the ones that
come from tensors (attn_mask) stay on the device.
"""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType, Tensor

_NP = {DType.F64: np.float64, DType.F32: np.float32, DType.F16: np.float16}


def _host_bias(ql, kl, offset, causal, lw, rw):
    """0 / -inf bias `[q, kv]` (scalar offset) or `[b, 1, q, kv]` (per-batch offsets)."""
    i = np.arange(ql).reshape(ql, 1)
    j = np.arange(kl).reshape(1, kl)
    off = np.asarray(offset)
    if off.ndim:
        i = i[None] + off.reshape(-1, 1, 1)
    else:
        i = i + int(off)
    allowed = np.ones(np.broadcast_shapes(i.shape, j.shape), bool)
    if causal:
        allowed &= j <= i
    diff = i - j
    if lw >= 0:
        allowed &= diff <= lw
    if rw >= 0:
        allowed &= -diff <= rw
    bias = np.where(allowed, 0.0, -np.inf)
    return bias.reshape(bias.shape[0], 1, ql, kl) if off.ndim else bias


def _to4(t: Tensor) -> Tensor:
    return t.unsqueeze(4) if t.rank() < 4 else t


def attention(
    q,
    k,
    v,
    mask=None,
    past_k=None,
    past_v=None,
    nonpad=None,
    *,
    scale=None,
    is_causal=False,
    q_heads=None,
    kv_heads=None,
    softcap=0.0,
    mode=0,
    softmax_dtype=None,
    lw=-1,
    rw=-1,
):
    r3 = q.rank() == 3
    b = q.dims()[0]
    if r3:

        def heads(t, n):
            bb, s, h = t.dims()
            return t.reshape([bb, s, n, h // n]).swap_dims(1, 2)

        q, k, v = heads(q, q_heads), heads(k, kv_heads), heads(v, kv_heads)
    dt = q.dtype
    if scale is None:
        scale = 1 / math.sqrt(q.dims()[3])
    s = float(np.sqrt(np.asarray(scale, dtype=_NP[dt])).astype(_NP[dt]))
    if past_k is not None:
        k = Tensor.cat([past_k, k], 2)
        v = Tensor.cat([past_v, v], 2)
    present_k, present_v = k, v
    ql, kl = q.dims()[2], k.dims()[2]
    bias = None
    if mask is not None:
        pad = kl - mask.dims()[-1]
        if pad > 0:
            dims = mask.dims()
            fill = Tensor.full(
                dims[:-1] + [pad],
                False if mask.dtype == DType.BOOL else -math.inf,
                mask.device,
                dtype=mask.dtype,
            )
            mask = Tensor.cat([mask, fill], mask.rank() - 1)
        if mask.dtype == DType.BOOL:
            zero = Tensor.zeros(mask.dims(), mask.device, dtype=dt)
            mask = zero.mask_fill(mask.bool_not(), -math.inf)
        bias = mask
    offset = 0
    if nonpad is not None and past_k is None:
        offset = np.asarray(nonpad.numpy()).reshape(-1) - ql
    elif past_k is not None:
        offset = past_k.dims()[2]
    if is_causal or lw >= 0 or rw >= 0:
        hb = _host_bias(ql, kl, offset, is_causal, lw, rw)
        hbt = Tensor.from_data(hb.astype(_NP[dt]), q.device, dt)
        bias = hbt if bias is None else _to4(bias) + _to4(hbt)
    if nonpad is not None:
        n = np.asarray(nonpad.numpy()).reshape(-1)
        pm = np.where(np.arange(kl)[None, :] < n[:, None], 0.0, -np.inf).reshape(b, 1, 1, kl)
        pmt = Tensor.from_data(pm.astype(_NP[dt]), q.device, dt)
        bias = pmt if bias is None else _to4(bias) + pmt
    qh, kh = q.dims()[1], k.dims()[1]
    if qh != kh and qh % kh == 0:
        reps = qh // kh

        def rep(t):
            bb, h, sq, d = t.dims()
            return (
                t.reshape([bb, h, 1, sq, d])
                .expand([bb, h, reps, sq, d])
                .reshape([bb, h * reps, sq, d])
            )

        k, v = rep(k), rep(v)
    qk = (q * s).matmul(k.swap_dims(2, 3) * s)
    if softcap and softcap > 0:
        qk = (qk / softcap).tanh() * softcap
    out_qk = qk
    logits = qk if bias is None else qk + _to4(bias)
    if mode == 2:
        out_qk = logits
    if softmax_dtype is not None and softmax_dtype != dt:
        logits = logits.cast(softmax_dtype)
    mx = logits.max_dim(3)
    all_masked = mx.is_inf().bool_and(mx.lower_elem(0))
    mx = mx.mask_fill(all_masked, 0.0)
    e = (logits - mx).exp()
    tot = e.sum_dim(3)
    tot = tot.mask_fill(tot.equal_elem(0), 1.0)
    p = e / tot
    if bias is not None:
        bmax = _to4(bias).max_dim(bias.rank() - 1 if bias.rank() == 4 else 3)
        p = p.mask_fill(bmax.is_inf().bool_and(bmax.lower_elem(0)).expand(p.dims()), 0.0)
    if p.dtype != dt:
        p = p.cast(dt)
    if mode == 3:
        out_qk = p
    y = p.matmul(v)
    if r3:
        bb, h, sq, d = y.dims()
        y = y.swap_dims(1, 2).reshape([bb, sq, h * d])
    return y, present_k, present_v, out_qk


def rotary_embedding(x, cos, sin, pos, interleaved, num_heads, rot_dim):
    """ONNX RotaryEmbedding on `[b, h, s, d]` or `[b, s, h*d]` inputs."""
    shape0 = x.dims()
    if x.rank() == 4:
        x = x.swap_dims(1, 2)
    b, s = x.dims()[0], x.dims()[1]
    if x.rank() == 3:
        x = x.reshape([b, s, num_heads, -1])
    d = x.dims()[3]
    rd = rot_dim or d
    xr, rest = x.narrow(3, 0, rd), (x.narrow(3, rd, d - rd) if rd < d else None)
    if pos is not None:
        flat = pos.reshape([-1]).cast(DType.I64)
        cos = cos.select(0, flat).reshape(pos.dims() + [rd // 2])
        sin = sin.select(0, flat).reshape(pos.dims() + [rd // 2])
    cos = cos.unsqueeze_dim(cos.rank() - 1)
    sin = sin.unsqueeze_dim(sin.rank() - 1)
    cos, sin = cos.unsqueeze(4), sin.unsqueeze(4)
    if interleaved:
        pairs = xr.reshape([b, s, xr.dims()[2], rd // 2, 2])
        x1 = pairs.narrow(4, 0, 1).squeeze_dim(4)
        x2 = pairs.narrow(4, 1, 1).squeeze_dim(4)
    else:
        x1, x2 = xr.narrow(3, 0, rd // 2), xr.narrow(3, rd // 2, rd // 2)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        xr = Tensor.stack([real, imag], 4).reshape(xr.dims())
    else:
        xr = Tensor.cat([real, imag], 3)
    out = xr if rest is None else Tensor.cat([xr, rest], 3)
    if len(shape0) == 3:
        return out.reshape(shape0)
    return out.swap_dims(1, 2)
