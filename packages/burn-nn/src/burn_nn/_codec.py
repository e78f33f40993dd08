"""JSON encoding/decoding of config values, guided by the field's type annotation.

Configs encode as objects, `enum.Enum` members by name, variant enums (`PaddingConfig2d.Same`,
`Initializer.KaimingUniform(...)`) as Burn's serde does (`"Same"`, `{"Explicit": [1, 1]}`,
`{"KaimingUniform": {"gain": 0.57, "fan_out_only": false}}`), lists/tuples as arrays.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any


class ConfigError(ValueError):
    """A config could not be built from JSON: missing/unknown field or a value of the wrong type."""


def encode(value: Any) -> Any:
    """Turn a config value into plain JSON data."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "_to_json_value"):
        return value._to_json_value()
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    raise TypeError(
        f"config values must be JSON-serializable, got {type(value).__name__}: {value!r}"
    )


def decode(value: Any, tp: Any, where: str) -> Any:
    """Rebuild a value of annotated type `tp` from JSON data; `where` names it in errors."""
    if tp is Any or tp is None or isinstance(tp, str | typing.TypeVar):
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return decode(value, arg, where)
            except (ConfigError, TypeError, ValueError, KeyError) as e:
                errors.append(str(e))
        raise ConfigError(f"{where}: {value!r} matches none of {tp} ({'; '.join(errors)})")
    if origin in (list, tuple, typing.Sequence) or tp in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected an array, got {value!r}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            return tuple(decode(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
        elem = args[0] if args else Any
        out = [decode(v, elem, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(out) if origin is tuple or tp is tuple else out
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected an object, got {value!r}")
        vt = args[1] if len(args) == 2 else Any
        return {k: decode(v, vt, f"{where}.{k}") for k, v in value.items()}
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{where}: expected one of {args}, got {value!r}")
        return value
    if not isinstance(tp, type):
        return value
    if hasattr(tp, "_from_json_value"):
        return tp._from_json_value(value, where)
    if issubclass(tp, enum.Enum):
        if isinstance(value, str) and value in tp.__members__:
            return tp[value]
        try:
            return tp(value)
        except ValueError:
            raise ConfigError(
                f"{where}: {value!r} is not a {tp.__name__} (one of {list(tp.__members__)})"
            ) from None
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected a bool, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    return value
