"""Gradient-check rows of the ops of issue 38 (linalg, grids): (op name, fn(B, *xs), inputs).

These ops are default decompositions, so Autodiff differentiates them through their parts; each
row checks that composed backward against central differences (test_gradcheck_surface.py).
"""

from __future__ import annotations

import math

import numpy as np
from _autodiff_testlib import u
from _autodiff_volume_cases import VOLUME_CASES
from burn_tensor import GridSampleOptions, TensorData

# a matrix whose pivots stay put under the finite-difference steps (LU's pivot choice is piecewise)
_LU = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [2.0, 6.0, -3.0]])

_GRID_RNG = np.random.default_rng(38)


def _grid():
    """Grid positions reaching past the edges, away from pixel-coordinate kinks."""
    return _GRID_RNG.uniform(-1.7, 1.7, (2, 3, 4, 2))


def _gs(mode, padding, align):
    opts = GridSampleOptions(mode, padding, align)
    return lambda B, x, g: B.float_grid_sample_2d(x, g, opts)


def _gs_fixed_grid(mode, padding, align):
    """Nearest sampling: no gradient reaches the grid (rounding), so only the input is checked."""
    opts = GridSampleOptions(mode, padding, align)
    g = _grid()

    def fn(B, x):
        gp = B.float_from_data(TensorData(g), B.device())
        return B.float_grid_sample_2d(x, gp, opts)

    return fn


def _pad(pads, mode, value):
    return lambda B, x: B.float_pad(x, pads, mode, value)


def _take(B, x):
    idx = B.int_from_data(TensorData(np.array([[2, 0], [1, 2]], dtype=B.int_dtype.np)), B.device())
    return B.float_take(x, 1, idx)


def _ctc(B, x):
    """CTC NLL of raw scores (any real log_probs): ragged lengths, a repeat, an empty target."""

    def ints(a):
        return B.int_from_data(TensorData(np.asarray(a, dtype=B.int_dtype.np)), B.device())

    tg, il, tl = ints([[1, 1, 2], [2, 0, 0], [1, 0, 0]]), ints([5, 4, 3]), ints([3, 1, 0])
    return B.ctc_loss(x, tg, il, tl, 0)


def _meshgrid(B, a, b):
    xs = B.float_meshgrid([a, b], True, True)
    return B.float_add(B.float_mul(xs[0], xs[0]), xs[1])


SURFACE_CASES = [
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, 1.0, 1), [u(3, 4)]),
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, 2.0, 0), [u(3, 4)]),
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, 3.5, 1), [u(3, 4)]),
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, -1.5, 1), [u(3, 4)]),
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, math.inf, 1), [u(3, 4)]),
    ("float_vector_norm", lambda B, x: B.float_vector_norm(x, -math.inf, 0), [u(3, 4)]),
    ("float_vector_normalize", lambda B, x: B.float_vector_normalize(x, 2.0, 1, 1e-12), [u(3, 4)]),
    (
        "float_cosine_similarity",
        lambda B, x, y: B.float_cosine_similarity(x, y, 1, 1e-8),
        [u(3, 5), u(1, 5)],
    ),
    # float_cross: its rows are in _autodiff_cases.py (the walked op)
    ("float_cov", lambda B, x: B.float_cov(x, 1, 1), [u(3, 6)]),
    ("float_diag", lambda B, x: B.float_diag(x), [u(2, 3, 4)]),
    ("float_trace", lambda B, x: B.float_trace(x), [u(3, 3)]),
    ("float_outer", lambda B, x, y: B.float_outer(x, y, 1), [u(2, 3), u(2, 4)]),
    ("float_matvec", lambda B, m, v: B.float_matvec(m, v), [u(2, 3, 4), u(1, 4)]),
    ("float_lu_decomposition", lambda B, x: B.float_lu_decomposition(x), [_LU]),
    ("float_meshgrid", _meshgrid, [u(3), u(2)]),
    ("float_affine_grid_2d", lambda B, t: B.float_affine_grid_2d(t, (2, 1, 3, 4)), [u(2, 2, 3)]),
    *[
        ("float_grid_sample_2d", _gs("bilinear", p, a), [u(2, 2, 4, 5), _grid()])
        for p in ("zeros", "border", "reflection")
        for a in (False, True)
    ],
    *[
        ("float_grid_sample_2d", _gs_fixed_grid("nearest", p, False), [u(2, 2, 4, 5)])
        for p in ("zeros", "border", "reflection")
    ],
    ("float_pad", _pad(((0, 0), (1, 2), (2, 1)), "constant", 0.5), [u(2, 3, 4)]),
    ("float_pad", _pad(((0, 0), (2, 1), (1, 2)), "reflect", 0.0), [u(2, 3, 4)]),
    ("float_pad", _pad(((1, 0), (2, 1), (0, 3)), "edge", 0.0), [u(2, 3, 4)]),
    ("float_take", _take, [u(2, 3, 2)]),
    ("ctc_loss", _ctc, [u(5, 3, 3)]),
    *VOLUME_CASES,
]
