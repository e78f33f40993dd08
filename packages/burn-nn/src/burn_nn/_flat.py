"""The training step's two module passes, without paths, hooks or per-parameter dispatch.

`GradientsParams.from_grads` and `Optimizer.step` run on every training step: they list a
module's parameters and rebuild the module with the updated ones. `Module.visit`/`map` do the
same through the general walk (`_tree.walk`/`rebuild`): a path list built per field, a hook
lookup per module, a visitor dispatch per parameter. These two functions walk the same fields in
the same order (`_tree.fields`' classification: the per-type kind cache, containers and None
decided per value, so a structure changed between steps is seen) and do only what the step
needs; `_tree` stays the one place that decides what a field is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _tree
from ._param import Param

_PARAM, _MODULE, _CONTAINER, _CONST = _tree.PARAM, _tree.MODULE, _tree.CONTAINER, _tree.CONST


def params_of(module: Any) -> list[Param]:
    """Every Param of `module` (every kind), in `Module.visit`'s order; a Param reachable twice
    is listed twice, as `visit` calls the visitor twice."""
    out: list[Param] = []
    _collect(module, out)
    return out


def _kind(module: Any, name: str, value: Any, cached) -> int:
    """`_tree.fields`' classification of one field (its constant-list shortcut included)."""
    tv = type(value)
    kind = cached(tv)
    if kind is None:
        if (tv is list or tv is tuple) and value and cached(type(value[0])) == _CONST:
            return _CONST
        kind = _tree.field_kind(module, name, value)
    return kind


def _collect(module: Any, out: list) -> None:
    cached = _tree._KIND_OF_TYPE.get
    for k, v in vars(module).items():
        if k[0] == "_":
            continue
        kind = cached(type(v))  # inline: most fields are constants the type cache knows
        if kind is None:
            kind = _kind(module, k, v, cached)
        if kind == _PARAM:
            out.append(v)
        elif kind == _MODULE:
            _collect(v, out)
        elif kind == _CONTAINER:
            _collect_items(v, out)


def _collect_items(value: Any, out: list) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if item is None:
            continue
        kind = _tree.field_kind(None, str(key), item)
        if kind == _PARAM:
            out.append(item)
        elif kind == _MODULE:
            _collect(item, out)
        elif kind == _CONTAINER:
            _collect_items(item, out)


def replace_params(module: Any, new: Callable[[Param], Param]) -> Any:
    """A copy of `module` (every submodule and container copied, as `Module.map` does; constants
    and plain tensors shared) with each Param `p` replaced by `new(p)`."""
    cached = _tree._KIND_OF_TYPE.get
    state = dict(vars(module))
    for k, v in state.items():
        if k[0] == "_":
            continue
        kind = cached(type(v))
        if kind is None:
            kind = _kind(module, k, v, cached)
        if kind == _PARAM:
            state[k] = new(v)
        elif kind == _MODULE:
            state[k] = replace_params(v, new)
        elif kind == _CONTAINER:
            state[k] = _replace_items(v, new)
    out = object.__new__(type(module))
    out.__dict__.update(state)
    return out


def _replace_items(value: Any, new: Callable[[Param], Param]) -> Any:
    def one(key, item):
        if item is None:
            return None
        kind = _tree.field_kind(None, key, item)
        if kind == _PARAM:
            return new(item)
        if kind == _MODULE:
            return replace_params(item, new)
        if kind == _CONTAINER:
            return _replace_items(item, new)
        return item

    if isinstance(value, dict):
        return type(value)((k, one(str(k), v)) for k, v in value.items())
    items = [one(str(i), v) for i, v in enumerate(value)]
    return items if isinstance(value, list) else tuple(items)
