"""`FileCheckpointer`: one record per epoch as `<directory>/<name>-<epoch>.<ext>`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class CheckpointerError(RuntimeError):
    """A checkpoint could not be found, written or read back."""


class FileCheckpointer:
    """Saves and restores records with a file recorder (Burn's `FileCheckpointer`).

    Args:
        recorder: a burn_record file recorder (`record(item, path)`, `load(path)`,
            `file_path(path)`), e.g. `CompactRecorder()`.
        directory: where the files go (`<artifact_dir>/checkpoint`).
        name: file prefix: `model`, `optim` or `scheduler`.

    Example:
        >>> import tempfile
        >>> from burn_record import NamedMpkFileRecorder
        >>> c = FileCheckpointer(NamedMpkFileRecorder(), tempfile.mkdtemp(), "optim")
        >>> c.save(3, {"lr": 0.5}).name
        'optim-3.mpk'
        >>> c.restore(3)
        {'lr': 0.5}
    """

    def __init__(self, recorder: Any, directory: str | os.PathLike, name: str) -> None:
        self.recorder = recorder
        self.directory = Path(directory)
        self.name = name

    def path(self, epoch: int) -> Path:
        base = self.directory / f"{self.name}-{epoch}"
        to_file = getattr(self.recorder, "file_path", None)
        return Path(to_file(base)) if callable(to_file) else base

    def save(self, epoch: int, record: Any) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        # burn_record writes atomically (temp file + rename): a stop mid-write leaves the
        # previous checkpoint intact rather than a truncated file.
        return Path(self.recorder.record(record, self.directory / f"{self.name}-{epoch}"))

    def restore(self, epoch: int, target: Any = None) -> Any:
        path = self.path(epoch)
        if not path.exists():
            raise CheckpointerError(
                f"no {self.name} checkpoint for epoch {epoch}: {path} is missing"
            )
        if target is not None:
            return self.recorder.load(path, target=target)
        return self.recorder.load(path)

    def delete(self, epoch: int) -> None:
        self.path(epoch).unlink(missing_ok=True)

    def exists(self, epoch: int) -> bool:
        return self.path(epoch).exists()
