"""burn_ndarray: the CPU backend of burn-py, on numpy.

The op implementations written once for any numpy-compatible array namespace (which burn_cuda
runs on cupy) are not here but in `burn_tensor.array_api`; NdArray installs them over numpy.

Example:
    >>> from burn_ndarray import NdArray
    >>> NdArray().device()
    Cpu
"""

from . import _pool as pooling
from ._backend import NdArray

__all__ = ["NdArray", "pooling"]
