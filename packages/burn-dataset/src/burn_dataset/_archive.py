"""Datasets shipped as one `.tgz`: download once into the cache, extract safely, reuse.

Burn's CIFAR and AG News sources unpack an archive into `~/.cache/burn-dataset`; here the same,
with the house rules: the download is checked (MD5 when published) and atomic, the extraction
refuses members that would land outside the cache (tarfile's `data` filter) and appears all at
once (extracted beside, then renamed), and offline a `DownloadError` names the URL and where to
put the file by hand.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from burn_dataset._errors import DatasetError
from burn_dataset.vision._download import DownloadError, download_file


def ensure_extracted(
    root: Path, folder: str, url: str, archive: str, md5: str | None, what: str
) -> Path:
    """`root/folder`, downloading `url` to `root/archive` and extracting it if needed.

    Args:
        root: the cache directory holding the archive and its extracted folder.
        folder: the top folder the archive extracts to (e.g. `cifar-10-batches-py`).
        url: where the archive is published.
        archive: its file name in `root`.
        md5: its published MD5 (None: not checked).
        what: the dataset's name, for messages.
    """
    root = Path(root)
    target = root / folder
    if target.is_dir():
        return target
    path = root / archive
    if not path.is_file():
        try:
            download_file(url, path, md5, timeout=60.0)
        except DownloadError as err:
            raise DownloadError(
                f"{what}: {target} is not there and {url} could not be downloaded (are you "
                f"offline?): {err}. Download {url} by hand into {root} (it is extracted on the "
                "next use), or pass the folder that holds the extracted data."
            ) from None
    extract_tar(path, root, folder)
    return target


def extract_tar(path: Path, root: Path, folder: str) -> None:
    """Extract `folder/` of the tar archive at `path` into `root`, all or nothing."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder}.", dir=root))
    try:
        try:
            with tarfile.open(path) as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError, EOFError) as err:
            raise DatasetError(f"{path}: cannot extract the archive ({err})") from None
        if not (tmp / folder).is_dir():
            found = sorted(p.name for p in tmp.iterdir())
            raise DatasetError(f"{path}: expected a top folder {folder}/, found {found}")
        os.replace(tmp / folder, root / folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
