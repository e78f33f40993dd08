"""matmul and the linear layer's three GEMMs on the OpenMP team (`_native/gemm.c`).

NdArray's `float_matmul` (2-D, batched, one side broadcast over the batch), `linear` (the bias
filled into the output, the GEMM adding into it), `linear_x_backward` (`grad @ weight^T`) and
`linear_weight_backward` (`x^T @ grad`) as one ctypes call each: every output matrix is cut into
[tm, tn] tiles and K into chunks (`plan`, from the shapes only), and each OpenMP thread runs its
tasks' GEMMs with numpy's own BLAS on one thread. Transposed operands are read in place.

Why (issue 36, the transformer step on many cores): numpy's matmul runs a large GEMM on
OpenBLAS's own pool, whose threads spin ~0.1 s after every call; a transformer step alternates
GEMMs with the OpenMP kernels (layer norm, GELU, softmax, adds, Adam), which then ran on cores
the spinning BLAS threads held. On the 2-core box a [512, 512] bias add took 0.04 ms alone and
2.6 ms right after a [512, 512]^2 matmul (medians). With this path OpenBLAS's pool never wakes
during a step, and the GEMMs' threads follow the same budget and grain rules as every kernel.

Results are bitwise identical for every thread count (each output element is one GEMM call
over the whole K, or over K chunks added in order; tiles and chunks depend on the shapes only,
as numpy's OpenBLAS gives other bits for another cut of the output); they differ from numpy's
single call in the last bits (another blocking). A one-row tile (a batch-of-one `linear`) is a
GEMV in C instead of a GEMM call, which packed the whole weight for one row (4x slower than numpy's
GEMV). Kept on the previous path: operands under `native_min` elements, dtypes other than
float32/float64 or mixed, batch dims that broadcast only in part, no usable cblas GEMM in
numpy's BLAS (`_native_conv._Gemm`), and everything when `BURN_NDARRAY_NATIVE_GEMM=0`.
"""

from __future__ import annotations

import ctypes
import math
import os

import numpy as np

from . import _native_conv
from . import _native_ops as _ops
from ._native_ops import F32, F64

#: multiply-adds per tile at least (~1.3 ms of one core's GEMM). Each tile's GEMM packs its own
#: A rows and B columns (numpy's cblas cannot share packed panels between calls), so fewer,
#: larger tiles cost less: one thread, CPU time over one numpy call, [1024, 1024]^2 as 32 tiles
#: of 128 x 256 (2^24 here) 1.11-1.14x, as 16 of 256 x 256 (this size) 1.07x; [512, 512]^2 as
#: 8 tiles 1.09x, as 2 tiles 1.07x. GEMMs of 2^30 multiply-adds and more (the transformer's at
#: batch 32 x 128) still get at least 16 tiles.
TASK_MACS = 1 << 26
#: tiles per GEMM at most: 2 per thread on 16 threads. The packing of a GEMM's tiles is about
#: 2 K sqrt(M N tasks). One thread, CPU ms, one numpy call / 128 tiles / 32 tiles:
#: [4096, 2048] @ [2048, 512]^T 84-90 / 107 / 94-100 (torch 93-94).
MAX_TASKS = 32
#: tiles are not cut below this many rows / columns: a tile's packing work is (tm + tn) * K
#: for tm * tn * K multiply-adds. One thread, the [4096, 512]^T @ [4096, 512] weight gradient
#: (2-core EPYC, loaded, min of 15): one call 57-66 ms, 128 x 128 tiles 84-102, 64 x 64 tiles
#: 126-143.
MIN_TILE = 128
#: tile edges are multiples of this (the GEMM kernels' register blocks)
TILE_ALIGN = 16
#: K is cut into chunks (`plan`) while the tiles would otherwise have an edge under this and...
KSPLIT_EDGE = 256
#: ...each chunk keeps at least this many of the K products. One thread, CPU ms, [512, 4096] @
#: [4096, 512] (a batch-32 weight gradient): 16 tiles of 128 x 128 28.6, 2 chunks x 8 tiles
#: 26.0, 4 x 4 of 256 x 256 24.8, 8 x 2 24.5, one call 22.1 (torch 24.2); [512, 4096] @
#: [4096, 2048]: 32 tiles 110, 4 x 8 100, one call 89 (torch 94).
KSPLIT_MIN_K = 512


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    args = (L, L, L, L, p, L, L, i, p, L, L, i, p, L, L, p, L, L, L, p, i)
    for t in ("f32", "f64"):
        fn = getattr(lib, f"gemm_tiled_{t}")
        fn.argtypes, fn.restype = args, i


def tiles(batch: int, m: int, n: int, k: int, want: int | None = None) -> tuple[int, int]:
    """(tm, tn): the output tile of a batch of [m, k] @ [k, n] products, from the shapes only.

    As many tiles as the work fills at `TASK_MACS` each (at most `MAX_TASKS` over the batch;
    `want` tiles when given), cutting the longer edge in halves (rounded up to `TILE_ALIGN`)
    down to `MIN_TILE`.

    Example:
        >>> tiles(1, 4096, 512, 512), tiles(1, 512, 512, 512), tiles(1, 512, 512, 4096)
        ((256, 512), (256, 512), (128, 128))
    """
    if want is None:
        want = min(MAX_TASKS, max(1, batch * m * n * k // TASK_MACS))
    per = -(-want // batch)
    tm, tn = max(m, 1), max(n, 1)

    def half(e):  # ceil(e / 2), rounded up to TILE_ALIGN (e > MIN_TILE: always shrinks)
        h = -(-e // 2)
        return -(-h // TILE_ALIGN) * TILE_ALIGN

    while -(-m // tm) * -(-n // tn) < per:
        if tm >= tn and tm > MIN_TILE:
            tm = half(tm)
        elif tn > MIN_TILE:
            tn = half(tn)
        elif tm > MIN_TILE:
            tm = half(tm)
        else:
            break
    return tm, tn


def plan(batch: int, m: int, n: int, k: int) -> tuple[int, int, int]:
    """(tm, tn, kc): output tiles and K chunk of a batch of [m, k] @ [k, n] products, from the
    shapes only (kc == k: no chunks).

    `tiles` for `want` tasks; while that cuts an edge under `KSPLIT_EDGE` and halving the K
    chunk keeps `KSPLIT_MIN_K` products, K is cut in two more and the tiles are chosen for half
    the tasks: the packing of a task is (tm + tn) * kc, so fewer, larger tiles over shorter K
    pack less for the same number of tasks. The chunks' results are added in order after.

    Example:
        >>> plan(1, 512, 512, 4096), plan(1, 512, 512, 512), plan(1, 4096, 512, 512)
        ((256, 256, 1024), (256, 512, 512), (256, 512, 512))
    """
    want = min(MAX_TASKS, max(1, batch * m * n * k // TASK_MACS))
    ks = 1
    tm, tn = tiles(batch, m, n, k, want)
    while (min(tm, m) < min(KSPLIT_EDGE, m) or min(tn, n) < min(KSPLIT_EDGE, n)) and (
        want // (2 * ks) >= 1 and k // (2 * ks) >= KSPLIT_MIN_K
    ):
        ks *= 2
        tm, tn = tiles(batch, m, n, k, want // ks)
    return tm, tn, -(-k // ks) if k else 0


def _operand(a, lead: int):
    """`a` [..., r, c] with `lead` leading elements as (array, batch stride, ld, transposed),
    strides in elements; a copy when its layout is not one GEMM operand per matrix."""
    r, c = a.shape[-2], a.shape[-1]
    for attempt in (a, None):
        if attempt is None:
            a = np.ascontiguousarray(a)
        try:
            v = np.reshape(a, (lead, r, c), copy=False)
        except ValueError:  # batch dims that do not flatten to one stride
            continue
        it = v.itemsize
        if any(s < 0 or s % it for s in v.strides):
            continue
        sb, s0, s1 = (s // it for s in v.strides)
        if (c == 1 or s1 == 1) and (r == 1 or s0 >= max(c, 1)):
            return v, sb if lead > 1 else 0, max(s0 if r > 1 else c, 1), 0
        if (r == 1 or s0 == 1) and (c == 1 or s1 >= max(r, 1)):
            return v, sb if lead > 1 else 0, max(s1 if c > 1 else r, 1), 1
    raise AssertionError("a C-contiguous operand is always a GEMM operand")  # pragma: no cover


def gemm(lib, threads: int, x, y, bias=None):
    """x [..., m, k] @ y [..., k, n] (+ bias [n]) -> [batch..., m, n] on the OpenMP team; batch
    dims equal, or one side's all 1 (broadcast). Same dtype (float32/float64) on every operand."""
    m, k = x.shape[-2], x.shape[-1]
    n = y.shape[-1]
    bx, by = x.shape[:-2], y.shape[:-2]
    batch_shape = np.broadcast_shapes(bx, by)
    batch = math.prod(batch_shape)
    out = np.empty(tuple(batch_shape) + (m, n), x.dtype)
    if out.size == 0:
        return out
    a, sa, lda, ta = _operand(x, math.prod(bx))
    b, sb, ldb, tb = _operand(y, math.prod(by))
    tm, tn, kc = plan(batch, m, n, k)
    ks = -(-k // kc) if k else 1
    tasks = batch * -(-m // tm) * -(-n // tn) * ks
    nt = _ops.team(threads, tasks, batch * m * n * k)
    fn = lib.gemm_tiled_f32 if x.dtype == F32 else lib.gemm_tiled_f64
    p = _ops._ptr
    pbias = None if bias is None else p(bias)
    work = None if ks == 1 else np.empty((ks - 1) * out.size, x.dtype)  # chunks 1.. of K
    _native_conv._run(
        fn, threads, batch, m, n, k, p(a), sa, lda, ta, p(b), sb, ldb, tb,
        p(out), m * n, n, pbias, tm, tn, kc, None if work is None else p(work), nt,
        error="gemm: no cblas GEMM set",
    )  # fmt: skip
    return out


def _fits(x, y, m: int) -> bool:
    """float32/float64 operands of one dtype, large enough, batch dims equal or one side's 1."""
    dt = x.dtype
    if dt != y.dtype or (dt != F32 and dt != F64) or (x.size < m and y.size < m):
        return False
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-2]:
        return False
    bx, by = x.shape[:-2], y.shape[:-2]
    return bx == by or math.prod(bx) == 1 or math.prod(by) == 1


def _rows(a):
    """a [..., d] as [rows, d] (a view when the strides allow; any size, 0 included)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def install(backend, lib, m: int, ops: dict) -> None:
    """float_matmul and the linear ops in `ops`, when numpy's BLAS has a usable cblas GEMM."""
    if os.environ.get("BURN_NDARRAY_NATIVE_GEMM", "1").strip() == "0":
        return
    if not _native_conv._Gemm.ready(lib):
        return
    threads = backend.num_threads
    prev_mm = ops.get("float_matmul") or getattr(backend, "float_matmul")

    def float_matmul(x, y):
        if not _fits(x, y, m) or (x.ndim != y.ndim and min(x.ndim, y.ndim) > 2):
            return prev_mm(x, y)
        return gemm(lib, threads, x, y)

    ops["float_matmul"] = float_matmul
    prev_lin = getattr(backend, "linear")

    def linear(x, weight, bias):
        if (
            x.ndim < 1
            or weight.ndim != 2
            or not _fits(_rows(x), weight, m)
            or (bias is not None and (bias.dtype != x.dtype or bias.shape != weight.shape[1:]))
        ):
            return prev_lin(x, weight, bias)
        d_in, d_out = weight.shape
        b = None if bias is None else np.ascontiguousarray(bias)
        out = gemm(lib, threads, _rows(x), weight, b)
        return out.reshape(x.shape[:-1] + (d_out,))

    ops["linear"] = linear
    prev_xb = getattr(backend, "linear_x_backward")

    def linear_x_backward(weight, output_grad):
        g = output_grad
        if weight.ndim != 2 or g.ndim < 1 or g.shape[-1] != weight.shape[1]:
            return prev_xb(weight, output_grad)
        g2 = _rows(g)
        if not _fits(g2, weight.T, m):
            return prev_xb(weight, output_grad)
        return gemm(lib, threads, g2, weight.T).reshape(g.shape[:-1] + (weight.shape[0],))

    ops["linear_x_backward"] = linear_x_backward
    prev_wb = getattr(backend, "linear_weight_backward")

    def linear_weight_backward(x, output_grad):
        g = output_grad
        if x.ndim < 1 or g.ndim < 1 or x.shape[:-1] != g.shape[:-1]:
            return prev_wb(x, output_grad)
        x2, g2 = _rows(x), _rows(g)
        if not _fits(x2.T, g2, m):
            return prev_wb(x, output_grad)
        return gemm(lib, threads, x2.T, g2)

    ops["linear_weight_backward"] = linear_weight_backward


__all__ = ["declare", "gemm", "install", "plan", "tiles"]
