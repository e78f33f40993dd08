"""Every public method and property of `Tensor` and the value types beside it has a docstring.

(Issue 32, item 8.)

The docs site's API reference (`docs/`, mkdocstrings) is built from these docstrings, so a
method without one is a blank entry there. Methods made by a factory (`equal_elem`, `argmax`, ...)
and aliases (`to` = `to_device`) count too: they carry their docstring through `__doc__`.
"""

import inspect

import pytest

from burn_tensor import Device, Distribution, Shape, Tensor, TensorData, Tolerance

VALUE_TYPES = [TensorData, Shape, Distribution, Tolerance, Device]


def _public_members():
    return sorted(n for n in dir(Tensor) if not n.startswith("_"))


def test_every_public_tensor_member_has_a_docstring():
    names = _public_members()
    assert len(names) > 200  # the whole Tensor API, not an empty listing
    missing = []
    for name in names:
        member = inspect.getattr_static(Tensor, name)
        target = member.fget if isinstance(member, property) else getattr(Tensor, name)
        doc = (getattr(target, "__doc__", None) or "").strip()
        if not doc:
            missing.append(name)
    assert missing == [], f"{len(missing)} public Tensor members have no docstring: {missing}"


def test_docstrings_name_what_they_return_not_a_placeholder():
    # A docstring is one real sentence at least: catches "TODO" / "..." stubs.
    for name in _public_members():
        member = inspect.getattr_static(Tensor, name)
        target = member.fget if isinstance(member, property) else getattr(Tensor, name)
        doc = (getattr(target, "__doc__", None) or "").strip()
        assert len(doc) >= 15 and "TODO" not in doc, (name, doc)


@pytest.mark.parametrize("cls", VALUE_TYPES, ids=lambda c: c.__name__)
def test_every_public_method_of_the_value_types_has_a_docstring(cls):
    missing = []
    for name in sorted(n for n in dir(cls) if not n.startswith("_")):
        member = inspect.getattr_static(cls, name)
        target = member.fget if isinstance(member, property) else getattr(cls, name)
        if not (callable(target) or isinstance(member, property)):
            continue  # a constant (Distribution.Default), documented by its class
        if not (getattr(target, "__doc__", None) or "").strip():
            missing.append(name)
    assert missing == [], f"{cls.__name__}: no docstring on {missing}"
