"""Helpers for suite cases that call backend ops directly on primitives (backward ops)."""

from __future__ import annotations

import numpy as np
from burn_tensor import Float, Tensor


def prim(burn, x, kind=Float):
    """Backend primitive holding `x` (rounded to the backend's dtype)."""
    return burn.tensor(x, kind).into_primitive()


def wrap(burn, p) -> Tensor:
    """A primitive returned by a backend op, as a Float tensor (so assert_close checks its meta)."""
    return Tensor.from_primitive(p, Float, burn.device)


def adjoint(burn, forward, dx, x, g):
    """<forward(x), g> == <x, dx> within the dtype's accumulated-rounding tolerance."""
    lhs, rhs = dot(forward, g), dot(x, dx)
    scale = dot(np.abs(forward), np.abs(g)) + 1.0
    assert abs(lhs - rhs) <= burn.loose.relative * scale, f"<f(x), g>={lhs} != <x, f*(g)>={rhs}"


def dot(a, b) -> float:
    """<a, b> in float64: both sides of an adjoint identity."""
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))
