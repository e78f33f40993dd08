"""Tree `repr` of modules with parameter counts (Burn's `ModuleDisplay`)."""

from __future__ import annotations

import enum
from typing import Any

from burn_tensor import Tensor

from . import _tree
from ._param import Param


def _count(value: Any) -> int:
    if isinstance(value, Param):
        return value.val().numel()
    if hasattr(value, "num_params"):
        return value.num_params()
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_count(v) for v in value if v is not None)
    return 0


def _fmt(value: Any, indent: int) -> str:
    from ._module import Module

    pad = "  " * (indent + 1)
    if isinstance(value, Module):
        return module_repr(value, indent)
    if isinstance(value, Param):
        return f"Param {{shape: {value.val().dims()}, id: {value.id}}}"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Tensor):
        return f"Tensor {{shape: {value.dims()}}}"
    if isinstance(value, list | tuple | dict) and _tree._is_tree(value):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        inner = "".join(f"{pad}{k}: {_fmt(v, indent + 1)}\n" for k, v in items)
        return f"[\n{inner}{'  ' * indent}]"
    return repr(value)


def module_repr(module: Any, indent: int = 0) -> str:
    """`Name {field: value, ..., params: N}`; nested modules on their own indented lines."""
    name = type(module).__name__
    parts = _tree.fields(module)
    nested = any(k in (_tree.MODULE, _tree.CONTAINER) for _, _, k in parts)
    entries = [(n, _fmt(v, indent + 1)) for n, v, _ in parts]
    entries.append(("params", str(module.num_params())))
    if not nested:
        return f"{name} {{" + ", ".join(f"{n}: {v}" for n, v in entries) + "}"
    pad = "  " * (indent + 1)
    body = "".join(f"{pad}{n}: {v}\n" for n, v in entries)
    return f"{name} {{\n{body}{'  ' * indent}}}"
