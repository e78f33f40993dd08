"""`burn.backend`: backends and decorators, imported lazily by name.

`burn.backend.NdArray`, `burn.backend.Autodiff`, `burn.backend.OpenCl`, `burn.backend.Cuda`,
`burn.backend.Fusion`; `default_device()` picks `BURN_BACKEND` or the best usable backend.
`python -m burn.backend` prints the table of installed backends.
`explain(backend_or_device, "float_add", *inputs)` says which implementation runs an op for given
inputs (tensors or `Spec(shape, dtype)`s) and why; every backend has it as `B.explain(op, ...)`.
"""

from __future__ import annotations

import importlib
import importlib.util

from burn_tensor import (
    Backend,
    BackendError,
    BackendImportError,
    BackendNotInstalledError,
    Device,
    NoDeviceError,
    available_backends,
    backend_table,
    default_device,
    get_backend,
    set_default_device,
)
from burn_tensor.backend import Explanation, Spec, explain

# class name -> (module, the pip extra that installs it)
_CLASSES = {
    "NdArray": ("burn_ndarray", "ndarray"),
    "Autodiff": ("burn_autodiff", "autodiff"),
    "OpenCl": ("burn_opencl", "opencl"),
    "Cuda": ("burn_cuda", "cuda"),
    "Fusion": ("burn_fusion", "fusion"),
}


def __getattr__(name: str):
    if name in _CLASSES:
        module, extra = _CLASSES[name]
        if importlib.util.find_spec(module) is None:
            package = module.replace("_", "-")
            raise BackendNotInstalledError(
                f"burn.backend.{name} needs the '{package}' package: pip install 'burn-py[{extra}]'"
            )
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'burn.backend' has no attribute {name!r}")


__all__ = [
    "Backend",
    "BackendError",
    "BackendImportError",
    "BackendNotInstalledError",
    "Device",
    "Explanation",
    "NoDeviceError",
    "Spec",
    "available_backends",
    "backend_table",
    "default_device",
    "explain",
    "get_backend",
    "set_default_device",
    *_CLASSES,
]
