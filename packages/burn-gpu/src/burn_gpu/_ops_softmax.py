"""The softmax family written once over the runtime contract: `SoftmaxOps` (which ops, which
dtypes) with its `_softmax_run` launching `softmax_program`'s kernels -- a group per row along
the last dim (`*_rows`), a work-item per column otherwise (`*_cols`)."""

from __future__ import annotations

from ._dtype_name import dtype_name
from ._softmax import COL_GROUP, SoftmaxOps, row_group, softmax_program, split_dim


class GpuSoftmaxOps(SoftmaxOps):
    """Mixin of a `GpuBackend`: softmax / log_softmax and their backward ops as one kernel
    each (float32/float64; other dtypes take the decomposition). Inputs are made contiguous."""

    def _softmax_run(self, kind, arrays, dim, log_mode):
        rt = self.kernels_of(arrays[0])
        arrays = [rt.contiguous(a) for a in arrays]
        dt = arrays[0].dtype
        out = rt.empty(arrays[0].shape, dt)
        outer, n, inner = split_dim(out.shape, dim)
        if outer * n * inner == 0:
            return out
        tail = [(int(log_mode), "int32"), *((rt.layout(a)[1], "int64") for a in arrays)]
        name = dtype_name(dt)
        render = lambda: softmax_program(name, rt.dialect)
        if inner == 1:
            k = rt.kernel(("softmax", name), kind + "_rows", render)
            g = min(row_group(n), rt.max_group)  # a power of two: the kernel's tree halves it
            rt.call(k, outer * g, [out, *arrays, (n, "int32"), *tail], group=g)
        else:
            cols, g = outer * inner, min(COL_GROUP, rt.reduce_local)
            k = rt.kernel(("softmax", name), kind + "_cols", render)
            args = [out, *arrays, (cols, "int64"), (n, "int32"), (inner, "int64"), *tail]
            rt.call(k, cols, args, group=g)
        return out
