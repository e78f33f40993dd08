"""Module fields are checked against their annotations when a module is constructed.

Why: `Linear(4, 16)` (the PyTorch habit) used to build a Linear whose weight is the int 4, and
fail much later inside `forward` with a message about ints. Burn builds modules from configs;
the check names the field, the type it expects and the config to use instead.

Only what an annotation says plainly is checked (classes, `X | None`, the container type of
`list[int]`); anything the check cannot read (`Any`, a callable type, a name that does not
resolve) is accepted, so a user's own module never fails for the checker's sake.

Example:
    >>> from burn_nn import Linear
    >>> Linear(4, 16)
    Traceback (most recent call last):
    ...
    TypeError: Linear: field 'weight' expects Param, got int (4); modules are built from their config: LinearConfig(...).init(device)
"""

from __future__ import annotations

import numbers
import sys
import types
import typing
from typing import Any

_UNREADABLE = object()  # an annotation the check does not judge


def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotation of each field of `cls` (cached on the class)."""
    cached = cls.__dict__.get("__module_field_types__")
    if cached is not None:
        return cached
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        # a class made by exec (ONNX codegen) has no module to read names from: its string
        # annotations then do not resolve and are not judged
        mod = sys.modules.get(klass.__module__)
        ns = vars(mod) if mod is not None else {}
        for name, ann in klass.__dict__.get("__annotations__", {}).items():
            out[name] = _resolve(ann, ns)
    type.__setattr__(cls, "__module_field_types__", out)
    return out


def _resolve(ann: Any, ns: dict) -> Any:
    if not isinstance(ann, str):
        return ann
    try:
        return eval(ann, dict(ns), {})  # noqa: S307 - the class's own annotation text
    except Exception:
        return _UNREADABLE


def accepts(ann: Any, value: Any) -> bool:
    """Whether `value` fits annotation `ann` as far as the annotation can be read."""
    if ann is _UNREADABLE or ann is Any or isinstance(ann, typing.TypeVar):
        return True
    if ann is None or ann is type(None):
        return value is None
    origin = typing.get_origin(ann)
    if origin is typing.Union or origin is types.UnionType:
        return any(accepts(a, value) for a in typing.get_args(ann))
    if origin is not None:
        if origin in (list, tuple) or origin is typing.Sequence:
            return isinstance(value, list | tuple)
        return not isinstance(origin, type) or isinstance(value, origin)
    if ann is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ann is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ann is bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"
    if ann in (list, tuple):
        return isinstance(value, list | tuple)
    if isinstance(ann, type):
        return isinstance(value, ann)
    return True


def _name(ann: Any) -> str:
    """`Param | None`, `list[int]`: the annotation as its author wrote it, without module paths."""
    if ann is None or ann is type(None):
        return "None"
    origin = typing.get_origin(ann)
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(_name(a) for a in typing.get_args(ann))
    if origin is not None:
        args = ", ".join(_name(a) for a in typing.get_args(ann))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "")


def check_fields(module: Any, values: dict[str, Any]) -> None:
    """Raise TypeError naming the first field whose value its annotation refuses."""
    cls = type(module)
    types_ = field_types(cls)
    for name, value in values.items():
        ann = types_.get(name, _UNREADABLE)
        if accepts(ann, value):
            continue
        got = type(value).__name__
        shown = repr(value)
        detail = f"{got} ({shown})" if len(shown) <= 40 else got
        hint = ""
        config = getattr(sys.modules.get(cls.__module__), f"{cls.__name__}Config", None)
        if config is not None:
            hint = f"; modules are built from their config: {config.__name__}(...).init(device)"
        raise TypeError(
            f"{cls.__name__}: field {name!r} expects {_name(ann)}, got {detail}{hint}"
        )
