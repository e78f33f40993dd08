"""`from burn.prelude import *`: the names most programs use (Burn's `burn::prelude`)."""

from burn_tensor import Bool, Device, Distribution, DType, Float, Int, Shape, Tensor, TensorData, s

__all__ = [
    "Bool",
    "DType",
    "Device",
    "Distribution",
    "Float",
    "Int",
    "Shape",
    "Tensor",
    "TensorData",
    "s",
]

try:  # Module and Config come with burn-nn, when installed.
    from burn_nn import Module, config  # noqa: F401

    __all__ += ["Module", "config"]
except ImportError:
    pass
