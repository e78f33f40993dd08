"""conv2d forward on the native kernels (`_native/conv.c`), groups 1, and the GEMM plumbing
the other native GEMM kernels share (`_Gemm`, `_run`).

One OpenMP region over fixed (image, block of output pixels) tasks: each thread writes the
task's im2col columns [K, pixels] into its own cache-sized buffer (`TASK_BYTES`) and runs the
GEMM `weight [co, K] @ columns` itself, through numpy's own OpenBLAS set to one thread for the
call, straight into the NCHW output with the bias added. No column matrix streams through
memory, no transpose pass, and OpenBLAS's thread pool (whose threads spin ~0.1 s after each
call) never wakes: all cores are used by the OpenMP threads alone. 3x3 stride-1 convs with
enough channels and pixels take the native Winograd F(2x2, 3x3) instead (`_native_winograd`),
at every thread count. The gradients are in `_native_conv_grad`.

The chunked path this replaced (`_native_conv_chunked`: one big im2col, one multi-threaded BLAS
GEMM per 16 MB, a transpose back) stays the fallback when numpy's BLAS exposes no cblas GEMM,
and `BURN_NDARRAY_NATIVE_CONV=chunked` selects it; `BURN_NDARRAY_NATIVE_CONV=0` keeps the numpy
conv path (`_conv`, `_winograd`, split over the batch by the Python pool).

Results do not depend on the thread count: the task split and the choice of Winograd come from
the shapes only (on the chunked fallback, the numpy Winograd below `WINOGRAD_MAX_THREADS`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading

import numpy as np

from . import _conv_act, _conv_plans
from . import (
    _blas,
    _conv,
    _native_conv_chunked,
    _native_conv_grad,
    _native_conv_transpose,
    _native_stem,
    _native_winograd,
    _winograd,
)
from . import _native_ops as _ops
from ._filter_classes import cached_filter_classes
from ._im2col import out_size
from ._native_ops import F32, F64, _nt

log = logging.getLogger("burn_ndarray.native")

# im2col columns per task: fits in L2 (1 MB on Skylake-SP, 512 KB on Zen) beside the GEMM's
# packed panels, so the copy and the GEMM's read of it stay in cache.
TASK_BYTES = 256 << 10
# Fewest output pixels per task (unless the image has fewer): narrower GEMMs lose efficiency.
MIN_BLOCK = 64
# Multiply-adds per OpenMP thread at least (~10-40 us of GEMM), so tiny convs wake few threads.
MAC_GRAIN = 1 << 20
# Without a cblas GEMM (chunked fallback), the numpy Winograd keeps its shapes below this
# many threads; see README "Native conv2d".
WINOGRAD_MAX_THREADS = 8
# True: Winograd shapes go to the numpy Winograd (`_winograd`) instead of the native one, at
# every thread count (tests of the numpy path's own branches; comparisons).
NUMPY_WINOGRAD = False
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
    setup = _setup(x.shape, weight.shape, x.dtype, stride, padding, dilation, out_hw)
    return _forward_set(lib, threads, x, weight, bias, setup)


def _setup(x_shape, w_shape, dt, stride, padding, dilation, out_hw) -> tuple:
    """What `_forward_set` needs that depends on the shapes only (kept in a conv's plan):
    (geom, pixels per task, tasks, multiply-adds, out_hw). The geom array is only read."""
    n, co = x_shape[0], w_shape[0]
    p, k = out_hw[0] * out_hw[1], w_shape[1] * w_shape[2] * w_shape[3]
    geom = _geom(x_shape, w_shape, stride, padding, dilation, out_hw)
    pb = block_pixels(p, k, dt.itemsize)
    return geom, pb, n * -(-p // pb), n * p * k * co, tuple(out_hw)


def _forward_set(lib, threads, x, weight, bias, setup, ep=_conv_act.NONE) -> np.ndarray:
    """`_forward` with its shape-only arguments from `_setup`; `ep`: the fused activation's
    (kind, alpha, beta) (`_conv_act.epilogue`)."""
    geom, pb, tasks, macs, out_hw = setup
    dt = x.dtype
    fn = lib.conv2d_fwd_f32 if dt == F32 else lib.conv2d_fwd_f64
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    out = np.empty((x.shape[0], w.shape[0], *out_hw), dt)
    nt = min(tasks, _nt(threads, macs, MAC_GRAIN))
    bp = None if bias is None else _ops._ptr(np.ascontiguousarray(bias))
    ptrs = (_ops._ptr(x), _ops._ptr(w), bp, _ops._ptr(out), _ops._ptr(geom))
    _run(fn, threads, *ptrs, pb, nt, *ep)
    return out


def _check_channels(op: str, x, weight, groups: int) -> None:
    """A clear error for mismatched channels (the GEMM would otherwise fail on K)."""
    if x.ndim == 4 and weight.ndim == 4 and x.shape[1] != weight.shape[1] * groups:
        raise ValueError(
            f"{op}: input {list(x.shape)} has {x.shape[1]} channels, weight {list(weight.shape)}"
            f" expects {weight.shape[1]} x groups {groups}"
        )


def _check_out_channels(weight, bias, groups: int) -> None:
    """Clear errors for output channels that the groups do not divide (the numpy path's
    per-group reshape failed with "cannot reshape array of size ...") and for a bias that is
    not [out channels] (the kernel read past a short one)."""
    if weight.ndim == 4 and groups > 0 and weight.shape[0] % groups:
        raise ValueError(
            f"conv2d: weight {list(weight.shape)} has {weight.shape[0]} output channels, "
            f"not a multiple of groups {groups}"
        )
    if bias is not None and weight.ndim == 4 and bias.shape != weight.shape[:1]:
        raise ValueError(
            f"conv2d: bias {list(bias.shape)} is not [out channels {weight.shape[0]}] of "
            f"weight {list(weight.shape)}"
        )


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
    """conv2d (and its gradients on the task path, `_native_conv_grad`) as native ops in `ops`."""
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
    # (shapes, dtypes, options) -> the path and its shape-only arguments, or None for `prev`:
    # the checks and the geometry once per shape (a model has a few dozen conv shapes)
    plans: dict = {}

    def plan(x, weight, bias, options):
        _check_channels("conv2d", x, weight, options.groups)
        _check_out_channels(weight, bias, options.groups)  # `_native_dwconv` relies on it
        if not _covered(x, weight, options, 0) or (bias is not None and bias.dtype != x.dtype):
            return None
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        _, _, h, w = x.shape
        kh, kw = weight.shape[2:]
        if x.size < m:
            # small: the numpy path, but a plain pointwise conv straight to its one GEMM (the
            # squeeze-excitation convs on 1x1 inputs: ~11 us of Python per call before)
            plain = (kh, kw) == (1, 1) and stride == (1, 1) and padding == (0, 0)
            return ("pointwise",) if plain and (bias is None or bias.ndim == 1) else None
        oh = out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = out_size(w, kw, stride[1], padding[1], dilation[1])
        if oh <= 0 or ow <= 0 or min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return None
        geo = (x.shape, weight.shape, stride, padding, dilation, (oh, ow))
        numpy_wino = NUMPY_WINOGRAD or (not tasks and threads < WINOGRAD_MAX_THREADS)
        if numpy_wino and _winograd.suits(*geo[:5], 1, geo[5]):
            return None
        stem_bias = bias is None or bias.shape == weight.shape[:1]
        if stem_bias and _native_stem.suits(*geo[:5]):  # few input channels: no im2col
            return ("stem", _native_stem.setup(x.shape, weight.shape, stride, padding, (oh, ow)))
        if tasks and not NUMPY_WINOGRAD and _native_winograd.suits(*geo):
            return ("winograd", padding, (oh, ow))
        if tasks:
            return ("tasks", _setup(x.shape, weight.shape, x.dtype, *geo[2:]))
        return ("chunked", stride, padding, dilation, (oh, ow))

    def conv2d(x, weight, bias, options, act=None):
        """conv2d; with `act` (an activation tuple) conv2d_activation (`_conv_act`)."""
        p = _conv_plans.lookup(plans, plan, x, weight, bias, options)
        if p is None:
            return _conv_act.then(backend, prev(x, weight, bias, options), act)
        if (classes := cached_filter_classes(weight, bias)) is not None:
            # equal filters must give equal channels, which one GEMM does not guarantee
            # (`_filter_classes`): each distinct filter once, its channel copied
            keep, inverse = classes
            b = None if bias is None else bias[keep]
            return np.take(conv2d(x, weight[keep], b, options, act), inverse, axis=1)
        path = p[0]
        if path == "pointwise":
            out = _conv.pointwise(x, weight, bias)
            return out if act is None else _conv_act.in_place(lib, backend, out, act, m)
        if path == "tasks" or path == "stem":  # kernels with the epilogue (`_conv_act`)
            size = x.shape[0] * weight.shape[0] * p[1][-1][0] * p[1][-1][1]  # output elements
            ep = _conv_act.epilogue(act, x.dtype, size, m)
            fused = ep is not None
            ep = ep if fused else _conv_act.NONE
            if path == "tasks":
                out = _forward_set(lib, threads, x, weight, bias, p[1], ep)
            else:
                out = _native_stem.forward(lib, threads, x, weight, bias, p[1], ep)
            return out if fused else _conv_act.then(backend, out, act)
        if path == "winograd":
            out = _native_winograd.forward(lib, threads, x, weight, bias, *p[1:], _run)
        else:
            out = _native_conv_chunked.conv2d(lib, threads, x, weight, bias, *p[1:])
        return _conv_act.then(backend, out, act)

    ops["conv2d"] = conv2d

    def conv2d_activation(x, weight, bias, options, activation):
        return conv2d(x, weight, bias, options, activation)

    ops["conv2d_activation"] = conv2d_activation  # its own function: `explain` marks each op's
    if tasks:
        _native_conv_grad.install(backend, lib, m, ops)
        _native_conv_transpose.install(backend, lib, m, ops)


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    lib.conv_set_gemm.argtypes, lib.conv_set_gemm.restype = (p, p, p), i
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        fn = getattr(lib, f"conv2d_fwd_{t}")  # ..., nt, then the epilogue's kind, alpha, beta
        fn.argtypes, fn.restype = (p, p, p, p, p, L, i, i, ct, ct), i
        fn = getattr(lib, f"conv2d_wgrad_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, L, L, i), i
        fn = getattr(lib, f"conv2d_xgrad_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, L, L, i), i
    _native_conv_chunked.declare(lib)
    _native_winograd.declare(lib)
    _native_stem.declare(lib)
    _conv_act.declare(lib)
