"""softmax / log_softmax and their backward ops as one kernel each: burn_gpu's `SoftmaxOps`
and `softmax_program` (the kernels Cuda runs) over OpenCl arrays, instead of the five-launch
decomposition (float32/float64; other dtypes take it). NaN/inf give what it gives."""

from __future__ import annotations

import numpy as np
from burn_gpu import COL_GROUP, SoftmaxOps, row_group, softmax_program, split_dim

from . import _ew
from ._array import ClArray


class OpenClSoftmaxOps(SoftmaxOps):
    """Mixin of `OpenCl`: the softmax family as single kernels (float32/float64)."""

    def _softmax_run(self, kind, arrays, dim, log_mode):
        arrays = [_ew.contiguous(a) for a in arrays]
        rt, dt = arrays[0].rt, arrays[0].dtype
        out = ClArray.empty(rt, arrays[0].shape, dt)
        if out.size == 0:
            return out
        outer, n, inner = split_dim(out.shape, dim)
        args = [out.buf, *(a.buf for a in arrays)]
        tail = [np.int32(log_mode), *(np.int64(a.offset) for a in arrays)]
        render = lambda: softmax_program(dt.name, "opencl")
        if inner == 1:
            k = rt.kernel(("softmax", dt.str), kind + "_rows", render)
            # a power-of-two group (the kernel's tree halves it) within the device's limit
            g = min(row_group(n), 1 << (rt.cl_device.max_work_group_size.bit_length() - 1))
            rt.launch(k, (outer * g,), (g,), args + [np.int32(n), *tail])
        else:
            cols, g = outer * inner, min(COL_GROUP, rt.wg)
            k = rt.kernel(("softmax", dt.str), kind + "_cols", render)
            args += [np.int64(cols), np.int32(n), np.int64(inner), *tail]
            rt.launch(k, (-(-cols // g) * g,), (g,), args)
        return out
