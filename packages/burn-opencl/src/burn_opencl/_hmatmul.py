"""OpenCl's float16 / bfloat16 matmul on NVIDIA tensor cores (`_hgemm_wg`'s and `_hgemm`'s kernels).

`_half.wrap_class` sends a matmul of two half operands here first; `hmatmul` returns None where
no kernel can run it (not an NVIDIA device of compute capability 8.0+, `BURN_OPENCL_HGEMM=0`,
K zero or K or N not a multiple of 8, mixed dtypes, more than 65,535 batch entries) and the float32
detour runs as before. Compute capability 9.0 (Hopper) runs `_hgemm_wg`'s `wgmma` kernel (about
1.6x `mma.sync` there); if the driver will not build it (a warning says why) or
`BURN_OPENCL_HGEMM=mma`, and on every other capability 8.0+, `_hgemm`'s `mma.sync` kernel. Operands whose layout the kernel cannot read (a transposed view, a row
stride or offset that is not a multiple of 8, batch dims that do not merge into one stride) are
copied contiguous first: the copy is O(size), the product O(size^1.5).

Results: the products accumulate in float32 inside the tensor cores and C is rounded once to
the storage type; the float32 detour rounded the same float32 product once too, so the two
paths differ only by the order of the float32 additions.

Example:
    >>> x = ClArray.from_numpy(rt, np.ones((2, 64, 32), np.float16))     # doctest: +SKIP
    >>> hmatmul(x, ClArray.from_numpy(rt, np.ones((32, 16), np.float16))).shape
    ...                                                                  # doctest: +SKIP
    (2, 64, 16)
"""

from __future__ import annotations

import math
import os
import warnings
import weakref

from burn_gpu import collapse

from . import _ew
from . import _hgemm as hg
from . import _hgemm_wg as wg
from ._array import ClArray, broadcast_shape

ENV = "BURN_OPENCL_HGEMM"
#: most batch entries one launch takes (the grid's z: CUDA's limit under NVIDIA's OpenCL)
MAX_BATCH = 65535
_USABLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: runtime -> whether it runs the wgmma kernel (compute capability 9.0, built without error)
_WGMMA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def usable(rt) -> bool:
    """Whether `rt`'s device runs the tensor-core kernel: an NVIDIA GPU of compute capability
    8.0 or later (`mma.m16n8k16` for bfloat16, `cp.async`, `ldmatrix`), unless turned off."""
    ok = _USABLE.get(rt)
    if ok is None:
        dev = rt.cl_device
        try:  # cl_nv_device_attribute_query: present on NVIDIA's driver only
            major = int(dev.compute_capability_major_nv)
        except Exception:  # noqa: BLE001 - any other vendor or an old pyopencl: not usable
            major = 0
        ok = rt.kind == "gpu" and "NVIDIA" in dev.platform.name and major >= 8
        _USABLE[rt] = ok
    return ok and os.environ.get(ENV, "1") != "0"


def wgmma(rt) -> bool:
    """Whether `rt` (a `usable` one) runs `_hgemm_wg`'s kernel: compute capability 9.0 exactly
    (`wgmma` is sm_90a's), unless `BURN_OPENCL_HGEMM=mma` or its build failed."""
    ok = _WGMMA.get(rt)
    if ok is None:
        dev = rt.cl_device
        try:
            cc = (int(dev.compute_capability_major_nv), int(dev.compute_capability_minor_nv))
        except Exception:  # noqa: BLE001 - not NVIDIA's driver
            cc = (0, 0)
        ok = _WGMMA[rt] = cc == (9, 0)
    return ok and os.environ.get(ENV, "1") != "mma"


def _kernel(rt, dtype: str):
    """(module, tile, kernel) of the kernel `rt` runs for `dtype`."""
    if wgmma(rt):
        tile = wg.DEFAULT
        try:
            return wg, tile, rt.kernel(("hgemm_wg", dtype, tile), "hgemm", None,
                                       build=lambda ctx, dev: wg.build(ctx, dev, dtype, tile))  # fmt: skip
        except RuntimeError as exc:  # a driver that takes no sm_90a PTX: mma.sync from now on
            _WGMMA[rt] = False
            warnings.warn(f"OpenCl: the wgmma half matmul did not build on {rt.name}; the "
                          f"mma.sync kernel runs instead ({str(exc)[:300]})", RuntimeWarning,
                          stacklevel=3)  # fmt: skip
    tile = hg.DEFAULT
    return hg, tile, rt.kernel(("hgemm", dtype, tile), "hgemm", lambda: hg.render(dtype, tile))


def operand_layout(shape, strides, offset, bshape) -> tuple[int, int] | None:
    """(row stride, batch stride) under which the kernel reads a [..., R, C] operand of this
    layout broadcast over batch shape `bshape`, or None when it needs a contiguous copy: the
    last dim contiguous, the row stride, offset and batch stride multiples of 8 elements (16
    bytes), and the batch dims (broadcast ones at stride 0) one stride over the flat batch.

    Example:
        >>> operand_layout((4, 64, 32), (2048, 32, 1), 0, (4,))
        (32, 2048)
        >>> operand_layout((64, 32), (1, 64), 0, ()) is None   # a transposed view
        True
    """
    r, c = shape[-2:]
    rs, cs = strides[-2:]
    if (cs != 1 and c > 1) or offset % 8:
        return None
    row = rs if r > 1 else 8  # a single row's stride is never used
    if row % 8:
        return None
    lead = (1,) * (len(bshape) - (len(shape) - 2)) + tuple(shape[:-2])
    lead_st = (0,) * (len(bshape) - (len(shape) - 2)) + tuple(strides[:-2])
    bst = [0 if n == 1 else s for n, s in zip(lead, lead_st)]
    if not any(bst):
        return row, 0
    sh, (st,) = collapse(bshape, [bst])
    if len(sh) != 1 or st[0] % 8:
        return None
    return row, st[0]


def _readable(a: ClArray, bshape):
    """(array, row stride, batch stride): `a` itself where its layout reads as it is, else a
    contiguous copy broadcast over `bshape`."""
    lay = operand_layout(a.shape, a.strides, a.offset, bshape)
    if lay is not None:
        return a, *lay
    full = a.expand(tuple(bshape) + a.shape[-2:]) if bshape else a
    c = _ew.contiguous(full)
    r, k = c.shape[-2:]
    return c, (k if r > 1 else 8), (r * k if bshape else 0)


def hmatmul(x: ClArray, y: ClArray) -> ClArray | None:
    """x [..., M, K] @ y [..., K, N] -> contiguous [batch..., M, N] in x's half dtype on tensor
    cores, or None where the kernel cannot take it (the caller runs the float32 detour)."""
    dt = x.dtype
    if y.dtype != dt or dt.name not in hg.TYPES or x.ndim < 2 or y.ndim < 2:
        return None
    m, k = x.shape[-2:]
    n = y.shape[-1]
    if k == 0 or k % 8 or n % 8 or y.shape[-2] != k or not usable(x.rt):
        return None
    bshape = broadcast_shape((x.shape[:-2], y.shape[:-2])) if max(x.ndim, y.ndim) > 2 else ()
    batch = math.prod(bshape)
    if batch > MAX_BATCH:
        return None
    rt = x.rt
    out = ClArray.empty(rt, tuple(bshape) + (m, n), dt)
    if out.size == 0:
        return out
    xa, lda, sa = _readable(x, bshape)
    ya, ldb, sb = _readable(y, bshape)
    mod, tile, kern = _kernel(rt, dt.name)
    scal = hg.args(m, n, k, lda, ldb, sa, sb, m * n, xa.offset, ya.offset)
    rt.launch(kern, mod.grid(m, n, batch, tile), (tile.threads, 1, 1),
              [out.buf, xa.buf, ya.buf, *scal])  # fmt: skip
    return out

