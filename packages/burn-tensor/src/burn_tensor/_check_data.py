"""Data-dependent checks: index bounds, integer division by zero, float -> int casts.

Unlike the shape/kind checks of `_check`, these read values of a tensor (its min and max, or
whether it holds a zero). On an eager CPU backend that is one cheap pass over the index or divisor
tensor; on an asynchronous GPU backend it would wait for every queued kernel. A backend says which
it is with `Backend.checks_force_sync` (a decorator inherits its inner backend's answer), and
`BURN_CHECKS` overrides the choice for every backend:

- unset: check where `checks_force_sync` is False (NdArray, OpenCl on a CPU); skip elsewhere.
- `BURN_CHECKS=1`: check on every backend (GPU included: slower, for debugging).
- `BURN_CHECKS=0`: never run data-dependent checks (the backend's own behaviour then applies).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ._errors import TensorCheckError

_FORCES_SYNC: dict = {}
_IRANGE: dict = {}


def forces_sync(backend) -> bool:
    """Whether reading a value of `backend`'s tensors waits for queued device work."""
    got = _FORCES_SYNC.get(backend)
    if got is None:
        b, got = backend, False
        while b is not None and not got:
            got = bool(getattr(b, "checks_force_sync", False))
            b = b.inner
        _FORCES_SYNC[backend] = got
    return got


def enabled(backend) -> bool:
    """Whether data-dependent checks run for tensors of `backend` (see the module docstring)."""
    env = os.environ.get("BURN_CHECKS")
    if env is not None and env.strip() != "":
        return env.strip().lower() not in ("0", "false", "off", "no")
    return not forces_sync(backend)


def int_range(np_dtype) -> tuple[int, int]:
    """(min, max) of an integer numpy dtype, cached (np.iinfo costs a microsecond per call)."""
    got = _IRANGE.get(np_dtype)
    if got is None:
        info = np.iinfo(np_dtype)
        got = _IRANGE[np_dtype] = (int(info.min), int(info.max))
    return got


_NP_MIN, _NP_MAX = np.minimum.reduce, np.maximum.reduce


def _min_max(t) -> tuple:
    """(min, max) of a non-empty tensor (numpy or Python scalars): one host read."""
    p = t._p
    if type(p) is np.ndarray:  # NdArray (and the inner primitives of Autodiff(NdArray))
        # the ufunc reductions skip ndarray.min's Python wrapper: ~1 us each on small tensors
        if p.dtype.kind == "V":  # ml_dtypes' bfloat16 warns on NaN where numpy's floats do not
            with np.errstate(invalid="ignore"):
                return _NP_MIN(p, axis=None), _NP_MAX(p, axis=None)
        return _NP_MIN(p, axis=None), _NP_MAX(p, axis=None)
    o = t._o
    both = o.into_data(o.cat([o.reshape(o.min(p), (1,)), o.reshape(o.max(p), (1,))], 0))
    lo, hi = both.array.reshape(-1).tolist()
    return lo, hi


def indices_in_range(op: str, indices, dim: int, size: int, what: str = "index") -> None:
    """Raise unless every value of the Int tensor `indices` is in `[0, size)`.

    Negative values are refused rather than wrapped (Burn panics on them; wrapping would make a
    target of -1 silently train the last class).
    """
    if 0 in indices._p.shape or not enabled(indices._d.backend):
        return
    lo, hi = _min_max(indices)
    if lo >= 0 and hi < size:
        return
    bad = _number(lo if not lo >= 0 else hi)  # `not >=`: a NaN (Float indices) is bad too
    valid = f"valid: 0..{size - 1}" if size > 0 else "no index is valid: the dim is empty"
    hint = " (negative indices are not wrapped)" if bad < 0 else ""
    raise TensorCheckError(
        op, f"{what} {bad} out of range for dim {dim} of size {size} ({valid}){hint}"
    )


def _number(v):
    """A numpy scalar as the Python number a user wrote: 3, -1, 2.5, nan."""
    f = float(v)
    return int(f) if f.is_integer() else f


def no_zero_divisor(op: str, divisor) -> None:
    """Integer division/remainder by zero raises, as in PyTorch on the CPU (numpy would give 0)."""
    p = divisor._p
    if 0 in p.shape or not enabled(divisor._d.backend):
        return
    if type(p) is np.ndarray:
        has_zero = not p.all()
    else:
        o = divisor._o
        eq = o.equal_elem(p, 0)
        has_zero = bool(o._bool.into_data(o._bool.any(eq)).array.reshape(-1)[0])
    if has_zero:
        raise TensorZeroDivisionError(op, "integer division by zero (ZeroDivisionError)")


def float_to_int(op: str, t, np_int) -> None:
    """Raise unless every float of `t` truncates into the integer dtype `np_int`."""
    if 0 in t._p.shape or not enabled(t._d.backend):
        return
    lo, hi = _min_max(t)
    lo, hi = float(lo), float(hi)
    imin, imax = int_range(np_int)
    name = np.dtype(np_int).name
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise TensorCheckError(
            op, f"cannot convert non-finite floats (NaN or inf) to {name}: clean them first"
        )
    lo_t, hi_t = math.trunc(lo), math.trunc(hi)
    if lo_t < imin or hi_t > imax:
        raise TensorCheckError(
            op, f"values in [{lo}, {hi}] do not fit {name} [{imin}, {imax}] after truncation"
        )
    if not _nan_free(t):
        raise TensorCheckError(
            op, f"cannot convert non-finite floats (NaN or inf) to {name}: clean them first"
        )


def _nan_free(t) -> bool:
    # numpy's min/max propagate NaN (caught above); a backend's reduction may skip NaNs (OpenCL's
    # fmin/fmax do), so ask it directly there.
    p = t._p
    if type(p) is np.ndarray:
        return True
    o = t._o
    nan = o.is_nan(p)
    return not bool(o._bool.into_data(o._bool.any(nan)).array.reshape(-1)[0])


def int_values_fit(op: str, lo: int, hi: int, np_int) -> None:
    """Raise unless the integers `lo..hi` fit `np_int` (creation ops: arange, full, scalars)."""
    imin, imax = int_range(np_int)
    if lo < imin or hi > imax:
        name = np.dtype(np_int).name
        raise TensorCheckError(op, f"values in [{lo}, {hi}] do not fit {name} [{imin}, {imax}]")


class TensorZeroDivisionError(TensorCheckError, ZeroDivisionError):
    """Integer division or remainder by zero: a `TensorCheckError` that is also Python's
    `ZeroDivisionError` (`except ZeroDivisionError` works, as for Python ints)."""
