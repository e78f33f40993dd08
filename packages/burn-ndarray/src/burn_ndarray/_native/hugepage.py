"""numpy's transparent-huge-page advice, turned off while NdArray's threaded kernels run.

numpy (1.20+, Linux) calls `madvise(MADV_HUGEPAGE)` on every array buffer of 4 MB and more. On
the GPU machine's 16-core Xeon VM (THP `madvise`, 2026-11-26, `benches/hugepage_probe.py`, 3
processes per setting) a Tensor made after such buffers read 3x slower with 16 OpenMP threads
for the whole process: exp of a [1024, 1024] float32 Tensor 96-106 us with numpy's advice,
against 29-36 us with it off, where the same kernel on an earlier buffer took 25-31 us in both
(abs 44-45 -> 15-20 us, add 47-49 -> 16-23 us). Which buffer lands in that state depends on the
earlier allocations, so it came and went per process. (It is not the only slow-buffer effect on
that VM: with the advice off, a benchmark process could still get an input buffer that read 2-3x
slower for torch as well as NdArray; see benches/README.md, "Shared inputs".)

`disable()` runs when the native library loads (`_native.lib()`), before NdArray allocates its
tensors, unless the user chose: `NUMPY_MADVISE_HUGEPAGE` set in the environment (numpy's own
switch, read when numpy imports) or `BURN_NDARRAY_HUGEPAGE=1` keeps numpy's behaviour. It is a
process-wide numpy setting, like `GOMP_SPINCOUNT` for libgomp; `state()` says which applies.
"""

from __future__ import annotations

import os

_STATE: dict = {}


def _setter():
    """numpy's `_set_madvise_hugepage(bool) -> previous`, or None (not Linux or not exported)."""
    try:
        from numpy._core import multiarray as ma  # numpy 2
    except ImportError:  # numpy 1.26
        from numpy.core import multiarray as ma
    return getattr(ma, "_set_madvise_hugepage", None)


def user_choice() -> str | None:
    """Why numpy's advice stays as it is, or None when NdArray may turn it off."""
    if os.environ.get("NUMPY_MADVISE_HUGEPAGE") is not None:
        return "NUMPY_MADVISE_HUGEPAGE is set"
    if os.environ.get("BURN_NDARRAY_HUGEPAGE", "").strip().lower() in ("1", "true", "on", "yes"):
        return "BURN_NDARRAY_HUGEPAGE=1"
    return None


def disable() -> str:
    """Turn numpy's huge-page advice off for this process unless the user chose; once."""
    if "state" in _STATE:
        return _STATE["state"]
    why = user_choice()
    if why is not None:
        state = f"numpy's huge-page advice kept ({why})"
    else:
        setter = _setter()
        if setter is None:
            state = "numpy has no huge-page advice switch here"
        else:
            setter(False)
            state = "numpy's huge-page advice off"
    _STATE["state"] = state
    return state


def state() -> str:
    """One line: what `disable()` did (empty before it ran)."""
    return _STATE.get("state", "")
