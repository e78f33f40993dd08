"""Every docstring example in burn_optim runs and prints what it claims."""

import doctest
import importlib
import pkgutil

import burn_optim
import pytest

MODULES = sorted(m.name for m in pkgutil.walk_packages(burn_optim.__path__, "burn_optim.")) + [
    "burn_optim"
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_public_api_is_exported():
    for name in burn_optim.__all__:
        assert hasattr(burn_optim, name), name
    for name in burn_optim.lr_scheduler.__all__:
        assert hasattr(burn_optim.lr_scheduler, name), name
