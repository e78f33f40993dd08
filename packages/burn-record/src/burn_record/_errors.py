"""The `RecordError` family: every failure a recorder reports on purpose.

Loading untrusted or damaged bytes must only ever raise one of these, so callers can write a single
`except RecordError`. Several subclasses also derive from the matching builtin (`FileNotFoundError`,
`TypeError`, `ValueError`) so code written against plain Python exceptions keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence


class RecordError(Exception):
    """Base class of every error raised by `burn_record`.

    Example:
        >>> from burn_record import BinBytesRecorder, RecordError
        >>> try:
        ...     BinBytesRecorder().load(b"not a record")
        ... except RecordError as err:
        ...     print(type(err).__name__)
        RecordFormatError
    """


class RecordFormatError(RecordError, ValueError):
    """The data is not a record in this recorder's format (wrong recorder, unknown format)."""


class RecordVersionError(RecordFormatError):
    """The record was written with a format version this build cannot read (e.g. a newer one)."""


class RecordCorruptedError(RecordError, ValueError):
    """The record is truncated, fails its checksum, or its structure is malformed."""


class RecordDTypeError(RecordError, ValueError):
    """A tensor has a dtype that is unknown, or cannot be converted to the requested one."""


class RecordPrecisionError(RecordError, ValueError):
    """Saving would change values: an int tensor does not fit the precision settings' int type."""


class UnsupportedItemError(RecordError, TypeError):
    """The item holds a value a record cannot represent (only dict/list/tuple/scalars/tensors)."""


class RecordNotFoundError(RecordError, FileNotFoundError):
    """The record file does not exist."""


class RecordReadError(RecordError, OSError):
    """The record file exists but cannot be read (a directory, no permission, an I/O error)."""


class RecordMismatchError(RecordError, ValueError):
    """A loaded record does not fit the expected structure.

    The message names every missing, unexpected and mis-shaped key path, not just the first.

    Attributes:
        missing: key paths the module expects but the record lacks.
        unexpected: key paths in the record the module does not have.
        mis_shaped: `(path, expected_shape, loaded_shape)`; a shape is `None` where that side is
        not a
            tensor.

    Example:
        >>> err = RecordMismatchError(["fc.bias"], [], [("fc.weight", (2, 3), (3, 2))])
        >>> print(err)
        record does not match the expected structure:
          missing (1): fc.bias
          mis-shaped (1): fc.weight: expected [2, 3], got [3, 2]
          hint: fc.weight holds the transpose of the expected shape, as a PyTorch Linear weight ([out, in]) read without its module: load the file with `target=model` (e.g. `PyTorchFileRecorder().load(args, device, target=model)`), which adapts it to Burn's [in, out]
    """

    def __init__(
        self,
        missing: Sequence[str],
        unexpected: Sequence[str],
        mis_shaped: Sequence[tuple[str, tuple[int, ...] | None, tuple[int, ...] | None]],
    ):
        self.missing = list(missing)
        self.unexpected = list(unexpected)
        self.mis_shaped = list(mis_shaped)
        super().__init__(self._message())

    def _message(self) -> str:
        lines = ["record does not match the expected structure:"]
        if self.missing:
            lines.append(f"  missing ({len(self.missing)}): " + ", ".join(self.missing))
        if self.unexpected:
            lines.append(f"  unexpected ({len(self.unexpected)}): " + ", ".join(self.unexpected))
        if self.mis_shaped:
            parts = [f"{p}: expected {_fmt(e)}, got {_fmt(g)}" for p, e, g in self.mis_shaped]
            lines.append(f"  mis-shaped ({len(parts)}): " + "; ".join(parts))
            flipped = [p for p, e, g in self.mis_shaped if _transposed(e, g)]
            if flipped:
                lines.append(
                    f"  hint: {', '.join(flipped)} "
                    f"{'holds' if len(flipped) == 1 else 'hold'} the transpose of the expected "
                    "shape, as a PyTorch Linear weight ([out, in]) read without its module: load "
                    "the file with `target=model` (e.g. `PyTorchFileRecorder().load(args, "
                    "device, target=model)`), which adapts it to Burn's [in, out]"
                )
        return "\n".join(lines)

    def __reduce__(self):
        return (type(self), (self.missing, self.unexpected, self.mis_shaped))


def _transposed(expected, got) -> bool:
    """A 2-D tensor whose shape is the expected one reversed (and not square)."""
    return (
        expected is not None
        and got is not None
        and len(expected) == 2
        and tuple(got) == tuple(expected)[::-1]
        and expected[0] != expected[1]
    )


def _fmt(shape: tuple[int, ...] | None) -> str:
    return "a non-tensor value" if shape is None else str(list(shape))
