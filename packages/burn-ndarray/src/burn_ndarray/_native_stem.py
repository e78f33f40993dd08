"""conv2d forward for few input channels (the RGB stem of image models) on the native direct
kernel `_native/stemconv.c`: no im2col, output channels x output pixels in register tiles.

Taken from `_native_conv`'s per-shape plan for groups 1, at most `MAX_CHANNELS` input
channels, dilation 1 and a kernel no wider than `MAX_KERNEL`. Tasks are (image, strip of output
rows) with the strip from the shapes only, so results are bitwise identical for every thread
count.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, _nt

# Routed from `_native_conv`'s plan when True (False: the im2col + GEMM task path, for
# comparisons). One thread, RGB stem 224x224 -> 112x112 3x3 stride 2, CPU time in one process:
# 16 channels 166 us vs 199 us on the GEMM path, 24 channels 244 vs 296 (Zen 3, loaded host).
ENABLED = True
# Input channels at most: beyond this K = c*kh*kw is large enough for im2col + GEMM.
MAX_CHANNELS = 4
# Kernel rows/columns at most (the 7x7 stems of resnets fit; larger ones are rare).
MAX_KERNEL = 11
# Multiply-adds per task at least (a strip of output rows): tens of microseconds.
TASK_MACS = 1 << 18
# Multiply-adds per OpenMP thread at least (as `_native_conv.MAC_GRAIN`).
MAC_GRAIN = 1 << 20


def suits(x_shape, w_shape, stride, padding, dilation) -> bool:
    """Whether the stem kernel takes this groups-1 conv (shapes already checked to agree)."""
    c, kh, kw = w_shape[1], w_shape[2], w_shape[3]
    return (
        ENABLED
        and 1 <= c <= MAX_CHANNELS
        and max(kh, kw) <= MAX_KERNEL
        and dilation == (1, 1)
        and 1 <= min(stride)
        and max(stride) <= 4
    )


def setup(x_shape, w_shape, stride, padding, out_hw) -> tuple:
    """(geom int64 array, multiply-adds, out_hw): the kernel's shape-only arguments."""
    n, c, h, w = x_shape
    co, _, kh, kw = w_shape
    oh, ow = out_hw
    row_macs = max(1, ow * co * c * kh * kw)
    strip = min(oh, max(1, -(-TASK_MACS // row_macs)))
    geom = np.array([n, c, h, w, co, kh, kw, *stride, *padding, oh, ow, strip], np.int64)
    return geom, n * oh * row_macs, tuple(out_hw)


def forward(lib, threads, x, weight, bias, plan, ep=(0, 0.0, 0.0)) -> np.ndarray:
    """x [n, c, h, w], weight [co, c, kh, kw], bias [co] | None -> [n, co, oh, ow]; `ep`: the
    fused activation's (kind, alpha, beta) (`_conv_act.epilogue`), applied per task's rows."""
    geom, macs, out_hw = plan
    fn = lib.stem_conv2d_f32 if x.dtype == F32 else lib.stem_conv2d_f64
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    out = np.empty((x.shape[0], w.shape[0], *out_hw), x.dtype)
    bp = None if bias is None else _ops._ptr(np.ascontiguousarray(bias))
    nt = _nt(threads, macs, MAC_GRAIN)
    if fn(_ops._ptr(x), _ops._ptr(w), bp, _ops._ptr(out), _ops._ptr(geom), nt, *ep) != 0:
        raise MemoryError("burn-ndarray native stem conv2d: could not allocate its row buffers")
    return out


def declare(lib) -> None:
    p, i = ctypes.c_void_p, ctypes.c_int
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        fn = getattr(lib, f"stem_conv2d_{t}")  # ..., nt, then the epilogue's kind, alpha, beta
        fn.argtypes, fn.restype = (p, p, p, p, p, i, i, ct, ct), i
