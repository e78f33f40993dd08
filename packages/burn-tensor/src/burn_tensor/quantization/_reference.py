"""A numpy reference of Burn's symmetric quantization (tests and host-side reads).

"The same arithmetic": the division x / scale and the scale itself are computed in the tensor's
float dtype (`dtype`, float32 by default) as the backends do (IEEE division is correctly rounded
everywhere, so results match bit for bit); rounding, clamping and dequantization run in float64.
A float64 division would differ at exact ties: x / scale = 127.5 in float32 can be 127.4999... in
float64.
"""

from __future__ import annotations

import numpy as np

from ._scheme import QuantScheme, QuantStore


def round_half_away(y: np.ndarray) -> np.ndarray:
    return np.sign(y) * np.floor(np.abs(y) + 0.5)


def scales_ref(x: np.ndarray, scheme: QuantScheme, dtype=np.float32) -> np.ndarray:
    a, b = scheme.value.range()
    x = np.asarray(x, dtype)
    if scheme.level.is_block():
        bs = scheme.level.block_size
        amax = np.abs(x.reshape(x.shape[:-1] + (x.shape[-1] // bs, bs))).max(-1)
    else:
        amax = np.abs(x).max().reshape(1)
    t = np.dtype(dtype).type
    from ._ops import smallest_normal

    return np.maximum(amax * t(2.0) / t(b - a), t(smallest_normal(t)))


def quantize_ref(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, dtype=np.float32) -> np.ndarray:
    """int64 q of x's shape: clamp(round_half_away(x / scale), a, b), x / scale in `dtype`."""
    a, b = scheme.value.range()
    x = np.asarray(x, dtype)
    s = np.asarray(scales, dtype)
    if scheme.level.is_block():
        bs = scheme.level.block_size
        xb = x.reshape(x.shape[:-1] + (x.shape[-1] // bs, bs))
        q = np.clip(round_half_away((xb / s[..., None]).astype(np.float64)), a, b).reshape(x.shape)
    else:
        q = np.clip(round_half_away((x / s.reshape(())).astype(np.float64)), a, b)
    return q.astype(np.int64)


def pack_ref(q: np.ndarray, scheme: QuantScheme) -> np.ndarray:
    """Pack int values along the last dim: value i of a word at bits [bits*i, bits*(i+1))."""
    if scheme.store is QuantStore.NATIVE:
        return q.astype(np.int8)
    n, bits = scheme.num_quants, scheme.value.bits
    last = q.shape[-1]
    words = -(-last // n)
    pad = np.zeros(q.shape[:-1] + (words * n - last,), np.int64)
    qq = np.concatenate([q.astype(np.int64), pad], -1).reshape(q.shape[:-1] + (words, n))
    out = np.zeros(q.shape[:-1] + (words,), np.uint64)
    for i in range(n):
        out |= ((qq[..., i] & ((1 << bits) - 1)).astype(np.uint64)) << np.uint64(bits * i)
    return out.astype(np.uint32).view(np.int32)


def unpack_ref(values: np.ndarray, scheme: QuantScheme, shape: tuple) -> np.ndarray:
    if scheme.store is QuantStore.NATIVE:
        return values.astype(np.int64)
    n, bits = scheme.num_quants, scheme.value.bits
    u = values.view(np.uint32).astype(np.int64)
    cols = [(u >> (bits * i)) & ((1 << bits) - 1) for i in range(n)]
    q = np.stack(cols, -1)
    q = np.where(q >= (1 << (bits - 1)), q - (1 << bits), q)
    q = q.reshape(values.shape[:-1] + (values.shape[-1] * n,))
    return q[..., : shape[-1]]


def dequantize_ref(values, scales, scheme: QuantScheme, shape: tuple) -> np.ndarray:
    q = unpack_ref(values, scheme, tuple(shape)).astype(np.float64)
    s = np.asarray(scales, np.float64)
    if scheme.level.is_block():
        bs = scheme.level.block_size
        qb = q.reshape(tuple(shape[:-1]) + (shape[-1] // bs, bs))
        return (qb * s[..., None]).reshape(shape)
    return q * s.reshape(())
