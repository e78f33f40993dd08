"""Cache files holding JSON: read with a shape check, written atomically.

A cache file is data another version (or a hand edit, or a crash of an older writer) may have
left in any shape. `read_json` hands on only a value its caller's `validate` accepts; anything
else -- unreadable, not UTF-8, not JSON, the wrong shape -- is ignored with one `CacheWarning`,
and the caller's next write replaces it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ._cache_dir import warn_once
from ._cache_store import write_atomic


def read_json(path: Path, validate: Callable[[object], str | None]):
    """The JSON value in `path`, or None when the file is missing or bad.

    Args:
        path: the cache file.
        validate: returns None for a value of the right shape, else what is wrong with it.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
        >>> write_json(p, {"a": 1})
        >>> read_json(p, lambda v: None if isinstance(v, dict) else "not an object")
        {'a': 1}
    """
    path = Path(path)
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        why = getattr(e, "strerror", None) or f"{type(e).__name__}: {e}"
        warn_once(f"burn cache: ignoring {path}: unreadable ({why}); it is rewritten on the next store")
        return None
    problem = validate(value)
    if problem is not None:
        warn_once(f"burn cache: ignoring {path}: {problem}; it is rewritten on the next store")
        return None
    return value


def write_json(path: Path, value) -> None:
    """`value` as JSON into `path`, atomically (fsync'd random-named temporary file, rename)."""
    write_atomic(Path(path), json.dumps(value, indent=1, sort_keys=True).encode("utf-8"))
