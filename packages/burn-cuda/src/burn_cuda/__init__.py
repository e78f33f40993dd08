"""burn_cuda: the NVIDIA CUDA backend of burn-py, on cupy (cuBLAS, own CUDA kernels).

cupy is an extra (`pip install 'burn-cuda[cuda13]'` or `[cuda12]`): importing this package works
without it; `Cuda()` then raises saying what to install, and `python -m burn.backend` lists
`cuda` as unusable with the reason (cupy missing, no driver, no GPU).

Example:
    >>> from burn_cuda import Cuda  # doctest: +SKIP
    >>> from burn_tensor import Tensor  # doctest: +SKIP
    >>> t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], Cuda().device())  # doctest: +SKIP
    >>> (t @ t).tolist()  # doctest: +SKIP
    [[7.0, 10.0], [15.0, 22.0]]
"""

from ._backend import Cuda
from ._memory import CudaOutOfMemoryError
from ._platform import INSTALL_HINT, CudaUnavailable, probe
from ._platform import describe as describe_devices

__all__ = [
    "INSTALL_HINT",
    "Cuda",
    "CudaOutOfMemoryError",
    "CudaUnavailable",
    "describe_devices",
    "probe",
]
