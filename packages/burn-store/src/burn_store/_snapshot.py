"""`TensorSnapshot`: one tensor of a module or a file, with its path and owners' types."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from burn_tensor import TensorData


@dataclass(frozen=True)
class TensorSnapshot:
    """A tensor by path (Burn's `TensorSnapshot`): `path` ("encoder.layers.0.weight"), the
    shape and dtype, the parameter id, the class names of the modules that own it from the root
    (`container_stack`, e.g. ("Net", "Linear")), and its data, read on demand by `to_data()`.
    """

    path: str
    shape: tuple[int, ...]
    dtype: Any
    load: Callable[[], TensorData] = field(repr=False, compare=False)
    param_id: int | None = None
    container_stack: tuple[str, ...] = ()

    @property
    def path_stack(self) -> list[str]:
        return self.path.split(".")

    def full_path(self) -> str:
        return self.path

    def module_type(self) -> str | None:
        """The class name of the module holding the tensor (None: unknown, as in a file)."""
        return self.container_stack[-1] if self.container_stack else None

    def to_data(self) -> TensorData:
        return self.load()

    def renamed(self, path: str) -> TensorSnapshot:
        return replace(self, path=path)


def containers(module: Any, parts: list[str]) -> tuple[str, ...]:
    """Class names of the modules from `module` down to the owner of the tensor at `parts`
    (lists, tuples and dicts of modules are passed through, as in Burn's paths)."""
    from burn_nn import Module

    names = [type(module).__name__]
    node = module
    for part in parts[:-1]:
        if isinstance(node, (list, tuple)):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node[part]
        else:
            node = getattr(node, part)
        if isinstance(node, Module):
            names.append(type(node).__name__)
    return tuple(names)
