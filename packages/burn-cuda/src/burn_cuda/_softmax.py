"""softmax / log_softmax and their backward ops as one kernel each: burn_gpu's `SoftmaxOps`
and `softmax_program` (the kernels OpenCl runs) launched over cupy arrays through the driver
launcher. The decomposition was five launches, each with its Python dispatch (~10 us) and a
full pass over memory; here one kernel does a row (a block per row along the last dim, with
warp-shuffle reductions; a thread per column otherwise). Non-contiguous inputs are copied."""

from __future__ import annotations

import numpy as np
from burn_gpu import COL_GROUP, SoftmaxOps, row_group, split_dim

from . import _platform
from ._kernels import kernel, launch_grid


class CudaSoftmaxOps(SoftmaxOps):
    """Mixin of `Cuda`: the softmax family as single kernels (float32/float64)."""

    def _softmax_run(self, kind, arrays, dim, log_mode):
        cp = _platform.load_cupy()
        arrays = [cp.ascontiguousarray(a) for a in arrays]
        out = cp.ndarray(arrays[0].shape, arrays[0].dtype)
        if out.size == 0:
            return out
        outer, n, inner = split_dim(out.shape, dim)
        flag, offs = np.int32(log_mode), (np.int64(0),) * len(arrays)
        if inner == 1:
            k = kernel(kind + "_rows", out.dtype)
            launch_grid(k, outer, row_group(n), out, *arrays, np.int32(n), flag, *offs)
        else:
            cols = outer * inner
            args = (out, *arrays, np.int64(cols), np.int32(n), np.int64(inner), flag, *offs)
            launch_grid(kernel(kind + "_cols", out.dtype), -(-cols // COL_GROUP), COL_GROUP, *args)
        return out
