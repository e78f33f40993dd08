"""`ModuleVisitor` and `ModuleMapper`: walk or rewrite every parameter of a module (Burn's traits).

Both are plain base classes with no-op defaults: override what you need. Two styles are supported:
the first book's `visit(id, tensor)` / `map(id, tensor) -> tensor`, and the later
`visit_float(param)` / `map_float(param) -> param` (+ `_int`, `_bool`, `enter_module`,
`exit_module`, `visit_float_with_path(path, id, tensor)`). Any object with some of these methods
works too (duck typing).
"""

from __future__ import annotations

from typing import Any

from burn_tensor import Bool, Float, Int

from ._param import Param, ParamId


class ModuleVisitor:
    """Read-only walk over a module's parameters, in field order.

    Example:
        >>> class Count(ModuleVisitor):
        ...     def __init__(self): self.n = 0
        ...     def visit(self, id, tensor): self.n += tensor.numel()
        >>> # LinearConfig(2, 3).init(device).visit(Count()).n == 9
    """

    def enter_module(self, name: str, container_type: str) -> None:
        """Called entering a field holding a module or container (`"Struct:Linear"`, `"Vec"`)."""

    def exit_module(self, name: str, container_type: str) -> None:
        pass

    def visit(self, id: ParamId, tensor: Any) -> None:
        """First-book style hook, called for every parameter of any kind."""

    def visit_float(self, param: Param) -> None:
        self.visit(param.id, param.val())

    def visit_int(self, param: Param) -> None:
        self.visit(param.id, param.val())

    def visit_bool(self, param: Param) -> None:
        self.visit(param.id, param.val())

    def visit_float_with_path(self, path: list[str], id: ParamId, tensor: Any) -> None:
        pass

    def visit_int_with_path(self, path: list[str], id: ParamId, tensor: Any) -> None:
        pass

    def visit_bool_with_path(self, path: list[str], id: ParamId, tensor: Any) -> None:
        pass


class ModuleMapper:
    """Rewrite every parameter; `module.map(mapper)` returns a new module (optimizers are mappers).

    Example:
        >>> class Scale(ModuleMapper):
        ...     def map(self, id, tensor): return tensor * 2
        >>> # model = model.map(Scale())
    """

    def enter_module(self, name: str, container_type: str) -> None:
        pass

    def exit_module(self, name: str, container_type: str) -> None:
        pass

    def map(self, id: ParamId, tensor: Any) -> Any:
        """First-book style hook: return the new tensor for parameter `id`."""
        return tensor

    def map_float(self, param: Param) -> Param:
        return param.map(lambda t: self.map(param.id, t))

    def map_int(self, param: Param) -> Param:
        return param.map(lambda t: self.map(param.id, t))

    def map_bool(self, param: Param) -> Param:
        return param.map(lambda t: self.map(param.id, t))


def _noop(*_args: Any) -> None:
    return None


# Hook names per tensor kind, built once: call_visit/call_map run for every parameter of every
# `visit`/`map`, i.e. on each training step (optimizer step, `GradientsParams.from_grads`).
_NAMES = {
    k: (f"visit_{k.value.lower()}", f"visit_{k.value.lower()}_with_path", f"map_{k.value.lower()}")
    for k in (Float, Int, Bool)
}


def call_visit(visitor: Any, param: Param, path: list[str]) -> None:
    value = param.val()
    visit_name, path_name, _ = _NAMES[value.kind]
    fn = getattr(visitor, visit_name, None)
    if fn is not None:
        fn(param)
    elif hasattr(visitor, "visit"):
        visitor.visit(param.id, value)
    elif callable(visitor):
        visitor(param.id, value)
    getattr(visitor, path_name, _noop)(path, param.id, value)


def call_map(mapper: Any, param: Param) -> Param:
    map_name = _NAMES[param.val().kind][2]
    fn = getattr(mapper, map_name, None)
    if fn is not None:
        out = fn(param)
    elif hasattr(mapper, "map"):
        out = param.map(lambda t: mapper.map(param.id, t))
    else:
        out = param.map(lambda t: mapper(param.id, t))
    if not isinstance(out, Param):
        raise TypeError(
            f"{type(mapper).__name__}.{map_name} must return a Param, got {type(out).__name__}"
        )
    return out
