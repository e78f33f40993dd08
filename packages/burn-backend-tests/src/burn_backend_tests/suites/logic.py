"""Conformance: closeness (`is_close`, `all_close`), Bool logic and Int bitwise ops, with
broadcasting and every input layout."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool

from .._ctx import LAYOUTS
from .elementwise import BROADCAST

# -- comparison helpers ----------------------------------------------------------------------------
def test_is_close_all_close(burn):
    a = burn.float([1.0, 2.0, np.nan, np.inf, 100.0])
    b = burn.float([1.0 + 1e-9, 2.1, np.nan, np.inf, 100.0001])
    burn.assert_equal(a.is_close(b), np.array([True, False, False, True, True]))
    burn.assert_equal(a.is_close(b, rtol=0.1, atol=0.0), np.array([True, True, False, True, True]))
    assert burn.float([1.0, 2.0]).all_close(burn.float([1.0, 2.0 + 1e-7])) is True
    assert burn.float([1.0, 2.0]).all_close(burn.float([1.0, 2.5])) is False
    assert burn.float([1.0, 2.0]).all_close(burn.float([1.0, 2.5]), atol=1.0) is True


# -- bool logic ------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_bool_logic(burn, layout):
    g = np.random.default_rng(3)
    for sa, sb in BROADCAST:
        a = g.random(sa) < 0.5
        b = g.random(sb) < 0.5
        ta, ar = burn.view_input(a, Bool, layout)
        tb = burn.bool(b)
        burn.assert_equal(ta.bool_not(), ~ar)
        burn.assert_equal(~ta, ~ar)
        burn.assert_equal(ta.bool_and(tb), ar & b)
        burn.assert_equal(ta.bool_or(tb), ar | b)
        burn.assert_equal(ta.bool_xor(tb), ar ^ b)
        burn.assert_equal(ta & tb, ar & b)
        burn.assert_equal(ta | tb, ar | b)
        burn.assert_equal(ta ^ tb, ar ^ b)
        burn.assert_equal(ta.equal(tb), ar == b)
        burn.assert_equal(ta.not_equal(tb), ar != b)
        burn.assert_equal(ta.equal_elem(True), ar)
        burn.assert_equal(ta.not_equal_elem(True), ~ar)


# -- bitwise ---------------------------------------------------------------------------------------
def test_bitwise(burn):
    a = np.array([[0, 1, 5, 12], [7, 255, 3, 9]])
    b = np.array([[1, 3, 4, 10], [2, 15, 1, 9]])
    ta, tb = burn.int(a), burn.int(b)
    burn.assert_equal(ta.bitwise_and(tb), a & b)
    burn.assert_equal(ta.bitwise_or(tb), a | b)
    burn.assert_equal(ta.bitwise_xor(tb), a ^ b)
    burn.assert_equal(ta.bitwise_not(), ~a)
    burn.assert_equal(ta.bitwise_left_shift(tb), a << b)
    burn.assert_equal(
        ta.bitwise_right_shift(burn.int(np.array([[1, 1, 2, 3]]))), a >> np.array([[1, 1, 2, 3]])
    )
    burn.assert_equal(ta.bitwise_and(6), a & 6)
    burn.assert_equal(ta.bitwise_or(6), a | 6)
    burn.assert_equal(ta.bitwise_xor(6), a ^ 6)
    burn.assert_equal(ta << 2, a << 2)
    burn.assert_equal(ta >> 1, a >> 1)
    burn.assert_equal(ta & tb, a & b)
    burn.assert_equal(~ta, ~a)
