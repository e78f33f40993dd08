"""Data-dependent checks for packages built on burn_tensor (losses, modules, backends).

`data_checks_enabled(backend)` says whether checks that read tensor values run for a backend:
always on backends whose `checks_force_sync` is False (NdArray, OpenCl on a CPU), only under
`BURN_CHECKS=1` on asynchronous GPU backends; `BURN_CHECKS=0` turns them off everywhere.
`check_indices(op, indices, dim, size, what)` raises `TensorCheckError` naming the op, the dim,
the bad value and the valid range unless every index is in `[0, size)` (when checks run).

Example:
    >>> from burn_tensor import Tensor
    >>> from burn_ndarray import NdArray
    >>> d = NdArray().device()
    >>> check_indices("CrossEntropyLoss", Tensor.from_ints([0, 2], d), 1, 3, "target class")
    >>> data_checks_enabled(NdArray())
    True
"""

from ._check_data import enabled as data_checks_enabled
from ._check_data import indices_in_range as check_indices

__all__ = ["check_indices", "data_checks_enabled"]
