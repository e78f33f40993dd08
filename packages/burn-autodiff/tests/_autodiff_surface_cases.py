"""Gradient-check rows of the ops of issue 38 (linalg, grids): (op name, fn(B, *xs), inputs).

These ops are default decompositions, so Autodiff differentiates them through their parts; each
row checks that composed backward against central differences (test_gradcheck_surface.py).
"""

from __future__ import annotations

import math

import numpy as np
from _autodiff_testlib import u

# a matrix whose pivots stay put under the finite-difference steps (LU's pivot choice is piecewise)
_LU = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [2.0, 6.0, -3.0]])

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
    ("float_cross", lambda B, x, y: B.float_cross(x, y, 1), [u(4, 3), u(1, 3)]),
    ("float_cov", lambda B, x: B.float_cov(x, 1, 1), [u(3, 6)]),
    ("float_diag", lambda B, x: B.float_diag(x), [u(2, 3, 4)]),
    ("float_trace", lambda B, x: B.float_trace(x), [u(3, 3)]),
    ("float_outer", lambda B, x, y: B.float_outer(x, y, 1), [u(2, 3), u(2, 4)]),
    ("float_matvec", lambda B, m, v: B.float_matvec(m, v), [u(2, 3, 4), u(1, 4)]),
    ("float_lu_decomposition", lambda B, x: B.float_lu_decomposition(x), [_LU]),
]
