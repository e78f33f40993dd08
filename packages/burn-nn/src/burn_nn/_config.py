"""`@config` / `Config`: Burn's `#[derive(Config)]` as a frozen dataclass with JSON round trips."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import sys
import typing
from pathlib import Path
from typing import Any

from burn_record import atomic_write

from ._codec import ConfigError, decode, encode

_MUTABLE = (list, dict, set)


def config(cls: type | None = None, /):
    """Make `cls` a Burn config: a frozen dataclass with builder methods and JSON save/load.

    Fields without a default are required and positional, in declaration order wherever they appear;
    fields with a default are keyword-only. Generated: `with_<field>(value)` and `replace(**kw)`
    (copies), `to_json()` / `from_json(s)`, `save(path)` / `load(path)`, `load_binary(bytes)`.
    Nested configs, enums (by name), variant enums, lists and None round-trip. `init(device)` is
    written by you and builds the module.

    Example:
        >>> @config
        ... class MyModuleConfig:
        ...     d_model: int
        ...     d_ff: int
        ...     dropout: float = 0.1
        >>> c = MyModuleConfig(512, 2048).with_dropout(0.2)
        >>> c.dropout, MyModuleConfig.from_json(c.to_json()) == c
        (0.2, True)
    """
    if cls is None:
        return config
    return _make_config(cls)


def _make_config(cls: type) -> type:
    ns = cls.__dict__
    for name in ns.get("__annotations__", {}):
        if name not in ns:
            continue
        value = ns[name]
        if isinstance(value, dataclasses.Field):
            if value.kw_only is dataclasses.MISSING:
                value.kw_only = True
            continue
        if isinstance(value, _MUTABLE):
            f = dataclasses.field(
                default_factory=functools.partial(copy.deepcopy, value), kw_only=True
            )
        else:
            f = dataclasses.field(default=value, kw_only=True)
        setattr(cls, name, f)
    if "__hash__" not in ns:
        cls.__hash__ = _hash
    if "__str__" not in ns:
        cls.__str__ = Config.to_json
    cls = dataclasses.dataclass(frozen=True, eq=True)(cls)
    for f in dataclasses.fields(cls):
        setter = f"with_{f.name}"
        if not hasattr(cls, setter):
            setattr(cls, setter, _make_setter(f.name))
    for name in ("replace", "to_json", "to_dict", "save", "_to_json_value", "__reduce__"):
        if name not in cls.__dict__ and not hasattr(cls, name):
            setattr(cls, name, getattr(Config, name))
    for name in (
        "from_json",
        "from_dict",
        "load",
        "load_binary",
        "_from_json_value",
        "_field_types",
    ):
        if not hasattr(cls, name):
            setattr(cls, name, classmethod(getattr(Config, name).__func__))
    cls.__burn_config__ = True
    return cls


# What evaluating an annotation that cannot be resolved raises: an undefined name, a missing
# module attribute, a string that is not an expression, an operator on a string (`"A" | None`).
_UNRESOLVABLE = (NameError, AttributeError, SyntaxError, TypeError)


def _resolve_annotation(cls: type, owner: type, name: str, annotation: Any) -> Any:
    """`owner`'s annotation of field `name`, evaluated in `owner`'s module and class namespaces."""
    # One field at a time, so one bad annotation is reported, never silently untyping the others.
    probe = type(owner.__name__, (), {"__annotations__": {name: annotation}})
    module = sys.modules.get(owner.__module__)
    globalns = vars(module) if module is not None else {}
    try:
        return typing.get_type_hints(probe, globalns, dict(vars(owner)))[name]
    except _UNRESOLVABLE as e:
        raise ConfigError(
            f"{cls.__qualname__}.{name}: cannot resolve its type annotation {annotation!r} "
            f"({type(e).__name__}: {e}); define or import the type in module {owner.__module__!r}, "
            "at module level, so JSON values can be decoded into it"
        ) from e


def _hash(self) -> int:
    return hash((type(self).__qualname__, self.to_json()))


def _make_setter(name: str):
    def setter(self, value):
        return dataclasses.replace(self, **{name: value})

    setter.__name__ = f"with_{name}"
    setter.__doc__ = f"A copy of this config with `{name}` set to `value` (Burn's builder method)."
    return setter


class Config:
    """Base class alternative to `@config`: `class MyConfig(Config): ...` is decorated automatically.

    Example:
        >>> class TrainingConfig(Config):
        ...     num_epochs: int = 10
        >>> TrainingConfig().with_num_epochs(3).num_epochs
        3
    """

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        # Decorate after the class body exists; dataclass() returns the same class object.
        _make_config(cls)

    # -- copies --------------------------------------------------------------------------------
    def replace(self, **changes: Any):
        """A copy with the given fields changed (`dataclasses.replace`)."""
        return dataclasses.replace(self, **changes)

    # -- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {f.name: encode(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def _to_json_value(self) -> dict:
        return self.to_dict()

    def to_json(self) -> str:
        """Pretty JSON, as Burn's `config_to_json`."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def _field_types(cls) -> dict[str, Any]:
        """Each field's resolved annotation (string / forward references evaluated), cached.

        Raises:
            ConfigError: naming the class, the field and the annotation, for an annotation that
                cannot be evaluated (an undefined or misspelt name, invalid syntax).
        """
        cached = cls.__dict__.get("__burn_field_types__")
        if cached is not None:
            return cached
        names = {f.name for f in dataclasses.fields(cls)}
        types_: dict[str, Any] = dict.fromkeys(names, Any)
        # Base classes first, each in its own module's namespace (as typing.get_type_hints does),
        # so an override in a subclass wins and a base from another module resolves its names.
        for owner in reversed(cls.__mro__):
            for name, annotation in owner.__dict__.get("__annotations__", {}).items():
                if name in names:
                    types_[name] = _resolve_annotation(cls, owner, name, annotation)
        type.__setattr__(cls, "__burn_field_types__", types_)
        return types_

    @classmethod
    def from_dict(cls, data: Any, where: str | None = None):
        """Build from plain data; missing required or unknown fields raise `ConfigError`."""
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a JSON object, got {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
                f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; known fields: "
                f"{', '.join(fields)}"
            )
        missing = [
            n
            for n, f in fields.items()
            if n not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise ConfigError(f"{where}: missing required field(s) {', '.join(map(repr, missing))}")
        types_ = cls._field_types()
        kwargs = {n: decode(v, types_.get(n, Any), f"{where}.{n}") for n, v in data.items()}
        return cls(**kwargs)

    @classmethod
    def _from_json_value(cls, value: Any, where: str):
        return cls.from_dict(value, where)

    @classmethod
    def from_json(cls, text: str | bytes):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{cls.__name__}: invalid JSON: {e}") from None
        except RecursionError:
            raise ConfigError(f"{cls.__name__}: JSON nested too deeply to be a config") from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"{cls.__name__}: the JSON is not valid UTF-8 ({e})") from None
        except ValueError as e:  # e.g. an integer of more digits than Python converts
            raise ConfigError(f"{cls.__name__}: invalid JSON value: {e}") from None
        try:
            return cls.from_dict(data)
        except ConfigError:
            raise
        except (TypeError, ValueError, OverflowError, RecursionError) as e:
            # A value the field's type cannot hold (an int past float's range, a variant
            # missing a field): name it as a config error, not a crash inside decoding.
            raise ConfigError(f"{cls.__name__}: {type(e).__name__}: {e}") from None

    def save(self, path: str | os.PathLike) -> Path:
        """Write the JSON to `path` atomically (`burn_record.atomic_write`: a temp file of a
        random name created with O_EXCL, so a symlink planted beside `path` is never followed,
        and two processes saving at once never share one; then renamed over `path`)."""
        data = (self.to_json() + "\n").encode("utf-8")
        return atomic_write(Path(path), lambda f: f.write(data))

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a config written by `save`; errors name the file and the offending field."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"{cls.__name__}: no config file at {path}") from None
        except OSError as e:
            raise ConfigError(f"{cls.__name__}: cannot read {path}: {e.strerror or e}") from None
        try:
            return cls.from_json(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path}: {cls.__name__}: not UTF-8 text ({e})") from None
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None

    @classmethod
    def load_binary(cls, data: bytes):
        return cls.from_json(bytes(data).decode("utf-8"))

    def __reduce__(self):
        return (_rebuild, (type(self), self.to_json()))


def _rebuild(cls, text):
    return cls.from_json(text)


def is_config(obj: Any) -> bool:
    return getattr(obj, "__burn_config__", False) is True
