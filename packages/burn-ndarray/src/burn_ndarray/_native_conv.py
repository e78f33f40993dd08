"""conv2d forward, input and weight gradients on the native kernels (`_native/conv.c`), groups 1.

One OpenMP region over fixed (image, block of output pixels) tasks: each thread writes the
task's im2col columns [K, pixels] into its own cache-sized buffer (`TASK_BYTES`) and runs the
GEMM `weight [co, K] @ columns` itself, through numpy's own OpenBLAS set to one thread for the
call, straight into the NCHW output with the bias added. No column matrix streams through
memory, no transpose pass, and OpenBLAS's thread pool (whose threads spin ~0.1 s after each
call) never wakes: all cores are used by the OpenMP threads alone. The weight gradient runs the
same tasks with `grad [co, pixels] @ columns^T`, summed per fixed slot of images; the input
gradient runs `weight^T @ grad` per (image, input-channel block) task and scatter-adds the
columns back (col2im) for any stride and dilation and where c_in < c_out, else it stays the
backend's flipped-kernel conv of the gradient (`_backend.conv2d_x_backward`), i.e. the forward
task path.

The chunked path this replaced (`_native_conv_chunked`: one big im2col, one multi-threaded BLAS
GEMM per 16 MB, a transpose back) stays the fallback when numpy's BLAS exposes no cblas GEMM,
and `BURN_NDARRAY_NATIVE_CONV=chunked` selects it; `BURN_NDARRAY_NATIVE_CONV=0` keeps the numpy
conv path (`_conv`, `_winograd`, split over the batch by the Python pool).

Results do not depend on the thread count: the task split comes from the shapes only. Which
path runs does for Winograd shapes (below `WINOGRAD_MAX_THREADS` threads, see `install`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading

import numpy as np

from . import _blas, _native_conv_chunked, _winograd
from . import _native_ops as _ops
from ._filter_classes import filter_classes
from ._im2col import out_size
from ._native_ops import F32, F64, _nt

log = logging.getLogger("burn_ndarray.native")

# im2col columns per task: fits in L2 (1 MB on Skylake-SP, 512 KB on Zen) beside the GEMM's
# packed panels, so the copy and the GEMM's read of it stay in cache.
TASK_BYTES = 256 << 10
# Fewest output pixels per task (unless the image has fewer): narrower GEMMs lose efficiency.
MIN_BLOCK = 64
# Weight-gradient partials [co, K] per slot of (image, pixel block) tasks: at most MAX_SLOTS
# slots (the threads that can share the work) and PART_BYTES.
MAX_SLOTS = 32
PART_BYTES = 64 << 20
# GEMM rows (input channels x kernel window) per x-gradient task.
XGRAD_ROWS = 128
# col2im for dx when c_in * COL2IM_CHANNEL_RATIO < c_out (see `_col2im_suits`).
COL2IM_CHANNEL_RATIO = 1
# Multiply-adds per OpenMP thread at least (~10-40 us of GEMM), so tiny convs wake few threads.
MAC_GRAIN = 1 << 20
# Winograd (2.25x fewer multiply-adds, numpy transforms on the Python pool) keeps its shapes
# below this many threads; see README "Native kernels" for the measurements behind it.
WINOGRAD_MAX_THREADS = 8
# The chunked fallback only from this many threads (on 2 cores the numpy path measured faster).
CHUNKED_MIN_THREADS = 8


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def block_pixels(p: int, k: int, itemsize: int) -> int:
    """Output pixels per task for p pixels per image and K = c*kh*kw: about TASK_BYTES of
    columns, at least MIN_BLOCK, blocks of one image made even and rounded up to 16 pixels
    (vector-width multiples for the GEMM's N). Depends on the shapes only, never on threads.

    Example:
        >>> block_pixels(1024, 27, 4), block_pixels(1024, 576, 4), block_pixels(49, 4608, 4)
        (1024, 112, 49)
    """
    pb = max(MIN_BLOCK, TASK_BYTES // max(1, k * itemsize))
    if pb >= p:
        return p
    nb = -(-p // pb)
    return min(p, (-(-p // nb) + 15) // 16 * 16)


def _geom(x_shape, w_shape, stride, padding, dilation, out_hw) -> np.ndarray:
    """The conv_geom struct of conv.c: n c h w co kh kw sh sw ph pw dh dw oh ow (int64)."""
    n, c, h, w = x_shape
    co, _, kh, kw = w_shape
    return np.array([n, c, h, w, co, kh, kw, *stride, *padding, *dilation, *out_hw], np.int64)


class _Gemm:
    """numpy's cblas GEMMs handed to conv.c once per process. `ok`: usable (None: not yet
    looked up); `local`: OpenBLAS's per-thread count can be set from C, so the process-wide
    one need not change."""

    ok: bool | None = None
    local = False
    lock = threading.Lock()

    @classmethod
    def ready(cls, lib) -> bool:
        with cls.lock:
            if cls.ok is None:
                cls._look_up(lib)
        return cls.ok

    @classmethod
    def _look_up(cls, lib) -> None:
        ptrs = _blas.cblas_gemm()
        before = _blas.current()  # the probe leaves BLAS on 1 thread: restore the count
        cls.local = bool(ptrs and ptrs[2])
        cls.ok = bool(ptrs) and lib.conv_set_gemm(*ptrs) == 1 and _probe(lib)
        if before is not None:
            _blas.set_threads(before)
        if not cls.ok:
            lib.conv_set_gemm(None, None, None)
            log.debug("burn-ndarray native conv: no usable cblas GEMM, chunked path")


def _probe(lib) -> bool:
    """One tiny conv per dtype against einsum: guards against a GEMM symbol with another ABI."""
    rng = np.random.default_rng(0)
    for dt in (F32, F64):
        x = rng.uniform(-1, 1, (2, 3, 5, 6)).astype(dt)
        w = rng.uniform(-1, 1, (4, 3, 2, 3)).astype(dt)
        want = np.einsum("nchwij,ocij->nohw", _windows(x, 2, 3), w.astype(np.float64))
        got = _forward(lib, 1, x, w, None, (1, 1), (0, 0), (1, 1), want.shape[2:])
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            return False
    return True


def _windows(x, kh, kw):
    """[n, c, h, w] -> float64 windows [n, c, oh, ow, kh, kw] (stride 1, no padding)."""
    return np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (kh, kw), axis=(2, 3))


# Conv calls in flight (several Python threads, e.g. one per logical device): without the
# per-thread setting, BLAS goes back to a budget only when the last one ends, so no GEMM inside
# a region runs multi-threaded.
_active = [0]
_active_lock = threading.Lock()


_RUN_LOCK = threading.Lock()


def _run(fn, threads: int, *args, error: str = "conv: could not allocate its column buffers"):
    """Call a conv kernel (or another kernel of GEMMs: `_native_gemm`; `error` is the message of
    its nonzero return) with every GEMM on its calling OpenMP thread, then leave numpy's BLAS
    on the backend's budget (as after any threaded region).

    With `openblas_set_num_threads_local` each team thread sets its own OpenBLAS count to 1 in
    C and the process-wide count is left alone (a threadpoolctl set-and-restore pair costs
    ~14 us); without it the process-wide count is 1 for the call."""
    if _Gemm.local:
        # One conv at a time: each already uses every core, and a concurrent call's
        # `set_threads` of the budget (below) made an in-flight GEMM of another Python thread
        # run multi-threaded, with other bits (seen in CI, 1 run in 2: test_concurrent_calls).
        with _RUN_LOCK:
            try:
                rc = fn(*args)
            finally:
                _blas.set_threads(threads)  # no call into BLAS when it already is the budget
    else:
        with _active_lock:
            _active[0] += 1
            _blas.set_threads(1)
        try:
            rc = fn(*args)
        finally:
            with _active_lock:
                _active[0] -= 1
                if _active[0] == 0:
                    _blas.set_threads(threads)
    if rc != 0:
        raise MemoryError(f"burn-ndarray native {error}")


def _forward(lib, threads, x, weight, bias, stride, padding, dilation, out_hw) -> np.ndarray:
    """Shapes: x [n, c, h, w], weight [co, c, kh, kw], bias [co] | None -> [n, co, oh, ow]."""
    dt = x.dtype
    fn = lib.conv2d_fwd_f32 if dt == F32 else lib.conv2d_fwd_f64
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    b = None if bias is None else np.ascontiguousarray(bias)
    n, co = x.shape[0], w.shape[0]
    p, k = out_hw[0] * out_hw[1], w[0].size
    out = np.empty((n, co, *out_hw), dt)
    geom = _geom(x.shape, w.shape, stride, padding, dilation, out_hw)
    pb = block_pixels(p, k, dt.itemsize)
    tasks = n * -(-p // pb)
    nt = min(tasks, _nt(threads, n * p * k * co, MAC_GRAIN))
    bp = None if b is None else _ops._ptr(b)
    _run(fn, threads, _ops._ptr(x), _ops._ptr(w), bp, _ops._ptr(out), _ops._ptr(geom), pb, nt)
    return out


def _weight_grad(lib, threads, x, grad, kernel, stride, padding, dilation) -> np.ndarray:
    """Shapes: x [n, c, h, w], grad [n, co, oh, ow] -> [co, c, kh, kw] (only the windows that
    grad covers are read)."""
    dt = x.dtype
    fn = lib.conv2d_wgrad_f32 if dt == F32 else lib.conv2d_wgrad_f64
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(grad)
    n, c = x.shape[:2]
    co, oh, ow = g.shape[1:]
    k = c * kernel[0] * kernel[1]
    pb = block_pixels(oh * ow, k, dt.itemsize)
    tasks = n * -(-(oh * ow) // pb)
    slots = max(1, min(tasks, MAX_SLOTS, PART_BYTES // (co * k * dt.itemsize)))
    part = np.empty((slots, co, k), dt)
    dw = np.empty((co, c, *kernel), dt)
    geom = _geom(x.shape, (co, c, *kernel), stride, padding, dilation, (oh, ow))
    nt = min(slots, _nt(threads, n * oh * ow * k * co, MAC_GRAIN))
    ptr = _ops._ptr
    _run(fn, threads, ptr(x), ptr(g), ptr(dw), ptr(part), ptr(geom), pb, slots, nt)
    return dw


def _check_grad(op: str, x, weight, g, groups: int) -> None:
    """The gradients' operands: channels as the forward's, `g` [batch, out channels, oh, ow]."""
    _check_channels(op, x, weight, groups)
    if g.ndim != 4 or g.shape[:2] != (x.shape[0], weight.shape[0]):
        raise ValueError(
            f"{op}: output_grad {list(g.shape)} is not [batch "
            f"{x.shape[0]}, out channels {weight.shape[0]}, oh, ow]"
        )


def _check_channels(op: str, x, weight, groups: int) -> None:
    """A clear error for mismatched channels (the GEMM would otherwise fail on K)."""
    if x.ndim == 4 and weight.ndim == 4 and x.shape[1] != weight.shape[1] * groups:
        raise ValueError(
            f"{op}: input {list(x.shape)} has {x.shape[1]} channels, weight {list(weight.shape)}"
            f" expects {weight.shape[1]} x groups {groups}"
        )


def channel_block(c: int, khw: int) -> int:
    """Input channels per x-gradient task: about XGRAD_ROWS GEMM rows (c_b * kh * kw), blocks
    made even. Depends on the shapes only.

    Example:
        >>> channel_block(3, 9), channel_block(64, 9), channel_block(512, 1)
        (3, 13, 128)
    """
    cb = min(c, max(1, XGRAD_ROWS // khw))
    return -(-c // -(-c // cb))


def _x_grad(lib, threads, x_shape, weight, grad, stride, padding, dilation) -> np.ndarray:
    """Shapes: weight [co, c, kh, kw], grad [n, co, oh, ow] -> dx of x_shape [n, c, h, w]."""
    dt = grad.dtype
    fn = lib.conv2d_xgrad_f32 if dt == F32 else lib.conv2d_xgrad_f64
    w, g = np.ascontiguousarray(weight), np.ascontiguousarray(grad)
    n, c = x_shape[:2]
    co, oh, ow = g.shape[1:]
    khw = w.shape[2] * w.shape[3]
    cb = channel_block(c, khw)
    pb = block_pixels(oh * ow, cb * khw, dt.itemsize)
    dx = np.empty(x_shape, dt)
    geom = _geom(x_shape, w.shape, stride, padding, dilation, (oh, ow))
    tasks = n * -(-c // cb)
    nt = min(tasks, _nt(threads, n * oh * ow * c * khw * co, MAC_GRAIN))
    ptr = _ops._ptr
    _run(fn, threads, ptr(g), ptr(w), ptr(dx), ptr(geom), pb, cb, nt)
    return dx


def _covered(x, weight, options, m: int) -> bool:
    """Whether the native conv takes these operands: 4-D float32/float64 of one dtype, groups
    1, at least `m` input elements; anything else (and bad input, for its error) goes on."""
    return (
        x.dtype in (F32, F64)
        and x.ndim == 4
        and weight.ndim == 4
        and weight.dtype == x.dtype
        and options.groups == 1
        and x.size >= m
        and weight.shape[1] == x.shape[1]
        and x.shape[0] > 0
        and weight.shape[0] > 0
    )


def _fallback(backend, name: str):
    """The op `name` as it was before this install: an op already set on the instance, else
    the class's method looked up at each call (so what wraps the class later, e.g. the autodiff
    tests' path spies, still sees the numpy paths the small or uncovered convs take)."""
    own = vars(backend).get(name)
    if own is not None:
        return own
    cls = type(backend)
    return lambda *args: getattr(cls, name)(backend, *args)


def install(backend, lib, m: int, ops: dict) -> None:
    """conv2d (and conv2d_weight_backward on the task path) as native ops in `ops`."""
    threads = backend.num_threads
    mode = os.environ.get("BURN_NDARRAY_NATIVE_CONV", "1").strip().lower()
    if mode == "0":
        return  # the numpy conv path with the other kernels native (for comparisons)
    tasks = mode != "chunked" and _Gemm.ready(lib)
    if not tasks and mode != "chunked":
        # no cblas GEMM: the chunked path where it measured faster than numpy's (many threads)
        if threads < CHUNKED_MIN_THREADS and not backend.parallel_min_forced:
            return
        log.debug("burn-ndarray native conv: chunked path (no cblas GEMM from numpy's BLAS)")
    prev = _fallback(backend, "conv2d")

    def conv2d(x, weight, bias, options):
        _check_channels("conv2d", x, weight, options.groups)
        if not _covered(x, weight, options, m) or (bias is not None and bias.dtype != x.dtype):
            return prev(x, weight, bias, options)
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        _, _, h, w = x.shape
        kh, kw = weight.shape[2:]
        oh = out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = out_size(w, kw, stride[1], padding[1], dilation[1])
        if oh <= 0 or ow <= 0 or min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return prev(x, weight, bias, options)
        if threads < WINOGRAD_MAX_THREADS and _winograd.suits(
            x.shape, weight.shape, stride, padding, dilation, 1, (oh, ow)
        ):
            return prev(x, weight, bias, options)
        if (classes := filter_classes(weight, bias)) is not None:
            # equal filters must give equal channels, which one GEMM does not guarantee
            # (`_filter_classes`): each distinct filter once, its channel copied
            keep, inverse = classes
            b = None if bias is None else bias[keep]
            return np.take(conv2d(x, weight[keep], b, options), inverse, axis=1)
        if tasks:
            return _forward(lib, threads, x, weight, bias, stride, padding, dilation, (oh, ow))
        return _native_conv_chunked.conv2d(
            lib, threads, x, weight, bias, stride, padding, dilation, (oh, ow)
        )

    ops["conv2d"] = conv2d
    if not tasks:
        return
    prev_wgrad = _fallback(backend, "conv2d_weight_backward")

    def conv2d_weight_backward(x, weight, output_grad, options):
        g = output_grad
        _check_grad("conv2d_weight_backward", x, weight, g, options.groups)
        if (
            not _covered(x, weight, options, m)
            or g.dtype != x.dtype
            or g.shape[2] <= 0
            or g.shape[3] <= 0
        ):
            return prev_wgrad(x, weight, output_grad, options)
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return prev_wgrad(x, weight, output_grad, options)
        kernel = tuple(weight.shape[2:])
        return _weight_grad(lib, threads, x, g, kernel, stride, padding, dilation)

    ops["conv2d_weight_backward"] = conv2d_weight_backward
    prev_xgrad = _fallback(backend, "conv2d_x_backward")

    def conv2d_x_backward(x, weight, output_grad, options):
        g = output_grad
        _check_grad("conv2d_x_backward", x, weight, g, options.groups)
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        if (
            not _covered(x, weight, options, m)
            or g.dtype != weight.dtype
            or g.shape[2] <= 0
            or g.shape[3] <= 0
            or min(stride) <= 0
            or min(dilation) <= 0
            or min(padding) < 0
            or not _col2im_suits(x.shape, weight.shape, stride, padding, dilation)
        ):
            return prev_xgrad(x, weight, output_grad, options)
        return _x_grad(lib, threads, x.shape, weight, g, stride, padding, dilation)

    ops["conv2d_x_backward"] = conv2d_x_backward


def _col2im_suits(x_shape, w_shape, stride, padding, dilation) -> bool:
    """Whether dx takes col2im (GEMM + scatter-add) over the backend's flipped-kernel conv of
    the gradient (forward task path): always where that conv does not apply (stride or
    dilation > 1, padding > k - 1), else when input channels are fewer than output channels
    (col2im then moves c_in * kh * kw values per pixel where the flipped conv's im2col moves
    c_out * kh * kw, and its GEMMs have c_in * kh * kw rows instead of c_in)."""
    co, c, kh, kw = w_shape
    return (
        stride != (1, 1)
        or dilation != (1, 1)
        or padding[0] > kh - 1
        or padding[1] > kw - 1
        or c * COL2IM_CHANNEL_RATIO < co
    )


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    lib.conv_set_gemm.argtypes, lib.conv_set_gemm.restype = (p, p, p), i
    for t in ("f32", "f64"):
        fn = getattr(lib, f"conv2d_fwd_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, L, i), i
        fn = getattr(lib, f"conv2d_wgrad_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, L, L, i), i
        fn = getattr(lib, f"conv2d_xgrad_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, L, L, i), i
    _native_conv_chunked.declare(lib)
