"""burn_record: recorders, precision settings and file formats (Burn's `burn::record`).

Example:
    >>> import tempfile, os
    >>> from burn_record import CompactRecorder, ParamRecord, TensorData, apply_dtypes
    >>> item = {"linear": {"weight": ParamRecord("w0", TensorData([[1.0, 2.0]])), "bias": None}}
    >>> rec = CompactRecorder()                       # named msgpack, gzip, f16 floats / i16 ints
    >>> path = rec.record(item, os.path.join(tempfile.mkdtemp(), "model"))
    >>> path.name
    'model.mpk.gz'
    >>> loaded = rec.load(path)
    >>> loaded["linear"]["weight"].dtype              # stored dtype
    DType.F16
    >>> apply_dtypes(loaded, item)["linear"]["weight"].dtype   # the module's dtype
    DType.F32
"""

from ._atomic import atomic_write
from ._diff import RecordDiff, apply_dtypes, check_record, flatten, record_diff
from ._dtypes import DType, TensorData
from ._errors import (
    RecordCorruptedError,
    RecordDTypeError,
    RecordError,
    RecordFormatError,
    RecordMismatchError,
    RecordNotFoundError,
    RecordPrecisionError,
    RecordReadError,
    RecordVersionError,
    UnsupportedItemError,
)
from ._metadata import RECORD_VERSION
from ._mpk import max_objects
from ._param import ParamRecord
from ._record import Record, as_record
from ._recorder import BytesRecorder, FileRecorder, Recorder, as_recorder
from ._recorders import (
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    BinZstFileRecorder,
    CompactRecorder,
    DefaultFileRecorder,
    DefaultRecorder,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    NamedMpkZstFileRecorder,
    PrettyJsonFileRecorder,
    SensitiveCompactRecorder,
)
from ._settings import (
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    PrecisionSettings,
)

from ._tensors import convert_for_save as convert_precision

__all__ = [
    # recorders
    "Recorder",
    "FileRecorder",
    "BytesRecorder",
    "as_recorder",
    "atomic_write",
    "DefaultFileRecorder",
    "DefaultRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "NamedMpkZstFileRecorder",
    "BinFileRecorder",
    "BinGzFileRecorder",
    "BinZstFileRecorder",
    "JsonGzFileRecorder",
    "PrettyJsonFileRecorder",
    "BinBytesRecorder",
    "NamedMpkBytesRecorder",
    "CompactRecorder",
    "SensitiveCompactRecorder",
    # precision
    "PrecisionSettings",
    "DoublePrecisionSettings",
    "FullPrecisionSettings",
    "HalfPrecisionSettings",
    # items
    "Record",
    "as_record",
    "ParamRecord",
    "TensorData",
    "DType",
    "RECORD_VERSION",
    "max_objects",
    # module helpers
    "RecordDiff",
    "record_diff",
    "check_record",
    "apply_dtypes",
    "flatten",
    # errors
    "RecordError",
    "RecordFormatError",
    "RecordVersionError",
    "RecordCorruptedError",
    "RecordDTypeError",
    "RecordPrecisionError",
    "convert_precision",
    "RecordMismatchError",
    "RecordNotFoundError",
    "RecordReadError",
    "UnsupportedItemError",
]
