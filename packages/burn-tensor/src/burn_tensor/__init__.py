"""burn_tensor: the Tensor API, element types and the backend contract of burn-py.

Example:
    >>> from burn_tensor import Tensor
    >>> from burn_ndarray import NdArray
    >>> device = NdArray().device()
    >>> Tensor.from_data([[1.0, 2.0]], device).matmul(Tensor.ones([2, 1], device)).tolist()
    [[3.0]]
"""

from . import activation, backend, checks, grid, linalg, module, ops, quantization, signal
from ._autocast import AutocastPolicy, autocast, autocast_policy, half_dtype
from ._backend import Backend, op_table
from ._check_data import TensorZeroDivisionError
from ._data import Data, TensorData
from ._device import Device
from ._distribution import Distribution
from ._dtype import FLOAT_DTYPES, INT_DTYPES, Bool, DType, Float, Int, TensorKind
from ._errors import TensorCheckError
from ._ops_spec import REQUIRED as REQUIRED_OPS
from ._options import ConvOptions, ConvTransposeOptions, InterpolateOptions, UnfoldOptions
from ._options_grid import GridSampleOptions, GridSamplePaddingMode
from ._named import NamedDim, NamedTensor
from ._pad_mode import PadMode
from ._transaction import Transaction
from ._print import PrintOptions, set_print_options
from ._registry import (
    BackendError,
    BackendImportError,
    BackendNotInstalledError,
    BackendSpec,
    HalfSupport,
    NoDeviceError,
    available_backends,
    backend_table,
    default_backend_name,
    default_device,
    get_backend,
    add_backend_argument,
    resolve_backend,
    set_default_device,
)
from ._shape import Shape
from ._slice import s
from ._tensor import Tensor
from ._tensor_logic import DEFAULT_ATOL, DEFAULT_RTOL
from ._tolerance import Tolerance

__all__ = [
    "AutocastPolicy",
    "autocast",
    "autocast_policy",
    "half_dtype",
    "Backend",
    "BackendError",
    "BackendImportError",
    "BackendNotInstalledError",
    "BackendSpec",
    "HalfSupport",
    "Bool",
    "ConvOptions",
    "ConvTransposeOptions",
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "DType",
    "Data",
    "Device",
    "Distribution",
    "FLOAT_DTYPES",
    "Float",
    "INT_DTYPES",
    "Int",
    "GridSampleOptions",
    "GridSamplePaddingMode",
    "InterpolateOptions",
    "NamedDim",
    "NamedTensor",
    "NoDeviceError",
    "PadMode",
    "PrintOptions",
    "REQUIRED_OPS",
    "Shape",
    "Tensor",
    "TensorCheckError",
    "TensorZeroDivisionError",
    "TensorData",
    "TensorKind",
    "Transaction",
    "Tolerance",
    "UnfoldOptions",
    "activation",
    "available_backends",
    "backend",
    "backend_table",
    "checks",
    "default_backend_name",
    "default_device",
    "get_backend",
    "add_backend_argument",
    "resolve_backend",
    "grid",
    "linalg",
    "module",
    "op_table",
    "ops",
    "s",
    "set_default_device",
    "set_print_options",
    "signal",
]
