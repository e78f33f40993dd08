"""Timing one callable, timeit-style, for the harness (`benches/_harness.py` says how and why).

Each implementation is warmed up, then `number` calls are timed per repeat (`number` calibrated like
`timeit.Timer.autorange`), with the garbage collector off; the per-call median is what is reported.
"""

from __future__ import annotations

import gc
import itertools
import os
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotation only: _harness imports this module
    from ._harness import Settings


def _time(fn: Callable[[], object], number: int, sync: Callable[[], object] | None = None) -> float:
    it = itertools.repeat(None, number)
    t0 = time.perf_counter()
    for _ in it:
        fn()
    if sync is not None:
        sync()  # the queued work of the loop is part of its time
    return time.perf_counter() - t0


def _calibrate(fn: Callable[[], object], min_time: float, sync=None) -> int:
    """Like `timeit.Timer.autorange`: the smallest 1/2/5 x 10^k loop count lasting >= min_time."""
    i = 1
    while True:
        for j in (1, 2, 5):
            number = i * j
            if _time(fn, number, sync) >= min_time:
                return number
        i *= 10


def _cpu_seconds() -> float:
    """CPU time of the whole process (every thread, user + system) so far, to the microsecond
    (`os.times` counts 10 ms ticks)."""
    try:
        import resource
    except ImportError:  # not Unix
        t = os.times()
        return t.user + t.system
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(
    impls: dict[str, Callable[[], object]],
    settings: Settings,
    syncs: dict | None = None,
    interleave: bool = False,
) -> dict[str, dict]:
    """Per-call times of each implementation: {impl: {median_s, min_s, max_s, number, repeats,
    cpu_per_wall}}. `cpu_per_wall` is the process's CPU seconds per wall second over the timed
    repeats: about the number of busy cores, spinning threads included (1.0 = one core).

    `syncs[name]`, when given, runs at the end of each timed loop (asynchronous backends).
    `interleave`: every implementation is warmed and calibrated first, then the repeats run in
    turns (burn, torch, burn, ...), so each sees the same host speed: for host-bound GPU steps,
    whose VM's vCPUs change speed by up to 1.6x within a process (`benches/probes/
    step_modes.py`); CPU suites keep the blocks (their spinning worker threads would fight)."""
    if interleave:
        return _measure_interleaved(impls, settings, syncs or {})
    syncs = syncs or {}
    numbers = {}
    cpu: dict[str, float | None] = {}
    samples: dict[str, list[float]] = {name: [] for name in impls}
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for name, fn in impls.items():
            if settings.settle_time:
                # Let the previous library's worker threads (OpenBLAS, torch's OpenMP) stop spinning.
                time.sleep(settings.settle_time)
            sync = syncs.get(name)
            numbers[name] = number = _warm_and_calibrate(fn, settings, sync)
            cpu0, wall0 = _cpu_seconds(), time.perf_counter()
            for _ in range(settings.repeats):
                samples[name].append(_time(fn, number, sync) / number)
            wall = time.perf_counter() - wall0
            cpu[name] = (_cpu_seconds() - cpu0) / wall if wall > 0 else None
    finally:
        if gc_was_enabled:
            gc.enable()
    return _results(samples, numbers, cpu)


def _warm_and_calibrate(fn: Callable[[], object], settings: Settings, sync) -> int:
    """Warm `fn` up for `settings.warmup_time` (at least one call), sync, and return the calls
    per timed repeat (`_calibrate`)."""
    end = time.perf_counter() + settings.warmup_time
    fn()
    while time.perf_counter() < end:
        fn()
    if sync is not None:
        sync()
    return _calibrate(fn, settings.min_time, sync)


def _results(samples: dict, numbers: dict, cpu: dict, **extra) -> dict[str, dict]:
    """`measure`'s answer from each implementation's per-call samples, calls per repeat and
    CPU seconds per wall second."""
    return {
        name: {
            "median_s": statistics.median(s),
            "min_s": min(s),
            "max_s": max(s),
            "number": numbers[name],
            "repeats": len(s),
            "cpu_per_wall": cpu[name],
            **extra,
        }
        for name, s in samples.items()
    }


def _measure_interleaved(impls: dict, settings: Settings, syncs: dict) -> dict[str, dict]:
    """`measure`'s interleaved form (its docstring)."""
    numbers = {}
    samples: dict[str, list[float]] = {name: [] for name in impls}
    walls = dict.fromkeys(impls, 0.0)
    cpus = dict.fromkeys(impls, 0.0)
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for name, fn in impls.items():
            numbers[name] = _warm_and_calibrate(fn, settings, syncs.get(name))
        for _ in range(settings.repeats):
            for name, fn in impls.items():
                cpu0, wall0 = _cpu_seconds(), time.perf_counter()
                samples[name].append(_time(fn, numbers[name], syncs.get(name)) / numbers[name])
                walls[name] += time.perf_counter() - wall0
                cpus[name] += _cpu_seconds() - cpu0
    finally:
        if gc_was_enabled:
            gc.enable()
    cpu = {name: cpus[name] / walls[name] if walls[name] > 0 else None for name in impls}
    return _results(samples, numbers, cpu, interleaved=True)
