"""Winograd F(2x2, 3x3) conv2d forward on the native kernels (`_native/winograd.c`).

Stride 1, dilation 1, groups 1, 3x3: one OpenMP region over fixed (image, block of 2x2 output
tiles) tasks; each thread transforms its block's input tiles, runs the 16 GEMMs
`U[k] [co, c] @ V[k] [c, tiles]` through numpy's BLAS on one thread (as the conv task path,
`_native_conv._run`) and transforms the products straight into the NCHW output with the bias.
2.25x fewer multiply-adds than the im2col GEMM; see README "Native conv2d" for when it runs.

The filter transform U = G g G^T ([16, co, c], 16/9 of the weight's size) is computed once per
weight array and kept while that array lives (a weak reference drops it): NdArray's tensors are
immutable values (`from_data` copies, no op writes into its inputs), so the same array always
holds the same filters. In inference every call after the first reuses it.

Results do not depend on the thread count: the tile blocks come from the shapes only.
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, _nt

# Bytes of transformed input V [16, c, tiles] plus products M [16, co, tiles] per task: in L2
# with the GEMM's packed panels.
TASK_BYTES = 512 << 10
# Fewest tiles per task (unless the image has fewer): the GEMMs' N, thinner ones lose speed.
MIN_TILES = 32
# Multiply-adds (of the direct conv) per OpenMP thread at least, as the task path's MAC_GRAIN.
MAC_GRAIN = 1 << 20
# Fewest input / output channels (measured, README "Native conv2d").
MIN_C = 16
MIN_CO = 16
# Smallest output side: at 7x7 (16 tiles) the 16 thin GEMMs lose to the task path's one.
MIN_OUT = 14


def tile_block(tiles: int, c: int, co: int, itemsize: int) -> int:
    """2x2 tiles per task for `tiles` per image: about TASK_BYTES of V and M, at least
    MIN_TILES, blocks of one image made even and rounded up to 8. Shapes only, never threads.

    Example:
        >>> tile_block(784, 64, 64, 4), tile_block(49, 256, 256, 4), tile_block(4096, 32, 16, 4)
        (64, 32, 168)
    """
    tb = max(MIN_TILES, TASK_BYTES // max(1, 16 * (c + co) * itemsize))
    if tb >= tiles:
        return tiles
    nb = -(-tiles // tb)
    return min(tiles, (-(-tiles // nb) + 7) // 8 * 8)


class _Transforms:
    """U of each live weight array, by identity (weakly: dropped with the array)."""

    # reentrant: a weak reference's callback (`_drop`) can run inside `get` on this thread
    # (an allocation there may collect another weight)
    lock = threading.RLock()
    cache: dict[int, tuple] = {}

    @classmethod
    def get(cls, lib, threads: int, weight: np.ndarray) -> np.ndarray:
        key = id(weight)
        sig = (weight.__array_interface__["data"][0], weight.shape, weight.strides, weight.dtype)
        with cls.lock:
            hit = cls.cache.get(key)
        if hit is not None and hit[0]() is weight and hit[1] == sig:
            return hit[2]
        u = filter_transform(lib, threads, weight)
        try:
            ref = weakref.ref(weight, lambda _r, key=key: cls._drop(key, _r))
        except TypeError:  # not weakly referable: no way to know when it dies, so no cache
            return u
        with cls.lock:
            cls.cache[key] = (ref, sig, u)
        return u

    @classmethod
    def _drop(cls, key: int, ref) -> None:
        with cls.lock:
            hit = cls.cache.get(key)
            if hit is not None and hit[0] is ref:
                del cls.cache[key]


def filter_transform(lib, threads: int, weight: np.ndarray) -> np.ndarray:
    """U = G g G^T of every 3x3 filter: [co, c, 3, 3] -> [16, co, c] in weight's dtype (in C:
    numpy's passes and their float64 temporaries took 65 ms for 512x512 filters)."""
    w = np.ascontiguousarray(weight)
    co, c = w.shape[:2]
    u = np.empty((16, co, c), w.dtype)
    fn = lib.wino3x3_filter_f32 if w.dtype == F32 else lib.wino3x3_filter_f64
    fn(_ops._ptr(w), _ops._ptr(u), co, c, _nt(threads, w.size, 1 << 16))
    return u


def forward(lib, threads, x, weight, bias, padding, out_hw, run) -> np.ndarray:
    """Shapes: x [n, c, h, w], weight [co, c, 3, 3], bias [co] | None -> [n, co, oh, ow]
    (stride 1, dilation 1). `run`: `_native_conv._run` (one BLAS thread per OpenMP thread)."""
    dt = x.dtype
    fn = lib.wino3x3_fwd_f32 if dt == F32 else lib.wino3x3_fwd_f64
    x = np.ascontiguousarray(x)
    u = _Transforms.get(lib, threads, weight)
    b = None if bias is None else np.ascontiguousarray(bias)
    n, c, h, w = x.shape
    co = weight.shape[0]
    oh, ow = out_hw
    tiles = -(-oh // 2) * -(-ow // 2)
    tb = tile_block(tiles, c, co, dt.itemsize)
    out = np.empty((n, co, oh, ow), dt)
    geom = np.array([n, c, h, w, co, 3, 3, 1, 1, *padding, 1, 1, oh, ow], np.int64)
    tasks = n * -(-tiles // tb)
    nt = min(tasks, _nt(threads, n * oh * ow * c * 9 * co, MAC_GRAIN))
    ptr = _ops._ptr
    bp = None if b is None else ptr(b)
    run(fn, threads, ptr(x), ptr(u), bp, ptr(out), ptr(geom), tb, nt)
    return out


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        fn = getattr(lib, f"wino3x3_fwd_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, L, i), i
        fn = getattr(lib, f"wino3x3_filter_{t}")
        fn.argtypes, fn.restype = (p, p, L, L, i), None


def suits(x_shape, w_shape, stride, padding, dilation, out_hw) -> bool:
    """Whether this conv takes the native Winograd: 3x3, stride 1, dilation 1, the natural
    output size, enough channels for the transforms to pay (measured, README)."""
    c, co = x_shape[1], w_shape[0]
    return (
        tuple(w_shape[2:]) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(dilation) == (1, 1)
        and tuple(out_hw) == (x_shape[2] + 2 * padding[0] - 2, x_shape[3] + 2 * padding[1] - 2)
        and min(padding) >= 0
        and min(out_hw) >= MIN_OUT
        and c >= MIN_C
        and co >= MIN_CO
    )
