"""Burn's `burn_import::pytorch`: `PyTorchFileRecorder`, `LoadArgs`, `config_from_file`.

Example:
    >>> from burn_import.pytorch import PyTorchFileRecorder, LoadArgs
    >>> LoadArgs("model.pt").with_top_level_key("state_dict").top_level_key
    'state_dict'
"""

from ._adapt import LoadReport
from ._errors import RecordImportError, TensorMismatchError, UnsafePickleError
from ._functions import config_from_file, load_pytorch
from ._load_args import AdapterType, LoadArgs
from ._recorder import PyTorchFileRecorder

__all__ = [
    "AdapterType",
    "LoadArgs",
    "LoadReport",
    "PyTorchFileRecorder",
    "RecordImportError",
    "TensorMismatchError",
    "UnsafePickleError",
    "config_from_file",
    "load_pytorch",
]
