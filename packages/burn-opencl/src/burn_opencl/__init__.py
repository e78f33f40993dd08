"""burn_opencl: the OpenCL backend of burn-py -- own OpenCL C kernels, on pyopencl.

Runs on GPUs through their vendor's OpenCL driver and on CPUs through PoCL
(`pip install 'burn-opencl[pocl]'`). Your own kernels run on OpenCl tensors through
`SourceTemplate`, `execute` and friends (the Burn Book's "Custom WGPU Kernel";
examples/custom-opencl-kernel).

Example:
    >>> from burn_opencl import OpenCl
    >>> from burn_tensor import Tensor
    >>> t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], OpenCl().device())
    >>> (t @ t).tolist()
    [[7.0, 10.0], [15.0, 22.0]]
"""

from ._array import ClArray
from ._backend import OpenCl
from ._extension import (
    DynamicKernel,
    SourceTemplate,
    WorkGroup,
    build_info,
    empty,
    execute,
    info_buffer,
    into_contiguous,
)
from ._platform import describe as describe_devices

__all__ = [
    "ClArray",
    "DynamicKernel",
    "OpenCl",
    "SourceTemplate",
    "WorkGroup",
    "build_info",
    "describe_devices",
    "empty",
    "execute",
    "info_buffer",
    "into_contiguous",
]
