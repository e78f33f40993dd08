"""`FakeDataset`: `size` random items of a given type, made once (Burn's `FakeDataset`)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from burn_dataset._in_memory import InMemDataset

I = TypeVar("I")  # noqa: E741
_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "))


def _fake(tp: Any, rng: np.random.Generator, where: str) -> Any:
    """A random value of annotation `tp` (Rust's `Faker.fake()` for the types items use)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is int:
        return int(rng.integers(-(2**31), 2**31))
    if tp is float:
        return float(rng.normal(0.0, 1e3))
    if tp is bool:
        return bool(rng.integers(0, 2))
    if tp is str:
        return "".join(rng.choice(_ALPHABET, int(rng.integers(0, 21))))
    if tp is bytes:
        return rng.integers(0, 256, int(rng.integers(0, 21)), dtype=np.uint8).tobytes()
    if origin in (list, set, frozenset) or tp in (list,):
        inner = args[0] if args else int
        return origin([_fake(inner, rng, where) for _ in range(int(rng.integers(0, 9)))])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_fake(args[0], rng, where) for _ in range(int(rng.integers(0, 9))))
        return tuple(_fake(a, rng, where) for a in args)
    if origin is dict:
        k, v = args or (str, int)
        return {_fake(k, rng, where): _fake(v, rng, where) for _ in range(int(rng.integers(0, 5)))}
    if origin in (typing.Union, types.UnionType):
        choices = [a for a in args if a is not type(None)]
        if type(None) in args and rng.integers(0, 2) == 0:
            return None
        return _fake(choices[int(rng.integers(0, len(choices)))], rng, where)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{
            f.name: _fake(hints[f.name], rng, f"{where}.{f.name}")
            for f in dataclasses.fields(tp) if f.init
        })  # fmt: skip
    raise TypeError(
        f"FakeDataset cannot make a random {tp!r} (at {where}): use int, float, bool, str, "
        "bytes, list/tuple/dict/Optional of those, dataclasses of those, or pass a factory "
        "function rng -> item"
    )


class FakeDataset(InMemDataset[I]):
    """`size` random items, generated once and kept in memory (Burn's `FakeDataset::new(size)`).

    Args:
        size: how many items.
        item: a dataclass (each field filled at random from its annotation: int, float, bool,
            str, bytes, lists/tuples/dicts/Optional of these, nested dataclasses) or a factory
            `rng -> item` taking a `numpy.random.Generator`.
        seed: the generator's seed (None: fresh entropy each time).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Row:
        ...     id: int
        ...     name: str
        >>> ds = FakeDataset(3, Row, seed=0)
        >>> len(ds), type(ds.get(0)).__name__, ds.get(0) == FakeDataset(3, Row, seed=0).get(0)
        (3, 'Row', True)
    """

    def __init__(self, size: int, item: type[I] | Callable[[np.random.Generator], I], seed=None):
        if int(size) != size or size < 0:
            raise ValueError(f"FakeDataset size must be an integer >= 0, got {size!r}")
        rng = np.random.default_rng(seed)
        if isinstance(item, type):  # a dataclass, or a plain type (int, str, ...)
            make = lambda: _fake(item, rng, item.__name__)  # noqa: E731
        elif callable(item):
            make = lambda: item(rng)  # noqa: E731
        else:
            raise TypeError(f"FakeDataset item must be a type or a factory, got {item!r}")
        super().__init__([make() for _ in range(int(size))])
