"""Finite-difference gradient checks in float64, one table row per differentiable op.

Each row (see _autodiff_cases.py): an op name, a function `fn(B, *xs)` calling backend ops on
primitives, and the float inputs. The analytic gradient (Autodiff) of `sum(fn(...) * W)` for a
random `W` is compared with central differences computed on the inner backend; the relative error
must be < 1e-6. `test_every_op_has_a_row` keeps the table complete.
"""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_cases import CASES
from _autodiff_module_cases import MODULE_CASES
from _autodiff_signal_cases import SIGNAL_CASES
from _autodiff_surface_cases import SURFACE_CASES
from _autodiff_testlib import F64, check_grads
from burn_autodiff import RULES, Autodiff, classify
from burn_tensor import TensorData, op_table


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_gradcheck(ad64, name, fn, inputs):
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs])


@pytest.mark.parametrize(
    "name,fn,inputs", SIGNAL_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SIGNAL_CASES)]
)
def test_gradcheck_signal(ad64, name, fn, inputs):
    """The FFT ops' hand-derived rules (`_rules_signal.py`) against finite differences."""
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs])


def covered_names() -> set[str]:
    rows = (CASES, MODULE_CASES, SURFACE_CASES, SIGNAL_CASES)
    return {c[0] for table in rows for c in table}


def test_every_op_has_a_row():
    """Every op with a rule, and every decomposed float/module op, has a gradcheck row."""
    wanted = set(RULES) | {n for n in op_table() if classify(n) == "default"}
    wanted = {n for n in wanted if not n.startswith(("int_", "bool_"))}
    missing = sorted(wanted - covered_names())
    assert not missing, f"ops without a gradient check: {missing}"


def test_grad_of_prod_with_zero_is_exact():
    B = Autodiff(F64)
    x = B.float_set_require_grad(
        B.float_from_data(TensorData(np.array([2.0, 0.0, 3.0])), B.device()), True
    )
    g = B.grad(x, B.backward(B.float_prod(x)))
    assert F64.float_into_data(g).array.tolist() == [0.0, 6.0, 0.0]
