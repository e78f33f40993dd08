"""How many of the budget's threads to wake when other processes use the cores.

Why: an OpenMP region ends at a barrier, so a team thread the OS has descheduled (its core busy
with another process) holds every other thread until it runs again, a scheduler time slice of
milliseconds; measured on the 2-core machine beside `python3 -c "while 1: pass"`, a float32
add of 2^20 elements took 0.16 ms on one thread and 6.7 ms on two. Waking only the cores that
are free bounds the loss to the busy core's share.

Estimate: the system's 1-minute load average less this process's own share of it is the load
of the others; `max(1, cores - round(others))` threads are woken. The kernel's load average is
an exponential average with a 60 s time constant, so our own share is our CPU use averaged the
same way (`TAU`): a plain recent window is wrong after a busy phase (16 cores of training leave
a load average near 16 for a minute while the last seconds of our own use were light, and the
next minute's kernels would wake one or two threads). Not corrected: other processes that just
ended still count until the average decays (up to a minute). Sampled at most every `PERIOD` seconds (one read of
/proc/loadavg, ~10 us). The thread count never changes results (every kernel's split depends on
the shapes only).
`BURN_NDARRAY_LOAD_AWARE=0` turns it off (always the whole budget).
"""

from __future__ import annotations

import math
import os
import threading
import time

PERIOD = 0.25
TAU = 60.0  # seconds: the time constant of the kernel's 1-minute load average


def _fresh_state() -> dict:
    """No sample yet: our own share of the load starts at 0 (nothing run before)."""
    return {"at": -1e9, "free": 1 << 30, "cpu": time.process_time(), "wall": time.monotonic(), "own": 0.0}


_state = _fresh_state()
_lock = threading.Lock()


def _enabled() -> bool:
    return os.environ.get("BURN_NDARRAY_LOAD_AWARE", "1").strip() != "0"


_ON = _enabled()


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def free_cores() -> int:
    """Cores not busy with other processes (at least 1), refreshed every `PERIOD` seconds."""
    now = time.monotonic()
    st = _state
    if now - st["at"] < PERIOD:
        return st["free"]
    with _lock:
        if now - st["at"] < PERIOD:
            return st["free"]
        try:
            load = os.getloadavg()[0]
        except OSError:
            st["at"], st["free"] = now, 1 << 30
            return st["free"]
        cpu = time.process_time()
        dt = now - st["wall"]
        if dt > 0:  # our CPU use since the last sample, folded in as the kernel folds the load
            rate = min(_cores(), max(0.0, cpu - st["cpu"]) / dt)
            a = math.exp(-dt / TAU)
            st["own"] = st["own"] * a + rate * (1.0 - a)
            st["cpu"], st["wall"] = cpu, now
        others = max(0.0, load - st["own"])
        st["free"] = max(1, _cores() - int(others + 0.5))
        st["at"] = now
        return st["free"]


def threads_now(threads: int) -> int:
    """The budget `threads`, capped by the free cores when load-aware."""
    if not _ON or threads <= 1:
        return threads
    return max(1, min(threads, free_cores()))
