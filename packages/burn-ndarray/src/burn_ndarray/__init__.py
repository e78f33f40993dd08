"""burn_ndarray: the CPU backend of burn-py, on numpy.

Example:
    >>> from burn_ndarray import NdArray
    >>> NdArray().device()
    Cpu
"""

from ._backend import NdArray

__all__ = ["NdArray"]
