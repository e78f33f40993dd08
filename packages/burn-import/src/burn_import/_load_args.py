"""`LoadArgs`: which file to read and how its keys become the module's (Burn's `LoadArgs`)."""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ._errors import RecordImportError


class AdapterType(enum.Enum):
    """How tensors are adapted to Burn's modules (Burn's `AdapterType`).

    `PyTorch`: Linear weights are transposed to Burn's `[d_input, d_output]`, norm layers'
    `weight`/`bias` become `gamma`/`beta`, an LSTM's packed gates are split. `NoAdapter`: names
    and layouts are taken as they are (files written by burn-py itself).
    """

    PyTorch = "PyTorch"
    NoAdapter = "NoAdapter"


@dataclass(frozen=True)
class LoadArgs:
    """What to load and how: Burn's `LoadArgs::new(path).with_key_remap(..)...`.

    Each `with_*` method returns a new `LoadArgs`.

    Args:
        file: the `.pt` / `.pth` / `.safetensors` file.

    Example:
        >>> args = (LoadArgs("model.pt").with_key_remap(r"conv\\.(.*)", "$1")
        ...         .with_top_level_key("state_dict").with_debug_print())
        >>> args.file.name, args.key_remap, args.top_level_key, args.debug
        ('model.pt', (('conv\\\\.(.*)', '$1'),), 'state_dict', True)
    """

    file: Path
    key_remap: tuple[tuple[str, str], ...] = ()
    top_level_key: str | None = None
    debug: bool = False
    adapter_type: AdapterType | None = None  # None: PyTorch, unless the file says burn-py wrote it
    allow_missing: bool = False
    error_on_unused: bool = False
    contiguous_indices: bool = True

    def __init__(self, file: str | os.PathLike, **options: object) -> None:
        object.__setattr__(self, "file", Path(file))
        for name, value in options.items():
            object.__setattr__(self, name, value)

    @classmethod
    def new(cls, file: str | os.PathLike) -> LoadArgs:
        """Burn's `LoadArgs::new(file)`."""
        return cls(file)

    def _with(self, **changes: object) -> LoadArgs:
        return replace(self, **changes)

    def with_key_remap(self, pattern: str, replacement: str) -> LoadArgs:
        """Rename keys: the first match of regex `pattern` is replaced by `replacement`, which
        uses Rust's syntax as in Burn (`$1`, `${1}`, `$name`, `$$` for a dollar) or Python's
        (`\\1`, `\\g<name>`). Remaps apply in the order given, each to the result of the
        previous one."""
        compile_remap(pattern, replacement)  # fail here, not at load time
        return self._with(key_remap=(*self.key_remap, (pattern, replacement)))

    def with_top_level_key(self, key: str) -> LoadArgs:
        """Load the dict stored under `key` (e.g. `"state_dict"` of a training checkpoint)."""
        return self._with(top_level_key=key)

    def with_debug_print(self) -> LoadArgs:
        """Print every original key, remapped key, shape and dtype while loading."""
        return self._with(debug=True)

    def with_adapter_type(self, adapter_type: AdapterType) -> LoadArgs:
        """Choose the adapter explicitly (default: PyTorch, or none for burn-py's own files)."""
        if not isinstance(adapter_type, AdapterType):
            raise TypeError(f"adapter_type must be an AdapterType, got {adapter_type!r}")
        return self._with(adapter_type=adapter_type)

    def with_allow_missing(self, allow: bool = True) -> LoadArgs:
        """Partial loading: parameters the file lacks keep the module's values (and are listed
        in the load report) instead of raising."""
        return self._with(allow_missing=bool(allow))

    def with_error_on_unused(self, error: bool = True) -> LoadArgs:
        """Raise when the file holds tensors the module does not use (default: ignore them and
        list them in the load report, as Burn ignores them)."""
        return self._with(error_on_unused=bool(error))

    def with_contiguous_indices(self, enabled: bool = True) -> LoadArgs:
        """Renumber non-contiguous list indices (`seq.0`, `seq.2` -> `seq.0`, `seq.1`), as Burn
        does for a PyTorch `Sequential` with weightless layers (on by default)."""
        return self._with(contiguous_indices=bool(enabled))


def compile_remap(
    pattern: str, replacement: str, *, replace_all: bool = False
) -> Callable[[str], str]:
    """A function applying one remap rule: first match only, like Rust's `Regex::replace`
    (LoadArgs), or every match with `replace_all=True` (Rust's `replace_all`, burn-store's).

    Example:
        >>> compile_remap(r"^conv\\.(\\w+)\\.(.*)", "${1}_x.$2")("conv.conv1.weight")
        'conv1_x.weight'
    """
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise RecordImportError(f"key remap: invalid regex {pattern!r}: {err}") from None
    parts = _parse_replacement(replacement)

    def expand(match: re.Match) -> str:
        out = []
        for literal, group in parts:
            if group is None:
                out.append(literal)
                continue
            try:
                out.append(match.group(group) or "")
            except (IndexError, re.error):  # an unknown group expands to "" as in Rust
                pass
        return "".join(out)

    count = 0 if replace_all else 1
    return lambda key: regex.sub(expand, key, count=count)


def _parse_replacement(text: str) -> list[tuple[str, int | str | None]]:
    """Split a Rust-style replacement into literals and group references."""
    parts: list[tuple[str, int | str | None]] = []
    i = 0
    while i < len(text):
        ch = text[i]
        # Python's `\1` and `\g<name>` (re.sub's syntax) also name groups: a PyTorch user's
        # habit, and a backslash before a digit is never wanted literally in a key.
        py = re.match(r"\\(?:g<([A-Za-z0-9_]+)>|([0-9]+))", text[i:])
        if py is not None:
            name = py.group(1) or py.group(2)
            parts.append(("", int(name) if name.isdigit() else name))
            i += py.end()
            continue
        if ch != "$":
            parts.append((ch, None))
            i += 1
            continue
        if text.startswith("$$", i):
            parts.append(("$", None))
            i += 2
            continue
        if text.startswith("${", i) and "}" in text[i:]:
            end = text.index("}", i)
            name, i = text[i + 2 : end], end + 1
        else:
            m = re.match(r"[A-Za-z0-9_]+", text[i + 1 :])
            if m is None:
                parts.append(("$", None))
                i += 1
                continue
            name, i = m.group(0), i + 1 + m.end()
        parts.append(("", int(name) if name.isdigit() else name))
    return parts
