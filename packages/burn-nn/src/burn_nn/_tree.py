"""Generic traversal of a module's fields: which fields are visited, walking and rebuilding.

Visited fields hold a `Param`, a `Module`, or a list/tuple/dict of those (nested). A plain `Tensor`
field is moved by device changes but is not a parameter (Burn). Anything else is a constant.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from burn_record import Record
from burn_tensor import Tensor

from ._param import Param

PARAM, MODULE, CONTAINER, TENSOR, OPTIONAL, CONST = range(6)

# `Module` is defined in `_module.py`, which imports this module; it registers its class here
# (`register_module_class`) so the checks below need no function-local import per call.
_Module: type = type(None)


def register_module_class(cls: type) -> None:
    """Called once by `_module.py` with `Module` (a top-level import would be circular)."""
    global _Module
    _Module = cls


# Why a cache: the optimizer step, `GradientsParams.from_grads` and every `map`/`visit` classify
# each field of each module (config lists of ints, floats and enums included) on every training
# step. A field's kind depends only on its value's type, except for containers (their kind depends
# on their items) and None (on the annotation), which are never cached. Bounded so classes built
# on the fly (tests) cannot pile up.
_KIND_OF_TYPE: dict[type, int] = {}
_KIND_CACHE_MAX = 4096


def _type_kind(value: Any) -> int | None:
    """PARAM, MODULE, TENSOR or CONST from the value's type; None for containers and None."""
    tp = type(value)
    kind = _KIND_OF_TYPE.get(tp)
    if kind is not None:
        return kind
    if value is None or isinstance(value, list | tuple | dict):
        return None
    if isinstance(value, Param):
        kind = PARAM
    elif isinstance(value, _Module):
        kind = MODULE
    elif isinstance(value, Tensor):
        kind = TENSOR
    else:
        kind = CONST
    if len(_KIND_OF_TYPE) >= _KIND_CACHE_MAX:
        _KIND_OF_TYPE.clear()
    _KIND_OF_TYPE[tp] = kind
    return kind


def _is_module(v: Any) -> bool:
    return isinstance(v, _Module)


def _is_tree(v: Any) -> bool:
    kind = _type_kind(v)
    if kind is not None:
        return kind == PARAM or kind == MODULE
    if isinstance(v, list | tuple):
        return (
            bool(v) and all(x is None or _is_tree(x) for x in v) and any(x is not None for x in v)
        )
    if isinstance(v, dict):
        return bool(v) and all(isinstance(k, str) and _is_tree(x) for k, x in v.items())
    return False


def _optional_module_field(cls: type, name: str) -> bool:
    """Whether a None field is declared as an optional Param/Module (recorded as None, like Burn)."""
    cache = cls.__dict__.get("__burn_optional__")
    if cache is None:
        cache = {}
        type.__setattr__(cls, "__burn_optional__", cache)
    if name in cache:
        return cache[name]
    ann = None
    for klass in cls.__mro__:
        ann = klass.__dict__.get("__annotations__", {}).get(name)
        if ann is not None:
            break
    result = False
    if ann is not None:
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        text = text if isinstance(ann, str) else repr(ann)
        glb = vars(sys.modules.get(cls.__module__, sys))
        for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
            obj = glb.get(tok)
            if tok == "Param" or (isinstance(obj, type) and issubclass(obj, _Module | Param)):
                result = True
                break
    cache[name] = result
    return result


def field_kind(module: Any, name: str, value: Any) -> int:
    kind = _type_kind(value)
    if kind is not None:
        return kind
    if value is None:
        return OPTIONAL if _optional_module_field(type(module), name) else CONST
    return CONTAINER if _is_tree(value) else CONST


def fields(module: Any) -> list[tuple[str, Any, int]]:
    """`(name, value, kind)` of every public field, in declaration / assignment order."""
    out = []
    cached = _KIND_OF_TYPE.get  # the per-type cache inline: most fields hit it
    for k, v in vars(module).items():
        if not k.startswith("_"):
            tv = type(v)
            kind = cached(tv)
            if kind is None:
                # A list/tuple whose first item is a plain constant (a conv's stride, a pool's
                # output size) is a constant: `_is_tree` needs every item to be a tree and would
                # stop at that one. Decided here without its calls: they ran on every walk.
                if (tv is list or tv is tuple) and v and cached(type(v[0])) == CONST:
                    kind = CONST
                else:
                    kind = field_kind(module, k, v)
            out.append((k, v, kind))
    return out


def container_type(value: Any) -> str:
    if _is_module(value):
        return f"Struct:{type(value).__name__}"
    if isinstance(value, list):
        return "Vec"
    if isinstance(value, tuple):
        return "Tuple"
    return "Map"


def _items(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield from ((str(k), v) for k, v in value.items())
    else:
        yield from ((str(i), v) for i, v in enumerate(value))


def walk(
    module: Any,
    on_param: Callable[[list[str], Param], None],
    hooks: Any = None,
    path: list[str] | None = None,
) -> None:
    """Call `on_param(path, param)` for every parameter; `hooks.enter_module/exit_module` around
    every module and container."""
    path = path or []
    for name, value, kind in fields(module):
        _walk_value(name, value, kind, on_param, hooks, path)


def _walk_value(name, value, kind, on_param, hooks, path):
    if kind != PARAM and kind != MODULE and kind != CONTAINER:
        return  # constants and plain tensors: nothing to visit (and no path to build)
    here = path + [name]
    if kind == PARAM:
        on_param(here, value)
    elif kind in (MODULE, CONTAINER):
        leave = _enter(hooks, name, value)
        if kind == MODULE:
            walk(value, on_param, hooks, here)
        else:
            for key, item in _items(value):
                if item is not None:
                    _walk_value(key, item, field_kind(None, key, item), on_param, hooks, here)
        if leave is not None:
            leave[0](name, leave[1])


def _enter(hooks: Any, name: str, value: Any) -> tuple[Callable, str] | None:
    """Call `hooks.enter_module(name, container_type)`; return `(exit_module, container_type)`.

    The container type is built only for hooks that have either method: the optimizer's mapper
    and `GradientsParams`' visitor have neither, and they run every training step.
    """
    if hooks is None:
        return None
    enter = getattr(hooks, "enter_module", None)
    leave = getattr(hooks, "exit_module", None)
    if enter is None and leave is None:
        return None
    ctype = container_type(value)
    if enter is not None:
        enter(name, ctype)
    return None if leave is None else (leave, ctype)


def rebuild(
    module: Any,
    on_param: Callable[[list[str], Param], Param],
    on_tensor: Callable[[Tensor], Tensor] | None = None,
    hooks: Any = None,
    path: list[str] | None = None,
) -> Any:
    """A shallow copy of `module` (recursively for submodules) with every Param replaced by
    `on_param(path, param)` and every plain tensor field by `on_tensor(tensor)`."""
    path = path or []
    new = object.__new__(type(module))
    state = dict(vars(module))
    for name, value, kind in fields(module):
        state[name] = _rebuild_value(name, value, kind, on_param, on_tensor, hooks, path)
    new.__dict__.update(state)
    return new


def _rebuild_value(name, value, kind, on_param, on_tensor, hooks, path):
    if kind == TENSOR:
        return on_tensor(value) if on_tensor is not None else value
    if kind != PARAM and kind != MODULE and kind != CONTAINER:
        return value  # constants are shared (no path built for them)
    here = path + [name]
    if kind == PARAM:
        return on_param(here, value)
    leave = _enter(hooks, name, value)
    if kind == MODULE:
        out = rebuild(value, on_param, on_tensor, hooks, here)
    else:

        def one(key, item):
            if item is None:
                return None
            return _rebuild_value(
                key, item, field_kind(None, key, item), on_param, on_tensor, hooks, here
            )

        if isinstance(value, dict):
            out = type(value)((k, one(str(k), v)) for k, v in value.items())
        else:
            items = [one(str(i), v) for i, v in enumerate(value)]
            out = items if isinstance(value, list) else tuple(items)
    if leave is not None:
        leave[0](name, leave[1])
    return out


def to_record(module: Any, leaf: Callable[[Param], Any]) -> Record:
    """The nested record of a module: `{field: leaf(param) | sub-record | [..] | None}`.

    A `burn_record.Record`, so fields read as attributes as in Burn (`record.conv1.weight`).
    """
    out: dict[str, Any] = {}
    for name, value, kind in fields(module):
        if kind in (PARAM, MODULE, CONTAINER):
            out[name] = _record_value(value, leaf)
        elif kind == OPTIONAL:
            out[name] = None
    return Record(out)


def _record_value(value, leaf):
    if isinstance(value, Param):
        return leaf(value)
    if _is_module(value):
        return to_record(value, leaf)
    if value is None:
        return None
    if isinstance(value, dict):
        return Record({str(k): _record_value(v, leaf) for k, v in value.items()})
    return [_record_value(v, leaf) for v in value]
