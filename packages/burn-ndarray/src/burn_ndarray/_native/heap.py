"""glibc's heap kept by the process between training steps, set when NdArray's native kernels load.

Why (issue 36, session 18): glibc's malloc serves numpy's arrays under 32 MB from its heap and
gives the heap's free top back to the system once it passes the trim threshold, which glibc
raises to only twice the largest array freed so far (8 MB after a [2048, 512] float32 buffer).
A train step frees its activations and the previous step's parameters and Adam moments in bulk,
so the heap shrank at the end of a step and the next one faulted every page back in, zeroed by
the kernel: on the 2-core EPYC box (transformer step, batch 4 x 128, 2 threads,
`benches/probes/xformer_ops.py`) every other step took 36-38 thousand minor page faults (~150
MB), 50-70 ms of system time, and Adam's 96 updates cost 85-92 ms of CPU instead of 22-27 ms.

`keep()` sets the trim threshold to `TRIM_BYTES` (free heap is given back only beyond 1 GiB)
and the mmap threshold to `MMAP_BYTES`, glibc's own ceiling for its dynamic threshold (setting
either one freezes both, and with the mmap threshold left at its 128 KB start every array of a
step would be a fresh mapping: 137 thousand faults and 300 ms of system time per step). Arrays
of 32 MB and more stay fresh mappings, as with glibc's defaults. The cost: a process holds up
to 1 GiB of freed heap beyond what it uses, which the next step reuses.

Process-wide, once, like `hugepage.disable()`; left alone when the user tuned malloc
(`MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TOP_PAD_`, `GLIBC_TUNABLES` set), with
`BURN_NDARRAY_HEAP_KEEP=0`, and off glibc (no `gnu_get_libc_version`). `state()` says which.

Example:
    >>> from burn_ndarray._native import heap
    >>> heap.keep() == heap.state()  # what it did: "heap kept (trim above 1024 MB, ...)" on glibc
    True
"""

from __future__ import annotations

import ctypes
import os

#: free heap at the top given back to the system only beyond this many bytes
TRIM_BYTES = 1 << 30
#: arrays of this many bytes and more are their own mappings (glibc's DEFAULT_MMAP_THRESHOLD_MAX)
MMAP_BYTES = 32 << 20
#: mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: the user's own malloc tuning, which wins
USER_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")

_STATE: dict = {}


def user_choice() -> str | None:
    """Why glibc's thresholds stay as they are, or None when NdArray may set them."""
    if os.environ.get("BURN_NDARRAY_HEAP_KEEP", "").strip() == "0":
        return "BURN_NDARRAY_HEAP_KEEP=0"
    for key in USER_ENV:
        if os.environ.get(key) is not None:
            return f"{key} is set"
    return None


def _libc():
    """This process's C library when it is glibc (it has mallopt with these numbers), else None."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # pragma: no cover - no dlopen of the main program
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    libc.mallopt.argtypes, libc.mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return libc


def keep() -> str:
    """Set glibc's trim and mmap thresholds for the process unless the user chose; once."""
    if "state" in _STATE:
        return _STATE["state"]
    why = user_choice()
    if why is not None:
        state = f"glibc's heap thresholds kept ({why})"
    else:
        libc = _libc()
        if libc is None:
            state = "not glibc: heap thresholds untouched"
        elif libc.mallopt(M_MMAP_THRESHOLD, MMAP_BYTES) and libc.mallopt(
            M_TRIM_THRESHOLD, TRIM_BYTES
        ):
            state = f"heap kept (trim above {TRIM_BYTES >> 20} MB, mmap from {MMAP_BYTES >> 20} MB)"
        else:  # pragma: no cover - glibc refused a value within its limits
            state = "glibc refused the heap thresholds"
    _STATE["state"] = state
    return state


def state() -> str:
    """One line: what `keep()` did (empty before it ran)."""
    return _STATE.get("state", "")
