"""numpy's BLAS thread count, set at run time (threadpoolctl), so BLAS and our pool share one
thread budget.

A large GEMM called on its own gets the backend's whole budget of BLAS threads; GEMMs called
from inside a parallel region of our pool (conv chunks, batched small matmuls) run with one BLAS
thread each, since the region already uses the budget. The count is a process-wide BLAS setting:
it is changed only when it differs from the last value set (one ctypes call, ~1 us).

Example:
    >>> set_threads(2)
    >>> current() in (2, None)  # None: no BLAS library found to control
    True
"""

from __future__ import annotations

import os
import threading

from . import _load

_lock = threading.Lock()
_controllers: list | None = None
_current: int | None = None


def _numpy_blas() -> list:
    """threadpoolctl controllers of the BLAS libraries numpy links (not torch's, say)."""
    import numpy as np

    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # a broken install: BLAS keeps its own thread count
        return []

    blas = ThreadpoolController().select(user_api="blas").lib_controllers
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    own = [c for c in blas if c.filepath and "numpy" in os.path.relpath(c.filepath, numpy_dir)]
    return own or [c for c in blas if "torch" not in (c.filepath or "")]


def _ensure_loaded() -> list:
    global _controllers, _current
    if _controllers is None:
        with _lock:
            if _controllers is None:
                found = _numpy_blas()
                _current = found[0].get_num_threads() if found else None
                _controllers = found
    return _controllers


def set_threads(n: int) -> None:
    """Let numpy's BLAS use n threads from now on (no-op if it already does), capped by the
    cores other processes leave free (`_load.threads_now`): BLAS threads spin at their
    barriers like our pool's, so a budget of 2 beside a busy core made mobilenet_v3_small's
    numpy 1x1 convs wait on a descheduled thread (7.5-8.0 ms a forward with the default
    threads beside `python3 -c "while 1: pass"`, 3.7-4.2 ms on one thread)."""
    global _current
    if n > 1:
        n = _load.threads_now(n)
    ctl = _controllers if _controllers is not None else _ensure_loaded()
    if n == _current or not ctl:
        return
    with _lock:
        for c in ctl:
            c.set_num_threads(n)
        _current = n


def current() -> int | None:
    """The BLAS thread count last set or read (None when no BLAS library was found)."""
    _ensure_loaded()
    return _current


# Multiply-adds one BLAS thread is given at least. OpenBLAS threads spin (yielding) for about
# 0.1 s after each call before they sleep, and the library reads how long only when it loads:
# every GEMM of the guide's training step on 16 BLAS threads kept 16 cores busy all step long
# (15.8 CPU seconds per wall second against torch's 2.3). So only GEMMs large enough to keep a
# thread busy for ~1 ms each get more than one; smaller ones run on one (and conv parts on the
# pool run on one each).
GEMM_GRAIN = 1 << 24
# ... and none below this size: a GEMM of 2^25 multiply-adds (the guide's [64, 1024] @ [1024, 512]
# linear layer) on 2 BLAS threads left OpenBLAS's worker spinning between steps, a whole core
# (0.93-0.98 CPU s per wall s): on 2 cores the guide's training step took 42-58 ms by default
# against 20-21 with OPENBLAS_THREAD_TIMEOUT=4, and 21 ms with this floor, spin included
# (`benches/cpu_time_probe.py`). Above it a GEMM runs for milliseconds, which the spin after it
# does not dominate.
GEMM_MIN_THREADED = 1 << 27


def gemm_threads(macs: int, budget: int) -> int:
    """BLAS threads for a GEMM of `macs` multiply-adds within a budget of `budget` threads.

    Example:
        >>> gemm_threads(1024**3, 16), gemm_threads(256 * 1024 * 512, 16), gemm_threads(4096, 16)
        (16, 8, 1)
        >>> gemm_threads(64 * 1024 * 512, 16)  # under GEMM_MIN_THREADED
        1
    """
    if macs < GEMM_MIN_THREADED:
        return 1
    return max(1, min(budget, macs // GEMM_GRAIN))


# cblas GEMM symbols of numpy's BLAS, most specific first: numpy >= 2 bundles scipy-openblas
# (ILP64, `scipy_` prefix, `64_` suffix), numpy 1.22-1.26 openblas64_ (`64_` suffix); a system
# BLAS exports plain `cblas_sgemm`.
_GEMM_NAMES = (
    ("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
    ("cblas_sgemm64_", "cblas_dgemm64_"),
    ("scipy_cblas_sgemm", "scipy_cblas_dgemm"),
    ("cblas_sgemm", "cblas_dgemm"),
)


def cblas_gemm() -> tuple[int, int, int | None] | None:
    """Addresses of numpy's BLAS `cblas_sgemm`, `cblas_dgemm` (any of `_GEMM_NAMES`) and, when
    exported, OpenBLAS's `openblas_set_num_threads_local` (None otherwise), for C code to call
    directly; None when no controllable BLAS or no GEMM symbols were found (the caller then
    keeps going through numpy). The library is the one numpy already loaded, found through
    threadpoolctl; dlopen of a loaded file returns that same copy."""
    import ctypes

    def addr(lib, name):
        try:
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except AttributeError:
            return None

    for c in _ensure_loaded():
        try:
            lib = ctypes.CDLL(c.filepath)
        except OSError:
            continue
        local = addr(lib, "openblas_set_num_threads_local")
        local = local or addr(lib, "scipy_openblas_set_num_threads_local64_")
        for s, d in _GEMM_NAMES:
            fs, fd = addr(lib, s), addr(lib, d)
            if fs and fd:
                return fs, fd, local
    return None
