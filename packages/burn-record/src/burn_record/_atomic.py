"""Atomic file writes: readers see the old file or the complete new one, never a partial write."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from burn_tensor.cache import fsync_dir


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> Path:
    """Call `write(fileobj)` on a temporary file beside `path`, fsync it, then rename it over
    `path`.

    The temporary file lives in the same directory so `os.replace` is a same-filesystem atomic
    rename. Its name is random and it is created with `O_EXCL`, so a file or symlink someone
    planted there is never written through: the create fails instead (and `os.replace` replaces
    a symlink at `path` itself, never its target).
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
    sweep_stale_temp_files(path.parent)
    # Host and pid in the name: a later write can tell a dead writer's leftover from a live one.
    tmp = path.with_name(f".{path.name}.{_HOST}-{os.getpid()}-{secrets.token_hex(6)}.tmp")
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
    fsync_dir(path.parent)
    return path


_HOST = hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
_OURS = re.compile(r"^\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]{12}\.tmp$")
# Temporary files of versions before the host-pid tag: no owner to ask, so only their age tells.
_UNTAGGED = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")
_UNTAGGED_MIN_AGE_S = 3600.0


def sweep_stale_temp_files(directory: str | os.PathLike) -> list[str]:
    """Remove the temporary files that killed writes left in `directory`; returns their names.

    A temporary file is `.<name>.<host>-<pid>-<hex>.tmp`. It is stale when it was made on this
    host by a process that no longer runs (a live writer's file, this process's included, is never
    touched). Files made on another host (a shared folder) are left alone: their pid means nothing
    here. Untagged `.<name>.<hex>.tmp` files of older versions are removed once they are an hour
    older than this process (no writer takes that long between two writes of one file). Called by
    `atomic_write` before every write, so leftovers go on the next save to that folder.

    Example:
        >>> import tempfile
        >>> sweep_stale_temp_files(tempfile.mkdtemp())
        []
    """
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(".tmp")):
            continue
        m = _OURS.match(name)
        if m is not None:
            if m["host"] != _HOST or _alive(int(m["pid"])):
                continue
        elif _UNTAGGED.match(name) is not None:
            try:
                age = _PROCESS_START - entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if age < _UNTAGGED_MIN_AGE_S:
                continue
        else:
            continue
        try:
            os.unlink(entry.path)
            removed.append(name)
        except OSError:  # gone already, or in use (Windows refuses to delete an open file)
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        # No signal-0 probe on Windows (os.kill would terminate the process); deleting a file
        # another process still has open fails there instead, which keeps a live writer's file.
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


_PROCESS_START = time.time()
