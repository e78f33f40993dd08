"""Verified cache files: each entry is written with its size and sha256, and checked before use.

An entry `<folder>/<name>` has a sidecar `<name>.sum` holding one line,
`burn-cache-v1 <name> <size> <sha256>`. Writers put the content in a random-named temporary file
made with `O_EXCL` beside it, `fsync` it, rename it into place, then write the sidecar the same
way. Readers check the sidecar's name, the file's size and its sha256 before handing anything on;
an entry that fails (truncated, bit-flipped, renamed or swapped with another entry, a sidecar
missing, a symlink) is deleted with its sidecar, so the caller rebuilds it. A cached binary is
native code loaded into the process: a bad one must never reach the loader, where a truncated
ELF or OpenCL binary kills the process (SIGBUS/SIGSEGV) instead of raising.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

MAGIC = "burn-cache-v1"
SUFFIX = ".sum"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def sidecar(path: Path) -> Path:
    """The file holding `path`'s name, size and sha256."""
    return path.with_name(path.name + SUFFIX)


def temp_file(path: Path, suffix: str = ".tmp") -> Path:
    """A new empty file beside `path` with a random name (`O_EXCL`, mode 0600, no symlink
    followed), for a writer -- or a compiler's `-o` -- to fill before `publish`."""
    path = Path(path)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}{suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o600)
        except FileExistsError:  # 2^-64: pick another name
            continue
        os.close(fd)
        return tmp


def _digest(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of the regular file `path`, read without following a symlink."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    with os.fdopen(fd, "rb") as f:
        h = hashlib.sha256()
        size = 0
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """`data` into `path` through a fsync'd random-named temporary file and a rename."""
    tmp = temp_file(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | _NOFOLLOW | _BINARY)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def publish(tmp: Path, path: Path) -> None:
    """Rename the finished file `tmp` (in `path`'s folder) to `path` and write its sidecar.

    The file is fsync'd first, so a crash leaves the old entry, the new one whole, or an entry
    whose sidecar does not match (which readers delete) -- never a torn file that verifies.
    """
    tmp, path = Path(tmp), Path(path)
    try:
        fd = os.open(tmp, os.O_RDONLY | _NOFOLLOW | _BINARY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        size, sha = _digest(tmp)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    write_atomic(sidecar(path), f"{MAGIC} {path.name} {size} {sha}\n".encode())
    fsync_dir(path.parent)


def write_verified(path: Path, data: bytes) -> None:
    """Store `data` as the verified entry `path` (see the module docstring)."""
    tmp = temp_file(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | _NOFOLLOW | _BINARY)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        _unlink(tmp)
        raise
    publish(tmp, path)


def _expected(path: Path) -> tuple[int, str] | None:
    try:
        fd = os.open(sidecar(path), os.O_RDONLY | _NOFOLLOW | _BINARY)
        with os.fdopen(fd, "rb") as f:
            line = f.read(512).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    fields = line.split()
    if len(fields) != 4 or fields[0] != MAGIC or fields[1] != path.name:
        return None
    size, sha = fields[2], fields[3]
    if not size.isdigit() or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        return None
    return int(size), sha


def check(path: Path) -> bool:
    """Whether the entry `path` is whole (its sidecar's name, size and sha256 match). An entry
    that exists but fails is deleted with its sidecar; a missing one just gives False."""
    path = Path(path)
    if not os.path.lexists(path):
        _unlink(sidecar(path))
        return False
    want = _expected(path)
    try:
        got = _digest(path) if want is not None else None
    except OSError:
        got = None
    if want is None or got != want:
        discard(path)
        return False
    return True


def read_verified(path: Path) -> bytes | None:
    """The content of the entry `path` if it is whole, else None (a bad entry is deleted)."""
    path = Path(path)
    if not os.path.lexists(path):
        _unlink(sidecar(path))
        return None
    want = _expected(path)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError:
        data = None
    if want is None or data is None or (len(data), hashlib.sha256(data).hexdigest()) != want:
        discard(path)
        return None
    return data


def discard(path: Path) -> None:
    """Delete the entry `path` and its sidecar (whatever is there)."""
    _unlink(Path(path))
    _unlink(sidecar(Path(path)))


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def fsync_dir(directory: Path) -> None:
    """Persist the renames in `directory` (after `os.replace`); best effort, as not every
    platform can open a directory (Windows)."""
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
