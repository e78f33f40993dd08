"""How much memory reading a weights file may cost, proportional to the file's own size.

A `.pt` file can describe far more than it holds: a pickle builds objects from one-byte opcodes,
shared references make a tree out of a small graph, zero strides and overlapping views read one
storage many times. Each of those is charged to a `Budget` of `FLOOR + ratio x file size` bytes
before anything is allocated for it, and refused with `RecordImportError` once spent, so a
hostile file costs at most a bounded multiple of its size, never gigabytes from kilobytes.

The ratio (default 2) is what an honest file needs: a `bfloat16` file widens to f32 (2x), and a
weight tied to another (the same storage saved under two names) is materialized once per name
(at most 2x). `BURN_IMPORT_MAX_RATIO` raises it for files that legitimately expand more, for
instance one storage viewed by many overlapping tensors.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._errors import RecordImportError

# Every file may spend this much whatever its size, so small files never meet the ratio; small
# enough that a refused file stays well inside 64 MiB plus twice its size.
FLOOR = 32 << 20
DEFAULT_RATIO = 2
ENV = "BURN_IMPORT_MAX_RATIO"


def ratio() -> int:
    """The budget's bytes per file byte: `BURN_IMPORT_MAX_RATIO`, or `DEFAULT_RATIO`.

    Example:
        >>> ratio()
        2
    """
    value = os.environ.get(ENV, "").strip()
    if not value:
        return DEFAULT_RATIO
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}")
    return int(value)


class Budget:
    """Bytes a reader may still spend on one kind of expansion of one file.

    Args:
        file_size: bytes of the file (or of the pickle, for a bare one).
        what: what is charged, for the error (e.g. `"materialized tensors"`).

    Example:
        >>> b = Budget(0, "objects")
        >>> b.charge(1 << 20, "w.pt: x")
        >>> b.charge(64 << 20, "w.pt: y")
        Traceback (most recent call last):
        ...
        burn_import._errors.RecordImportError: w.pt: y: the objects would take more than ...
    """

    def __init__(self, file_size: int, what: str):
        self.file_size = max(0, int(file_size))
        self.ratio = ratio()
        self.limit = FLOOR + self.ratio * self.file_size
        self.spent = 0
        self.what = what

    def charge(self, nbytes: int, where: str) -> None:
        """Spend `nbytes`, or raise `RecordImportError` naming `where` (the file and the thing
        charged) if that exceeds the budget."""
        self.spent += nbytes
        if self.spent > self.limit:
            self.refuse(where)

    def refuse(self, where: str) -> None:
        """Raise the error of an exceeded budget (for hot loops that add to `spent` themselves)."""
        raise RecordImportError(
            f"{where}: the {self.what} would take more than {self.limit} bytes "
            f"({FLOOR >> 20} MiB + {self.ratio} x the {self.file_size}-byte file); a file "
            f"cannot honestly expand that much (set {ENV} to allow a larger ratio)"
        )


def empty(shape: tuple[int, ...], dtype: Any, key: str) -> np.ndarray:
    """`np.empty(shape)` for a zero-element shape, or `RecordImportError` naming `key` when
    numpy cannot represent the shape (a zero dim beside dims whose product overflows).

    Example:
        >>> empty((0, 3), np.float32, "w").shape
        (0, 3)
        >>> empty((0, 2**62, 2**62), np.float32, "w")
        Traceback (most recent call last):
        ...
        burn_import._errors.RecordImportError: w: shape [0, 4611686018427387904, ...
    """
    try:
        return np.empty(shape, dtype)
    except (ValueError, OverflowError, MemoryError) as err:
        raise RecordImportError(
            f"{key}: shape {list(shape)} has no elements but its other dims are too large for "
            f"any array ({type(err).__name__}: {err})"
        ) from None
