"""`from burn.prelude import *`: the names most programs use (Burn's `burn::prelude`).

Burn's prelude (v0.13 to v0.21) exports `Config`, `Module`, `nn`, and from `burn::tensor`:
`backend::Backend`, `Bool`, `Device`, `ElementConversion`, `Float`, `Int`, `Shape`, `Tensor`,
`TensorData` (`Data` up to 0.13, the first book's name) and `s`. All of them are here except the
Rust conversion traits (`ElementConversion`/`.elem()`, `ToElement`, `SliceArg`, `DeviceOps`),
which Python numbers and slices do not need. `Distribution` is added for `Tensor.random`.

Example:
    >>> from burn.prelude import *
    >>> from burn.backend import NdArray
    >>> device: Device = NdArray().device()
    >>> Tensor.from_data(Data([1.0, 2.0]).convert(), device).sum().into_scalar()
    3.0
"""

from burn_tensor import (
    Backend,
    Bool,
    Data,
    Device,
    Distribution,
    DType,
    Float,
    Int,
    Shape,
    Tensor,
    TensorData,
    s,
)

__all__ = [
    "Backend",
    "Bool",
    "DType",
    "Data",
    "Device",
    "Distribution",
    "Float",
    "Int",
    "Shape",
    "Tensor",
    "TensorData",
    "s",
]

try:  # Config, Module and nn come with burn-nn, when installed.
    import burn_nn as nn
    from burn_nn import Config, Module, config

    __all__ += ["Config", "Module", "config", "nn"]
except ImportError:
    pass
