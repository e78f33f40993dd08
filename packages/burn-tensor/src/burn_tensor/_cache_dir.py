"""Where Burn's on-disk caches live, and whether a folder there may be trusted.

Every cache folder is `cache_root() / <parts>`. A folder is trusted only when `lstat` shows a
real directory (not a symlink) owned by this user that neither group nor others can write: a
cached kernel is native code that this process loads, so a folder another user can write is a
folder another user runs code from. Folders this module creates are created 0700. A folder that
fails the check is not used (one `CacheWarning` names it and why); callers then run without that
cache -- there is no shared fallback location.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
import warnings
from pathlib import Path

ENV = "BURN_CACHE_DIR"
#: permission bits of every folder this module creates
DIR_MODE = 0o700


class CacheWarning(UserWarning):
    """A cache folder or file was not used (unsafe, unreadable or malformed); Burn runs on
    without it. Each distinct message is warned once per process."""


_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def warn_once(message: str) -> None:
    """Warn `message` as a `CacheWarning`, once per process."""
    with _WARNED_LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    warnings.warn(message, CacheWarning, stacklevel=3)


def cache_root() -> Path:
    """`$BURN_CACHE_DIR`, else `$XDG_CACHE_HOME/burn`, else `~/.cache/burn` (not checked)."""
    base = os.environ.get(ENV)
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".cache") / "burn"


def unsafe_reason(path: Path) -> str | None:
    """Why the existing folder `path` may not be trusted (None: it may). Checked with `lstat`."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot stat it ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    if not os.access(path, os.W_OK | os.X_OK):
        return "this user cannot write it"
    return None


def _make_or_check(path: Path) -> str | None:
    """Create `path` 0700 if it is missing, else check it; returns why it is unusable."""
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return unsafe_reason(path)
    except OSError as e:
        return f"cannot create it ({e.strerror})"
    try:
        os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask; never wider than 0700
    except OSError as e:
        return f"cannot set its mode ({e.strerror})"
    return unsafe_reason(path)


def cache_dir(*parts: str) -> Path | None:
    """The trusted cache folder `cache_root()/parts...`, created if missing; None if unusable.

    Missing parents of the root are created 0700 too (existing ones above the root, such as
    `~/.cache` or `/tmp`, are not Burn's and are left as they are). The root and every folder
    below it must pass `unsafe_reason`; the first that does not makes the whole cache unusable,
    with one `CacheWarning`.

    Example:
        >>> import os, tempfile
        >>> os.environ["BURN_CACHE_DIR"] = tempfile.mkdtemp()
        >>> d = cache_dir("example")
        >>> oct(d.stat().st_mode & 0o777)
        '0o700'
    """
    root = cache_root()
    missing = []
    for p in [root, *root.parents]:
        if os.path.lexists(p):
            break
        missing.append(p)
    for p in reversed(missing[1:]):  # the root's own missing parents, outermost first
        try:
            os.mkdir(p, DIR_MODE)
        except FileExistsError:
            pass  # made meanwhile by another process
        except OSError as e:
            warn_once(f"burn cache: not using {root}: cannot create {p} ({e.strerror}); "
                      "running without this cache")
            return None
    path = root
    for folder in [root, *(root.joinpath(*parts[: i + 1]) for i in range(len(parts)))]:
        why = _make_or_check(folder)
        if why is not None:
            warn_once(f"burn cache: not using {folder}: {why}; running without this cache")
            return None
        path = folder
    return path


_PRIVATE: dict[str, Path] = {}
_PRIVATE_LOCK = threading.Lock()


def process_dir(name: str) -> Path:
    """A fresh private folder for this process only (`tempfile.mkdtemp`, 0700, random name),
    removed at exit: where a cache's builds go when `cache_dir` gives None."""
    with _PRIVATE_LOCK:
        path = _PRIVATE.get(name)
        if path is None:
            path = Path(tempfile.mkdtemp(prefix=f"burn-{name}-"))
            atexit.register(shutil.rmtree, path, True)
            _PRIVATE[name] = path
        return path
