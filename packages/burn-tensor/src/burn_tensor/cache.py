"""Burn's on-disk caches, shared by the backends (compiled kernels, autotune winners).

- `cache_dir(*parts)`: the trusted folder `$BURN_CACHE_DIR/parts` (else `$XDG_CACHE_HOME/burn`,
  else `~/.cache/burn`), created 0700; None when a folder there is a symlink, not owned by this
  user, or writable by group or others (one `CacheWarning`). `process_dir(name)`: a fresh
  private folder for this process, for builds that have no trusted cache.
- `write_verified` / `publish` / `check` / `read_verified` / `discard`: cache entries stored with
  their size and sha256 and checked before use; a bad entry is deleted, never handed on.
- `read_json` / `write_json`: cache JSON checked for shape; a bad file is ignored with one
  `CacheWarning` and replaced by the next write.

Example:
    >>> import os, tempfile
    >>> from burn_tensor import cache
    >>> os.environ["BURN_CACHE_DIR"] = tempfile.mkdtemp()
    >>> d = cache.cache_dir("doc")
    >>> cache.write_verified(d / "k.bin", b"kernel")
    >>> cache.read_verified(d / "k.bin")
    b'kernel'
"""

from ._cache_dir import (
    DIR_MODE,
    ENV,
    CacheWarning,
    cache_dir,
    cache_root,
    process_dir,
    unsafe_reason,
    warn_once,
)
from ._cache_json import read_json, write_json
from ._cache_store import (
    check,
    discard,
    fsync_dir,
    publish,
    read_verified,
    sidecar,
    temp_file,
    write_atomic,
    write_verified,
)

__all__ = [
    "DIR_MODE",
    "ENV",
    "CacheWarning",
    "cache_dir",
    "cache_root",
    "check",
    "discard",
    "fsync_dir",
    "process_dir",
    "publish",
    "read_json",
    "read_verified",
    "sidecar",
    "temp_file",
    "unsafe_reason",
    "warn_once",
    "write_atomic",
    "write_json",
    "write_verified",
]
