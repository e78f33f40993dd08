"""A checkpoint is one unit: the model, optimizer and scheduler records of an epoch, committed by
a marker written last.

Layout (the book's file names, plus the marker):

    checkpoint/model-N.<ext>  optim-N.<ext>  scheduler-N.<ext>  complete-N.json

Each record is written atomically (burn_record: temp file + rename). The marker
`complete-N.json`, written atomically after the three, lists their names, sizes and SHA-256. An
epoch is complete when its marker exists and every file it lists is there with that size and
hash. A process killed while saving leaves at most records without a
marker: never offered, never loaded, overwritten when the epoch is saved again and removed once a
later epoch is committed. Deleting removes the marker first, so a kill mid-delete leaves an
incomplete epoch, never a marker that lies.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from burn_record import PrettyJsonFileRecorder, RecordError

from ._file import CheckpointerError, FileCheckpointer

KINDS = ("model", "optim", "scheduler")
_MARKER = "complete"
_FORMAT = "burn-py checkpoint unit 1"
_EPOCH = re.compile(r"^(?P<kind>model|optim|scheduler|complete)-(?P<epoch>\d+)\.")


class CheckpointUnit:
    """Saves, verifies, lists and deletes whole checkpoints in one directory.

    Args:
        recorder: the file recorder of the three records (`CompactRecorder()`, ...).
        directory: `<artifact_dir>/checkpoint`.

    Example:
        >>> import tempfile
        >>> from burn_record import NamedMpkFileRecorder
        >>> unit = CheckpointUnit(NamedMpkFileRecorder(), tempfile.mkdtemp())
        >>> unit.save(1, {"w": 1}, {"optim": 2}, 3)
        >>> unit.complete_epochs(), unit.latest_complete()
        ([1], 1)
        >>> unit.load(1, "scheduler")
        3
    """

    def __init__(self, recorder: Any, directory: Any) -> None:
        self.directory = Path(directory)
        self.files = {k: FileCheckpointer(recorder, self.directory, k) for k in KINDS}
        self._marker_recorder = PrettyJsonFileRecorder()

    # -- writing -------------------------------------------------------------------------------
    def marker_path(self, epoch: int) -> Path:
        return Path(self._marker_recorder.file_path(self.directory / f"{_MARKER}-{epoch}"))

    def save(self, epoch: int, model_record: Any, optim_record: Any, scheduler_record: Any) -> None:
        """Write the three records, then commit them with the marker (the last write)."""
        # A re-save (a resumed run) first un-commits the old unit: a kill midway must not leave
        # the old marker beside a mix of old and new records.
        self.marker_path(epoch).unlink(missing_ok=True)
        records = {"model": model_record, "optim": optim_record, "scheduler": scheduler_record}
        listed = {}
        for kind in KINDS:
            path = self.files[kind].save(epoch, records[kind])
            listed[kind] = {"name": path.name, "bytes": path.stat().st_size, "sha256": _sha(path)}
        self._marker_recorder.record(
            {"format": _FORMAT, "epoch": int(epoch), "files": listed},
            self.directory / f"{_MARKER}-{epoch}",
        )
        self.remove_incomplete(before=epoch)

    def delete(self, epoch: int) -> None:
        """Remove a checkpoint: its marker first, then its records."""
        self.marker_path(epoch).unlink(missing_ok=True)
        for c in self.files.values():
            c.delete(epoch)

    def remove_incomplete(self, before: int | None = None) -> list[int]:
        """Delete the records of epochs without a marker (all, or those before `before`):
        leftovers of a killed save or delete. Returns the epochs cleaned.

        Only the learner that owns the directory calls this (after a commit, and when it
        resumes): nothing else is writing those records then.
        """
        cleaned = []
        for e in self.epochs_on_disk():
            if (before is None or e < before) and not self.marker_path(e).exists():
                for c in self.files.values():
                    c.delete(e)
                cleaned.append(e)
        return cleaned

    # -- reading -------------------------------------------------------------------------------
    def epochs_on_disk(self) -> list[int]:
        """Every epoch with any checkpoint file (complete or not), ascending."""
        if not self.directory.is_dir():
            return []
        found = set()
        for p in self.directory.iterdir():
            m = _EPOCH.match(p.name)
            if m is not None:
                found.add(int(m["epoch"]))
        return sorted(found)

    def problem(self, epoch: int, verify_hashes: bool = True) -> str | None:
        """Why epoch `epoch` is not a complete checkpoint, or None when it is."""
        marker = self.marker_path(epoch)
        if not marker.exists():
            present = [k for k in KINDS if self.files[k].exists(epoch)]
            what = f"only {', '.join(present)} present" if present else "no files"
            return f"no {marker.name} marker ({what}: the save was interrupted or never made)"
        try:
            item = self._marker_recorder.load(marker)
            listed = item["files"]
            if item.get("format") != _FORMAT or int(item["epoch"]) != epoch:
                return f"{marker.name} is not a checkpoint marker of epoch {epoch}"
        except (RecordError, OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            # a marker we cannot read commits nothing
            return f"{marker.name} cannot be read: {e}"
        for kind in KINDS:
            entry = listed.get(kind) if isinstance(listed, dict) else None
            if not isinstance(entry, dict):
                return f"{marker.name} lists no {kind} record"
            path = self.directory / str(entry.get("name"))
            if not path.is_file():
                return f"{kind} record {path.name} is missing"
            size = path.stat().st_size
            if size != entry.get("bytes"):
                return f"{kind} record {path.name} has {size} bytes, not {entry.get('bytes')}"
            if verify_hashes and _sha(path) != entry.get("sha256"):
                return f"{kind} record {path.name} does not match its SHA-256 in {marker.name}"
        return None

    def complete_epochs(self) -> list[int]:
        """The epochs whose checkpoint is complete: marker present, every listed file there with
        its size and SHA-256 (reads the records once; a checkpoint folder holds a few epochs)."""
        return [e for e in self.epochs_on_disk() if self.problem(e) is None]

    def latest_complete(self) -> int | None:
        """The newest epoch whose checkpoint is complete, hashes verified; None if there is none."""
        for e in reversed(self.epochs_on_disk()):
            if self.problem(e) is None:
                return e
        return None

    def require_complete(self, epoch: int) -> None:
        """Raise `CheckpointerError` unless epoch `epoch` is a complete checkpoint."""
        why = self.problem(epoch)
        if why is not None:
            complete = self.complete_epochs()
            raise CheckpointerError(
                f"checkpoint {epoch} in {self.directory} is incomplete and will not be loaded: "
                f"{why}. Complete checkpoints: {complete or 'none'}"
            )

    def load(self, epoch: int, kind: str, target: Any = None) -> Any:
        return self.files[kind].restore(epoch, target)


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
