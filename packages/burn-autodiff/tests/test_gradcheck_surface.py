"""Finite-difference gradient checks of the linalg and grid ops, float64 (rows in
_autodiff_surface_cases.py); test_gradcheck.py counts these rows for its completeness check."""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_surface_cases import SURFACE_CASES
from _autodiff_testlib import check_grads


@pytest.mark.parametrize(
    "name,fn,inputs", SURFACE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SURFACE_CASES)]
)
def test_gradcheck_surface(ad64, name, fn, inputs):
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs])
