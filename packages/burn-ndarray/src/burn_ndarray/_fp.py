"""Quiet floating-point errors inside NdArray ops only, never process-wide.

Tensor semantics (Burn, PyTorch): overflow gives inf, 0/0 and sqrt(-1) give nan, integer division
by zero gives a value, all silently. numpy instead warns (or raises, per the caller's
`np.seterr`). Each op that can raise such a flag runs under "ignore", and the caller's numpy error
state is restored when it returns, so `import burn_ndarray` changes nothing for other numpy code.

`np.errstate` rebuilds its state object on every entry (~0.9 us, as much as a whole small-tensor
op). It stores that object in a context variable; on numpy versions that expose the variable we
set it directly to a state built once by `np.errstate` itself (~0.3 us), else fall back to
`np.errstate`. Both are per thread and per asyncio task, as numpy's own state is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np


def _ignore_state():
    """(context variable, its "ignore all" value) as `np.errstate` sets them, or None."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:
        return None
    with np.errstate(all="ignore"):
        state = var.get()
    with np.errstate(all="ignore"):  # check that entering errstate really sets that variable
        ok = var.get() is not None and np.geterr()["over"] == "ignore"
    return (var, state) if ok else None


_STATE = _ignore_state()


def quiet(fn: Callable, fast: bool = True) -> Callable:
    """`fn` run with numpy's floating-point errors ignored; the caller's error state is kept.

    Example:
        >>> import numpy as np
        >>> quiet(np.divide)(np.ones(1), np.zeros(1))
        array([inf])
    """
    if fast and _STATE is not None:
        var, state = _STATE
        set_, reset = var.set, var.reset

        @functools.wraps(fn)
        def op(*args):
            token = set_(state)
            try:
                return fn(*args)
            finally:
                reset(token)

        return op

    @functools.wraps(fn)
    def op_errstate(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return op_errstate


# Ops (by name without the kind prefix) that only move, compare or select values: numpy raises no
# floating-point flag for them whatever the input (nan, inf, max values), so they stay the bare
# ufunc or function on the hot path. test_fp_errors checks this under np.errstate(all="raise").
# Ops taking a Python scalar (`*_elem`, `mask_fill`) are not here: casting 1e300 to float32 flags
# an overflow.
NO_FP_FLAGS = frozenset(
    {
        "from_data",
        "into_data",
        "empty",
        "zeros",
        "ones",
        "to_device",
        "reshape",
        "swap_dims",
        "permute",
        "flip",
        "expand",
        "transpose",
        "slice",
        "slice_assign",
        "gather",
        "select",
        "mask_where",
        "cat",
        "repeat_dim",
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "lower",
        "lower_equal",
        "abs",
        "neg",
        "sign",
        "floor",
        "ceil",
        "trunc",
        "round",
        "is_nan",
        "is_inf",
        "argmax",
        "argmin",
        "max",
        "min",
        "max_dim",
        "min_dim",
        "detach",
        "set_require_grad",
        "is_require_grad",
    }
)
# Integer add/sub/mul wrap around without a flag (numpy checks overflow only for scalars).
NO_FP_FLAGS_INT = frozenset({"add", "sub", "mul", "add_scalar", "sub_scalar", "mul_scalar"})


def needs_quiet(name: str) -> bool:
    """Whether backend op `name` (e.g. "float_exp") can raise a numpy floating-point flag."""
    if name.startswith(("bool_", "bitwise_")):
        return False
    kind, _, short = name.partition("_")
    if kind in ("float", "int"):
        return short not in NO_FP_FLAGS and not (kind == "int" and short in NO_FP_FLAGS_INT)
    return True


def quiet_table(ops: dict) -> dict:
    """A dispatch table with every op that can raise a floating-point flag (`needs_quiet`) run
    under `quiet`; a `staticmethod` stays one."""
    out = {}
    for name, fn in ops.items():
        if needs_quiet(name):
            fn = staticmethod(quiet(fn.__func__)) if isinstance(fn, staticmethod) else quiet(fn)
        out[name] = fn
    return out
