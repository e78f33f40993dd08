"""The process's worker threads: one persistent pool that runs chunks of a numpy op in parallel.

numpy releases the GIL inside ufunc loops, reductions and copies of large arrays, so Python
threads that each call numpy on a slice run on separate cores. The pool is built for low
dispatch cost (a parallel region is tens of microseconds on a many-core machine):

- idle workers sleep on one queue (no spinning: idle workers use no CPU, unlike
  OpenMP/OpenBLAS workers that spin after a call); a region puts its job there once per worker
  it wants and the calling thread works on it too; chunks are claimed one at a time by whoever
  runs, so a worker descheduled by other processes on the cores holds at most the chunk it
  claimed (a late worker finds the job done and the caller never waits for it);
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
import queue
import threading
from collections.abc import Callable, Sequence

import numpy as np

from . import _load


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


class _Job:
    """One parallel region: its chunks, the next unclaimed one, and who waits for the last.

    Chunks are claimed one at a time by whichever thread is running (the caller included), so a
    worker the OS has descheduled (other processes on the cores) holds at most the chunk it
    claimed, never a share fixed in advance: a worker that wakes after every chunk was claimed
    finds nothing to do and the caller never waited for it."""

    __slots__ = ("args", "errors", "finished", "fn", "lock", "next", "n", "results", "all_done")

    def __init__(self, fn, chunks):
        self.fn, self.args, self.n = fn, chunks, len(chunks)
        self.results = [None] * self.n
        self.errors: list = []
        self.next = 0
        self.finished = 0
        self.lock = threading.Lock()
        self.all_done = threading.Lock()
        self.all_done.acquire()

    def work(self) -> None:
        """Run unclaimed chunks until none is left."""
        lock = self.lock
        while True:
            with lock:
                i = self.next
                if i >= self.n:
                    return
                self.next = i + 1
            try:
                self.results[i] = self.fn(*self.args[i])
            except BaseException as e:  # noqa: BLE001 - raised on the calling thread
                with lock:
                    self.errors.append((i, e))
            with lock:
                self.finished += 1
                last = self.finished == self.n
            if last:
                self.all_done.release()


def _work(jobs: queue.SimpleQueue) -> None:
    np.seterr(all="ignore")  # this thread's own numpy error state (a fresh context)
    while True:
        jobs.get().work()  # sleeps in the queue while idle (no spinning)


class Pool:
    """Persistent worker threads, started on demand up to the largest region asked for."""

    def __init__(self):
        self._region = threading.Lock()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._workers = 0

    def _grow(self, workers: int) -> None:
        while self._workers < workers:
            threading.Thread(
                target=_work, args=(self._jobs,), name=f"burn-ndarray-{self._workers}", daemon=True
            ).start()
            self._workers += 1

    def run(self, fn: Callable, chunks: Sequence[tuple]) -> list:
        """[fn(*c) for c in chunks], the chunks run in parallel (len(chunks) threads at most)."""
        if len(chunks) < 2 or not self._region.acquire(blocking=False):
            return [fn(*c) for c in chunks]
        try:
            if self._workers < len(chunks) - 1:
                self._grow(len(chunks) - 1)
            job = _Job(fn, chunks)
            # only the free cores' workers: one kept off its core would still claim a chunk
            for _ in range(min(len(chunks), _load.threads_now(len(chunks))) - 1):
                self._jobs.put(job)
            job.work()
            interrupted = _wait(job.all_done)  # chunks other threads claimed are written
            if job.errors:
                raise min(job.errors, key=lambda e: e[0])[1]
            if interrupted is not None:
                raise interrupted
            return job.results
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
