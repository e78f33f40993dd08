"""Where downloaded and converted datasets are stored."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "BURN_DATASET_CACHE_DIR"


def default_cache_dir() -> Path:
    """The cache directory for datasets: `$BURN_DATASET_CACHE_DIR`, else the XDG cache.

    Burn uses `~/.cache/burn-dataset`; we honour `XDG_CACHE_HOME` first because that is what the
    rest of the Python ecosystem (pip, Hugging Face) does, and the env var lets CI point every
    dataset at a scratch directory.

    Example:
        >>> isinstance(default_cache_dir(), Path)
        True
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "burn-dataset"
