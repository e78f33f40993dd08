"""Finite-difference gradient checks of module ops, float64 (rows in _autodiff_module_cases.py).

One row per module op; the rows that reach NdArray's fast paths are in test_gradcheck_fastpaths.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_module_cases import MODULE_CASES
from _autodiff_testlib import check_grads, module_ops_missing


@pytest.mark.parametrize(
    "name,fn,inputs", MODULE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MODULE_CASES)]
)
def test_gradcheck_module(ad64, name, fn, inputs):
    # The NdArray backend must implement every module op: a missing one fails, never skips.
    assert not module_ops_missing(), module_ops_missing()
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs])
