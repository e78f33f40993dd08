"""Turning rows (dicts of column -> value) into user item types, and items back into rows.

Burn deserializes rows into a `serde` struct; the Python equivalent is a dataclass whose field
annotations say how to convert text (CSV) or stored values (SQLite) into typed fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f", ""}


def _convert_scalar(value: Any, target: Any, field: str) -> Any:
    """Convert `value` to the annotated type `target` (int, float, str, bool, Optional[...])."""
    origin = typing.get_origin(target)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(target)
        if value is None or (isinstance(value, str) and value == "" and type(None) in args):
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _convert_scalar(value, inner[0], field)
        return value
    if value is None:
        return None
    try:
        if target is bool:
            if isinstance(value, str):
                text = value.strip().lower()
                if text in _TRUE:
                    return True
                if text in _FALSE:
                    return False
                raise ValueError(f"not a boolean: {value!r}")
            return bool(value)
        if target is int:
            if isinstance(value, str):
                text = value.strip()
                # "3.0" is common in CSV exports of integer columns; accept it only when exact.
                number = float(text) if any(c in text for c in ".eE") else int(text)
                if isinstance(number, float):
                    if not number.is_integer():
                        raise ValueError(f"not an integer: {value!r}")
                    number = int(number)
                return number
            return int(value)
        if target is float:
            return float(value)
        if target is str:
            return value if isinstance(value, str) else str(value)
        if target is bytes:
            return bytes(value)
        if target is np.ndarray:
            return np.asarray(value)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"field {field!r}: cannot convert {value!r} to {getattr(target, '__name__', target)}"
            f" ({err})"
        ) from None
    return value  # containers and custom types are passed through unchanged


def row_converter(item_type: Any) -> Callable[[Mapping[str, Any]], Any]:
    """Return a function turning a row dict into an `item_type` instance.

    `item_type` may be None (rows stay dicts), a dataclass (fields converted by annotation, missing
    or unknown columns reported clearly) or any callable taking the row as keyword arguments.
    """
    if item_type is None:
        return dict
    if dataclasses.is_dataclass(item_type) and isinstance(item_type, type):
        hints = typing.get_type_hints(item_type)
        fields = [f for f in dataclasses.fields(item_type) if f.init]
        required = {
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        names = {f.name for f in fields}

        def convert(row: Mapping[str, Any]) -> Any:
            missing = required - row.keys()
            if missing:
                raise ValueError(
                    f"row is missing field(s) {sorted(missing)} needed by {item_type.__name__}; "
                    f"row has {sorted(row.keys())}"
                )
            unknown = row.keys() - names
            if unknown:
                raise ValueError(
                    f"row has column(s) {sorted(unknown)} that {item_type.__name__} does not "
                    f"declare; expected only {sorted(names)}"
                )
            kwargs = {k: _convert_scalar(v, hints.get(k, Any), k) for k, v in row.items()}
            return item_type(**kwargs)

        return convert
    if callable(item_type):
        return lambda row: item_type(**row)
    raise TypeError(f"item_type must be None, a dataclass or a callable, got {item_type!r}")


def item_to_row(item: Any) -> dict[str, Any]:
    """Turn a dataclass instance or mapping into a plain `dict` of field -> value."""
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
    if isinstance(item, Mapping):
        for key in item:
            if not isinstance(key, str):
                raise TypeError(f"item keys must be str to become columns, got {key!r}")
        return dict(item)
    raise TypeError(
        f"an item stored in columns must be a dataclass instance or a dict, got "
        f"{type(item).__name__}"
    )
