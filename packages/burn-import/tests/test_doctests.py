"""The docstring examples of every burn_import module run and print what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import burn_import
import burn_import.onnx
import pytest

MODULES = (
    ["burn_import"]
    + [f"burn_import.{m.name}" for m in pkgutil.iter_modules(burn_import.__path__)]
    + [f"burn_import.onnx.{m.name}" for m in pkgutil.iter_modules(burn_import.onnx.__path__)]
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
