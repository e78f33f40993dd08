"""Autotune: pick the fastest kernel variant per problem key by timing the candidates once.

On first use of a key (op, shape bucketed to powers of two, dtype) on a device, every candidate
runs once to compile and warm up, then a few timed runs with the queue synchronised; the fastest
wins; a tie goes to the earliest candidate in the list. Winners live in memory and in a JSON
file in the trusted cache folder (`burn_tensor.cache.cache_dir()`: `$BURN_CACHE_DIR`, else
`$XDG_CACHE_HOME/burn` or `~/.cache/burn`; memory only when that folder is not safe):
`opencl-autotune.json`, `{device id: {"driver": str, "winners": {key: candidate repr}}}`, one
section per device holding the driver version it was measured with: a section written under
another driver version is ignored (and replaced). A file of any other shape is ignored with one
`CacheWarning` and replaced by the next store. `BURN_AUTOTUNE=0` turns tuning off (the first
candidate is used). A candidate that fails to build or run on a device is skipped and its error
kept in `FAILED`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from burn_tensor import cache

FILE = "opencl-autotune.json"
#: the clock the timed runs are measured with (seconds); `choose(clock=...)` overrides it
CLOCK = time.perf_counter
_MEMORY: dict = {}  # (device id, key) -> winner index
#: (device id, candidate repr) -> the error of a candidate that failed to build or run
FAILED: dict = {}


def enabled() -> bool:
    return os.environ.get("BURN_AUTOTUNE", "1") != "0"


def bucket(*dims: int) -> tuple[int, ...]:
    """Each dim rounded up to a power of two: nearby shapes share a winner."""
    return tuple(1 << max(0, int(d) - 1).bit_length() for d in dims)


def _device_id(rt) -> str:
    d = rt.cl_device
    return f"{d.platform.name.strip()}|{rt.name}"


def _driver(rt) -> str:
    return rt.cl_device.driver_version.strip()


def shape_problem(data) -> str | None:
    """What is wrong with the parsed winners file `data` (None: nothing)."""
    if not isinstance(data, dict):
        return f"expected an object of device sections, got {type(data).__name__}"
    for dev, section in data.items():
        if not isinstance(section, dict):
            return f"section {dev!r}: expected an object, got {type(section).__name__}"
        if not isinstance(section.get("driver"), str):
            return f"section {dev!r}: 'driver' must be a string"
        winners = section.get("winners")
        if not isinstance(winners, dict):
            return f"section {dev!r}: 'winners' must be an object, got {type(winners).__name__}"
        for k, w in winners.items():
            if not isinstance(w, str):
                return f"section {dev!r}: winner of {k!r} must be a string, got {type(w).__name__}"
    return None


def _path() -> Path | None:
    folder = cache.cache_dir()
    return None if folder is None else folder / FILE


def _load() -> dict:
    path = _path()
    data = None if path is None else cache.read_json(path, shape_problem)
    return data if data is not None else {}


def _store(rt, key: str, winner: str) -> None:
    path = _path()
    if path is None:
        return  # no trusted cache folder: winners stay in memory
    data = _load()
    section = data.get(_device_id(rt))
    if section is None or section["driver"] != _driver(rt):
        section = {"driver": _driver(rt), "winners": {}}
    section["winners"][key] = winner
    data[_device_id(rt)] = section
    try:
        cache.write_json(path, data)  # atomic: concurrent writers never leave a torn file
    except OSError:
        pass  # a read-only cache dir only costs re-tuning next time


def _from_disk(rt, key: str):
    section = _load().get(_device_id(rt))
    if section is not None and section["driver"] == _driver(rt):
        return section["winners"].get(key)
    return None


def choose(rt, key: str, candidates: list, run, repeats: int = 3, clock=None) -> int:
    """Index of the fastest of `candidates` for `key`; `run(candidate)` launches one.

    The timed runs launch the real op on the real inputs (results discarded), so tuning needs
    no synthetic data and measures exactly the shapes in use. `clock` (default `CLOCK`,
    `time.perf_counter`) returns seconds; the time of a candidate is the clock's difference
    around its `repeats` runs and the queue's sync. Ties go to the earlier candidate.
    """
    clock = clock or CLOCK
    if len(candidates) == 1 or not enabled():
        return 0
    mem_key = (_device_id(rt), key)
    hit = _MEMORY.get(mem_key)
    if hit is not None:
        return hit
    # the file names the winner (its repr), not its position: a candidate list that changed
    # between versions (or a device that filters it differently) never maps to another one
    disk = _from_disk(rt, key)
    names = [repr(c) for c in candidates]
    if isinstance(disk, str) and disk in names:
        _MEMORY[mem_key] = names.index(disk)
        return _MEMORY[mem_key]
    best, best_t = None, float("inf")
    for i, cand in enumerate(candidates):
        try:
            run(cand)  # compile + warm up
            rt.sync()
        except Exception as exc:  # noqa: BLE001 - a driver that cannot build one variant
            # (a compiler bug, a resource limit) must not take the op down: skip it, say so
            FAILED[(_device_id(rt), repr(cand))] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        t0 = clock()
        for _ in range(repeats):
            run(cand)
        rt.sync()
        dt = clock() - t0
        if dt < best_t:  # strict: a tie keeps the earlier candidate
            best, best_t = i, dt
    if best is None:
        raise RuntimeError(f"autotune {key}: every candidate failed on {rt.name}: {FAILED}")
    _MEMORY[mem_key] = best
    _store(rt, key, repr(candidates[best]))
    return best
