"""`Record`: a module record whose fields read as attributes (`record.conv1.weight`), as in Burn.

Burn derives a `ModelRecord` struct for every module, so the book writes `record.conv1`. Here a
record stays a `dict` (every format, diff and dtype helper treats it as one, and it serialises
exactly as before: no pickle, the same named tree), with attribute access on top.
"""

from __future__ import annotations

import difflib
from typing import Any


class Record(dict):
    """A `dict` of record fields that also reads (and writes) them as attributes.

    `record.conv1.weight` is `record["conv1"]["weight"]`; nested dicts, including those inside
    lists (`record.layers[0].weight`), are Records too. A field named like a dict method
    (`items`, `keys`, `values`, `get`, ...) is reached with `record["items"]`. A missing field
    raises AttributeError listing the fields there are.

    Args:
        fields: a mapping (or key/value pairs) of field name -> value; nested dicts are converted.

    Example:
        >>> r = Record({"conv1": {"weight": 1, "bias": None}, "layers": [{"w": 2}]})
        >>> r.conv1.weight, r.layers[0].w, r["conv1"]["bias"] is None
        (1, 2, True)
        >>> r.conv2
        Traceback (most recent call last):
        ...
        AttributeError: record has no field 'conv2' (did you mean 'conv1'?); fields: conv1, layers
    """

    __slots__ = ()

    def __init__(self, fields: Any = (), /, **kw: Any) -> None:
        super().__init__(fields, **kw)
        for key, value in dict.items(self):
            dict.__setitem__(self, key, as_record(value))

    @classmethod
    def _of(cls, converted: dict) -> Record:
        """Wrap a dict whose nested values are already Records (decoders build bottom-up)."""
        out = dict.__new__(cls)
        dict.update(out, converted)
        return out

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            pass
        # Dunder lookups (copy, pickle, numpy probing) must see a plain missing attribute.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        fields = [str(k) for k in self]
        hint = difflib.get_close_matches(name, fields, n=1)
        near = f" (did you mean {hint[0]!r}?)" if hint else ""
        listed = ", ".join(fields) if fields else "none"
        raise AttributeError(f"record has no field {name!r}{near}; fields: {listed}")

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = as_record(value)

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(f"record has no field {name!r}") from None

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(k for k in self if isinstance(k, str))})

    def __reduce__(self):
        # A dict subclass with __slots__ = () copies and pickles like a dict of its items.
        return (type(self), (dict(self),))


def as_record(value: Any) -> Any:
    """`value` with every nested plain dict turned into a `Record` (lists and tuples walked).

    Example:
        >>> type(as_record([{"w": 1}])[0]).__name__
        'Record'
    """
    if isinstance(value, Record):
        return value
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [as_record(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_record(v) for v in value)
    return value
