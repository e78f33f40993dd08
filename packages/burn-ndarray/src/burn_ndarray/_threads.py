"""The process's worker threads: one persistent pool that runs chunks of a numpy op in parallel.

numpy releases the GIL inside ufunc loops, reductions and copies of large arrays, so Python
threads that each call numpy on a slice run on separate cores. The pool is built for low
dispatch cost (a parallel region is tens of microseconds on a many-core machine):

- each worker sleeps on its own `threading.Lock` (no spinning: idle workers use no CPU, unlike
  OpenMP/OpenBLAS workers that spin after a call), is woken by releasing it, and signals done by
  releasing a second lock; the calling thread runs the first chunk itself;
- one region runs at a time; a second thread calling in while the pool is busy runs its chunks
  serially (never nested regions, never more threads than the budget);
- workers run with numpy's floating-point errors ignored (every op that can raise a flag runs
  quiet on the calling thread too, see `_fp`), and are recreated in a forked child.

Example:
    >>> run_chunks(sum, [([1, 2],), ([3],)])
    [3, 3]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence

import numpy as np


def default_threads() -> int:
    """`BURN_NUM_THREADS` if set (>= 1), else the cores this process may run on."""
    n = _positive_env("BURN_NUM_THREADS")
    if n:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


# Elements per chunk at least, and the size from which an op is split, by default. A parallel
# region costs ~10 us per thread woken on a 16-core Xeon (each worker takes the GIL in turn to
# start its numpy call: 160 us for 16 no-op chunks), so a chunk must hold ~100 us of numpy work;
# measured there, float32 add: 2^18 elements 166 us alone / 81 us on 4 threads, 2^20 513 / 211 us
# on 8, 2^22 1705 / 439 us on 8 (README).
GRAIN = 1 << 17
PARALLEL_MIN = 2 * GRAIN


def default_parallel_min() -> int:
    """`BURN_NDARRAY_PARALLEL_MIN` if set (>= 1; 1 sends every op through the threaded path,
    for tests), else `PARALLEL_MIN`."""
    return _positive_env("BURN_NDARRAY_PARALLEL_MIN") or PARALLEL_MIN


def blas_default_threads() -> int:
    """The thread count OpenBLAS picks by itself: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, or
    every online core."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def _positive_env(var: str) -> int | None:
    value = os.environ.get(var, "").strip()
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{var}: expected a positive integer, got {value!r}")
    return n


class _Slot:
    """One worker: its wake-up lock, its done lock, its task and its outcome."""

    __slots__ = ("done", "error", "go", "result", "task")

    def __init__(self):
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.task = None
        self.result = None
        self.error = None


def _work(slot: _Slot) -> None:
    np.seterr(all="ignore")  # this thread's own numpy error state (a fresh context)
    go, done = slot.go, slot.done
    while True:
        go.acquire()
        fn, args = slot.task
        slot.task = None
        try:
            slot.result = fn(*args)
            slot.error = None
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            slot.result, slot.error = None, e
        done.release()


class Pool:
    """Persistent worker threads, started on demand up to the largest region asked for."""

    def __init__(self):
        self._region = threading.Lock()
        self._slots: list[_Slot] = []

    def _grow(self, workers: int) -> None:
        while len(self._slots) < workers:
            slot = _Slot()
            threading.Thread(
                target=_work, args=(slot,), name=f"burn-ndarray-{len(self._slots)}", daemon=True
            ).start()
            self._slots.append(slot)

    def run(self, fn: Callable, chunks: Sequence[tuple]) -> list:
        """[fn(*c) for c in chunks], the chunks run in parallel (len(chunks) threads at most)."""
        if len(chunks) < 2 or not self._region.acquire(blocking=False):
            return [fn(*c) for c in chunks]
        try:
            slots = self._slots
            if len(slots) < len(chunks) - 1:
                self._grow(len(chunks) - 1)
            used = slots[: len(chunks) - 1]
            for slot, args in zip(used, chunks[1:]):
                slot.task = (fn, args)
                slot.go.release()
            first, error = None, None
            try:
                first = fn(*chunks[0])
            except BaseException as e:  # noqa: BLE001 - raised once every worker is done
                error = e
            out = [first]
            for slot in used:
                interrupted = _wait(slot.done)
                if interrupted is not None and error is None:
                    error = interrupted
                out.append(slot.result)
                slot.result = None
                if slot.error is not None and error is None:
                    error = slot.error
                slot.error = None
            if error is not None:
                raise error
            return out
        finally:
            self._region.release()


def _wait(lock: threading.Lock) -> BaseException | None:
    """Acquire; a KeyboardInterrupt meanwhile is returned, not raised, since the worker still
    writes its chunk's output until it releases the lock."""
    interrupted = None
    while True:
        try:
            lock.acquire()
            return interrupted
        except KeyboardInterrupt as e:
            interrupted = e


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    """The process's pool (created on first use; a forked child gets a fresh one)."""
    global _POOL
    p = _POOL
    if p is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = Pool()
            p = _POOL
    return p


def run_chunks(fn: Callable, chunks: Sequence[tuple]) -> list:
    """Run fn over the argument tuples in `chunks` on the pool; results in chunk order."""
    return pool().run(fn, chunks)


def _after_fork() -> None:
    global _POOL, _POOL_LOCK
    _POOL = None  # the parent's workers do not exist in the child
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
