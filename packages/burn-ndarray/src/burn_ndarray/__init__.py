"""burn_ndarray: the CPU backend of burn-py, on numpy.

`array_ops(xp)` and `make_numeric(kind, xp)` are the op implementations written once for any
numpy-compatible array namespace; burn_cuda runs them on cupy.

Example:
    >>> from burn_ndarray import NdArray
    >>> NdArray().device()
    Cpu
"""

from . import _interpolate as interpolation
from . import _pool as pooling
from ._backend import NdArray
from ._ops_common import array_ops
from ._ops_numeric import make as make_numeric

__all__ = ["NdArray", "array_ops", "interpolation", "make_numeric", "pooling"]
