"""How many of the budget's threads to wake when other processes use the cores.

Why: an OpenMP region ends at a barrier, so a team thread the OS has descheduled (its core busy
with another process) holds every other thread until it runs again, a scheduler time slice of
milliseconds; measured on the 2-core machine beside `python3 -c "while 1: pass"`, a float32
add of 2^20 elements took 0.16 ms on one thread and 6.7 ms on two. Waking only the cores that
are free bounds the loss to the busy core's share.

Estimate: the system's 1-minute load average less this process's own CPU use over the last
`WINDOW` seconds is the load of the others; `max(1, cores - round(others))` threads are woken.
Sampled at most every `PERIOD` seconds (one read of /proc/loadavg, ~10 us). The thread count
never changes results (every kernel's split depends on the shapes only).
`BURN_NDARRAY_LOAD_AWARE=0` turns it off (always the whole budget).
"""

from __future__ import annotations

import os
import threading
import time

PERIOD = 0.25
WINDOW = 5.0

_state = {"at": -1e9, "free": 1 << 30, "cpu": 0.0, "wall": 0.0}
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
        if st["wall"] == 0.0 or now - st["wall"] > WINDOW:
            own = min(_cores(), (cpu - st["cpu"]) / max(now - st["wall"], 1e-9)) if st["wall"] else 0.0
            st["cpu"], st["wall"] = cpu, now
            st["own"] = own
        others = max(0.0, load - st.get("own", 0.0))
        st["free"] = max(1, _cores() - int(others + 0.5))
        st["at"] = now
        return st["free"]


def threads_now(threads: int) -> int:
    """The budget `threads`, capped by the free cores when load-aware."""
    if not _ON or threads <= 1:
        return threads
    return max(1, min(threads, free_cores()))
