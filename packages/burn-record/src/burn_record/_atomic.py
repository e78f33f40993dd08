"""Atomic file writes: readers see the old file or the complete new one, never a partial write."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> Path:
    """Call `write(fileobj)` on a temporary file beside `path`, fsync it, then rename it over
    `path`.

    The temporary file lives in the same directory so `os.replace` is a same-filesystem atomic
    rename.
    If `write` (or anything up to the rename) raises, the temporary file is removed and `path` is
    untouched. Parent directories are created, as Burn's file recorders do.

    Example:
        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> atomic_write(os.path.join(d, "x.bin"), lambda f: f.write(b"hi")).read_bytes()
        b'hi'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # os.open with 0o666 lets the umask decide the final permissions, like a plain open() would
    # (tempfile.mkstemp would leave the record readable by its owner only).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)
    return path


def _fsync_dir(directory: Path) -> None:
    # Persist the rename itself; not possible on every platform (Windows), so best effort.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
