"""Element types on the GPU: which burn dtypes Cuda runs, and their CUDA C names for kernels.

cupy arrays carry numpy dtypes, so a burn `DType` maps to the same numpy dtype as on NdArray.
Our own kernels (pools, im2col, scans, random) are rendered per C type; float16 runs through
float32 in them (read, compute and write back as half) so the kernels need no half intrinsics.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import CTYPES

#: numpy dtype name -> CUDA C type of our kernels (burn_gpu's table: one per dialect)
C_TYPES = CTYPES["cuda"]

#: the dtypes our float kernels take directly (half types go through float32 around them)
KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

#: the half storage dtypes as numpy dtype objects, compared by identity on the hot paths (numpy
#: hands out one object per builtin dtype and ml_dtypes one for bfloat16; `dtype.name` costs
#: ~1.5 us per read). BF16 is None without ml_dtypes (no bfloat16 array can exist then).
F16 = np.dtype(np.float16)
try:
    import ml_dtypes as _ml_dtypes

    BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:
    BF16 = None
#: the half dtypes present (float16, and bfloat16 with ml_dtypes)
HALF_DTYPES = frozenset(d for d in (F16, BF16) if d is not None)

#: float dtypes `Cuda(float_dtype=...)` accepts
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
#: int dtypes `Cuda(int_dtype=...)` accepts
INT_DTYPES = ("int32", "int64")


def c_type(dtype) -> str:
    """CUDA C type for a numpy dtype; raises TypeError naming the dtype when a kernel has none.

    Example:
        >>> c_type(np.float32), c_type("int64")
        ('float', 'long long')
    """
    name = np.dtype(dtype).name
    try:
        return C_TYPES[name]
    except KeyError:
        raise TypeError(
            f"burn_cuda kernels: no CUDA C type for {name} (have {sorted(C_TYPES)})"
        ) from None


_KERNEL_DTYPE: dict = {}


def kernel_dtype(dtype) -> np.dtype:
    """The dtype our kernels compute in for tensors of `dtype`: float16 and bfloat16 ->
    float32 (cast around the kernel), every other dtype itself."""
    k = _KERNEL_DTYPE.get(dtype)  # cached per dtype object: `np.dtype(...).name` cost ~3 us
    if k is None:
        dt = np.dtype(dtype)
        k = np.dtype(np.float32) if dt == np.float16 or dt.name == "bfloat16" else dt
        _KERNEL_DTYPE[dtype] = k
    return k
