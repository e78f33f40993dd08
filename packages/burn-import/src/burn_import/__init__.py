"""burn_import: PyTorch `.pt` and safetensors weights into burn-py modules, without torch.

Burn's `burn_import::pytorch` and `burn_import::safetensors` (the Burn Book's "Import PyTorch
Model" chapter). A `.pt` file is a pickle; it is read by a restricted unpickler that refuses every
global outside a small tensor-rebuild allowlist, so loading never runs the file's code.

Example:
    >>> import pathlib
    >>> from burn_ndarray import NdArray
    >>> from burn_nn import Conv2dConfig
    >>> from burn_record import FullPrecisionSettings
    >>> device = NdArray().device()
    >>> path = pathlib.Path(__file__).parents[2] / "tests/fixtures/pt/conv2d.pt"
    >>> conv = Conv2dConfig([2, 4], [3, 3]).init(device)
    >>> args = LoadArgs(path).with_key_remap(r"^conv\\.", "")
    >>> record = PyTorchFileRecorder(FullPrecisionSettings).load(args, device, target=conv)
    >>> conv.load_record(record).weight.val().dims()
    [4, 2, 3, 3]
"""

from . import pytorch, safetensors
from ._adapt import LoadReport
from ._errors import RecordImportError, TensorMismatchError, UnsafePickleError
from ._functions import (
    config_from_file,
    load_pytorch,
    load_safetensors,
    safetensors_metadata,
    save_safetensors,
)
from ._load_args import AdapterType, LoadArgs, compile_remap
from ._recorder import PyTorchFileRecorder, SafetensorsFileRecorder

__all__ = [
    "AdapterType",
    "LoadArgs",
    "LoadReport",
    "PyTorchFileRecorder",
    "RecordImportError",
    "SafetensorsFileRecorder",
    "TensorMismatchError",
    "UnsafePickleError",
    "compile_remap",
    "config_from_file",
    "load_pytorch",
    "load_safetensors",
    "pytorch",
    "safetensors",
    "safetensors_metadata",
    "save_safetensors",
]
