"""Gradients of the `layer_norm` module op, float64: central differences (`check_grads`); one
recorded node whose backward is `layer_norm_backward` (statistics recomputed from x)."""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_testlib import check_grads, u
from burn_autodiff import classify

ROWS = [
    ("rank3_eps", lambda B, x, g, b: B.layer_norm(x, g, b, 0.1), [u(2, 3, 4), u(4), u(4)]),
    ("no_beta", lambda B, x, g: B.layer_norm(x, g, None, 1e-5), [u(4, 6), u(6)]),
]


@pytest.mark.parametrize("name,fn,inputs", ROWS, ids=[r[0] for r in ROWS])
def test_gradcheck_layer_norm(ad64, name, fn, inputs):
    check_grads(ad64, fn, [np.asarray(a, np.float64) for a in inputs])


def test_layer_norm_has_its_own_rule():
    assert classify("layer_norm") == "rule" and classify("layer_norm_backward") == "pass"
