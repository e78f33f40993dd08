"""Every row of the Burn Book's Tensor and activation tables (both editions) exists with Burn's name.

An API check of burn_tensor itself, backend-independent; the conformance suite checks the values.
"""

import pytest
from burn_tensor import Tensor, activation
from burn_backend_tests.suites.book import BOOK_ACTIVATIONS, BOOK_METHODS


@pytest.mark.parametrize("name", BOOK_METHODS)
def test_book_tensor_method_exists(name):
    attr = getattr(Tensor, name, None)
    # `shape` and `device` are properties whose values are callable, as Burn's `t.shape()`
    assert callable(attr) or isinstance(attr, property), f"Tensor.{name} is missing"


@pytest.mark.parametrize("name", BOOK_ACTIVATIONS)
def test_book_activation_exists(name):
    assert callable(getattr(activation, name, None)), f"activation.{name} is missing"
