"""`DatasetError`: a dataset file or item that cannot be read as stored."""

from __future__ import annotations


class DatasetError(ValueError):
    """A dataset's file is damaged or not what it claims: the message names the file and the
    row (or item) concerned. A `ValueError` (a bad stored value), never a `LookupError` or
    `IndexError`, so `except IndexError` around indexing does not swallow damage.

    Example:
        >>> raise DatasetError("data.db, split 'train', row 3: checksum mismatch")
        Traceback (most recent call last):
        ...
        burn_dataset._errors.DatasetError: data.db, split 'train', row 3: checksum mismatch
    """
