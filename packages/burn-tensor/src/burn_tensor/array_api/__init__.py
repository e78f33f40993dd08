"""Backend ops written once over an array namespace `xp` (numpy, cupy, or any namespace with
numpy's API): what a backend on numpy-like arrays installs instead of writing them again.

NdArray installs them over numpy (with numpy-only fast paths beside them), Cuda over cupy (with
its own kernels where cupy has no equivalent). They belong to no backend, so a GPU backend does
not depend on the CPU one.

- `array_ops(xp)`: creation, layout, slicing, gather/select, where, cat and repeat, as the
  `float_`/`int_`/`bool_` ops of every kind (keys without the prefix).
- `make_numeric(kind, xp)`: the ops shared by the float (`kind="float"`) and int families:
  casts, division (integer division truncates toward zero, as Burn), reductions (float16 sums
  accumulate in float32: `sum_dtype`), arg/min/max, cumulative ops, scatter-adds, sorting, clamps.
- `fft_ops(xp)`: `rfft`, `irfft`, `cfft` on `xp.fft` (numpy.fft, cupy.fft / cuFFT).
- `interpolation`: nearest / bilinear / bicubic resizing as separable interpolation matrices,
  and its exact adjoint.

Each function takes the backend as `self` (it is installed as a method) and primitives of `xp`.

Example:
    >>> import numpy as np
    >>> from burn_tensor.array_api import array_ops, make_numeric
    >>> array_ops(np)["permute"](None, np.zeros((2, 3)), (1, 0)).shape
    (3, 2)
    >>> make_numeric("int")["div"](None, np.array([-7]), np.array([2])).tolist()  # toward zero
    [-3]
"""

from . import interpolation
from ._common import array_ops
from ._fft import fft_ops
from ._numeric import make_numeric, sum_dtype

__all__ = ["array_ops", "fft_ops", "interpolation", "make_numeric", "sum_dtype"]
