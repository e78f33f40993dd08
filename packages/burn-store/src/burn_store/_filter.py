"""`PathFilter` and `KeyRemapper` (Burn's `burn_store::{PathFilter, KeyRemapper}`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from burn_import import RecordImportError, compile_remap

Predicate = Callable[[str, str], bool]


class PathFilter:
    """Which tensor paths (`"encoder.layers.0.weight"`) a store saves or loads.

    A path is kept when it equals one of the full paths, matches one of the regexes
    (`re.search`, as Rust's `is_match`), or one predicate `(path, container_path)` says so;
    `match_all()` keeps everything and an empty filter keeps nothing (Burn's rules).

    Example:
        >>> f = PathFilter().with_regex(r"^encoder\\.").with_full_path("head.bias")
        >>> f.matches("encoder.w"), f.matches("head.bias"), f.matches("head.weight")
        (True, True, False)
    """

    def __init__(self) -> None:
        self.regexes: list[re.Pattern[str]] = []
        self.paths: list[str] = []
        self.predicates: list[Predicate] = []
        self.all = False

    @classmethod
    def new(cls) -> PathFilter:
        return cls()

    @classmethod
    def all_paths(cls) -> PathFilter:
        return cls().match_all()

    @classmethod
    def none(cls) -> PathFilter:
        return cls()

    def with_regex(self, pattern: str) -> PathFilter:
        try:
            self.regexes.append(re.compile(pattern))
        except re.error as err:
            raise ValueError(f"PathFilter: invalid regex {pattern!r}: {err}") from None
        return self

    def with_regexes(self, patterns: Iterable[str]) -> PathFilter:
        for p in patterns:
            self.with_regex(p)
        return self

    def with_full_path(self, path: str) -> PathFilter:
        self.paths.append(str(path))
        return self

    def with_full_paths(self, paths: Iterable[str]) -> PathFilter:
        for p in paths:
            self.with_full_path(p)
        return self

    def with_predicate(self, predicate: Predicate) -> PathFilter:
        if not callable(predicate):
            raise TypeError(f"PathFilter: a predicate must be callable, got {predicate!r}")
        self.predicates.append(predicate)
        return self

    def with_predicates(self, predicates: Iterable[Predicate]) -> PathFilter:
        for p in predicates:
            self.with_predicate(p)
        return self

    def match_all(self) -> PathFilter:
        self.all = True
        return self

    def or_(self, other: PathFilter) -> PathFilter:
        """Keep what either filter keeps (Burn's `or`)."""
        self.all = self.all or other.all
        self.regexes += other.regexes
        self.paths += other.paths
        self.predicates += other.predicates
        return self

    def is_empty(self) -> bool:
        return not (self.all or self.regexes or self.paths or self.predicates)

    def matches(self, path: str, container_path: str = "") -> bool:
        if self.all:
            return True
        return (
            path in self.paths
            or any(r.search(path) for r in self.regexes)
            or any(p(path, container_path) for p in self.predicates)
        )

    matches_with_container = matches


class KeyRemapper:
    """Regex renames applied to every tensor path in order (Burn's `KeyRemapper`); each pattern
    replaces all its matches (`$1`/`${name}` or Python's `\\1` in the replacement).

    Example:
        >>> KeyRemapper().add_pattern(r"^model\\.(.*)$", "$1").remap_path("model.fc.weight")
        'fc.weight'
    """

    def __init__(self) -> None:
        self.patterns: list[tuple[str, str, Callable[[str], str]]] = []

    @classmethod
    def new(cls) -> KeyRemapper:
        return cls()

    @classmethod
    def from_patterns(cls, patterns: Iterable[tuple[str, str]]) -> KeyRemapper:
        remapper = cls()
        for pattern, replacement in patterns:
            remapper.add_pattern(pattern, replacement)
        return remapper

    def add_pattern(self, pattern: str, replacement: str) -> KeyRemapper:
        try:
            # burn_import's remap rule (Rust's `$1`/`${name}` syntax), every match replaced
            # as Burn's store does (`replace_all`)
            fn = compile_remap(pattern, replacement, replace_all=True)
        except RecordImportError as err:
            raise ValueError(f"KeyRemapper: {err}") from None
        self.patterns.append((pattern, replacement, fn))
        return self

    def is_empty(self) -> bool:
        return not self.patterns

    def remap_path(self, path: str) -> str:
        for _, _, fn in self.patterns:
            path = fn(path)
        return path
