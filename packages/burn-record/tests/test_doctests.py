"""The docstring examples of every burn_record module run and print what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import burn_record

MODULES = ["burn_record"] + [
    f"burn_record.{m.name}" for m in pkgutil.iter_modules(burn_record.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
