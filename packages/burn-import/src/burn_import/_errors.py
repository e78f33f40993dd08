"""The errors of burn_import: one family, so a caller can write a single `except`.

Every failure caused by the bytes of a file (truncated, corrupted, hostile, unsupported) or by a
file that does not fit the module it is loaded into raises a `RecordImportError`. It derives from
`burn_record.RecordError` (so `except RecordError` covers imports too) and from `ValueError`.
"""

from __future__ import annotations

from burn_record import RecordError


class RecordImportError(RecordError, ValueError):
    """A weights file could not be read or does not fit the target module.

    Example:
        >>> from burn_import import SafetensorsFileRecorder, RecordImportError
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "w.safetensors"
        >>> _ = path.write_bytes(b"\\x10\\x00")
        >>> try:
        ...     SafetensorsFileRecorder().load(path)
        ... except RecordImportError as err:
        ...     print(str(err).split(":")[-1].strip())
        file is 2 bytes, shorter than the 8-byte header length
    """


class UnsafePickleError(RecordImportError):
    """A pickle names a global (a callable or class) outside the allowlist; nothing was run.

    Attributes:
        global_name: the refused global as `"module.name"` (e.g. `"os.system"`).

    Example:
        >>> from burn_import._unpickler import safe_loads
        >>> try:
        ...     safe_loads(b"cos\\nsystem\\n(S'echo hi'\\ntR.")
        ... except UnsafePickleError as err:
        ...     print(err.global_name)
        os.system
    """

    def __init__(self, global_name: str, message: str):
        self.global_name = global_name
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.global_name, str(self)))


class TensorMismatchError(RecordImportError):
    """Tensors of the file do not fit the module: missing keys, wrong shapes or dtypes.

    The message names every offending key (Burn path and source key), not just the first.

    Attributes:
        problems: one line per problem, `"<burn path> (from <source key>): <what>"`.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        lines = [f"  {p}" for p in self.problems]
        super().__init__(
            f"the weights do not fit the module ({len(lines)} problem(s)):\n" + "\n".join(lines)
        )

    def __reduce__(self):
        return (type(self), (self.problems,))
