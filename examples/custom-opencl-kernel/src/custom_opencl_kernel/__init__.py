"""The Burn Book's "Custom WGPU Kernel" in burn-py, on the OpenCL backend.

Example:
    >>> from burn_opencl import OpenCl
    >>> from burn_tensor import Tensor
    >>> from custom_opencl_kernel import matmul_add_relu_custom
    >>> d = OpenCl("cpu").device()
    >>> lhs = Tensor.from_data([[[1.0, -2.0]]], d)
    >>> rhs = Tensor.from_data([[[1.0], [1.0]]], d)
    >>> matmul_add_relu_custom(lhs, rhs, Tensor.from_data([[[0.5]]], d)).tolist()
    [[[0.0]]]
"""

from .backward import matmul_add_relu_custom, matmul_add_relu_reference
from .forward import FusedMatmulAddRelu, fused_matmul_add_relu, fused_matmul_add_relu_primitive

__all__ = [
    "FusedMatmulAddRelu",
    "fused_matmul_add_relu",
    "fused_matmul_add_relu_primitive",
    "matmul_add_relu_custom",
    "matmul_add_relu_reference",
]
