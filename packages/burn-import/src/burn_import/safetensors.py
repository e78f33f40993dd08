"""Burn's `burn_import::safetensors`: `SafetensorsFileRecorder`, `LoadArgs`, `AdapterType`.

Example:
    >>> from burn_import.safetensors import SafetensorsFileRecorder
    >>> SafetensorsFileRecorder().file_extension()
    'safetensors'
"""

from ._adapt import LoadReport
from ._errors import RecordImportError, TensorMismatchError
from ._functions import load_safetensors, safetensors_metadata, save_safetensors
from ._load_args import AdapterType, LoadArgs
from ._recorder import SafetensorsFileRecorder

__all__ = [
    "AdapterType",
    "LoadArgs",
    "LoadReport",
    "RecordImportError",
    "SafetensorsFileRecorder",
    "TensorMismatchError",
    "load_safetensors",
    "safetensors_metadata",
    "save_safetensors",
]
