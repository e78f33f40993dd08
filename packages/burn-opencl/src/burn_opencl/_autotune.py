"""Autotune: pick the fastest kernel variant per problem key by timing the candidates once.

On first use of a key (op, shape bucketed to powers of two, dtype) on a device, every candidate
runs once to compile and warm up, then a few timed runs with the queue synchronised; the fastest
wins. Winners live in memory and in a JSON file (`$BURN_CACHE_DIR`, else
`$XDG_CACHE_HOME/burn` or `~/.cache/burn`: `opencl-autotune.json`), one section per device holding
the driver version it was measured with: a section written under another driver version is
ignored (and replaced). `BURN_AUTOTUNE=0` turns tuning off (the first candidate is used). A
candidate that fails to build or run on a device is skipped and its error kept in `FAILED`.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

FILE = "opencl-autotune.json"
_MEMORY: dict = {}  # (device id, key) -> winner index
#: (device id, candidate repr) -> the error of a candidate that failed to build or run
FAILED: dict = {}


def enabled() -> bool:
    return os.environ.get("BURN_AUTOTUNE", "1") != "0"


def cache_path() -> Path:
    base = os.environ.get("BURN_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "burn")
    return Path(base) / FILE


def bucket(*dims: int) -> tuple[int, ...]:
    """Each dim rounded up to a power of two: nearby shapes share a winner."""
    return tuple(1 << max(0, int(d) - 1).bit_length() for d in dims)


def _device_id(rt) -> str:
    d = rt.cl_device
    return f"{d.platform.name.strip()}|{rt.name}"


def _driver(rt) -> str:
    return rt.cl_device.driver_version.strip()


def _load() -> dict:
    try:
        return json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}


def _store(rt, key: str, winner: str) -> None:
    path = cache_path()
    data = _load()
    section = data.get(_device_id(rt))
    if not isinstance(section, dict) or section.get("driver") != _driver(rt):
        section = {"driver": _driver(rt), "winners": {}}
    section["winners"][key] = winner
    data[_device_id(rt)] = section
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".autotune-")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)  # atomic: concurrent writers never leave a torn file
    except OSError:
        pass  # a read-only cache dir only costs re-tuning next time


def _from_disk(rt, key: str):
    section = _load().get(_device_id(rt))
    if isinstance(section, dict) and section.get("driver") == _driver(rt):
        return section.get("winners", {}).get(key)
    return None


def choose(rt, key: str, candidates: list, run, repeats: int = 3) -> int:
    """Index of the fastest of `candidates` for `key`; `run(candidate)` launches one.

    The timed runs launch the real op on the real inputs (results discarded), so tuning needs
    no synthetic data and measures exactly the shapes in use.
    """
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
        t0 = time.perf_counter()
        for _ in range(repeats):
            run(cand)
        rt.sync()
        dt = time.perf_counter() - t0
        if dt < best_t:
            best, best_t = i, dt
    if best is None:
        raise RuntimeError(f"autotune {key}: every candidate failed on {rt.name}: {FAILED}")
    _MEMORY[mem_key] = best
    _store(rt, key, repr(candidates[best]))
    return best
