"""Downloading a file into a cache directory, verified by checksum."""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path


class DownloadError(OSError):
    """A dataset file could not be downloaded (offline, unreachable, or bad checksum).

    Example:
        >>> issubclass(DownloadError, OSError)
        True
    """


def md5_of(path: str | os.PathLike[str]) -> str:
    """Hex MD5 of a file, read in chunks.

    MD5 is what the MNIST distribution publishes; it guards against truncated or corrupted
    downloads, not against tampering.
    """
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_file(
    url: str, dest: str | os.PathLike[str], md5: str | None, timeout: float = 30.0
) -> Path:
    """Download `url` to `dest` atomically; with `md5`, verify it before moving into place.

    Raises:
        DownloadError: on any network error or checksum mismatch (no partial file is left).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, ValueError) as err:
        tmp.unlink(missing_ok=True)
        reason = getattr(err, "reason", err)
        raise DownloadError(f"could not download {url}: {reason}") from err
    if md5 is not None:
        actual = md5_of(tmp)
        if actual != md5:
            tmp.unlink(missing_ok=True)
            raise DownloadError(f"checksum mismatch for {url}: expected md5 {md5}, got {actual}")
    os.replace(tmp, dest)
    return dest
