"""The backward pass rejects a gradient that does not fit its input (shape, dtype, count).

The check sits where rule outputs are accumulated, so it covers table rules and custom ops alike;
its error names the rule, the input position, and expected vs got.
"""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_testlib import F64
from burn_autodiff import RULES, Autodiff, custom_op
from burn_tensor import DType, Tensor, TensorCheckError


@pytest.fixture
def device():
    return Autodiff(F64).device()


def test_custom_op_wrong_shape_is_named(device):
    # The backward forgets to broadcast the [2, 1] output gradient back to the [2, 3] input.
    op = custom_op("row_sum_bad_shape", forward=lambda x: x.sum_dim(1), backward=lambda c, g: (g,))
    x = Tensor.from_data(np.ones((2, 3)), device).require_grad()
    with pytest.raises(TensorCheckError) as err:
        op(x).sum().backward()
    msg = str(err.value)
    assert "custom op backward 'row_sum_bad_shape'" in msg
    assert "input 0 with shape [2, 1] and dtype float64" in msg
    assert "expected the input's shape [2, 3] and dtype float64" in msg


@pytest.mark.parametrize(
    "to,got",
    [(lambda g: g.cast(DType.F32), "float32"), (lambda g: g.int(), F64.int_dtype.np.name)],
)
def test_custom_op_wrong_dtype_is_named(device, to, got):
    op = custom_op("double_bad_dtype", forward=lambda x: x * 2.0, backward=lambda c, g: (to(g),))
    x = Tensor.from_data([[1.0, 2.0, 3.0]], device).require_grad()
    with pytest.raises(TensorCheckError) as err:
        op(x).sum().backward()
    msg = str(err.value)
    assert f"input 0 with shape [1, 3] and dtype {got}" in msg
    assert "expected the input's shape [1, 3] and dtype float64" in msg


def test_custom_op_right_grad_passes(device):
    op = custom_op("double_ok", forward=lambda x: x * 2.0, backward=lambda c, g: (g * 2.0,))
    x = Tensor.from_data([[1.0, 2.0, 3.0]], device).require_grad()
    g = x.grad(op(x).sum().backward())
    assert g.tolist() == [[2.0, 2.0, 2.0]] and g.dtype == DType.F64


def test_broken_table_rule_is_caught(device, monkeypatch):
    # A mul rule that forgets to sum the broadcast gradient back to the [1, 3] input.
    b = device.backend.inner

    def broken(c, g):
        return b.float_mul(g, c.x(1)), b.float_mul(g, c.x(0))

    monkeypatch.setattr(RULES["float_mul"], "backward", broken)
    x = Tensor.from_data(np.ones((2, 3)), device).require_grad()
    y = Tensor.from_data(np.ones((1, 3)), device).require_grad()
    with pytest.raises(TensorCheckError) as err:
        (x * y).sum().backward()
    msg = str(err.value)
    assert "Tensor operation 'float_mul'" in msg and "gradient rule 'float_mul'" in msg
    assert "input 1 with shape [2, 3]" in msg and "expected the input's shape [1, 3]" in msg


def test_broken_rule_dtype_is_caught(device, monkeypatch):
    b = device.backend.inner
    monkeypatch.setattr(RULES["float_exp"], "backward", lambda c, g: (b.float_cast(g, DType.F32),))
    x = Tensor.from_data([0.5, 1.5], device).require_grad()
    with pytest.raises(TensorCheckError, match=r"'float_exp'.*dtype float32.*dtype float64"):
        x.exp().sum().backward()


def test_broken_rule_of_list_input_names_the_element(device, monkeypatch):
    real = RULES["float_cat"].backward

    def broken(c, g):
        gs, *rest = real(c, g)
        return ([gs[0], gs[0]], *rest)  # the second input gets the first one's [1, 2] gradient

    monkeypatch.setattr(RULES["float_cat"], "backward", broken)
    x = Tensor.from_data([[1.0, 2.0]], device).require_grad()
    y = Tensor.from_data([[3.0, 4.0], [5.0, 6.0]], device).require_grad()
    with pytest.raises(TensorCheckError, match=r"input 0\[1\] with shape \[1, 2\].*\[2, 2\]"):
        Tensor.cat([x, y], 0).sum().backward()


def test_rule_returning_too_few_entries_is_caught(device, monkeypatch):
    monkeypatch.setattr(RULES["float_add"], "backward", lambda c, g: (g,))
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    with pytest.raises(
        TensorCheckError, match=r"'float_add' returned 1 gradient entries; expected 2"
    ):
        (x + x).sum().backward()
