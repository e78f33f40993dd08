"""Every name this package takes from burn_tensor, in one place.

burn_tensor's extension API is being made public under new names; private imports (the option
records' module) live only here so the switch happens in one file.
"""

from __future__ import annotations

from burn_tensor import (
    Backend,
    BackendSpec,
    HalfSupport,
    ConvOptions,
    ConvTransposeOptions,
    Device,
    DType,
    InterpolateOptions,
    NoDeviceError,
    TensorData,
    UnfoldOptions,
)

__all__ = [
    "Backend",
    "BackendSpec",
    "HalfSupport",
    "ConvOptions",
    "ConvTransposeOptions",
    "DType",
    "Device",
    "InterpolateOptions",
    "NoDeviceError",
    "TensorData",
    "UnfoldOptions",
]
